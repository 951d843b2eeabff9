"""Bisection-bandwidth experiment of Al-Fares et al. (section 4, Table 2) on
a k-ary fat-tree, on any backend.

For each seed (one repetition each) and traffic pattern
(scripts/experiments/patterns.py) every scheme runs in turn: every host
sends one long-lived TCP flow to one host, all at once, and the receivers'
rates are summed. A scheme's score for a pattern is its aggregate rate as a
percentage of the non-blocking reference's (every host on one switch at
the same link rate) for the same flows, and, beside it, of n hosts x link
rate.

    dcfabric bisection [--k 4] [--bw MBPS] [--backend emulator|sim|flow]
        [--seeds 1 2 3 | --reps 3 --seed-base 1] [--patterns random stride-1 ...]
        [--schemes nonblocking twolevel ...] [--duration S] [--omit S] [--queue 50]
        [--jobs N | --dask ADDRESS] [--resume DIR] [--out results/bisection]

Backends (scripts/runner/backends.py):
  emulator  Mininet and Open vSwitch, the hosts' iperf3 over their own TCP, the
            Ryu app as the controller; every run judged by its fidelity
            verdict (machine idle, ovs-vswitchd drops, the reference's share)
  sim       ns-3 switches executing the controller's exported rules, hosts on
            ns-3's TCP, the dynamic schemes' own objects as the controller in
            simulated time (--control-delay, --min-rto, --sender-queue, --period)
  flow      the controller's paths and max-min fair rates: the paper's scale

The run's time settings follow the backend and the link rate
(scripts/experiments/defaults.py): the emulator's 15 s after 3 s; a
simulated run's duration, omit, polling period, minimum RTO and control
delay scaled from the 1 Gbit/s table's (0.1 s after 0.05 s, 10 ms, 10 ms,
1 ms) inversely with the rate. The config records each value and where it
came from. The plan (seeds x patterns x schemes, the reference first, the
fat-tree's schemes in alternating order so the emulator restarts its
controller once less per pattern) runs through scripts/runner: --jobs N
local processes (default: the machine's cores on a simulated backend, 1 on
the emulator), or --dask ADDRESS, a Dask distributed scheduler whose workers
have the project installed (an emulated run asks for the worker resource
fabric=1). Before it starts the command prints the plan's size and its
estimated time; each finished run prints the runs done and the time left.

Writes plan.json and runs/ (one record per run, as it finishes), then
results.json (configuration, every flow of every run, summary), runs.csv,
summary.csv, summary.md and bisection.png into a time-stamped directory
under --out, and prints the pattern x scheme table. An interrupted plan
keeps its finished runs and names the missing ones; --resume DIR runs them.

    dcfabric bisection --summarize RUN_DIR [RUN_DIR ...] [--out results/bisection]

redoes those files from finished runs: one run's in place; several runs'
with the same k, bw, queue, duration, omit and schemes and different seeds
(e.g. one seed per run) together, into a new time-stamped directory.
"""
import datetime
import os

from controller.fattree.scheme_parameters import DEFAULTS as SCHEME_DEFAULTS, SIMULATOR_ONLY
from controller.fattree.scheme_strategies import DYNAMIC_SCHEMES
from scripts.argtypes import add_seed_options, fattree_k, positive, seconds, seeds_of
from scripts.emulator.command import command_main
from scripts.experiments import defaults
from scripts.experiments.bisection_report import format_table, merge, summarize, write_outputs
from scripts.experiments.patterns import PAPER_PATTERNS, PatternError, check, label, seeded
from scripts.results import machine
from scripts.runner import backends, options as runner_options, records
from scripts.sim import controller_options
from topologies.fattree import FatTree

