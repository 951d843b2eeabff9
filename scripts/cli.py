"""dcfabric: one entry point to start fabrics with their controller, run
experiments and print routing state.

  dcfabric run [--k 4]          main job: fat-tree + controller, all-pairs
                                reachability, an inter-pod iperf3, a result
  dcfabric cli [--k 4]          the same fabric with Mininet's CLI
  dcfabric controller [--k 4]   only the controller (ryu-manager style)
  dcfabric tables [--k 4]       two-level tables in the paper's notation
"""
import argparse
import os
import sys
import time

from topologies.fattree import FatTree, check_k

FATTREE_APP = 'controller.fattree_app'


def _k(text):
    try:
        return check_k(int(text) if text.lstrip('-').isdigit() else text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _positive(kind):
    def parse(text):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError('must be positive, got %s' % text)
        return value
    return parse


def cmd_tables(args):
    from controller.fattree_rules import rule_counts
    from controller.twolevel import all_tables
    topo = FatTree(args.k)
    tables = all_tables(topo)
    names = [args.switch] if args.switch else [s.name for s in topo.switches]
    for name in names:
        topo.node(name)
        prefixes, suffixes, housekeeping = rule_counts(tables[name])
        print(tables[name].format())
        print('  OpenFlow rules: %d prefix + %d suffix + %d housekeeping\n'
              % (prefixes, suffixes, housekeeping))


def cmd_controller(args):
    from controller import manager
    manager.main([FATTREE_APP, '--params', '{"k": %d}' % args.k, '--ofp-port', str(args.ofp_port),
                  '--rest-port', str(args.rest_port), '--listen', args.listen]
                 + (['--verbose'] if args.verbose else []))


def _fabric(args, **kwargs):
    from scripts.fabric import Fabric
    return Fabric(FatTree(args.k), FATTREE_APP, {'k': args.k}, ofp_port=args.ofp_port,
                  rest_port=args.rest_port, bw=args.bw, **kwargs)


def cmd_cli(args):
    from mininet.cli import CLI
    with _fabric(args, controller=not args.external_controller, log_level='info') as fabric:
        CLI(fabric.net)


def cmd_run(args):
    from scripts import traffic
    topo = FatTree(args.k)
    hosts = [h.name for h in topo.hosts]
    src, dst = hosts[0], hosts[-1]
    started = time.time()
    with _fabric(args) as fabric:
        print('fabric up in %.1f s: %d switches, %d hosts' % (time.time() - started,
              len(topo.switches), len(hosts)))
        reach_s = traffic.wait_all_pairs(fabric.net, hosts)
        pairs = len(hosts) * (len(hosts) - 1)
        print('all %d host pairs reachable, %.1f s after start' % (pairs, reach_s))
        ttl = traffic.ping_ttl(fabric.net, src, dst)
        print('%s -> %s (%s -> %s): reply TTL %d = %d switch hops'
              % (src, dst, topo.node(src).ip, topo.node(dst).ip, ttl, 64 - ttl))
        report = traffic.iperf3(fabric.net, src, dst, seconds=args.seconds)
        mbps = traffic.received_mbps(report)
    print('iperf3 TCP %s -> %s (pod %d -> pod %d), %d s: %.1f Mbit/s'
          % (src, dst, topo.pod_of(src), topo.pod_of(dst), args.seconds, mbps))
    print('result: k=%d fat-tree, %d/%d pairs reachable, inter-pod TCP %.1f Mbit/s'
          % (args.k, pairs, pairs, mbps))


def build_parser():
    parser = argparse.ArgumentParser(prog='dcfabric', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest='command', required=True)

    def fabric_options(p):
        p.add_argument('--k', type=_k, default=4, help='fat-tree arity: even, 4..254 (default 4)')
        p.add_argument('--ofp-port', type=int, default=6653, help='OpenFlow port on 127.0.0.1')
        p.add_argument('--rest-port', type=int, default=8080, help='REST port on 127.0.0.1')

    def network_options(p):
        p.add_argument('--bw', type=_positive(float), help='shape every link to BW Mbit/s (HTB)')

    p = sub.add_parser('run', help='main job: build, check reachability, iperf3, tear down')
    fabric_options(p)
    network_options(p)
    p.add_argument('--seconds', type=_positive(int), default=5, help='iperf3 duration')
    p.set_defaults(func=cmd_run)

    p = sub.add_parser('cli', help='start the fabric and open the Mininet CLI')
    fabric_options(p)
    network_options(p)
    p.add_argument('--external-controller', action='store_true',
                   help='do not start a controller: connect to one already on --ofp-port')
    p.set_defaults(func=cmd_cli)

    p = sub.add_parser('controller', help='run only the controller, in the foreground')
    fabric_options(p)
    p.add_argument('--listen', default='127.0.0.1', help='address the listeners bind to')
    p.add_argument('--verbose', action='store_true')
    p.set_defaults(func=cmd_controller)

    p = sub.add_parser('tables', help='print two-level tables and rule counts')
    p.add_argument('--k', type=_k, default=4)
    p.add_argument('--switch', help='one switch by name, e.g. e0_1, a2_2, c1_1')
    p.set_defaults(func=cmd_tables)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    from scripts.fabric import SetupError
    from topologies.model import UnknownNodeError
    try:
        args.func(args)
    except (SetupError, UnknownNodeError, ValueError, TimeoutError) as err:
        sys.exit('dcfabric: %s' % err)
    except KeyboardInterrupt:
        sys.exit('dcfabric: interrupted; everything torn down')


if __name__ == '__main__':
    main()
