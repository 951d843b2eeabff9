"""The Mininet classes a fabric is made of: userspace Open vSwitch bridges
started in one OVSDB transaction, hosts in the fabric's CPU group, shaped
links with a class for BFD, and veths made in one ``ip -batch``."""
import os
import resource
import subprocess

from mininet.link import Intf, Link, TCIntf
from mininet.net import Mininet
from mininet.node import Host, OVSSwitch, RemoteController, Switch

from scripts.emulator import faults, shaping
from scripts.emulator.bfd import policy as bfd_policy
from scripts.emulator.errors import SetupError
from scripts.emulator.ovs import ovsdb
from scripts.emulator.progress import progress


class NetdevOVSSwitch(OVSSwitch):
    """OVS on the userspace datapath (no kernel module here), OpenFlow 1.3,
    fail-mode secure, started by Mininet's own code (a real subclass, so
    Mininet starts switches in one batch): bare Mininet, for comparison."""

    def __init__(self, name, **params):
        params.setdefault('datapath', 'user')
        params.setdefault('protocols', 'OpenFlow13')
        params.setdefault('failMode', 'secure')
        super().__init__(name, **params)


# Open vSwitch drops a controller that has not answered its echo for 5 s. A
# k=16 controller recomputing under start-up load went silent longer: 9
# switches were dropped, reconnected and reprogrammed over and over.
CONTROLLER_INACTIVITY_PROBE_MS = 30000


class UserOVSSwitch(NetdevOVSSwitch):
    """The project's switch: the bridges of a whole fabric in one OVSDB
    transaction (one per Open vSwitch instance).

    A subclass made by ``configured`` carries the fabric's settings. With
    ``bfd_column`` (scripts.emulator.bfd.interface_options), every switch-to-switch
    interface is created with BFD on, in
    the same ovsdb transaction as its bridge: a port is never live before its
    BFD session is up, so the controller never sees BFD's start as a
    failure. With ``instance_of`` ({switch name: scripts.emulator.ovs.instances
    OvsInstance}), a switch runs on its own Open vSwitch instance: its shell
    (and so every ovs-* command Mininet runs for it) is in the instance's
    namespace with the tools pointed at its daemons, and it reaches the
    controller through the instance's relay socket."""
    bfd_column = None
    instance_of = None

    @classmethod
    def configured(cls, bfd_column=None, instance_of=None):
        return type('ConfiguredUserOVSSwitch', (cls,), {'bfd_column': bfd_column, 'instance_of': instance_of})

    @property
    def instance(self):
        return self.instance_of[self.name] if self.instance_of else None

    def _popen(self, cmd, **params):
        # the shell Mininet starts for the switch, in its instance's namespace
        return super()._popen((self.instance.prefix() if self.instance else []) + list(cmd), **params)

    def start(self, controllers):
        # batchStartup makes the bridge from these facts (Mininet queues ovs-vsctl text)
        self.controller_targets = (['unix:' + self.instance.controller_socket()] if self.instance else
                                   ['%s:%s:%d' % (c.protocol, c.IP(), c.port) for c in controllers])
        super().start(controllers)

    def bridge(self):
        """This switch as one bridge of an OVSDB transaction: what Mininet's
        OVSSwitch.start and bridgeOpts/intfOpts would make."""
        other_config = {'datapath-id': self.dpid, 'dp-desc': self.name}
        if not self.inband:
            other_config['disable-in-band'] = 'true'
        ports = []
        for intf in self.intfList():
            if self.ports[intf] and not intf.IP():
                bfd_options = self.bfd_options(intf)
                ports.append((intf.name, self.ports[intf], {'bfd': bfd_options} if bfd_options else {}))
        return ovsdb.Bridge(
            name=self.name, datapath_type='netdev' if self.datapath == 'user' else 'system',
            fail_mode=self.failMode, protocols=self.protocols.split(',') if self.protocols else [],
            other_config=other_config, controllers=self.controller_targets, max_backoff=self.reconnectms,
            ports=ports, inactivity_probe=CONTROLLER_INACTIVITY_PROBE_MS)

    @classmethod
    def batchStartup(cls, switches, run=None):
        """Every bridge of an Open vSwitch instance in one OVSDB transaction
        (scripts/emulator/ovs/ovsdb.py: ovs-vsctl took 160 s at k=16), bridges of the same
        names left by an earlier run removed first, as Mininet does; all
        transactions sent before any wait, so that the instances' ovs-vswitchd
        apply them in parallel."""
        by_remote = {}
        for switch in switches:
            by_remote.setdefault(switch.instance.db_remote() if switch.instance else None, []).append(switch)
        try:
            for remote, group in by_remote.items():
                left = ovsdb.delete_bridges([switch.name for switch in group], remote)
                if left:
                    progress('removed %d bridges left by an earlier run' % len(left))
                ovsdb.add_bridges([switch.bridge() for switch in group], remote)
            progress('%d switches in ovsdb; waiting for %d ovs-vswitchd to apply them'
                     % (len(switches), len(by_remote)))
            for remote, group in by_remote.items():
                ovsdb.wait_applied(60 + len(group), remote)
        except ovsdb.OvsdbError as error:
            raise SetupError('starting %d switches failed: %s' % (len(switches), error))
        for switch in switches:
            switch.commands, switch.batch = [], False
            for intf in switch.intfs.values():
                if isinstance(intf, TCIntf):
                    intf.config(**intf.params)  # OVS resets the qdiscs it finds
        return switches

    def bfd_options(self, intf):
        """The interface's BFD column: the class's for switch-to-switch
        links, {} otherwise."""
        link = getattr(intf, 'link', None)
        if not self.bfd_column or link is None:
            return {}
        peer = link.intf2 if link.intf1 is intf else link.intf1
        if not isinstance(peer.node, OVSSwitch):
            return {}
        return self.bfd_column

    def intfOpts(self, intf):
        # the cluster edition's servers still start bridges with ovs-vsctl text
        return super().intfOpts(intf) + ''.join(' bfd:%s=%s' % item for item in self.bfd_options(intf).items())


