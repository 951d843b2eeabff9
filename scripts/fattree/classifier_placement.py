"""A model: the flow classifier (controller.fattree.classifier,
paper 3.6) against the two-level routing it refines, under max-min fair
sharing (ideal TCP), over many arrival orders of each pattern's flows.

The classifier itself runs, unchanged, on the fabric model: a flow's first
packet at each pod switch it leaves upward asks it for a port (as the
controller's packet-in does); every other hop follows the two-level tables.
Each round, every pod switch "measures" the max-min fair rates of the flows
crossing it (in units of link rate; tolerance 0.1 as the controller's
default) and the classifier rebalances. Two arrival modes:

  together   every flow starts at once (the bisection runs): nothing is
             measured when they are placed
  staggered  one flow starts per round, in the drawn order: each is placed
             against the measured load of those before it

then ``rounds`` more rounds without arrivals. For each pattern, seed and
mode this reports the two-level share, the classifier's after its last round
(mean / min / max over ``orders`` orders) and their difference, the lowest
difference seen after any round, and the rebalancing moves per order.

    python -m scripts.fattree.classifier_placement [--seeds 1 2 3] [--orders 20]
        [--rounds 5] [--patterns ...] [--out results/classifier_placement]

Writes placement.json (every order), placement.csv (per pattern, seed and
mode) and difference.csv (per pattern and mode: classifier minus two-level,
mean and standard deviation over the seeds, min and max over every order).
"""
import argparse
import csv
import json
import os
import random
import statistics

from controller.fattree.classifier import FlowClassifier, FlowKey
from controller.fattree.fair_share import max_min_rates, max_min_share, path_links
from scripts.argtypes import add_seed_options, fattree_k, positive, seeds_of
from scripts.emulator.bisection_measure import IPERF_PORT
from scripts.experiments.fair_share import two_level_fair_share
from scripts.experiments.patterns import PAPER_PATTERNS, check, label, seeded
from topologies.fattree import FatTree
from topologies.walk import walk

TCP = 6
TOLERANCE = 0.1  # of link rate: scheme_params' default
ARRIVALS = ('together', 'staggered')


def flow_key(topo, src, dst):
    return FlowKey(topo.node(src).ip, topo.node(dst).ip, TCP, IPERF_PORT)


def classifier_paths(topo, classifier, pairs):
    """{(src, dst): directed links}: each flow's walk, its upward hops
    placed by the classifier (the first packet of a flow new at a switch
    gets a port there, a known one keeps its entry)."""
    paths = {}
    for src, dst in pairs:
        flow = flow_key(topo, src, dst)

        def forward(switch, _, ip):
            port = classifier.tables[switch].lookup(ip)
            # the bypass rules leave own subnet, own pod and the core to the tables
            return classifier.assign(switch, flow) if port in topo.up_ports(switch) else port
        paths[src, dst] = path_links(topo, src, walk(topo, forward, src, dst))
    return paths


def measure(topo, classifier, paths):
    """Every pod switch's counters: the max-min rates of the flows whose
    path leaves it upward (an entry no packet crosses any more expires)."""
    rates = dict(zip(paths, max_min_rates(list(paths.values()))))
    for name in classifier.switches:
        up = {(name, topo.peer(name, port)[0]) for port in topo.up_ports(name)}
        classifier.update(name, {flow_key(topo, *pair): rates[pair] for pair, links in paths.items()
                                 if links & up})


def run_order(topo, pairs, order_rng, arrival, rounds):
    """One arrival order: {'pct': the classifier's share after its last
    round, 'min_margin_pct': the lowest (classifier - two-level) after any
    round, 'moves': rebalancing moves}."""
    order = list(pairs)
    order_rng.shuffle(order)
    batches = [order] if arrival == 'together' else [[pair] for pair in order]
    classifier = FlowClassifier(topo, tolerance=TOLERANCE)
    present, margins, moves = [], [], 0
    for batch in batches + [[]] * rounds:
        present += batch
        measure(topo, classifier, classifier_paths(topo, classifier, present))
        moves += len(classifier.rebalance())
        paths = classifier_paths(topo, classifier, present)
        margins.append(max_min_share(list(paths.values())) - two_level_fair_share(topo, present))
    return {'pct': max_min_share(list(paths.values())), 'min_margin_pct': min(margins), 'moves': moves}


