"""Issue 17.2, a model: what the flow classifier's own placement of a
pattern's flows allows them, beside two-level routing's, before any
rebalancing and without TCP.

The classifier (controller.fattree.classifier, paper 3.6) puts a new flow on
its pod switch's least-loaded upward port; a bisection run starts every flow
at once, so no rate is measured yet and the flows are spread by count (ties
to the lowest port), in the order their first packets reach each switch.
Every other hop (down, and the core) follows the two-level tables. For each
pattern and seed this draws ``orders`` arrival orders and reports the
max-min fair share (scripts.fattree.fair_share) of the classifier's paths
against the two-level paths'.

    python -m scripts.fattree.classifier_placement [--seeds 1 2 3] [--orders 50]
        [--patterns ...] [--out results/classifier_placement]

Writes placement.json (every seed and order) and placement.csv (per pattern
and seed: two-level share, the classifier's mean / min / max over orders).
"""
import argparse
import csv
import json
import os
import random
import statistics

from controller.fattree.classifier import FlowClassifier, FlowKey
from controller.fattree.twolevel import all_tables
from scripts.argtypes import add_seed_options, fattree_k, positive, seeds_of
from scripts.fattree.bisection_measure import IPERF_PORT
from scripts.fattree.fair_share import max_min_share, path_links, two_level_fair_share
from scripts.fattree.patterns import PAPER_PATTERNS, check, label, seeded
from topologies.fattree import FatTree
from topologies.walk import walk

TCP = 6


def classifier_share(topo, pairs, rng):
    """max_min_share of ``pairs`` placed by a fresh classifier, their first
    packets arriving in an order drawn from ``rng``."""
    tables = all_tables(topo)
    classifier = FlowClassifier(topo)
    order = list(pairs)
    rng.shuffle(order)
    paths = []
    for src, dst in order:
        flow = FlowKey(topo.node(src).ip, topo.node(dst).ip, TCP, IPERF_PORT)

        def forward(switch, _, ip):
            port = tables[switch].lookup(ip)
            # upward is where the classifier chooses; its bypass rules leave
            # the rest (own subnet, own pod, the core) to the two-level tables
            return classifier.assign(switch, flow) if port in topo.up_ports(switch) else port
        paths.append(path_links(topo, src, walk(topo, forward, src, dst)))
    return max_min_share(paths)


def run(k, patterns, seeds, orders):
    topo = FatTree(k)
    rows = []
    for pattern in patterns:
        for seed in seeds:
            pairs = seeded(pattern, topo, seed)
            rng = random.Random(seed)
            shares = [classifier_share(topo, pairs, rng) for _ in range(orders)]
            rows.append({'pattern': pattern, 'seed': seed, 'orders': orders,
                         'two_level_pct': two_level_fair_share(topo, pairs),
                         'classifier_mean_pct': statistics.mean(shares),
                         'classifier_min_pct': min(shares), 'classifier_max_pct': max(shares),
                         'classifier_pct_per_order': shares})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m scripts.fattree.classifier_placement',
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--k', type=fattree_k, default=4)
    add_seed_options(parser, reps=3, seed_base=1, per='draw of the random patterns and arrival orders')
    parser.add_argument('--orders', type=positive(int), default=50, help='arrival orders per pattern and seed')
    parser.add_argument('--patterns', nargs='+', default=list(PAPER_PATTERNS))
    parser.add_argument('--out', default='results/classifier_placement')
    args = parser.parse_args(argv)
    try:
        seeds = seeds_of(args)
        for pattern in args.patterns:
            check(pattern, FatTree(args.k))
    except ValueError as err:
        parser.error(str(err))
    rows = run(args.k, args.patterns, seeds, args.orders)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'placement.json'), 'w') as f:
        json.dump({'k': args.k, 'seeds': seeds, 'orders': args.orders, 'rows': rows}, f, indent=1)
    fields = [key for key in rows[0] if key != 'classifier_pct_per_order']
    with open(os.path.join(args.out, 'placement.csv'), 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction='ignore')
        writer.writeheader()
        writer.writerows(rows)
    print('max-min fair share, %% of ideal, k=%d, %d arrival orders per seed (seeds %s)'
          % (args.k, args.orders, ' '.join(map(str, seeds))))
    print('%-27s %5s %10s %28s' % ('pattern', 'seed', 'two-level', 'classifier mean (min-max)'))
    for row in rows:
        print('%-27s %5d %10.1f %14.1f (%5.1f-%5.1f)' % (
            label(row['pattern']), row['seed'], row['two_level_pct'], row['classifier_mean_pct'],
            row['classifier_min_pct'], row['classifier_max_pct']))
    print('written: %s/placement.json, placement.csv' % args.out)


if __name__ == '__main__':
    main()
