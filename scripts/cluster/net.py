"""The fat-tree on Mininet's cluster edition (``mininet.examples.cluster``,
Debian's mininet package), with this project's fixes as subclasses; the
installed package is never edited.

- Placement: ``ModelPlacer`` places each node where scripts/cluster/placement
  says (whole pods per server), not by Mininet's placers, which know no pods
  (and whose ``HostSwitchBinPlacer`` indexes servers by a float on Python 3).
- Switches: userspace datapath, OpenFlow 1.3, fail-secure, as on one machine
  (``UserOVSSwitch``), started in one ovs-vsctl batch per server.
- ssh: one multiplexed connection per server (``controlPath``) instead of
  one per node shell and command; ``precheck`` (which calls sys.exit) is
  replaced by scripts/cluster/sites.check_servers, which names the server.
- Tunnels: ``TunnelLink`` makes Mininet's GRE links (gretap, MTU 1450 on
  every link as ``RemoteGRELink`` does) or, for kernels without ip_gre (this
  machine's), VXLAN links the same way, and raises with the server's name
  when a command prints an error instead of going on.
"""
import functools
import itertools
import os
import subprocess
from operator import attrgetter

from mininet.examples.cluster import (MininetCluster, Placer, RemoteGRELink, RemoteHost,
                                      RemoteOVSSwitch)
from mininet.node import OVSSwitch

from scripts.cluster import sites
from scripts.cluster.placement import cross_server_links, nodes_by_server, place_fattree
from scripts.emulator.errors import SetupError
from scripts.emulator.fabric import Fabric
from scripts.emulator.mininet_classes import CpuGroupMixin, UserOVSSwitch
from scripts.emulator.ovs.daemon_policy import DaemonChoice
from scripts.emulator.progress import progress

TUNNEL_MTU = 1450


class ClusterSwitch(RemoteOVSSwitch, UserOVSSwitch):
    """UserOVSSwitch on a server, over a shared ssh connection."""

    def __init__(self, name, **params):
        params.setdefault('controlPath', True)
        super().__init__(name, **params)

    @classmethod
    def batchStartup(cls, switches, **_kwargs):
        """One ovs-vsctl per server, run as an ssh command. Mininet's
        RemoteOVSSwitch types it into a switch's shell, whose terminal
        truncates lines at 4,095 characters: the batch of more than a
        few switches is cut and no bridge is made (mininet#831)."""
        for server, group in itertools.groupby(sorted(switches, key=attrgetter('server')),
                                               attrgetter('server')):
            group = tuple(group)
            # ovs-vsctl prints the new controller records' UUIDs: judge it by the bridges made
            OVSSwitch.batchStartup(group, run=lambda cmds, **_: group[0].rcmd(cmds))
            missing = {s.name for s in group} - set(group[0].rcmd('ovs-vsctl --timeout=30 list-br').split())
            if missing:
                raise SetupError('server %s: Open vSwitch did not make bridges %s'
                                 % (server, ' '.join(sorted(missing))))
        return switches


def _server_command(node, cmd, **_kwargs):
    """Run ``cmd`` as root in the root namespace of ``node``'s server;
    any output means it failed."""
    output = node.rcmd(cmd).strip()
    if output:
        raise SetupError('server %s: `%s...` said: %s' % (node.server, cmd[:60], output[:2000]))
    return output


class ClusterHost(CpuGroupMixin, RemoteHost):
    """A host on a server, over a shared ssh connection; its commands run
    in the fabric's CPU group there (made on every server)."""

    def __init__(self, name, **params):
        params.setdefault('controlPath', True)
        super().__init__(name, **params)


class ModelPlacer(Placer):
    """Places every node where ``assignment`` (node -> server) says."""

    def __init__(self, assignment, **kwargs):
        super().__init__(**kwargs)
        self.assignment = assignment

    def place(self, node):
        return self.assignment[node]


class TunnelLink(RemoteGRELink):
    """A veth pair on one server, an Ethernet tunnel of ``kind`` between two."""
    kind = 'gre'
    _keys = itertools.count(1)  # GRE key / VXLAN id: one per tunnel, in this process

    def makeTunnel(self, node1, node2, intfname1, intfname2, addr1=None, addr2=None):
        key = next(self._keys)
        for node, name, addr, peer in ((node1, intfname1, addr1, node2), (node2, intfname2, addr2, node1)):
            cmds = [sites.tunnel_command(self.kind, name, node.serverIP, peer.serverIP, key)]
            if addr:
                cmds.append(['ip', 'link', 'set', name, 'address', addr])
            cmds.append(['ip', 'link', 'set', name, 'mtu', str(TUNNEL_MTU), 'up'])
            for cmd in cmds:
                _server_command(node, ' '.join(cmd))
            if not self.moveIntf(name, node):
                raise SetupError('server %s: cannot move %s into %s' % (node.server, name, node))