EXPERIMENT = 'bisection'
# Every scheme an experiment can run, in run order; the emulator refuses
# those only the simulator runs, and they are named, never defaults.
SCHEMES = ('nonblocking', 'twolevel', 'ecmp', 'classifier', 'scheduler', 'letflow')
DEFAULT_SCHEMES = tuple(s for s in SCHEMES if s not in SIMULATOR_ONLY)
QUEUE_PACKETS = 50
# the simulated backends' rate without --bw: the docs' datacenter-rate table
SIMULATED_MBPS = 1000.0


def add_ovs_instances_argument(p):
    p.add_argument('--ovs-instances', type=positive(int), metavar='N',
                   help='emulator: private Open vSwitch daemons the fat-tree\'s switches are spread over '
                        '(default: by the machine\'s cores and the forwarding the link rate needs, printed at '
                        'start; 1: the machine\'s own)')


def add_link_arguments(p, emulator_rate):
    """--bw (its emulator default as ``emulator_rate`` says), --queue and
    --ovs-instances: the links and switches an experiment runs on."""
    p.add_argument('--bw', type=positive(float), default=None,
                   help='link rate in Mbit/s, host and switch links (default: on the emulator %s; on the simulated '
                        'backends %g, the docs\' datacenter-rate table); a simulated run\'s time settings follow it'
                        % (emulator_rate, SIMULATED_MBPS))
    p.add_argument('--queue', type=positive(int), default=QUEUE_PACKETS,
                   help='packets each shaped link may queue (default %d)' % QUEUE_PACKETS)
    add_ovs_instances_argument(p)


def add_arguments(p):
    p.add_argument('--k', type=fattree_k, default=4, help='fat-tree arity (even; default 4, as the paper)')
    add_link_arguments(p, 'the highest rate this machine\'s calibration predicts faithful for the schemes and '
                          'patterns, `dcfabric calibrate`')
    p.add_argument('--duration', type=seconds(), default=None,
                   help='measured seconds per run (default: the emulator\'s %d, whole seconds; on a simulated '
                        'backend %d polling periods, e.g. 0.1 at 1 Gbit/s)'
                        % (defaults.EMULATOR_DURATION_S, defaults.PERIODS_MEASURED))
    p.add_argument('--omit', type=seconds(minimum_exclusive=False), default=None,
                   help='seconds of each flow left out of the measurement: TCP start, scheduling (default: the '
                        'emulator\'s %d; simulated: %d polling periods)'
                        % (defaults.EMULATOR_OMIT_S, defaults.PERIODS_LEFT_OUT))
    add_seed_options(p, reps=3, seed_base=1, per='repetition of every pattern')
    p.add_argument('--patterns', nargs='+', default=list(PAPER_PATTERNS),
                   help='patterns (default: the paper\'s ten): random, stride-N, '
                        'staggered-EDGEP-PODP, interpod-incoming, sameid-outgoing')
    p.add_argument('--schemes', nargs='+', default=list(DEFAULT_SCHEMES), choices=SCHEMES,
                   help='schemes to run (default: all but letflow); nonblocking is the 100%% reference; '
                        'letflow (flowlet groups) runs on the packet simulator only')
    runner_options.add_backend_argument(p)
    controller_options.add_arguments(p)
    p.add_argument('--flowlet-timeout', type=positive(float), default=None, metavar='US',
                   help='sim, letflow: microseconds of silence that end a flowlet (default %g, the LetFlow '
                        'paper\'s)' % SCHEME_DEFAULTS['flowlet_timeout_us'])
    runner_options.add_arguments(p)
    p.add_argument('--out', default='results/bisection', help='results directory')
    p.add_argument('--summarize', metavar='RUN_DIR', nargs='+',
                   help='no experiment: redo the table, CSV, Markdown and plot of a finished run in place; '
                        'of several runs with the same settings and different seeds, together, into a new '
                        'directory under --out')


def resummarize(run_dirs, out):
    """Summary, table, CSV, Markdown and plot again from finished runs'
    results.json: one run's in its own directory, several runs' (merged,
    bisection_report.merge) in a new time-stamped one under ``out``."""
    saved_runs = [(run_dir, records.load_results(run_dir)) for run_dir in run_dirs]
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


