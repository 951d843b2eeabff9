"""Bisection-bandwidth experiment of Al-Fares et al. (section 4, Table 2) on
an emulated k-ary fat-tree with shaped links.

Two networks stay up for the whole experiment: the non-blocking reference
(every host on one switch at the same link rate) and the fat-tree, whose
controller is restarted to change scheme, and before every run of a scheme
with per-flow state (classifier, scheduler). For each seed (one repetition
each) and traffic pattern (scripts.fattree.patterns) every scheme runs in
turn: every host sends one long-lived iperf3 TCP flow to one host, all at
once, and the receivers' rates are summed. A scheme's score for a pattern
is its aggregate rate as a percentage of the non-blocking reference's for
the same flows (and, beside it, of n hosts x link rate). Throughout each
measurement the CPU is sampled (machine busy %, ovs-vswitchd's share, load
average) so that a result can show the emulator was not the bottleneck.

    dcfabric bisection [--k 4] [--bw 10] [--queue 50] [--duration 15] [--omit 3]
        [--seeds 1 2 3 | --reps 3 --seed-base 1] [--patterns random stride-1 ...]
        [--schemes nonblocking twolevel ...] [--backend emulator|sim] [--control-delay MS]
        [--min-rto MS] [--period S] [--flowlet-timeout US]
        [--out results/bisection]

--backend sim runs the same patterns, flows and seeds on the packet-level
simulator (scripts/sim/bisection_backend.py: ns-3 switches executing the
controller's exported rules, hosts on ns-3's TCP CUBIC) instead of Mininet;
the dynamic schemes' own strategies run as its controller in simulated
time, their flow-mods applied --control-delay ms after a poll or packet-in,
polled every --period seconds (the app's default unless given: at 1 Gbit/s
and more, where runs last tenths of a second, a shorter period lets the
schemes act within them). There --duration and --omit take fractions.
Results files record the backend and the machine.

Writes results.json (configuration with the seeds, every flow of every run,
CPU samples, summary), runs.csv, summary.csv, summary.md (the table as
Markdown) and bisection.png into a time-stamped directory under --out, and
prints the pattern x scheme table.

    dcfabric bisection --summarize RUN_DIR [RUN_DIR ...] [--out results/bisection]

redoes those files from finished runs: one run's in place; several runs'
with the same k, bw, queue, duration, omit and schemes and different seeds
(e.g. one seed per run) together, into a new time-stamped directory.
Ctrl-C stops the flows and tears the fabric down.

Modules: bisection_run (the networks, controllers and run order),
bisection_measure (one run), bisection_report (summary, files, plot),
fair_share (the two-level max-min model).
"""
import datetime
import json
import os
import sys

from controller.fattree.scheme_parameters import DEFAULTS as SCHEME_DEFAULTS
from scripts.emulator.command import command_main
from scripts.argtypes import add_seed_options, fattree_k, positive, seconds, seeds_of
from scripts.fattree.bisection_report import format_table, merge, summarize, write_outputs
from scripts.fattree.bisection_run import (
    DEFAULT_SCHEMES, SCHEMES, add_ovs_instances_argument, daemons_config, run_experiment)
from scripts.fattree.patterns import PAPER_PATTERNS, PatternError, check, seeded
from scripts.results import machine
from scripts.sim import controller_options
from topologies.fattree import FatTree

BACKENDS = ('emulator', 'sim')
QUEUE_PACKETS = 50
# dcfabric measure rate-sweep's result on this machine kind (results/rate_sweep/rate_sweep.json)
FAITHFUL_MBPS = 10.0



def add_arguments(p):
    p.add_argument('--k', type=fattree_k, default=4, help='fat-tree arity (even; default 4, as the paper)')
    p.add_argument('--bw', type=positive(float), default=FAITHFUL_MBPS,
                   help='link rate in Mbit/s, host and switch links (default %g: the highest rate '
                        'the rate sweep found faithful on every pattern, results/rate_sweep)' % FAITHFUL_MBPS)
    p.add_argument('--queue', type=positive(int), default=QUEUE_PACKETS,
                   help='packets each shaped link may queue (default %d)' % QUEUE_PACKETS)
    add_ovs_instances_argument(p)
    p.add_argument('--duration', type=seconds(), default=15,
                   help='measured seconds per run (the emulator\'s iperf3: whole seconds; the simulator '
                        'takes fractions)')
    p.add_argument('--omit', type=seconds(minimum_exclusive=False), default=3,
                   help='seconds of each flow left out of the measurement (TCP start, scheduling; whole '
                        'seconds on the emulator)')
    add_seed_options(p, reps=3, seed_base=1, per='repetition of every pattern')
    p.add_argument('--patterns', nargs='+', default=list(PAPER_PATTERNS),
                   help='patterns (default: the paper\'s ten): random, stride-N, '
                        'staggered-EDGEP-PODP, interpod-incoming, sameid-outgoing')
    p.add_argument('--schemes', nargs='+', default=list(DEFAULT_SCHEMES), choices=SCHEMES,
                   help='schemes to run (default: all but letflow); nonblocking is the 100%% reference; '
                        'letflow (flowlet groups) runs on the simulator only')
    p.add_argument('--backend', choices=BACKENDS, default='emulator',
                   help='emulator (Mininet, OVS, the hosts\' TCP; default) or sim (ns-3, the switches '
                        'executing the controller\'s exported rules)')
    controller_options.add_arguments(p)
    p.add_argument('--flowlet-timeout', type=positive(float), default=None, metavar='US',
                   help='sim, letflow: microseconds of silence that end a flowlet (default %g, the LetFlow '
                        'paper\'s)' % SCHEME_DEFAULTS['flowlet_timeout_us'])
    p.add_argument('--out', default='results/bisection', help='results directory')
    p.add_argument('--summarize', metavar='RUN_DIR', nargs='+',
                   help='no experiment: redo the table, CSV, Markdown and plot of a finished run in place; '
                        'of several runs with the same settings and different seeds, together, into a new '
                        'directory under --out')