class KernelBridge(Switch):
    """A Linux kernel bridge (``ip link add type bridge``): learns MACs and
    forwards in the kernel, in the context of the packet's sender, on any
    core, with no daemon between ports. No spanning tree, netfilter or
    multicast snooping: one switch, nothing to loop, nothing to filter.
    The bisection's non-blocking reference: a switch that carries what its
    hosts' links can (one ovs-vswitchd thread could not, past ~1.4 Gbit/s)."""
    OPTIONS = ('stp_state 0 forward_delay 0 mcast_snooping 0 nf_call_iptables 0 nf_call_ip6tables 0 '
               'nf_call_arptables 0')

    def start(self, controllers):
        ports = [intf.name for intf in self.intfList() if intf.name != 'lo']
        ip_batch(['link add name %s type bridge %s' % (self.name, self.OPTIONS)]
                 + ['link set %s master %s' % (port, self.name) for port in ports]
                 + ['link set %s up' % self.name], 'creating kernel bridge %s' % self.name)

    def stop(self, deleteIntfs=True):
        subprocess.run(['ip', 'link', 'delete', self.name], capture_output=True, timeout=60)
        super().stop(deleteIntfs)


class CpuGroupMixin:
    """A host whose every command (its shell, ``popen``) runs in the
    fabric's CPU group (scripts/emulator/host_cpu_group.py), behind the
    words ``HostCpuGroup.make`` gave; ``in_group(None)`` leaves the class as it is."""
    cpu_group = None  # the words that run a command in the group

    @classmethod
    def in_group(cls, prefix):
        return type(cls.__name__, (cls,), {'cpu_group': list(prefix)}) if prefix else cls

    def _popen(self, cmd, **params):
        if self.cpu_group:
            cmd = self.cpu_group + (cmd.split() if isinstance(cmd, str) else list(cmd))
        return super()._popen(cmd, **params)


class FabricHost(CpuGroupMixin, Host):
    pass


