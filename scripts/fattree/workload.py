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
the flow's ideal FCT on an idle fabric (scripts/fattree/workload_report.py)
for its slowdown.

    dcfabric workload [--k 4] [--cdf websearch|datamining|FILE] [--load L [L ...]]
        [--seconds S] [--pattern all-to-all|permutation|inter-pod] [--schemes ...]
        [--seeds ...] [--fail LINK ...] [--bw MBPS] [--drain S] [--out DIR]
        [--backend emulator|sim] [--control-delay MS] [--min-rto MS] [--fail-at S]
        [--period S] [--tcp cubic|dctcp] [--ecn-threshold PACKETS]

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
backend are refused with the other.

Every scheme of one (seed, load) runs the same flows. Writes flows.csv,
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
from scripts.fattree.bisection import BACKENDS
from scripts.fattree.bisection_run import (
    DEFAULT_SCHEMES, SCHEMES, add_ovs_instances_argument, daemons_config)
from scripts.fattree.patterns import WORKLOAD_PATTERNS
from scripts.results import machine
from scripts.sim import controller_options
from scripts.sim.network import TCP_VARIANTS, SimSettings
from scripts.workloads.flow_sizes import CdfError, cdf_of, check_load
from topologies.fattree import FatTree

QUEUE_PACKETS = 50
# Twice the bisection's faithful rate: a workload below full load leaves the
# emulator room (web search at half load, 20 Mbit/s: every run faithful,
# 156 flows in 15 s), and each run carries its own verdict.
DEFAULT_BW_MBPS = 20.0


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
    p.add_argument('--seconds', type=positive(float), default=15, help='seconds of arrivals (default 15)')
    p.add_argument('--pattern', choices=WORKLOAD_PATTERNS, default='all-to-all',
                   help='where a flow goes: any other host, one fixed host (a random permutation), '
                        'a host in another pod')
    p.add_argument('--schemes', nargs='+', default=list(DEFAULT_SCHEMES), choices=SCHEMES,
                   help='schemes to run (default: all but letflow, which runs on the simulator only); '
                        'nonblocking is the reference switch')
    add_seed_options(p, reps=1, seed_base=1, per='draw of the flows')
    p.add_argument('--fail', type=fail_link, nargs='+', default=[], metavar='LINK',
                   help='fat-tree switch links to fail (carrier down) for the whole run, e.g. a0_2-c1_1')
    p.add_argument('--bw', type=positive(float), default=DEFAULT_BW_MBPS,
                   help='link rate in Mbit/s, host and switch links (default %g)' % DEFAULT_BW_MBPS)
    p.add_argument('--queue', type=positive(int), default=QUEUE_PACKETS,
                   help='packets each shaped link may queue (default %d)' % QUEUE_PACKETS)
    add_ovs_instances_argument(p)
    p.add_argument('--drain', type=positive(float),
                   help='seconds after the last arrival to wait for flows to end (default: twice what '
                        'the largest flow drawn takes alone, plus 10 s, at most 300)')
    p.add_argument('--backend', choices=BACKENDS, default='emulator',
                   help='emulator (Mininet, OVS, the hosts\' TCP; default) or sim (ns-3, the switches '
                        'executing the controller\'s exported rules)')
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
    p.add_argument('--out', default='results/workload', help='results directory')


def base_rtts_s(net, host_of, topo, reference):
    """{switches on the path: idle ping RTT (s)}: one host pair per path length."""
    from scripts.emulator.fidelity import idle_rtt_ms
    from scripts.fattree.workload_report import switches_between
    hosts = [h.name for h in topo.hosts]
    first = hosts[0]
    pairs = {1: (first, hosts[-1])} if reference else {}
    if not reference:
        for other in hosts[1:]:
            pairs.setdefault(switches_between(topo, first, other), (first, other))
    rtts = {}
    for switches, (a, b) in pairs.items():
        rtt = idle_rtt_ms(net.get(host_of[a]), net.get(host_of[b]).IP())
        if rtt is None:
            raise RuntimeError('no ping reply %s -> %s on an idle fabric' % (a, b))
        rtts[switches] = rtt / 1000
    return rtts


def measure(net, host_of, topo, flows, scheme, config, progress):
    """(the generator's result per flow id, each flow's ideal FCT function,
    fidelity figures) of one run."""
    from scripts.emulator.fidelity import FidelityMonitor
    from scripts.emulator.flowgen import run_flows
    from scripts.fattree.workload_report import ideal_fct_s, switches_between
    reference = scheme == 'nonblocking'
    rtts = base_rtts_s(net, host_of, topo, reference)

    def ideal_of(flow):
        switches = 1 if reference else switches_between(topo, flow['src'], flow['dst'])
        return ideal_fct_s(flow['size'], config['bw'], rtts[switches], switches)

    first, last = host_of[topo.hosts[0].name], host_of[topo.hosts[-1].name]
    monitor = FidelityMonitor(probe=(net.get(first), net.get(last).IP()), idle_rtt_ms=round(max(rtts.values()) * 1000, 3))
    monitor.start()
    try:
        results = run_flows(net, [dict(f, src=host_of[f['src']], dst=host_of[f['dst']]) for f in flows],
                            config['seconds'], config['drain_s'][-1], progress=progress)
    finally:
        figures = monitor.stop()
    return results, ideal_of, dict(figures, base_rtt_ms={str(s): round(r * 1000, 3) for s, r in rtts.items()})


