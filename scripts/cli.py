"""dcfabric: one entry point to start fabrics with their controller, run
experiments and print routing state.

  dcfabric run [--k 4]          main job: fat-tree + controller, all-pairs
                                reachability, an inter-pod iperf3, a result
  dcfabric cli [--k 4]          the same fabric with Mininet's CLI
  dcfabric controller [--k 4]   only the controller (ryu-manager style)
  dcfabric tables [--k 4]       two-level tables in the paper's notation
  dcfabric bisection [...]      bisection-bandwidth experiment (paper Table 2)
  dcfabric workload [...]       flow-completion times under realistic workloads
  dcfabric fail link A B [--silent] | fail switch S [--silent]
  dcfabric recover link A B | recover switch S
                                inject / undo failures on a running fabric
  dcfabric links [--k 4]        carrier and BFD state of every switch link
  dcfabric clean [--dry-run]    remove what runs that were killed left behind
  dcfabric calibrate            measure this machine's emulator again (cached per machine;
                                fabric commands measure it once and print what they use)
  dcfabric kevin cli [--n 8 --k-s 2 --k-d 1 --scheduler none|bfs|greedy|distda]
                                Kevin de Bruijn fabric + its controller, Mininet CLI
  dcfabric kevin tables [--n 8 --k-s 2] [--da 011:100]
                                Kevin's greedy LPM tables, sizes vs the bound
  dcfabric kevin experiment emulation|model|report ...
                                Kevin's emulated and model experiments
  dcfabric nbridge leaf-fault|alltoall ...
                                K-ary N-Bridge: leaf-fault experiment, AlltoAll checker
  dcfabric letflow run|build ...
                                LetFlow on ns-3 and the Markov model
  dcfabric p4 fabric ...        P4 data planes on bmv2 in Mininet
  dcfabric measure NAME ...     the benchmarks and model checks (dcfabric measure --help)

Each experiment takes --help; ``python -m MODULE`` runs the same command.
"""
import argparse
import json
import sys
import time

from controller.fattree import APP as FATTREE_APP, READY_PATH
from controller.fattree.scheme_parameters import OPENFLOW_SCHEMES
from scripts.emulator import traffic
from scripts.emulator.bfd import policy as bfd_policy, sessions as bfd_sessions
from scripts.emulator.fidelity import MIN_IDLE_PCT
from scripts.emulator.ovs import daemon_policy
from scripts.argtypes import fattree_k as _k, non_negative_int, positive as _positive
from topologies.fattree import FatTree, fattree_size


def cmd_tables(args):
    from controller.fattree.pipeline import rule_counts
    from controller.fattree.twolevel import all_tables
    topo = FatTree(args.k)
    tables = all_tables(topo)
    names = [args.switch] if args.switch else [s.name for s in topo.switches]
    for name in names:
        topo.node(name)
        prefixes, suffixes, housekeeping = rule_counts(topo, tables[name])
        print(tables[name].format())
        print('  OpenFlow rules: %d prefix + %d suffix + %d housekeeping\n'
              % (prefixes, suffixes, housekeeping))


def cmd_controller(args):
    from controller.ryuapp import manager
    print('live view: http://%s:%d/view  metrics: /metrics' % (args.listen, args.rest_port), flush=True)
    manager.main([FATTREE_APP, '--params', json.dumps(_params(args)), '--ofp-port', str(args.ofp_port),
                  '--rest-port', str(args.rest_port), '--listen', args.listen]
                 + (['--verbose'] if args.verbose else []))


def _params(args):
    """The fat-tree app's parameters: k, and the routing scheme (with its
    link capacity when links are shaped: the large-flow threshold is a
    fraction of it)."""
    params = {'k': args.k, 'scheme': args.scheme}
    if getattr(args, 'bw', None):
        params['link_mbps'] = args.bw
    return params


