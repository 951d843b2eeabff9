"""Flow-completion times under realistic workloads on an emulated k-ary
fat-tree, every routing scheme, against the non-blocking reference.

Flow sizes come from a published CDF (scripts/workloads/flow_sizes.py: DCTCP's
web-search, VL2's data-mining, or a CDF file); every host starts flows with
Poisson arrivals offering --load of its link rate, each to a peer the
--pattern picks. Arrivals stop after --seconds; the run then waits at most
--drain seconds for every started flow to end, and reports those that did
not. The flows run in the hosts through a persistent request/response
generator (scripts/emulator/flowgen.py), one TCP connection per flow; the
FCT is timed at the receiver from connect to the last byte, and divided by
the flow's ideal FCT on an idle fabric (scripts/experiments/workload_report.py)
for its slowdown.

    dcfabric workload [--k 4] [--cdf websearch|datamining|FILE] [--load L [L ...]]
        [--seconds S] [--pattern all-to-all|permutation|inter-pod] [--schemes ...]
        [--seeds ...] [--fail LINK ...] [--bw MBPS] [--drain S] [--out DIR]
        [--backend emulator|sim] [--control-delay MS] [--min-rto MS] [--fail-at S]
        [--period S] [--tcp cubic|dctcp] [--ecn-threshold PACKETS]
        [--jobs N | --dask ADDRESS] [--resume DIR]

--backend sim runs the same flows on the packet-level simulator
(scripts/sim/workload_backend.py): each a sized TCP transfer from its
arrival time on ns-3 switches executing the controller's exported rules,
the dynamic schemes' strategies as the controller in simulated time, their
flow-mods applied --control-delay ms after a poll or packet-in; --fail's
links are down from the start, the rules computed for them, or with
--fail-at S fail S seconds into each run (BFD detects it, the switches'
fast-failover groups repair locally, the controller's staged update
follows: scripts/sim/failure_reaction.py); the ideal FCT is the simulated
fabric's own. The dynamic schemes poll every --period seconds; the hosts
run --tcp (CUBIC by default, as the emulator's; DCTCP with the switches
marking ECN once a queue holds --ecn-threshold packets). Options of one
backend are refused with the other. A simulated run's polling period,
minimum RTO, control delay and arrival time follow the link rate as the
bisection's (scripts/experiments/defaults.py: --seconds is its duration).
The plan runs through scripts/runner, as the bisection's (--jobs, --dask,
--resume).

Every scheme of one (seed, load) runs the same flows. Writes plan.json and
runs/ (one record per run, as it finishes), flows.csv,
summary.json (slowdown mean, p50, p99 per size bucket, scheme and load;
every run's counts and fidelity verdict), slowdown_vs_load.png and
small_flow_fct_cdf.png into a time-stamped directory under --out.
"""
import argparse
import datetime
import os

from scripts.argtypes import add_seed_options, fattree_k, positive, seeds_of
from scripts.emulator.command import command_main
from scripts.emulator.flowgen import FlowgenError
from scripts.experiments import defaults
from scripts.experiments.bisection import (
    DEFAULT_SCHEMES, SCHEMES, SIMULATED_MBPS, add_link_arguments, calibrated, emulator_rate)
from scripts.experiments.patterns import WORKLOAD_PATTERNS
from scripts.results import machine
from scripts.runner import backends, options as runner_options
from scripts.sim import controller_options
from scripts.sim.scenario import TCP_VARIANTS, SimSettings
from scripts.workloads.flow_sizes import CdfError, cdf_of, check_load
from topologies.fattree import FatTree

EXPERIMENT = 'workload'


