"""Kevin's pure model at scale: average ToR-to-ToR path length versus load
for static de Bruijn, Kevin with BFS-DA-links and Greedy-DA-links (k_s=2,
k_d=6), and a static expander of the same degree (k_s + k_d = 8, random
regular graph, shortest-path routing).

Workload (the seed does not give the successor's): at load L,
round(L * n * k_d) distinct ordered ToR pairs are drawn uniformly (L = 1
asks for as many pairs as there are DA transmit ports), each with a
Pareto(1.2) demand; one scheduling round runs on that demand matrix and
every pair's path is measured (unweighted mean, and mean weighted by
demand). The expander's path lengths over the same pairs are its shortest
paths. One seed draws the expander and the pairs of every load.
"""
import random
import statistics
import sys
import time

import networkx as nx

from controller.kevin.routing import KevinRouting
from controller.kevin.scheduler import DaScheduler
from topologies.kevin import Kevin

SCHEMES = ('static_de_bruijn', 'kevin_bfs', 'kevin_greedy', 'expander')
K_S, K_D = 2, 6


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


def run_model(sizes, loads, seeds):
    """One row per (n, seed, load), as model_point gives it plus its keys."""
    results = []
    for n in sizes:
        kevin = Kevin(n, K_S, K_D)
        for seed in seeds:
            expander = nx.random_regular_graph(kevin.k, n, seed=seed)
            if not nx.is_connected(expander):
                raise RuntimeError('random %d-regular graph on %d nodes is not connected' % (kevin.k, n))
            expander_hops = dict(nx.all_pairs_shortest_path_length(expander))
            for load in loads:
                started = time.time()
                row = model_point(kevin, load, seed, expander_hops)
                row.update(n=n, k_s=K_S, k_d=K_D, load=load, seed=seed)
                results.append(row)
                print('n=%d load=%.1f seed=%d: static %.2f  bfs %.2f  greedy %.2f  expander %.2f '
                      '(%.1fs)' % (n, load, seed, row['static_de_bruijn']['mean_hops'],
                                   row['kevin_bfs']['mean_hops'], row['kevin_greedy']['mean_hops'],
                                   row['expander']['mean_hops'], time.time() - started),
                      file=sys.stderr, flush=True)
    return results


def means(results, sizes, loads):
    """Per (n, load): every scheme's mean hops over the seeds, unweighted
    and demand-weighted."""
    table = []
    for n in sizes:
        for load in loads:
            rows = [r for r in results if r['n'] == n and r['load'] == load]
            line = {'n': n, 'load': load}
            for scheme in SCHEMES:
                line[scheme] = statistics.fmean(r[scheme]['mean_hops'] for r in rows)
                line[scheme + '_weighted'] = statistics.fmean(r[scheme]['weighted_hops'] for r in rows)
            table.append(line)
    return table