def ovs_daemons(args, topo):
    """--ovs-instances, or the daemon policy's choice for this fabric on
    this machine (scripts/emulator/ovs/daemon_policy.py); with --cluster
    the servers' own Open vSwitch."""
    if args.cluster:
        if args.ovs_instances is not None and args.ovs_instances > 1:
            raise ValueError('--ovs-instances is for one machine: with --cluster every server '
                             'runs its own Open vSwitch')
        return daemon_policy.DaemonChoice(1, "with --cluster every server runs its own Open vSwitch")
    from scripts.emulator import calibration
    used = calibration.current()
    print(calibration.describe(used), flush=True)
    return daemon_policy.choose_for(topo, args.bw, args.ovs_instances,
                                    per_daemon_mbps=used.faithful_mbps_per_daemon)


def bfd_interval(args, topo, daemons):
    """--bfd-ms, or by default the interval that fits the BFD packet budget,
    BFD off when one of ``daemons`` ovs-vswitchd would hold too many sessions
    (scripts.emulator.bfd)."""
    if args.bfd_ms is None:
        return bfd_policy.default_interval(len(topo.switch_links()), daemons)
    return args.bfd_ms or None


def _fabric(args, **kwargs):
    from scripts.cluster.options import fabric_class
    from scripts.emulator.fabric import Fabric
    from scripts.emulator.machine_checks import check_fits, check_memory
    if not args.cluster:  # spread over servers, the fabric's memory is theirs
        switches, hosts, switch_ports = fattree_size(args.k)
        check_memory('fattree(k=%d)' % args.k, switches + hosts, switch_ports)
    topo = FatTree(args.k)
    check_fits(topo, memory=not args.cluster)
    daemons = ovs_daemons(args, topo)
    return fabric_class(args, Fabric)(topo, FATTREE_APP, _params(args), ofp_port=args.ofp_port,
                                      rest_port=args.rest_port, bw=args.bw, ovs_instances=daemons,
                                      bfd_ms=bfd_interval(args, topo, daemons.count), ready_path=READY_PATH,
                                      **kwargs)


def cmd_fault(args):
    from scripts.emulator import faults
    from scripts.cluster.options import switch_sites
    topo = FatTree(args.k)
    sites = switch_sites(args, topo)
    if len(args.names) != (2 if args.target == 'link' else 1):
        raise ValueError('a link is named by its two ends (e.g. e0_0 a0_2, or e0_0 h0_0_2), '
                         'a switch by one name')
    element = (args.target, *args.names)
    if args.command == 'fail':
        faults.fail(topo, element, silent=args.silent, sites=sites)
    else:
        faults.recover(topo, element, sites=sites)
    print('%s %s %s%s' % ('failed' if args.command == 'fail' else 'recovered', args.target,
                          ' '.join(args.names), ' (silent)' if getattr(args, 'silent', False) else ''))


def cmd_links(args):
    from scripts.cluster.options import switch_sites
    from topologies.mininet_topo import interface_name
    topo = FatTree(args.k)
    sites = switch_sites(args, topo)
    bfd = bfd_sessions.states(topo, sites)
    print('%-8s %-8s %-14s %-14s' % ('a', 'b', 'carrier a/b', 'bfd a/b'))
    for link in topo.switch_links():
        ends = [interface_name(topo, link.node_a, link.port_a), interface_name(topo, link.node_b, link.port_b)]
        carrier = []
        for node, interface in zip((link.node_a, link.node_b), ends):
            out = sites.run(sites.server_of(node), 'ip', '-br', 'link', 'show', interface, check=False).stdout
            carrier.append('up' if 'LOWER_UP' in out else 'absent' if not out else 'down')
        print('%-8s %-8s %-14s %-14s' % (link.node_a, link.node_b, '/'.join(carrier),
                                         '/'.join(str(bfd.get(i)) for i in ends)))


def cmd_clean(args):
    from scripts.emulator import clean
    clean.main(dry_run=args.dry_run)


def cmd_calibrate(args):
    from scripts.emulator import calibration
    from scripts.emulator.progress import progress
    calibration.rerun(progress)


def cmd_bisection(args):
    from scripts.experiments.bisection import run_from_args
    run_from_args(args)


def cmd_workload(args):
    from scripts.experiments.workload import run_from_args
    run_from_args(args)


def cmd_cli(args):
    from mininet.cli import CLI
    with _fabric(args, controller=not args.external_controller, log_level='info') as fabric:
        print('live view: http://127.0.0.1:%d/view  metrics: /metrics' % args.rest_port)
        CLI(fabric.net)


