"""The fat-tree controller at the paper's scale, on the flow-level backend:
the scheduler's and the classifier's CPU time per round (the app's poll:
the scheme's round, then every polled switch's counters) at k=16, 32 and
48 with every host sending one large flow (a random permutation), against
the 1 s period; and the backend's own speed on the same runs (wall and CPU
seconds of a whole run, its share of the non-blocking reference).

    python -m scripts.flow.benchmarks.controller_rounds [--k 16 32 48]
        [--schemes scheduler classifier] [--periods 10] [--reference]
        [--rearrange N] [--skip-after 120] [--out results/flow/controller_rounds.json]

A scheme whose round at one k took longer than --skip-after CPU seconds is
not run at larger k (recorded as skipped, with the reason): each round
costs more as k grows.
"""
import argparse
import random
import resource
import time

from scripts.argtypes import positive
from scripts.flow.bisection_backend import run_one
from scripts.results import machine, write_result_file
from topologies.fattree import FatTree

PERIOD_S = 1.0
LINK_MBPS = 1000.0
SEED = 1


def random_permutation(k, seed):
    """[[src, dst]]: every host sends to another, each receiving one flow
    (a seeded derangement: drawn without building every host's allowed set)."""
    hosts = [h.name for h in FatTree(k).hosts]
    draw = random.Random('%s/random-permutation' % seed)
    dsts = hosts[:]
    draw.shuffle(dsts)
    for i, (src, dst) in enumerate(zip(hosts, dsts)):
        if src == dst:  # swap with the next one: neither then sends to itself
            j = (i + 1) % len(hosts)
            dsts[i], dsts[j] = dsts[j], dsts[i]
    return [[s, d] for s, d in zip(hosts, dsts)]


def measure(k, scheme, periods, flows, scheme_params):
    config = {'k': k, 'bw': LINK_MBPS, 'duration': periods * PERIOD_S, 'omit': 0.5 * PERIOD_S,
              'period_s': PERIOD_S, 'scheme_params': scheme_params}
    cpu = time.process_time()
    record = run_one(config, {'scheme': scheme, 'pattern': 'random', 'seed': SEED, 'rep': 0, 'flows': flows},
                     lambda line: print(line, flush=True))
    cost = record['ran_on']
    rounds = cost['round_cpu_s']
    return {'k': k, 'scheme': scheme, 'scheme_params': scheme_params, 'flows': len(flows), 'periods': periods,
            'aggregate_mbps': record['aggregate_mbps'], 'wall_s': cost['model_wall_s'],
            'cpu_s': round(time.process_time() - cpu, 2), 'round_cpu_s': rounds,
            'first_round_cpu_s': rounds[0] if rounds else None,
            'max_later_round_cpu_s': max(rounds[1:]) if len(rounds) > 1 else None,
            'rounds_over_period': sum(1 for r in rounds if r > PERIOD_S)}


def markdown(result):
    lines = ['| k | flows | scheme | first round CPU s | later rounds max CPU s | rounds over %g s | '
             'run wall s | %% of reference |' % PERIOD_S, '|---|---|---|---|---|---|---|---|']
    reference = {c['k']: c['aggregate_mbps'] for c in result['cases'] if c['scheme'] == 'nonblocking'}
    for c in result['cases']:
        if 'skipped' in c:
            lines.append('| %d | | %s | skipped: %s | | | | |' % (c['k'], c['scheme'], c['skipped']))
            continue
        share = '%.1f' % (100.0 * c['aggregate_mbps'] / reference[c['k']]) if c['k'] in reference else ''
        fmt = lambda v: '' if v is None else '%.3f' % v  # noqa: E731
        lines.append('| %d | %d | %s | %s | %s | %d | %.1f | %s |' % (
            c['k'], c['flows'], c['scheme'], fmt(c['first_round_cpu_s']), fmt(c['max_later_round_cpu_s']),
            c['rounds_over_period'], c['wall_s'], share))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=int, nargs='+', default=[16, 32, 48])
    parser.add_argument('--schemes', nargs='+', default=['scheduler', 'classifier'],
                        choices=['scheduler', 'classifier', 'twolevel', 'ecmp'])
    parser.add_argument('--periods', type=positive(int), default=10)
    parser.add_argument('--reference', action='store_true',
                        help='also run the non-blocking reference, for the share of it')
    parser.add_argument('--rearrange', type=int, default=None,
                        help="the scheduler's rearrangement budget (default: the app's)")
    parser.add_argument('--skip-after', type=positive(float), default=120.0)
    parser.add_argument('--out', default='results/flow/controller_rounds.json')
    args = parser.parse_args(argv)
    cases, too_slow = [], {}
    for k in args.k:
        flows = random_permutation(k, SEED)
        for scheme in (['nonblocking'] if args.reference else []) + args.schemes:
            if scheme in too_slow:
                cases.append({'k': k, 'scheme': scheme, 'skipped': too_slow[scheme]})
                continue
            params = {'rearrange': args.rearrange} if scheme == 'scheduler' and args.rearrange is not None else {}
            case = measure(k, scheme, args.periods, flows, params)
            cases.append(case)
            print('k=%d %s: rounds %s CPU s, run %.1f s wall' % (k, scheme, case['round_cpu_s'], case['wall_s']),
                  flush=True)
            slowest = max(case['round_cpu_s'], default=0.0)
            if slowest > args.skip_after:
                too_slow[scheme] = 'a round at k=%d took %.0f CPU s' % (k, slowest)
    result = {'benchmark': 'flow-backend controller rounds', 'period_s': PERIOD_S, 'link_mbps': LINK_MBPS,
              'pattern': 'random permutation, seed %d' % SEED, 'machine': machine(),
              'max_rss_mb': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), 'cases': cases}
    write_result_file(args.out, result, markdown)


if __name__ == '__main__':
    main()
