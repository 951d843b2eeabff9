"""The ``--cluster`` and ``--tunnel`` options of ``dcfabric run|cli|fail|recover|links``."""
import argparse
import functools

from scripts.emulator import faults
from scripts.cluster.placement import PlacementError, parse_servers, place_fattree
from scripts.cluster.sites import TUNNEL_KINDS, ServerSites
from scripts.emulator.ovs.instances import InstanceSites


def _servers(text):
    try:
        return parse_servers(text)
    except PlacementError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_arguments(parser, tunnel=True):
    parser.add_argument('--cluster', type=_servers, metavar='SERVER[,SERVER...]',
                        help='run the fabric on these servers (ssh; whole pods per server, '
                             'tunnels between them), the controller here')
    if tunnel:
        parser.add_argument('--tunnel', choices=TUNNEL_KINDS, default='gre',
                            help='tunnel kind between servers (default gre; vxlan where the '
                                 'kernel has no ip_gre)')


def fabric_class(args, local):
    """``local`` (a Fabric class) or, with --cluster, ClusterFabric on those servers."""
    if not args.cluster:
        return local
    from scripts.cluster.net import ClusterFabric
    return functools.partial(ClusterFabric, servers=args.cluster, tunnel=args.tunnel)


def switch_sites(args, model):
    """Where the switches of ``model`` run: this machine (on its own Open
    vSwitch, or on the private instances of scripts/emulator/ovs/instances.py that
    run now), or the --cluster servers."""
    if not args.cluster:
        return InstanceSites.running() or faults.LOCAL
    return ServerSites(place_fattree(model, args.cluster), args.cluster)
