"""What rearrangement adds to the central scheduler's first-fit search, in
the model (no emulation): every flow of a permutation is reported large in
host order, once with the paper's plain search (rearrange=0) and once with
rearrangement (the controller's default budget); counted per permutation:
flows left with no free path (rejected), flows moved to make room, and the
longest controller CPU time one report took (process time: the machine may be shared).

    python -m scripts.fattree.rearrangement [--out results/rearrangement] [--at-most N]

Writes rearrangement.json (every permutation) and rearrangement.csv (one
row per fabric and pattern).
"""
import argparse
import csv
import json
import os
import statistics
import time

from controller.fattree.classifier import FlowKey
from controller.fattree.scheduler import FlowScheduler
from controller.fattree.scheme_parameters import DEFAULTS
from scripts.experiments import patterns
from topologies.fattree import FatTree

# (k, pattern, permutations)
PLAN = [(4, 'random', 200), (4, 'sameid-outgoing', 200),
        (8, 'random', 20), (8, 'sameid-outgoing', 20), (8, 'interpod-incoming', 20)]


def schedule(topo, pairs, rearrange):
    """Report every flow once, in order: (rejected, moved, longest report s)."""
    scheduler = FlowScheduler(topo, DEFAULTS['gc_timeout'], lambda: 0.0, rearrange=rearrange)
    moved, longest = 0, 0.0
    for src, dst in pairs:
        flow = FlowKey(topo.node(src).ip, topo.node(dst).ip, 6, 5201)
        started = time.process_time()
        changes = scheduler.notify(flow)
        longest = max(longest, time.process_time() - started)
        moved += max(0, len(changes) - 1)
    return len(scheduler.rejected), moved, longest


def run(k, pattern, count, seed):
    topo = FatTree(k)
    rows = []
    for n in range(count):
        pairs = patterns.seeded(pattern, topo, '%d/%d' % (seed, n))
        plain, _, _ = schedule(topo, pairs, 0)
        rejected, moved, longest = schedule(topo, pairs, DEFAULTS['rearrange'])
        rows.append({'permutation': n, 'flows': len(pairs), 'first_fit_rejected': plain,
                     'rearranged_rejected': rejected, 'moved': moved, 'longest_report_s': longest})
    return rows


def summary(k, pattern, rows):
    flows = sum(r['flows'] for r in rows)
    return {'k': k, 'pattern': pattern, 'permutations': len(rows), 'flows_per_permutation': rows[0]['flows'],
            'first_fit_rejected_mean': statistics.mean(r['first_fit_rejected'] for r in rows),
            'first_fit_rejected_max': max(r['first_fit_rejected'] for r in rows),
            'rearranged_rejected_pct': 100.0 * sum(r['rearranged_rejected'] for r in rows) / flows,
            'moved_mean': statistics.mean(r['moved'] for r in rows),
            'longest_report_s': max(r['longest_report_s'] for r in rows)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='results/rearrangement')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--at-most', type=int, default=None, metavar='N',
                        help='at most N permutations of each pattern (a quick look)')
    args = parser.parse_args(argv)
    detail, summaries = {}, []
    for k, pattern, count in PLAN:
        rows = run(k, pattern, min(count, args.at_most or count), args.seed)
        detail['k%d/%s' % (k, pattern)] = rows
        summaries.append(summary(k, pattern, rows))
        s = summaries[-1]
        print('k=%d %-18s %3d permutations of %3d flows: first fit leaves %.2f rejected (max %d); '
              'with rearrangement %.2f%% rejected, %.2f moved, longest report %.3f s'
              % (k, pattern, s['permutations'], s['flows_per_permutation'], s['first_fit_rejected_mean'],
                 s['first_fit_rejected_max'], s['rearranged_rejected_pct'], s['moved_mean'],
                 s['longest_report_s']), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'rearrangement.json'), 'w') as f:
        json.dump({'seed': args.seed, 'rearrange': DEFAULTS['rearrange'], 'summary': summaries,
                   'permutations': detail}, f, indent=2)
    with open(os.path.join(args.out, 'rearrangement.csv'), 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(summaries[0]))
        writer.writeheader()
        writer.writerows(summaries)
    print('written: %s/rearrangement.json, rearrangement.csv' % args.out)


if __name__ == '__main__':
    main()