def load_fraction(text):
    """argparse type: a load in (0, 1]."""
    try:
        return check_load(float(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def fail_link(text):
    """argparse type: a switch link as A-B (the topology's names, e.g. a0_2-c1_1)."""
    ends = text.split('-')
    if len(ends) != 2 or not all(ends):
        raise argparse.ArgumentTypeError('a link is A-B by switch names, e.g. a0_2-c1_1; got %r' % text)
    return tuple(ends)


def add_arguments(p):
    p.add_argument('--k', type=fattree_k, default=4, help='fat-tree arity (default 4)')
    p.add_argument('--cdf', default='websearch',
                   help='flow sizes: websearch (DCTCP), datamining (VL2), or a CDF file '
                        '(lines of SIZE_BYTES CUMULATIVE_PROBABILITY)')
    p.add_argument('--load', type=load_fraction, nargs='+', default=[0.5],
                   help='offered load per host as a fraction of its link rate, in (0, 1] (several: a sweep)')
    p.add_argument('--seconds', type=positive(float), default=None,
                   help='seconds of arrivals (default: the emulator\'s %d; simulated, %d polling periods, e.g. '
                        '0.1 at 1 Gbit/s)' % (defaults.EMULATOR_DURATION_S, defaults.PERIODS_MEASURED))
    p.add_argument('--pattern', choices=WORKLOAD_PATTERNS, default='all-to-all',
                   help='where a flow goes: any other host, one fixed host (a random permutation), '
                        'a host in another pod')
    p.add_argument('--schemes', nargs='+', default=list(DEFAULT_SCHEMES), choices=SCHEMES,
                   help='schemes to run (default: all but letflow, which runs on the simulator only); '
                        'nonblocking is the reference switch')
    add_seed_options(p, reps=1, seed_base=1, per='draw of the flows')
    p.add_argument('--fail', type=fail_link, nargs='+', default=[], metavar='LINK',
                   help='fat-tree switch links to fail (carrier down) for the whole run, e.g. a0_2-c1_1')
    add_link_arguments(p, 'the bisection\'s calibrated rate over the highest --load, a workload below full load '
                          'leaving the emulator room')
    p.add_argument('--drain', type=positive(float),
                   help='seconds after the last arrival to wait for flows to end (default: twice what '
                        'the largest flow drawn takes alone, plus 10 s, at most 300)')
    runner_options.add_backend_argument(p)
    controller_options.add_arguments(p)
    p.add_argument('--fail-at', type=float, default=None, metavar='S',
                   help='sim: --fail\'s links fail S seconds into each run, and the controller reacts '
                        '(default: down from the start, the rules computed for them)')
    p.add_argument('--tcp', choices=TCP_VARIANTS, default=None,
                   help='sim: the hosts\' TCP (default cubic, as the emulator\'s hosts); dctcp needs '
                        '--ecn-threshold')
    # No default threshold: the DCTCP paper gives K for its deep-buffered switches at 1 and 10 Gbit/s
    # (20 and 65 packets) only; a K taken for another rate or queue would silently set the result.
    p.add_argument('--ecn-threshold', type=positive(int), default=None, metavar='PACKETS',
                   help='sim, dctcp: the switches mark ECN on a packet that finds this many packets in '
                        'its queue (the DCTCP paper\'s K: 20 at 1 Gbit/s, 65 at 10 Gbit/s); below --queue')
    runner_options.add_arguments(p)
    p.add_argument('--out', default='results/workload', help='results directory')


def backend_options(args, topo, schemes):
    """The config entries that depend on the backend: the link rate, the
    arrivals' seconds and a simulated run's time settings (with where each
    came from), and the options only ``args.backend`` takes; ValueError,
    before anything runs, for one given to the other backend or out of
    range."""
    bw, sources = args.bw, {'bw': 'given'}
    if args.backend == 'flow':
        raise ValueError('the workload\'s flows start, send their sizes and end; the flow-level model runs the '
                         'bisection\'s long-lived flows only: run the workload with --backend sim or emulator')
    if args.backend == 'sim':
        if args.ovs_instances is not None:
            raise ValueError('--ovs-instances sets the emulator\'s Open vSwitch daemons; the simulator '
                             '(--backend sim) has none')
        if bw is None:
            bw, sources['bw'] = SIMULATED_MBPS, 'the simulated backends\' default, the docs\' datacenter-rate table'
        tcp = args.tcp or SimSettings.tcp
        if tcp == 'dctcp' and args.ecn_threshold is None:
            raise ValueError('--tcp dctcp needs --ecn-threshold PACKETS: DCTCP slows down on the switches\' '
                             'ECN marks, and without a threshold no switch marks (the DCTCP paper\'s K: 20 '
                             'packets at 1 Gbit/s, 65 at 10 Gbit/s)')
        if args.ecn_threshold is not None and tcp != 'dctcp':
            raise ValueError('--ecn-threshold marks ECN-capable packets, and the simulated hosts\' %s sends '
                             'none: it takes --tcp dctcp' % tcp)
        if args.ecn_threshold is not None and args.ecn_threshold >= args.queue:
            raise ValueError('--ecn-threshold %d never marks in %d-packet queues (--queue): a queue that holds '
                             'that many is full and drops the packet' % (args.ecn_threshold, args.queue))
        derived = defaults.simulated(bw)
        times, more = defaults.resolve(
            {'seconds': args.seconds, 'period_s': args.period, 'min_rto_ms': args.min_rto,
             'control_delay_ms': args.control_delay},
            dict(seconds=derived['duration'], **{k: derived[k] for k in ('period_s', 'min_rto_ms', 'control_delay_ms')}))
        args.period, args.min_rto, args.control_delay = times['period_s'], times['min_rto_ms'], times['control_delay_ms']
        options = {'bw': bw, 'seconds': times['seconds'], **controller_options.config(args),
                   'link_delay_us': SimSettings.link_delay_us, 'tcp': tcp,
                   'ecn_threshold_packets': args.ecn_threshold or 0, 'defaults': dict(sources, **more)}
        if args.fail_at is not None:
            if args.fail_at < 0 or not args.fail:
                raise ValueError('--fail-at takes a time >= 0 and the links of --fail, got %g and %d link(s)'
                                 % (args.fail_at, len(args.fail)))
            options['fail_at_s'] = args.fail_at
        return options
    controller_options.refuse_on_emulator(args, ('--fail-at', args.fail_at), ('--tcp', args.tcp),
                                          ('--ecn-threshold', args.ecn_threshold))
    from scripts.emulator.bisection_backend import daemons_config
    used = calibrated()
    if args.bw is None:
        from scripts.emulator.calibration import nice_rate_at_most
        rate, why = emulator_rate(used, topo, schemes, ['random'])
        bw = nice_rate_at_most(rate / max(args.load))
        sources['bw'] = 'the bisection\'s %g Mbit/s on Random over the highest load, %g (%s)' % (rate, max(args.load), why)
    times, more = defaults.resolve({'seconds': args.seconds},
                                   {'seconds': (defaults.EMULATOR_DURATION_S, defaults.emulated()['duration'][1])})
    return dict(times, bw=bw, defaults=dict(sources, **more), calibration=used.as_config(),
                **daemons_config(args.k, bw, args.ovs_instances))


def experiment_config(args):
    seeds = seeds_of(args)
    cdf = cdf_of(args.cdf)
    topo = FatTree(args.k)
    for a, b in args.fail:
        if not any({link.node_a, link.node_b} == {a, b} for link in topo.switch_links()):
            raise ValueError('--fail %s-%s: no such switch link in a k=%d fat-tree' % (a, b, args.k))
    schemes = [s for s in SCHEMES if s in args.schemes]
    return {'experiment': EXPERIMENT, 'backend': args.backend, 'machine': machine(), 'k': args.k,
            'queue': args.queue, **backend_options(args, topo, schemes), 'cdf': cdf.name,
            'cdf_mean_bytes': round(cdf.mean_bytes()), 'loads': args.load, 'pattern': args.pattern,
            'schemes': schemes, 'seeds': seeds,
            'fail': ['%s-%s' % link for link in args.fail], 'drain': args.drain, 'hosts': len(topo.hosts),
            'started': datetime.datetime.now().isoformat(timespec='seconds')}


def plan(config, cdf):
    """Every run: for each seed and load the flows drawn once from ``cdf``,
    every scheme in turn on them (the non-blocking reference first)."""
    from scripts.experiments.workload_report import default_drain_s, draw_flows
    topo = FatTree(config['k'])
    runs = []
    for seed in config['seeds']:
        for load in config['loads']:
            flows = draw_flows(topo, cdf, load, config['bw'], config['seconds'], config['pattern'], seed)
            drain_s = config['drain'] or default_drain_s(flows, config['bw'])
            runs += [{'id': 'seed%d/load%g/%s' % (seed, load, scheme), 'scheme': scheme, 'seed': seed, 'load': load,
                      'drain_s': drain_s, 'flows': flows} for scheme in config['schemes']]
    return runs


def run_rows(run, record):
    """flows.csv's rows of a finished run (its plan entry and record)."""
    from scripts.experiments.workload_report import flow_rows
    measured = {f['id']: f for f in record['flows']}
    return flow_rows(run['scheme'], run['seed'], run['load'], run['flows'], measured,
                     lambda flow: measured[flow['id']]['ideal_fct_s'])


def run_summary(run, record, rows):
    """A finished run as the summary lists it: its counts, its drain, and
    its fidelity verdict or simulation."""
    from scripts.experiments.workload_report import run_counts
    kept = {k: record[k] for k in ('fidelity', 'idle_rtt_ms', 'simulation') if k in record}
    return {'scheme': run['scheme'], 'seed': run['seed'], 'load': run['load'], 'drain_s': run['drain_s'],
            **run_counts(rows), **kept}


def describe(plan_runs):
    from scripts.experiments.workload_report import finished_line
    by_id = {run['id']: run for run in plan_runs}

    def line(record):
        run = by_id[record['id']]
        rows = run_rows(run, record)
        text = finished_line(run_summary(run, record, rows), rows)
        if 'fidelity' in record:
            from scripts.emulator.fidelity import describe as verdict_line
            text += ', emulator %s' % verdict_line(record['fidelity'])
        return text
    return line


def report(config, plan_runs, finished, out_dir):
    from scripts.experiments.workload_report import format_table, summarize, write_outputs
    rows, runs = [], []
    for run in plan_runs:
        if run['id'] in finished:
            run_rows_of = run_rows(run, finished[run['id']])
            rows += run_rows_of
            runs.append(run_summary(run, finished[run['id']], run_rows_of))
    if not runs:
        return
    summary = summarize(rows, runs)
    write_outputs(out_dir, config, rows, summary)
    print(format_table(summary, config))
    for run in runs:
        if run['unfinished']:
            print('%s load %g seed %d: %d flows did not finish, e.g. %s' % (
                run['scheme'], run['load'], run['seed'], run['unfinished'], run['unfinished_flows'][:3]))
    print('results in %s' % out_dir)


def run_from_args(args, say=None):
    if args.resume:
        config, plan_runs = runner_options.resumed(args, EXPERIMENT)
        out_dir = args.resume
    else:
        config = experiment_config(args)
        plan_runs = plan(config, cdf_of(args.cdf))
        out_dir = os.path.join(args.out, datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    runner_options.run_plan(args, EXPERIMENT, config, plan_runs, out_dir, describe(plan_runs),
                            lambda finished: report(config, plan_runs, finished, out_dir), say)


main = command_main('dcfabric workload', __doc__, add_arguments, run_from_args, EXPERIMENT,
                    (CdfError, FlowgenError, backends.BackendError))


if __name__ == '__main__':
    main()