class ShapedIntf(TCIntf):
    """A shaped interface (HTB, Mininet's class 5:1 at the link's rate) whose
    switch end gives BFD a class of its own beside the data's. Behind a
    2 Mbit/s link's 1,000-packet queue BFD packets waited seconds: a k=4
    fabric with BFD at 70-100 ms saw over 100 false failures in 30 s of the
    bisection's load (scripts/fattree/bfd_floor.py --bw 2), as a real
    switch without a control-plane queue would. BFD's class is capped at
    64 kbit/s (BFD at 70 ms sends 7 kbit/s) and the data keeps its rate.

    Under load BFD also needs room in ovs-vswitchd's send socket
    (scripts/emulator/ovs/vswitchd.py SendBuffer)."""

    def bwCmds(self, bw=None, **params):
        cmds, parent = super().bwCmds(bw=bw, **params)
        if bw:
            buckets = shaping.htb_buckets(bw)
            cmds = [cmd.replace(' burst 15k', buckets) if 'classid 5:1 htb' in cmd else cmd for cmd in cmds]
        if bw and isinstance(self.node, OVSSwitch) and not (params.get('use_hfsc') or params.get('use_tbf')):
            cmds += ['%s class add dev %s parent 5:0 classid 5:2 htb rate 64kbit burst 15k quantum 1514',
                     # after a silent failure's black hole (faults.BLACKHOLE_PREF), which takes BFD too
                     '%s filter add dev %s parent 5:0 protocol ip prio ' + str(int(faults.BLACKHOLE_PREF) + 1)
                     + ' u32 match ip protocol 17 0xff '
                     'match ip dport ' + str(bfd_policy.UDP_PORT) + ' 0xffff flowid 5:2']
        return cmds, parent


class BatchedIntf(Intf):
    """An interface configured in bulk by BatchedMininet: constructing one
    runs no command (Mininet's Intf sets MAC and up-state through a shell
    round trip per interface)."""

    def config(self, mac=None, ip=None, up=True, **_params):
        return {}


class BatchedShapedIntf(ShapedIntf):
    """A ShapedIntf whose veth BatchedMininet makes: shaped once the veth
    exists (a host's end when the hosts are configured, a switch's end when
    its bridge is made: Open vSwitch resets the qdiscs it finds)."""
    made = False

    def config(self, **params):
        return super().config(**params) if self.made else {}


class BatchedLink(Link):
    """A veth pair that BatchedMininet creates with every other one in one
    ``ip -batch``, instead of a shell round trip per pair."""
    intf_class = BatchedIntf

    def __init__(self, node1, node2, **params):
        params['intf'] = self.intf_class  # Mininet.addLink passes its own default
        super().__init__(node1, node2, **params)

    def makeIntfPair(self, intfname1, intfname2, addr1=None, addr2=None, node1=None, node2=None,
                     deleteIntfs=True):
        self.pair = (intfname1, intfname2, addr1, addr2, node1, node2)


class BatchedShapedLink(BatchedLink):
    """A shaped link (``ShapedIntf`` ends) made in BatchedMininet's batch:
    unlike TCLink, its veth ends can live in private Open vSwitch
    instances' namespaces."""
    intf_class = BatchedShapedIntf


# iproute2 (6.1) opens /run/netns/NAME for every ``netns NAME`` of a batch
# and never closes it: past its open-file limit (1,024 or 4,096 on many
# machines; k=16's 5,120 switch ends) a batch fails with 'argument "dcfovs1"
# is wrong: Invalid "netns" value'. Each ``ip`` gets as many lines (two names
# each) as its limit allows, less the files it opens anyway.
IP_OWN_FILES = 32
IP_BATCH_MAX_LINES = 2000