# Pairs the main job pings by default: all of them up to k=8 (16,256 pairs,
# about a minute here); above, a seeded sample of this many.
ALL_PAIRS_UP_TO = 20000
PAIRS_SAMPLE = 1000


def pairs_to_ping(hosts, pairs_sample, seed):
    """(ordered host pairs, what they are in words): ``pairs_sample`` of
    them, or all of them unless there are more than ALL_PAIRS_UP_TO, then
    a sample of PAIRS_SAMPLE (pure)."""
    count = len(hosts) * (len(hosts) - 1)
    if pairs_sample is None and count <= ALL_PAIRS_UP_TO:
        return traffic.all_pairs(hosts), 'all %d host pairs' % count
    sample = pairs_sample or PAIRS_SAMPLE
    pairs = traffic.sample_pairs(hosts, sample, seed)
    what = '%d sampled host pairs (seed %d)' % (len(pairs), seed)
    if pairs_sample is None:
        what += ' of {:,}: all would take long (--pairs-sample N to choose)'.format(count)
    return pairs, what


def cmd_run(args):
    from scripts.emulator.fidelity import FidelityMonitor, idle_rtt_ms, verdict
    from scripts.emulator.progress import progress
    fabric = _fabric(args)  # checks size and memory before the model is used
    topo = fabric.model
    hosts = [h.name for h in topo.hosts]
    src, dst = hosts[0], hosts[-1]
    pairs, what = pairs_to_ping(hosts, args.pairs_sample, args.seed)
    started = time.time()
    with fabric:
        print('fabric ready in %.1f s: %d switches, %d hosts, BFD %s' % (
            time.time() - started, len(topo.switches), len(hosts),
            'every %d ms' % fabric.bfd_ms if fabric.bfd_ms else 'off'), flush=True)
        print('live view: http://127.0.0.1:%d/view  metrics: /metrics' % args.rest_port, flush=True)
        progress('pinging %s' % what)
        reach_s = traffic.wait_all_pairs(fabric.net, hosts, pairs=pairs, progress=progress,
                                         deadline_s=60 + len(pairs) // 100)
        print('%d/%d pairs reachable (pinging took %.1f s)' % (len(pairs), len(pairs), reach_s), flush=True)
        progress('the fabric idle for %d s: what it costs the machine' % IDLE_SAMPLE_S)
        idle = FidelityMonitor().start()
        time.sleep(IDLE_SAMPLE_S)
        idle_figures = idle.stop()
        ttl = traffic.ping_ttl(fabric.net, src, dst)
        rtt = idle_rtt_ms(fabric.net.get(src), topo.node(dst).ip, count=20)
        print('%s -> %s (%s -> %s): reply TTL %d = %d switch hops, idle RTT %.2f ms (%.2f ms per switch '
              'traversal: each is a veth and a wake of ovs-vswitchd, docs/emulator.md)'
              % (src, dst, topo.node(src).ip, topo.node(dst).ip, ttl, 64 - ttl, rtt, rtt / (2 * (64 - ttl))))
        print(idle_cost(idle_figures, fabric.daemons.count, sum(len(topo.ports(s.name)) for s in topo.switches),
                        fabric.bfd_ms, len(topo.switch_links())), flush=True)
        progress('iperf3 %s -> %s for %d s' % (src, dst, args.seconds))
        monitor = FidelityMonitor().start()
        report = traffic.iperf3(fabric.net, src, dst, seconds=args.seconds)
        headroom = verdict(monitor.stop())
        mbps = traffic.received_mbps(report)
    print('iperf3 TCP %s -> %s (pod %d -> pod %d), %d s: %.1f Mbit/s'
          % (src, dst, topo.pod_of(src), topo.pod_of(dst), args.seconds, mbps))
    print('emulator during the flow: machine idle %s%%, busiest ovs-vswitchd %s%% of a core: %s'
          % (headroom['idle_pct_median'], headroom['daemon_busy_pct_median'],
             'the emulator had headroom' if headroom['ok'] else
             'the emulator limited the flow (%s)' % '; '.join(headroom['limited_by'])))
    print('result: k=%d fat-tree, %d/%d %spairs reachable, inter-pod TCP %.1f Mbit/s'
          % (args.k, len(pairs), len(pairs), '' if args.pairs_sample is None else 'sampled ', mbps))


IDLE_SAMPLE_S = 3


def idle_cost(figures, daemons, switch_ports, bfd_ms, switch_links):
    """What the idle fabric costs the machine, in a line; when it leaves
    the machine no idle CPU, what takes it (pure)."""
    line = ('idle fabric: machine idle %s%%, busiest ovs-vswitchd %s%% of a core'
            % (figures['idle_pct_median'], figures['daemon_busy_pct_median']))
    if figures['idle_pct_median'] is None or figures['idle_pct_median'] >= MIN_IDLE_PCT:
        return line
    return line + ((' - the machine is saturated with no traffic: %d ovs-vswitchd poll {:,} switch ports '
                    '(%s), so every packet waits for a daemon that is busy elsewhere and traffic measured '
                    'here is the emulator\'s limit, not the network\'s; more cores carry it '
                    '(docs/emulator.md)').format(switch_ports)
                   % (daemons, ('and send {:,} BFD packets/s'.format(
                       round(bfd_policy.bfd_packets_per_s(switch_links, bfd_ms))) if bfd_ms else 'BFD off')))


# Experiments with command lines of their own, reached through dcfabric:
# {command: {name: (module with main(argv), what it does)}}.
EXPERIMENTS = {
    'nbridge': {
        'leaf-fault': ('scripts.nbridge.leaf_fault', 'leaf-switch shield/recover on an emulated N-Bridge '
                                                     '(seed 003, section 5)'),
        'alltoall': ('scripts.nbridge.alltoall', 'the AlltoAll connectivity checker (run in the hosts)'),
    },
    'letflow': {
        'run': ('scripts.letflow.ns3_experiments', 'LetFlow on ns-3 and the section 4.2 Markov model'),
        'build': ('scripts.letflow.ns3.build', 'compile the ns-3 simulator (setup does this)'),
    },
    'p4': {
        'fabric': ('scripts.p4.bmv2_fabric', 'the P4 programs on bmv2 switches in Mininet'),
    },
    'measure': {
        'startup': ('scripts.emulator.benchmarks.startup', 'fat-tree start-up, readiness, teardown, failure detection, '
                                               'model timing'),
        'startup-report': ('scripts.emulator.benchmarks.startup_report', 'the start-up table from its JSON'),
        'cluster': ('scripts.emulator.benchmarks.cluster', "throughput and start-up on this machine's OVS, private "
                                               'daemons and container servers'),
        'rate-sweep': ('scripts.emulator.benchmarks.rate_sweep', 'the highest link rate the emulator carries faithfully '
                                                     '(non-blocking and two-level, every pattern)'),
        'latency': ('scripts.emulator.benchmarks.latency', 'ping RTT by hop count, idle and under load: what a switch '
                                               'traversal costs'),
        'shaped-profile': ('scripts.emulator.benchmarks.shaped_profile', "where ovs-vswitchd's time goes on shaped links (perf)"),
        'shaped-link': ('scripts.emulator.benchmarks.shaped_link', "what the shaped links' buckets and the hosts' TCP do "
                                                       'to the rate carried'),
        'recompute': ('scripts.fattree.recompute_benchmark', "the controller's whole reaction to failures "
                                                             '(recompute, staged plan, messages) and its start-up '
                                                             'program, k=4 to 48'),
        'bfd-defaults': ('scripts.fattree.bfd_defaults', 'the BFD interval each k gets (pure)'),
        'bfd-floor': ('scripts.fattree.bfd_floor', 'the lowest BFD interval without false detection'),
        'outages': ('scripts.fattree.outages', 'outages per failure class, probe streams'),
        'hitless': ('scripts.fattree.hitless', 'loss caused by routing updates themselves'),
        'failure-check': ('scripts.fattree.failure_check', 'model check: every connected pair routed '
                                                           'under failure sets'),
        'fault-campaign': ('scripts.fattree.fault_campaign', 'random overlapping faults, the installed state '
                                                             'checked after each'),
        'classifier-difference': ('scripts.fattree.classifier_difference',
                                  'classifier minus two-level routing from bisection runs'),
        'classifier-placement': ('scripts.fattree.classifier_placement',
                                 'the classifier against two-level routing in the fair-share model'),
        'rearrangement': ('scripts.fattree.rearrangement', "what rearrangement adds to the scheduler's search"),
        'ovs-port-cost': ('scripts.emulator.benchmarks.ovs_port_cost', 'what one ovs-vswitchd takes to add and remove ports'),
        'sim-speed': ('scripts.sim.benchmarks.speed', "the packet-level simulator's events per CPU second and CPU time "
                                                     'per simulated second, k=4-16 at 1 and 10 Gbit/s'),
        'view-cost': ('scripts.emulator.benchmarks.view_cost', 'what the live view and the metrics cost the controller'),
    },
}


def run_experiment(args):
    import importlib
    module, _ = args.experiment
    sys.exit(importlib.import_module(module).main(args.args))


def add_experiments(sub, command, experiments, help):
    """``dcfabric COMMAND NAME ARGS...``: ARGS go to NAME's own command line."""
    parser = sub.add_parser(command, help=help, description=help,
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog='\n'.join('  %-22s %s (python -m %s)' % (name, what, module)
                                             for name, (module, what) in experiments.items()))
    names = parser.add_subparsers(dest='experiment_name', required=True, metavar='NAME')
    for name, (module, what) in experiments.items():
        # no options of its own: everything after NAME is NAME's (main passes it on)
        p = names.add_parser(name, help=what, add_help=False)
        p.set_defaults(func=run_experiment, experiment=(module, what))


def build_parser():
    from scripts.cluster.options import add_arguments as add_cluster_arguments
    parser = argparse.ArgumentParser(prog='dcfabric', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest='command', required=True)

    def fabric_options(p):
        p.add_argument('--k', type=_k, default=4, help='fat-tree arity: even, 4..254 (default 4)')
        p.add_argument('--ofp-port', type=int, default=6653, help='OpenFlow port on 127.0.0.1')
        p.add_argument('--rest-port', type=int, default=8080, help='REST port on 127.0.0.1')
        p.add_argument('--scheme', choices=OPENFLOW_SCHEMES, default='twolevel',
                       help='routing scheme: two-level tables only (default), ECMP select groups, '
                            'flow classification (3.6) or central flow scheduling (3.7)')

    def network_options(p):
        add_cluster_arguments(p)
        p.add_argument('--bw', type=_positive(float), help='shape every link to BW Mbit/s (HTB)')
        p.add_argument('--bfd-ms', type=non_negative_int, default=None,
                       help='BFD interval on every switch link, detection after 3 misses (0: off; '
                            'default: the shortest interval, at least %d ms, that keeps the '
                            'fabric within %d BFD packets/s; off above %d sessions '
                            'per ovs-vswitchd, which it cannot keep up)'
                            % (bfd_policy.FLOOR_MS, bfd_policy.BUDGET_PPS, bfd_policy.MAX_SESSIONS))
        p.add_argument('--ovs-instances', type=_positive(int), metavar='N',
                       help='spread the switches over N private Open vSwitch daemons, each in a '
                            'namespace of its own (default: by the machine\'s cores and the fabric, '
                            'printed at start: unshaped one per %d switch ports, so 1 up to k=8 and '
                            '4 at k=16; shaped by the forwarding the link rate needs, at most one per '
                            '%d cores; 1 with --cluster)' % (daemon_policy.PORTS_PER_INSTANCE,
                                                           daemon_policy.CORES_PER_DAEMON))

    p = sub.add_parser('run', help='main job: build, check reachability, iperf3, tear down')
    fabric_options(p)
    network_options(p)
    p.add_argument('--seconds', type=_positive(int), default=5, help='iperf3 duration')
    p.add_argument('--pairs-sample', type=_positive(int), metavar='N',
                   help='ping N random ordered host pairs instead of all (default: all up to {:,} pairs, '
                        'so up to k=8; {:,} sampled above)'.format(ALL_PAIRS_UP_TO, PAIRS_SAMPLE))
    p.add_argument('--seed', type=int, default=1, help='seed of the pair sample (default 1)')
    p.set_defaults(func=cmd_run)

    p = sub.add_parser('cli', help='start the fabric and open the Mininet CLI')
    fabric_options(p)
    network_options(p)
    p.add_argument('--external-controller', action='store_true',
                   help='do not start a controller: connect to one already on --ofp-port')
    p.set_defaults(func=cmd_cli)

    p = sub.add_parser('controller', help='run only the controller, in the foreground')
    fabric_options(p)
    p.add_argument('--bw', type=_positive(float),
                   help='link rate in Mbit/s of the fabric it controls (the scheduler and '
                        'classifier scale their thresholds by it; default 10)')
    p.add_argument('--listen', default='127.0.0.1', help='address the listeners bind to')
    p.add_argument('--verbose', action='store_true')
    p.set_defaults(func=cmd_controller)

    for verb in ('fail', 'recover'):
        p = sub.add_parser(verb, help='%s a link or switch of a running fat-tree' % verb)
        p.add_argument('target', choices=['link', 'switch'])
        p.add_argument('names', nargs='+', help='switch names as the topology has them, e.g. e0_0 a0_2')
        p.add_argument('--k', type=_k, default=4)
        if verb == 'fail':
            p.add_argument('--silent', action='store_true',
                           help='black-hole packets but keep carrier up (only BFD notices)')
        add_cluster_arguments(p, tunnel=False)
        p.set_defaults(func=cmd_fault)

    p = sub.add_parser('links', help='carrier and BFD state of every switch-to-switch link')
    p.add_argument('--k', type=_k, default=4)
    add_cluster_arguments(p, tunnel=False)
    p.set_defaults(func=cmd_links)

    p = sub.add_parser('bisection', help='bisection-bandwidth experiment (paper section 4, Table 2)')
    from scripts.experiments.bisection import add_arguments
    add_arguments(p)
    p.set_defaults(func=cmd_bisection)

    p = sub.add_parser('workload', help='flow-completion times under web-search / data-mining traffic, '
                                        'every scheme')
    from scripts.experiments.workload import add_arguments as add_workload_arguments
    add_workload_arguments(p)
    p.set_defaults(func=cmd_workload)

    p = sub.add_parser('kevin', help='Kevin de Bruijn fabric: Mininet CLI, greedy LPM tables')
    from scripts.kevin.experiments_cli import add_cli_arguments
    kevin = add_cli_arguments(p)
    p = kevin.add_parser('experiment', help="Kevin's emulated and model experiments", add_help=False)
    p.set_defaults(func=run_experiment, experiment=('scripts.kevin.experiments_cli', 'Kevin experiments'))

    add_experiments(sub, 'nbridge', EXPERIMENTS['nbridge'], 'K-ary N-Bridge experiments')
    add_experiments(sub, 'letflow', EXPERIMENTS['letflow'], 'LetFlow on ns-3 and its Markov model')
    add_experiments(sub, 'p4', EXPERIMENTS['p4'], 'P4 data planes on bmv2 (needs p4c and bmv2)')
    add_experiments(sub, 'measure', EXPERIMENTS['measure'], 'benchmarks and model checks, each writing JSON/CSV')

    p = sub.add_parser('clean', help='remove what dcfabric runs that ended without tearing down left '
                                     '(only theirs, never anything else)')
    p.add_argument('--dry-run', action='store_true', help='list what would be removed, remove nothing')
    p.set_defaults(func=cmd_clean)

    p = sub.add_parser('calibrate', help="measure this machine's emulator again: what one ovs-vswitchd forwards "
                                         'and what the hosts carry (scripts/emulator/calibration.py)')
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser('tables', help='print two-level tables and rule counts')
    p.add_argument('--k', type=_k, default=4)
    p.add_argument('--switch', help='one switch by name, e.g. e0_1, a2_2, c1_1')
    p.set_defaults(func=cmd_tables)
    return parser


def main(argv=None):
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if getattr(args, 'func', None) is run_experiment:
        args.args = rest
    elif rest:
        parser.error('unrecognized arguments: %s' % ' '.join(rest))
    from scripts.emulator.command import run_command
    from topologies.model import UnknownNodeError
    run_command('dcfabric', lambda: args.func(args), (UnknownNodeError,))


if __name__ == '__main__':
    main()