class VXLANLink(TunnelLink):
    kind = 'vxlan'


LINK_CLASSES = {'gre': TunnelLink, 'vxlan': VXLANLink}


class ClusterFabric(Fabric):
    """A fat-tree ``Fabric`` whose switches and hosts run on ``servers``
    (whole pods per server); the controller runs here, listening on the
    address the servers are reached from. Bad input is refused before
    anything starts: a repeated server, more servers than pods, and (in
    ``check``) a server that ssh, sudo, Mininet, Open vSwitch or the tunnel
    kind do not work on."""

    def __init__(self, model, app, params, servers, tunnel='gre', **kwargs):
        if tunnel not in LINK_CLASSES:
            raise ValueError('tunnel must be one of %s, got %r' % (', '.join(LINK_CLASSES), tunnel))
        if kwargs.get('bw'):
            raise ValueError('--bw (TCLink shaping) is not supported with --cluster')
        self.placement = place_fattree(model, servers)
        self.servers = list(servers)
        self.tunnel = tunnel
        self.sites = sites.ServerSites(self.placement, servers)
        self.host_sites = self.sites
        self.tunnels = cross_server_links(model, self.placement)
        self.server_ips = {}
        if kwargs.get('listen') is None:
            kwargs['listen'] = controller_address(self.servers)
        kwargs['ovs_instances'] = DaemonChoice(1, "every server runs its own Open vSwitch")
        super().__init__(model, app, params, **kwargs)

    def check(self):
        if os.geteuid() != 0:
            raise SetupError('emulation needs root (Mininet on the servers runs through sudo)')
        try:
            self.server_ips = {server: sites.server_address(server) for server in self.servers}
            progress('checking servers %s' % ', '.join(self.servers))
            sites.check_servers(self.servers, self.tunnel,
                                {server: len(nodes) for server, nodes in nodes_by_server(self.placement).items()})
        except sites.ServerError as err:
            raise SetupError(str(err)) from None

    def make_net(self, topo, link_class, cpu_group):
        try:
            sites.check_reaches(self.servers, self.listen, self.ofp_port)
        except sites.ServerError as err:
            raise SetupError(str(err)) from None
        progress('%d servers: %s; %d %s tunnels (aggregation-core links between servers)'
                 % (len(self.servers), ', '.join(self.servers), len(self.tunnels), self.tunnel))
        return MininetCluster(topo=topo, servers=self.servers, serverIP=self.server_ips,
                              user=sites.SSH_USER, precheck=False,
                              placement=functools.partial(ModelPlacer, self.placement),
                              switch=ClusterSwitch, host=ClusterHost.in_group(cpu_group), link=LINK_CLASSES[self.tunnel],
                              build=False, controller=None, autoSetMacs=False, autoStaticArp=False)

    # the servers' switches are Mininet's own (ClusterSwitch): BFD is set once they run
    bfd_at_creation = False

    def stop_network(self):
        self.net.stop()

    def tunnel_links(self):
        """Mininet's links that are tunnels between servers."""
        return [link for link in self.net.links if link.tunnel]


def controller_address(servers):
    """This machine's address on the way to the servers (where the
    controller must listen); all servers must be reached from one address."""
    sources = {}
    for server in servers:
        try:
            address = sites.server_address(server)
        except sites.ServerError as err:
            raise SetupError(str(err)) from None
        route = subprocess.run(['ip', '-o', 'route', 'get', address],
                               capture_output=True, text=True, timeout=60)
        words = route.stdout.split()
        if route.returncode != 0 or 'src' not in words:
            raise SetupError('no route from here to server %s: %s' % (server, route.stderr.strip()))
        sources[server] = words[words.index('src') + 1]
    if len(set(sources.values())) != 1:
        raise SetupError('servers are reached from different local addresses (%s): the '
                         'controller listens on one' % ', '.join('%s via %s' % kv for kv in sources.items()))
    return sources[servers[0]]