def calibrated():
    """This machine's emulator calibration (measured once, then cached:
    scripts/emulator/calibration.py), printed as the run uses it."""
    from scripts.emulator import calibration
    used = calibration.current()
    print(calibration.describe(used), flush=True)
    return used


def emulator_rate(used, topo, schemes, patterns):
    """(the emulator's default link rate, why): the highest the calibration
    ``used`` predicts faithful for ``schemes`` on ``patterns``."""
    from scripts.emulator import calibration
    return calibration.default_link_mbps(used, topo, schemes, patterns)


def backend_config(args, topo, schemes):
    """The config entries that depend on the backend: the link rate and the
    time settings with where each came from, and the backend's own
    options; ValueError for an option the backend does not take."""
    given = {'duration': args.duration, 'omit': args.omit}
    if args.backend == 'emulator':
        controller_options.refuse_on_emulator(args, ('--flowlet-timeout', args.flowlet_timeout))
        if not all(isinstance(v, int) for v in (args.duration, args.omit) if v is not None):
            raise ValueError('the emulator\'s iperf3 runs whole seconds: --duration %s --omit %s'
                             % (args.duration, args.omit))
        for scheme in schemes:
            if scheme in SIMULATOR_ONLY:
                raise ValueError('scheme %s runs on the simulator only (--backend sim): %s'
                                 % (scheme, SIMULATOR_ONLY[scheme]))
        used = calibrated()
        bw, bw_source = ((args.bw, 'given') if args.bw is not None else
                         emulator_rate(used, topo, schemes, args.patterns))
        times, sources = defaults.resolve(given, defaults.emulated())
        from scripts.emulator.bisection_backend import daemons_config
        return dict(bw=bw, **times, defaults=dict(sources, bw=bw_source), calibration=used.as_config(),
                    **daemons_config(args.k, bw, args.ovs_instances))
    if args.ovs_instances is not None:
        raise ValueError('--ovs-instances sets the emulator\'s Open vSwitch daemons; the %s backend has none'
                         % args.backend)
    bw, bw_source = ((args.bw, 'given') if args.bw is not None else
                     (SIMULATED_MBPS, 'the simulated backends\' default, the docs\' datacenter-rate table'))
    given.update(period_s=args.period, min_rto_ms=args.min_rto, control_delay_ms=args.control_delay)
    times, sources = defaults.resolve(given, defaults.simulated(bw))
    if args.backend == 'flow':
        for option, value in (('--min-rto', args.min_rto), ('--control-delay', args.control_delay),
                              ('--sender-queue', args.sender_queue), ('--flowlet-timeout', args.flowlet_timeout)):
            if value is not None:
                raise ValueError('%s is the packet simulator\'s (--backend sim); the flow-level model has no '
                                 'packets, TCP or control channel' % option)
        if 'letflow' in schemes:
            raise ValueError('scheme letflow switches flowlets, gaps between a flow\'s packets; the flow-level '
                             'model has no packets: run it with --backend sim')
        return dict(bw=bw, duration=times['duration'], omit=times['omit'], period_s=times['period_s'],
                    defaults=dict({k: sources[k] for k in ('duration', 'omit', 'period_s')}, bw=bw_source))
    if args.flowlet_timeout is not None and 'letflow' not in schemes:
        raise ValueError('--flowlet-timeout is the letflow scheme\'s, and --schemes has no letflow')
    args.period, args.min_rto, args.control_delay = times['period_s'], times['min_rto_ms'], times['control_delay_ms']
    config = dict(bw=bw, duration=times['duration'], omit=times['omit'], **controller_options.config(args),
                  defaults=dict(sources, bw=bw_source))
    if 'letflow' in schemes:
        config['flowlet_timeout_us'] = (SCHEME_DEFAULTS['flowlet_timeout_us']
                                        if args.flowlet_timeout is None else args.flowlet_timeout)
    return config


