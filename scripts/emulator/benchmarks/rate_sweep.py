"""Which link rate the emulator carries faithfully: the bisection
experiment's non-blocking reference and two-level routing at each rate, on
every pattern, each run with its fidelity verdict (scripts/emulator/
fidelity.py); the result is the highest rate at which the verdict holds
everywhere (scripts/emulator/benchmarks/rate_sweep_report.py). By default it runs what
the bisection experiment runs by default (its schemes, flow duration and
omitted start), so that the rate it finds holds for that experiment.

    dcfabric measure rate-sweep [--k 4] [--rates 2 5 10 20 50 100 200]
        [--patterns ...all ten] [--seed 37] [--schemes ...] [--duration D] [--omit O]
        [--out results/rate_sweep]
    dcfabric measure rate-sweep --rejudge [--out results/rate_sweep]

Writes OUT/rate_sweep.json after every rate (what was measured survives an
interruption), each rate's bisection run under OUT/bw-RATE/, and prints
the table.
"""
import argparse
import datetime
import glob
import json
import os
import sys

from scripts.argtypes import fattree_k, positive
from scripts.emulator.fidelity import verdict
from scripts.emulator.bisection_backend import daemons_config
from scripts.experiments import defaults
from scripts.experiments.bisection import QUEUE_PACKETS, SCHEMES, add_ovs_instances_argument, describe, judged, plan
from scripts.experiments.bisection_report import summarize, write_outputs
from scripts.experiments.patterns import PAPER_PATTERNS, check
from scripts.runner import loop, records
from scripts.emulator.benchmarks.rate_sweep_report import highest_faithful_rate, markdown, rate_row
from topologies.fattree import FatTree

RATES = (2, 5, 10, 20, 50, 100, 200)
VERDICT_KEYS = ('ok', 'limited_by', 'reference_pct_of_line')  # what verdict() adds to the figures


def bisection_defaults():
    """The bisection experiment's default arguments (its own parser's)."""
    from scripts.experiments.bisection import add_arguments
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([])


def sweep(args, progress):
    topo = FatTree(args.k)
    for pattern in args.patterns:
        check(pattern, topo)
    result = {'k': args.k, 'seed': args.seed, 'duration': args.duration, 'omit': args.omit,
              'queue': args.queue, 'ovs_instances': args.ovs_instances, 'patterns': args.patterns,
              'schemes': args.schemes, 'started': datetime.datetime.now().isoformat(timespec='seconds'), 'rates': []}
    os.makedirs(args.out, exist_ok=True)
    for bw in sorted(args.rates):
        progress('rate %g Mbit/s: %d patterns x %d schemes' % (bw, len(args.patterns), len(args.schemes)))
        config = {'experiment': 'bisection', 'backend': 'emulator', 'k': args.k, 'bw': bw, 'queue': args.queue,
                  **daemons_config(args.k, bw, args.ovs_instances), 'duration': args.duration, 'omit': args.omit,
                  'seeds': [args.seed], 'patterns': args.patterns, 'schemes': args.schemes,
                  'hosts': len(topo.hosts), 'started': datetime.datetime.now().isoformat(timespec='seconds')}
        bw_dir = os.path.join(args.out, 'bw-%g' % bw)
        runs_of_rate = plan(config)
        finished = loop.execute('bisection', 'emulator', config, runs_of_rate, bw_dir, describe(config), say=progress)
        runs = judged(config, [finished[run['id']] for run in runs_of_rate])
        write_outputs(bw_dir, config, runs, summarize(runs, config))
        result['rates'].append(rate_row(bw, runs, config['hosts'] * bw))
        result['highest_faithful_mbps'] = highest_faithful_rate(result['rates'])
        with open(os.path.join(args.out, 'rate_sweep.json'), 'w') as f:
            json.dump(result, f, indent=1)
    return result


def rejudge(out):
    """The verdicts of a finished sweep's runs again from their recorded
    figures (scripts.emulator.fidelity.verdict is pure), after its criteria
    changed; the files rewritten in place."""
    with open(os.path.join(out, 'rate_sweep.json')) as f:
        result = json.load(f)
    result['rates'] = []
    for bw_dir in sorted(glob.glob(os.path.join(out, 'bw-*')), key=lambda d: float(d.rsplit('-', 1)[1])):
        saved = records.load_results(bw_dir)
        config, runs = saved['config'], saved['runs']
        for run in runs:
            recorded = {k: v for k, v in run['fidelity'].items() if k not in VERDICT_KEYS}
            run['fidelity'] = verdict(recorded, run['fidelity']['reference_pct_of_line'])
        write_outputs(bw_dir, config, runs, summarize(runs, config))
        result['rates'].append(rate_row(config['bw'], runs, config['hosts'] * config['bw']))
    result['highest_faithful_mbps'] = highest_faithful_rate(result['rates'])
    result['rejudged'] = datetime.datetime.now().isoformat(timespec='seconds')
    with open(os.path.join(out, 'rate_sweep.json'), 'w') as f:
        json.dump(result, f, indent=1)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog='dcfabric measure rate-sweep', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--k', type=fattree_k, default=4)
    parser.add_argument('--rates', type=positive(float), nargs='+', default=list(RATES), metavar='MBPS')
    parser.add_argument('--patterns', nargs='+', default=list(PAPER_PATTERNS))
    parser.add_argument('--seed', type=int, default=37)
    experiment = bisection_defaults()
    parser.add_argument('--schemes', nargs='+', choices=SCHEMES, default=experiment.schemes,
                        help='schemes (default: the bisection experiment\'s, %(default)s)')
    parser.add_argument('--duration', type=positive(int), default=defaults.EMULATOR_DURATION_S,
                        help='measured seconds per run (default: the bisection experiment\'s, %(default)s)')
    parser.add_argument('--omit', type=int, default=defaults.EMULATOR_OMIT_S,
                        help='seconds left out of each flow (default: the bisection experiment\'s, %(default)s)')
    parser.add_argument('--queue', type=positive(int), default=QUEUE_PACKETS)
    add_ovs_instances_argument(parser)
    parser.add_argument('--out', default='results/rate_sweep')
    parser.add_argument('--rejudge', action='store_true',
                        help='no runs: judge the sweep in --out again from its recorded figures')
    args = parser.parse_args(argv)
    from scripts.emulator.command import run_command
    if args.rejudge:
        result = run_command('rate-sweep', lambda: rejudge(args.out))
    else:
        result = run_command('rate-sweep', lambda: sweep(args, lambda m: print(m, file=sys.stderr, flush=True)))
    print(markdown(result))
    return 0


if __name__ == '__main__':
    main()