def resummarize(run_dirs, out):
    """Summary, table, CSV, Markdown and plot again from finished runs'
    results.json: one run's in its own directory, several runs' (merged,
    bisection_report.merge) in a new time-stamped one under ``out``."""
    saved_runs = []
    for run_dir in run_dirs:
        try:
            with open(os.path.join(run_dir, 'results.json')) as f:
                saved_runs.append((run_dir, json.load(f)))
        except (OSError, ValueError) as err:
            raise ValueError('%s is not a finished run: %s' % (run_dir, err)) from None
    if len(saved_runs) == 1:
        out_dir, (_, saved) = run_dirs[0], saved_runs[0]
        config, runs = saved['config'], saved['runs']
    else:
        config, runs = merge(saved_runs)
        out_dir = os.path.join(out, datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    summary = summarize(runs, config)
    write_outputs(out_dir, config, runs, summary)
    print(format_table(summary, config))
    print('results in %s' % out_dir)


def run_from_args(args, progress=None):
    progress = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    if args.summarize:
        return resummarize(args.summarize, args.out)
    if args.backend != 'sim' and not all(isinstance(v, int) for v in (args.duration, args.omit)):
        raise ValueError('the emulator\'s iperf3 runs whole seconds: --duration %g --omit %g'
                         % (args.duration, args.omit))
    if args.backend == 'sim':
        sim_options = controller_options.config(args)
        if args.ovs_instances is not None:
            raise ValueError('--ovs-instances sets the emulator\'s Open vSwitch daemons; the simulator '
                             '(--backend sim) has none')
        if args.flowlet_timeout is not None and 'letflow' not in args.schemes:
            raise ValueError('--flowlet-timeout is the letflow scheme\'s, and --schemes has no letflow')
    else:
        controller_options.refuse_on_emulator(args, ('--flowlet-timeout', args.flowlet_timeout))
    seeds = seeds_of(args)
    topo = FatTree(args.k)
    for pattern in args.patterns:
        check(pattern, topo)
    schemes = [s for s in SCHEMES if s in args.schemes]
    if args.backend == 'sim':
        from scripts.sim.bisection_backend import run_experiment as run_backend
    else:
        run_backend = run_experiment
    config = {'backend': args.backend, 'machine': machine(),
              'k': args.k, 'bw': args.bw, 'queue': args.queue,
              'duration': args.duration, 'omit': args.omit,
              'seeds': seeds, 'patterns': args.patterns, 'schemes': schemes,
              'hosts': len(topo.hosts), 'started': datetime.datetime.now().isoformat(timespec='seconds')}
    if args.backend == 'sim':
        config.update(sim_options)
        if 'letflow' in schemes:
            config['flowlet_timeout_us'] = (SCHEME_DEFAULTS['flowlet_timeout_us']
                                            if args.flowlet_timeout is None else args.flowlet_timeout)
    else:
        config.update(daemons_config(args.k, args.bw, args.ovs_instances))
    flows_of = {(p, rep): seeded(p, topo, seed) for p in args.patterns for rep, seed in enumerate(seeds)}
    out_dir = os.path.join(args.out, datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    runs = []
    try:
        run_backend(config, flows_of, runs.append, progress)
    finally:
        if runs:  # what was measured before an interruption is kept
            summary = summarize(runs, config)
            write_outputs(out_dir, config, runs, summary)
            print(format_table(summary, config))
            print('results in %s' % out_dir)


main = command_main('dcfabric bisection', __doc__, add_arguments, run_from_args, 'bisection', (PatternError,))


if __name__ == '__main__':
    main()
