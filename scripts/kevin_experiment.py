"""Kevin experiments.

  python -m scripts.kevin_experiment model [--n 64 256] [--loads ...] [--seeds 5]
      Pure model at scale: average ToR-to-ToR path length versus load for
      static de Bruijn, Kevin with BFS-DA-links and Greedy-DA-links (k_s=2,
      k_d=6), and a static expander of the same degree (k_s + k_d = 8,
      random regular graph, shortest-path routing).

Workload of the model comparison (the seed does not give the successor's):
at load L, round(L * n * k_d) distinct ordered ToR pairs are drawn uniformly
(L = 1 asks for as many pairs as there are DA transmit ports), each with a
Pareto(1.2) demand; one scheduling round runs on that demand matrix and every
pair's path is measured (unweighted mean, and mean weighted by demand). The
expander's path lengths over the same pairs are its shortest paths.

Results go to results/kevin/ as JSON, CSV and a PNG plot.
"""
import argparse
import csv
import json
import os
import random
import statistics
import sys
import time

import networkx as nx

from controller.kevin_routing import KevinRouting
from controller.kevin_scheduler import DaScheduler
from topologies.kevin import Kevin

DEFAULT_OUT = os.path.join('results', 'kevin')


def model_point(kevin, load, seed, expander_hops):
    rng = random.Random(seed)
    pairs = [(s, t) for s in kevin.addresses for t in kevin.addresses if s != t]
    chosen = rng.sample(pairs, min(len(pairs), round(load * kevin.n * kevin.k_d)))
    demand = {pair: rng.paretovariate(1.2) for pair in chosen}
    static = KevinRouting(kevin)
    index = kevin.index

    def summary(hops_of):
        hops = [hops_of(s, t) for s, t in chosen]
        weights = [demand[p] for p in chosen]
        return {'mean_hops': statistics.fmean(hops),
                'weighted_hops': sum(h * w for h, w in zip(hops, weights)) / sum(weights),
                'max_hops': max(hops)}

    row = {'static_de_bruijn': summary(static.hops),
           'expander': summary(lambda s, t: expander_hops[index(s)][index(t)])}
    for algorithm in ('bfs', 'greedy'):
        scheduler = DaScheduler(kevin, algorithm)
        plan = scheduler.schedule(demand, 0)
        scheduler.activate(0)
        row['kevin_' + algorithm] = dict(summary(scheduler.routing.hops), da_links=len(plan.added))
    row['pairs'] = len(chosen)
    return row


def cmd_model(args):
    os.makedirs(args.out, exist_ok=True)
    results = []
    for n in args.n:
        kevin = Kevin(n, 2, 6)
        for seed in range(args.seeds):
            expander = nx.random_regular_graph(kevin.k, n, seed=seed)
            if not nx.is_connected(expander):
                raise RuntimeError('random %d-regular graph on %d nodes is not connected' % (kevin.k, n))
            expander_hops = dict(nx.all_pairs_shortest_path_length(expander))
            for load in args.loads:
                started = time.time()
                row = model_point(kevin, load, seed, expander_hops)
                row.update(n=n, k_s=2, k_d=6, load=load, seed=seed)
                results.append(row)
                print('n=%d load=%.1f seed=%d: static %.2f  bfs %.2f  greedy %.2f  expander %.2f '
                      '(%.1fs)' % (n, load, seed, row['static_de_bruijn']['mean_hops'],
                                   row['kevin_bfs']['mean_hops'], row['kevin_greedy']['mean_hops'],
                                   row['expander']['mean_hops'], time.time() - started),
                      file=sys.stderr, flush=True)
    schemes = ('static_de_bruijn', 'kevin_bfs', 'kevin_greedy', 'expander')
    table = []
    for n in args.n:
        for load in args.loads:
            rows = [r for r in results if r['n'] == n and r['load'] == load]
            line = {'n': n, 'load': load}
            for scheme in schemes:
                line[scheme] = statistics.fmean(r[scheme]['mean_hops'] for r in rows)
                line[scheme + '_weighted'] = statistics.fmean(r[scheme]['weighted_hops'] for r in rows)
            table.append(line)
    with open(os.path.join(args.out, 'model_path_length.json'), 'w') as out:
        json.dump({'workload': __doc__.split('Workload')[1].split('Results')[0].strip(),
                   'runs': results, 'means': table}, out, indent=1, default=list)
    with open(os.path.join(args.out, 'model_path_length.csv'), 'w', newline='') as out:
        writer = csv.DictWriter(out, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    print('\nmean ToR-to-ToR hops over %d seeds (unweighted / demand-weighted)' % args.seeds)
    print('%5s %5s %17s %17s %17s %17s' % (('n', 'load') + schemes))
    for line in table:
        print('%5d %5.1f ' % (line['n'], line['load']) + ' '.join(
            '%8.2f/%-8.2f' % (line[s], line[s + '_weighted']) for s in schemes))
    plot(table, schemes, args)


def plot(table, schemes, args):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(args.n), figsize=(5 * len(args.n), 4), squeeze=False)
    for ax, n in zip(axes[0], args.n):
        lines = [l for l in table if l['n'] == n]
        for scheme in schemes:
            ax.plot([l['load'] for l in lines], [l[scheme] for l in lines], marker='o', label=scheme)
        ax.set_title('n=%d ToRs, k_s=2, k_d=6 (expander degree 8)' % n)
        ax.set_xlabel('load (active ToR pairs / (n k_d))')
        ax.set_ylabel('mean path length (ToR hops)')
        ax.grid(True)
        ax.legend()
    fig.tight_layout()
    path = os.path.join(args.out, 'model_path_length.png')
    fig.savefig(path)
    print('wrote %s and model_path_length.json/.csv' % path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    model = sub.add_parser('model', help='pure-model path length vs load against an expander')
    model.add_argument('--n', type=int, nargs='+', default=[64, 256])
    model.add_argument('--loads', type=float, nargs='+',
                       default=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0])
    model.add_argument('--seeds', type=int, default=3)
    model.add_argument('--out', default=DEFAULT_OUT)
    model.set_defaults(func=cmd_model)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == '__main__':
    main()