def batch_lines(open_files):
    """Lines of two named namespaces each that one ``ip`` may take under an
    open-file limit of ``open_files`` (pure)."""
    return max(1, min(IP_BATCH_MAX_LINES, (open_files - IP_OWN_FILES) // 2))


def ip_batches(lines, size):
    """``lines`` in chunks of at most ``size``, in order (pure)."""
    return [lines[start:start + size] for start in range(0, len(lines), size)]


def ip_batch(lines, what, netns=None):
    """Run ``ip`` commands ``lines`` (in namespace ``netns``), in batches;
    SetupError naming ``what`` when one fails."""
    for chunk in ip_batches(lines, batch_lines(resource.getrlimit(resource.RLIMIT_NOFILE)[0])):
        done = subprocess.run(['ip'] + (['-n', netns] if netns else []) + ['-batch', '-'],
                              input='\n'.join(chunk) + '\n', capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise SetupError('%s failed: %s' % (what, done.stderr.strip()[:500]))


class BatchedMininet(Mininet):
    """Mininet whose build creates all veths in one ``ip -batch`` and
    configures every host with one command, sent to all hosts before any
    answer is awaited (Mininet does several shell round trips per interface
    and per host, one after the other: minutes at k=16).

    Every veth end in the root namespace joins interface group
    ``link_group`` (this process's pid: unique while it runs), so teardown
    removes them all with one ``ip link delete group``: the kernel then
    unregisters them as one batch instead of one RCU wait per interface
    (minutes at k=16)."""

    def configHosts(self):
        progress('creating %d veth pairs' % len(self.links))
        self.link_group = os.getpid()
        lines, up_in = [], {}  # up_in: {instance namespace: its veth ends}
        for link in self.links:
            name1, name2, addr1, addr2, node1, node2 = link.pair
            lines.append('link add name %s address %s %s type veth peer name %s address %s %s'
                         % (name1, addr1, self._netns(node1), name2, addr2, self._netns(node2)))
            for name, node in ((name1, node1), (name2, node2)):
                instance = getattr(node, 'instance', None)
                if instance:
                    up_in.setdefault(instance.netns, []).append(name)
                elif not node.inNamespace:  # a host brings its own end up
                    lines.append('link set %s group %d up' % (name, self.link_group))
            link.intf1.mac, link.intf2.mac = (addr1, addr2) if link.intf1.name == name1 else (addr2, addr1)
        ip_batch(lines, 'creating veths')
        for netns, names in up_in.items():
            ip_batch(['link set %s up' % name for name in names], 'creating veths', netns)
        progress('configuring %d hosts' % len(self.hosts))
        self.configure_hosts()
        shaped = [intf for link in self.links for intf in (link.intf1, link.intf2)
                  if isinstance(intf, BatchedShapedIntf)]
        for intf in shaped:
            intf.made = True
        if shaped:
            progress('shaping %d host interfaces' % len(self.hosts))
        for intf in shaped:
            if not isinstance(intf.node, OVSSwitch):  # switch ends: UserOVSSwitch.batchStartup
                intf.config(**intf.params)

    @staticmethod
    def _netns(node):
        """``ip link add`` words that put a veth end where ``node`` lives."""
        instance = getattr(node, 'instance', None)
        if instance:
            return 'netns %s' % instance.netns
        return 'netns %d' % node.pid if node.inNamespace else ''

    def configure_hosts(self):
        for host in self.hosts:
            intf = host.defaultIntf()
            ip, prefix = host.params['ip'].split('/')
            intf.ip, intf.prefixLen, intf.mac = ip, int(prefix), host.params['mac']
            host.sendCmd('ip link set lo up; ip link set %s address %s up; ip addr add %s/%s dev %s'
                         % (intf, intf.mac, ip, prefix, intf))
        for host in self.hosts:
            out = host.waitOutput()
            if out.strip():
                raise SetupError('configuring %s failed: %s' % (host, out.strip()))


# The hosts' TX checksum offload is off on every fabric. TCP over veth into
# a daemon that does not read offload metadata (no userspace TSO, as every
# daemon dcfabric starts, or bmv2) hangs with it on. With userspace TSO one
# unshaped k=4 flow doubled, but the daemon's first-packet path slowed down
# (scripts/emulator/ovs/vswitchd.py), and on shaped links 64 KB segments in
# the queues cut a collision-free Stride(4) flow at 2 Mbit/s to 57% of line rate.
TX_CHECKSUM_OFF = 'tx off'


def hosts_offloads(net, features, shaped=False):
    """``ethtool -K IFACE features`` on every host interface and, on
    ``shaped`` links, one frame per packet (shaping.HOST_GSO_MAX_SEGS says
    why), sent to every host before any answer is awaited. A host that
    could not is named in a warning: its runs' verdicts tell what it cost."""
    for host in net.hosts:
        host.sendCmd('; '.join(command for intf in host.intfList() if intf.name != 'lo'
                               for command in shaping.host_interface_commands(intf.name, features, shaped)))
    failed = {host.name: host.waitOutput().strip() for host in net.hosts}
    failed = {name: out for name, out in failed.items() if out}
    if failed:
        name, out = next(iter(failed.items()))
        progress('warning: %d hosts could not send one frame per packet on their shaped links, e.g. %s: %s '
                 '(scripts/emulator/shaping.py HOST_GSO_MAX_SEGS)' % (len(failed), name, out))


# The hosts' TCP congestion control. These machines' kernels default to BBR,
# which sends at the bandwidth it estimates: behind an emulator that delays
# packets by milliseconds at random it estimated 5-9 Mbit/s on 20 Mbit/s
# links, and a k=4 fat-tree carried 134-146 Mbit/s of 16 flows with two-level
# routing, without loss, so nothing showed the emulator's limit. With CUBIC
# (Linux's own default, and what datacenters ran when these designs were
# measured) the same run carried 237 Mbit/s, and where the emulator falls
# behind, packets are lost where the verdict sees them.
HOST_TCP = 'cubic'
_AVAILABLE_TCP = '/proc/sys/net/ipv4/tcp_available_congestion_control'
_ALLOWED_TCP = '/proc/sys/net/ipv4/tcp_allowed_congestion_control'
# the machine's network namespace: kthreadd's (init, pid 1, may refuse to be
# entered, as on these machines)
_MACHINE_NETNS = '/proc/2/ns/net'


def _set_allowed_tcp(text):
    """Writes the machine's list of allowed congestion controls. It is
    read-only from any other network namespace (a fabric run inside a
    private Open vSwitch's, scripts/emulator/ovs/private_ovs.sh exec), so
    there it is written in the machine's."""
    try:
        with open(_ALLOWED_TCP, 'w') as f:
            f.write(text)
    except PermissionError:
        done = subprocess.run(['nsenter', '--net=' + _MACHINE_NETNS, 'sysctl', '-q', '-w',
                               'net.ipv4.tcp_allowed_congestion_control=' + text],
                              capture_output=True, text=True, timeout=10)
        if done.returncode:
            raise SetupError("cannot set the machine's allowed TCP congestion controls to '%s' "
                             'from this network namespace: %s' % (text, done.stderr.strip()))


def hosts_tcp(net, congestion=None):
    """Every host's default TCP congestion control is ``congestion`` (by
    default HOST_TCP). A namespace other than the machine's may choose only
    one the machine allows, so it is allowed while the hosts choose it, and
    the machine's list put back at once (a namespace keeps what it chose)."""
    congestion = congestion or HOST_TCP
    with open(_AVAILABLE_TCP) as available:
        if congestion not in available.read().split():
            raise SetupError('this kernel has no %s TCP congestion control (modprobe tcp_%s)'
                             % (congestion, congestion))
    with open(_ALLOWED_TCP) as f:
        allowed = f.read().strip()
    if congestion not in allowed.split():
        _set_allowed_tcp('%s %s' % (allowed, congestion))
    try:
        for host in net.hosts:
            host.sendCmd('sysctl -q -w net.ipv4.tcp_congestion_control=%s 2>&1' % congestion)
        failed = {host.name: host.waitOutput().strip() for host in net.hosts}
    finally:
        if congestion not in allowed.split():
            _set_allowed_tcp(allowed)
    failed = {name: out for name, out in failed.items() if out}
    if failed:
        name, out = next(iter(failed.items()))
        raise SetupError('%d hosts could not choose %s TCP, e.g. %s: %s' % (len(failed), congestion, name, out))


class ListeningController(RemoteController):
    """The controller is started and awaited by Controller.start; Mininet's
    own check telnets to it and decodes OpenFlow's binary HELLO as text,
    which fails at random (UnicodeDecodeError)."""

    def checkListening(self):
        pass