def experiment_config(args):
    seeds = seeds_of(args)
    topo = FatTree(args.k)
    for pattern in args.patterns:
        check(pattern, topo)
    schemes = [s for s in SCHEMES if s in args.schemes]
    return {'experiment': EXPERIMENT, 'backend': args.backend, 'machine': machine(), 'k': args.k,
            'queue': args.queue, **backend_config(args, topo, schemes), 'seeds': seeds, 'patterns': args.patterns,
            'schemes': schemes, 'hosts': len(topo.hosts),
            'started': datetime.datetime.now().isoformat(timespec='seconds')}


def plan(config):
    """Every run, in the one order each backend executes them: per seed and
    pattern the reference first, then the fat-tree's schemes, in reverse
    order on every other pattern (the emulator then keeps the last
    scheme's controller for the next pattern's first run)."""
    topo = FatTree(config['k'])
    fattree_schemes = [s for s in config['schemes'] if s != 'nonblocking']
    runs = []
    for rep, seed in enumerate(config['seeds']):
        for index, pattern in enumerate(config['patterns']):
            order = fattree_schemes if index % 2 == 0 else fattree_schemes[::-1]
            if 'nonblocking' in config['schemes']:
                order = ['nonblocking'] + order
            flows = [list(pair) for pair in seeded(pattern, topo, seed)]
            runs += [{'id': 'seed%d/%s/%s' % (seed, pattern, scheme), 'scheme': scheme, 'pattern': pattern,
                      'rep': rep, 'seed': seed, 'flows': flows} for scheme in order]
    return runs


def judged(config, runs):
    """``runs`` with each emulated run's fidelity verdict judged again with
    the reference's share of line rate for its pattern and seed, known
    once the reference has run (a run may finish before its reference on
    another worker)."""
    if config['backend'] != 'emulator':
        return runs
    from scripts.emulator.fidelity import judged_again
    line_rate = config['hosts'] * config['bw']
    reference = {(r['pattern'], r['rep']): round(100.0 * r['aggregate_mbps'] / line_rate, 1)
                 for r in runs if r['scheme'] == 'nonblocking'}
    return [dict(r, fidelity=judged_again(r['fidelity'], reference.get((r['pattern'], r['rep'])))) for r in runs]


def describe(config):
    """A finished run's progress line."""
    def line(record):
        text = '%-12s %-26s seed %d: %8.1f Mbit/s aggregate' % (
            record['scheme'], label(record['pattern']), record['seed'], record['aggregate_mbps'])
        if 'fidelity' in record:
            from scripts.emulator.fidelity import describe as verdict_line
            text += ', emulator %s' % verdict_line(record['fidelity'])
        if record['scheme'] in DYNAMIC_SCHEMES and 'controller_decisions' in record:
            text += ', %d controller decisions' % len(record['controller_decisions'])
        return text
    return line


def report(config, plan_runs, finished, out_dir):
    runs = judged(config, [finished[r['id']] for r in plan_runs if r['id'] in finished])
    if not runs:
        return
    summary = summarize(runs, config)
    write_outputs(out_dir, config, runs, summary)
    print(format_table(summary, config))
    print('results in %s' % out_dir)


def run_from_args(args, say=None):
    if args.summarize:
        return resummarize(args.summarize, args.out)
    if args.resume:
        config, plan_runs = runner_options.resumed(args, EXPERIMENT)
        out_dir = args.resume
    else:
        config = experiment_config(args)
        plan_runs = plan(config)
        out_dir = os.path.join(args.out, datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    runner_options.run_plan(args, EXPERIMENT, config, plan_runs, out_dir, describe(config),
                            lambda finished: report(config, plan_runs, finished, out_dir), say)


main = command_main('dcfabric bisection', __doc__, add_arguments, run_from_args, EXPERIMENT,
                    (PatternError, backends.BackendError))


if __name__ == '__main__':
    main()