def run(k, patterns, seeds, orders, rounds):
    topo = FatTree(k)
    rows = []
    for pattern in patterns:
        for seed in seeds:
            pairs = seeded(pattern, topo, seed)
            two_level = two_level_fair_share(topo, pairs)
            for arrival in ARRIVALS:
                rng = random.Random(seed)
                runs = [run_order(topo, pairs, rng, arrival, rounds) for _ in range(orders)]
                shares = [r['pct'] for r in runs]
                rows.append({'pattern': pattern, 'seed': seed, 'arrival': arrival, 'orders': orders,
                             'rounds': rounds, 'two_level_pct': two_level,
                             'classifier_mean_pct': statistics.mean(shares),
                             'classifier_min_pct': min(shares), 'classifier_max_pct': max(shares),
                             'difference_mean_pct': statistics.mean(shares) - two_level,
                             'min_margin_any_round_pct': min(r['min_margin_pct'] for r in runs),
                             'moves_mean': statistics.mean(r['moves'] for r in runs),
                             'per_order': runs})
    return rows


def differences(rows):
    """Per pattern and arrival mode: classifier minus two-level, mean and
    standard deviation of the seeds' means, min and max over every order."""
    out = []
    for pattern in dict.fromkeys(r['pattern'] for r in rows):
        for arrival in ARRIVALS:
            group = [r for r in rows if r['pattern'] == pattern and r['arrival'] == arrival]
            means = [r['difference_mean_pct'] for r in group]
            every = [o['pct'] - r['two_level_pct'] for r in group for o in r['per_order']]
            out.append({'pattern': pattern, 'arrival': arrival, 'seeds': ' '.join(str(r['seed']) for r in group),
                        'difference_mean_pct': statistics.mean(means),
                        'difference_std_pct': statistics.stdev(means) if len(means) > 1 else 0.0,
                        'difference_min_pct': min(every), 'difference_max_pct': max(every),
                        'min_margin_any_round_pct': min(r['min_margin_any_round_pct'] for r in group)})
    return out


def write_csv(path, rows):
    fields = [key for key in rows[0] if key != 'per_order']
    with open(path, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction='ignore')
        writer.writeheader()
        writer.writerows(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m scripts.fattree.classifier_placement',
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--k', type=fattree_k, default=4)
    add_seed_options(parser, reps=3, seed_base=1, per='draw of the random patterns and arrival orders')
    parser.add_argument('--orders', type=positive(int), default=20, help='arrival orders per pattern, seed and mode')
    parser.add_argument('--rounds', type=positive(int), default=5,
                        help='rebalancing rounds after the last arrival')
    parser.add_argument('--patterns', nargs='+', default=list(PAPER_PATTERNS))
    parser.add_argument('--out', default='results/classifier_placement')
    args = parser.parse_args(argv)
    try:
        seeds = seeds_of(args)
        for pattern in args.patterns:
            check(pattern, FatTree(args.k))
    except ValueError as err:
        parser.error(str(err))
    rows = run(args.k, args.patterns, seeds, args.orders, args.rounds)
    summary = differences(rows)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'placement.json'), 'w') as f:
        json.dump({'k': args.k, 'seeds': seeds, 'orders': args.orders, 'rounds': args.rounds,
                   'tolerance': TOLERANCE, 'rows': rows, 'differences': summary}, f, indent=1)
    write_csv(os.path.join(args.out, 'placement.csv'), rows)
    write_csv(os.path.join(args.out, 'difference.csv'), summary)
    print('max-min fair share, %% of ideal, k=%d, %d arrival orders per seed, %d rounds after the last '
          'arrival (seeds %s)' % (args.k, args.orders, args.rounds, ' '.join(map(str, seeds))))
    print('%-27s %-9s %5s %9s %24s %9s' % ('pattern', 'arrival', 'seed', 'two-level', 'classifier mean (min-max)',
                                          'min diff'))
    for row in rows:
        print('%-27s %-9s %5d %9.1f %12.1f (%5.1f-%5.1f) %9.1f' % (
            label(row['pattern']), row['arrival'], row['seed'], row['two_level_pct'], row['classifier_mean_pct'],
            row['classifier_min_pct'], row['classifier_max_pct'], row['min_margin_any_round_pct']))
    print('\nclassifier - two-level, mean +- std over seeds (min..max over every order)')
    for row in summary:
        print('%-27s %-9s %+6.1f +- %4.1f (%+6.1f..%+6.1f)' % (
            label(row['pattern']), row['arrival'], row['difference_mean_pct'], row['difference_std_pct'],
            row['difference_min_pct'], row['difference_max_pct']))
    print('written: %s/placement.json, placement.csv, difference.csv' % args.out)


if __name__ == '__main__':
    main()