def fail_links(fabrics, links, progress):
    from scripts.emulator import faults, traffic
    from scripts.fattree.bisection_run import MININET_PREFIX
    for a, b in links:
        progress('failing fat-tree link %s-%s (carrier down)' % (a, b))
        faults.fail(fabrics.fattree.model, ('link', MININET_PREFIX + a, MININET_PREFIX + b),
                    sites=fabrics.fattree.sites)
    traffic.wait_all_pairs(fabrics.fattree.net, sorted(fabrics.ft_hosts.values()), progress=progress)


def run_experiment(config, topo, cdf, record, progress):
    """For each seed and load, every scheme in turn on the same flows
    (the non-blocking reference first)."""
    from scripts.emulator.fidelity import describe, verdict
    from scripts.fattree.bisection_run import Fabrics
    from scripts.fattree.workload_report import default_drain_s, draw_flows, finished_line, flow_rows, run_counts
    with Fabrics(config, progress) as fabrics:
        if config['fail'] and fabrics.fattree:
            fail_links(fabrics, config['fail'], progress)
        for seed in config['seeds']:
            for load in config['loads']:
                flows = draw_flows(topo, cdf, load, config['bw'], config['seconds'], config['pattern'], seed)
                config['drain_s'].append(config['drain'] or default_drain_s(flows, config['bw']))
                for scheme in config['schemes']:
                    progress('%s, load %g, seed %d: %d flows over %g s, then at most %g s to drain'
                             % (scheme, load, seed, len(flows), config['seconds'], config['drain_s'][-1]))
                    net, host_of = fabrics.use(scheme)
                    results, ideal_of, figures = measure(net, host_of, topo, flows, scheme, config, progress)
                    rows = flow_rows(scheme, seed, load, flows, results, ideal_of)
                    run = {'scheme': scheme, 'seed': seed, 'load': load, **run_counts(rows),
                           'fidelity': verdict(figures)}
                    record(rows, run)
                    progress('%s, emulator %s' % (finished_line(run, rows), describe(run['fidelity'])))


def backend_options(args):
    """The config entries of the options only ``args.backend`` takes;
    ValueError, before anything runs, for one given to the other backend
    or out of range."""
    if args.backend == 'sim':
        if args.ovs_instances is not None:
            raise ValueError('--ovs-instances sets the emulator\'s Open vSwitch daemons; the simulator '
                             '(--backend sim) has none')
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
        options = {'machine': machine(), **controller_options.config(args),
                   'link_delay_us': SimSettings.link_delay_us, 'tcp': tcp,
                   'ecn_threshold_packets': args.ecn_threshold or 0}
        if args.fail_at is not None:
            if args.fail_at < 0 or not args.fail:
                raise ValueError('--fail-at takes a time >= 0 and the links of --fail, got %g and %d link(s)'
                                 % (args.fail_at, len(args.fail)))
            options['fail_at_s'] = args.fail_at
        return options
    controller_options.refuse_on_emulator(args, ('--fail-at', args.fail_at), ('--tcp', args.tcp),
                                          ('--ecn-threshold', args.ecn_threshold))
    return daemons_config(args.k, args.bw, args.ovs_instances)


def run_from_args(args, progress=None):
    # the report's numeric libraries are loaded only when an experiment runs, not for --help
    from scripts.fattree.workload_report import format_table, summarize, write_outputs
    if progress is None:
        from scripts.emulator.progress import progress
    seeds = seeds_of(args)
    cdf = cdf_of(args.cdf)
    topo = FatTree(args.k)
    for a, b in args.fail:
        if not any({link.node_a, link.node_b} == {a, b} for link in topo.switch_links()):
            raise ValueError('--fail %s-%s: no such switch link in a k=%d fat-tree' % (a, b, args.k))
    schemes = [s for s in SCHEMES if s in args.schemes]
    config = {'backend': args.backend, 'k': args.k, 'bw': args.bw, 'queue': args.queue, **backend_options(args),
              'cdf': cdf.name,
              'cdf_mean_bytes': round(cdf.mean_bytes()), 'loads': args.load, 'seconds': args.seconds,
              'pattern': args.pattern, 'schemes': schemes, 'seeds': seeds,
              'fail': ['%s-%s' % link for link in args.fail], 'drain': args.drain, 'drain_s': [],
              'hosts': len(topo.hosts), 'started': datetime.datetime.now().isoformat(timespec='seconds')}
    out_dir = os.path.join(args.out, datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    rows, runs = [], []

    def record(run_rows, run):
        rows.extend(run_rows)
        runs.append(run)
    if args.backend == 'sim':
        from scripts.sim.workload_backend import run_experiment as run_backend
    else:
        run_backend = run_experiment
    try:
        run_backend(dict(config, fail=args.fail), topo, cdf, record, progress)
    finally:
        if runs:  # what was measured before an interruption is kept
            summary = summarize(rows, runs)
            write_outputs(out_dir, config, rows, summary)
            print(format_table(summary, config))
            for run in runs:
                if run['unfinished']:
                    print('%s load %g seed %d: %d flows did not finish, e.g. %s' % (
                        run['scheme'], run['load'], run['seed'], run['unfinished'], run['unfinished_flows'][:3]))
            print('results in %s' % out_dir)


main = command_main('dcfabric workload', __doc__, add_arguments, run_from_args, 'workload', (CdfError, FlowgenError))


if __name__ == '__main__':
    main()
