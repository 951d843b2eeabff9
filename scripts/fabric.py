"""Run a dcfabric network: a model's Mininet topology on userspace Open
vSwitch, driven by a dcfabric Ryu app in a controller subprocess.

``Fabric`` is a context manager that always tears down what it started (the
Mininet network, its veths and bridges, the controller and any process
started in a host) on exit, error, Ctrl-C or SIGTERM.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from mininet.link import Intf, Link, TCIntf, TCLink
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host, OVSSwitch, RemoteController

from controller.ryuapp.manager import PortInUseError, check_port_free
from scripts import REPO_ROOT, bfd, faults, ovsdb, vswitchd
from scripts.host_cpu_group import HostCpuGroup
from scripts.ovs_instances import (InstanceSites, OvsInstanceError, OvsInstances, placement as instance_placement,
                                  require_tools, switch_ports)
from topologies.mininet_topo import ModelTopo
from topologies.model import ofport


class SetupError(RuntimeError):
    """The machine is not ready for an emulation (not root, OVS down, port taken)."""


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
BFD_UDP_PORT = 3784  # RFC 5881, Open vSwitch's BFD


class UserOVSSwitch(NetdevOVSSwitch):
    """The project's switch: the bridges of a whole fabric in one OVSDB
    transaction (one per Open vSwitch instance).

    A subclass made by ``configured`` carries the fabric's settings. With
    ``bfd_column`` (scripts.bfd.interface_options), every switch-to-switch
    interface is created with BFD on, in
    the same ovsdb transaction as its bridge: a port is never live before its
    BFD session is up, so the controller never sees BFD's start as a
    failure. With ``instance_of`` ({switch name: scripts.ovs_instances
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
        (scripts/ovsdb.py: ovs-vsctl took 160 s at k=16), bridges of the same
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


class CpuGroupMixin:
    """A host whose every command (its shell, ``popen``) runs in the
    fabric's CPU group (scripts/host_cpu_group.py), through Mininet's
    ``mnexec -g``; ``in_group(None)`` leaves the class as it is."""
    cpu_group = None

    @classmethod
    def in_group(cls, name):
        return type(cls.__name__, (cls,), {'cpu_group': name}) if name else cls

    def _popen(self, cmd, **params):
        # '--': mnexec's getopt would otherwise take the command's options as its own
        if self.cpu_group:
            cmd = ['mnexec', '-g', self.cpu_group, '--'] + (cmd.split() if isinstance(cmd, str) else list(cmd))
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
    (scripts/vswitchd.py SendBuffer)."""

    def bwCmds(self, bw=None, **params):
        cmds, parent = super().bwCmds(bw=bw, **params)
        if bw and isinstance(self.node, OVSSwitch) and not (params.get('use_hfsc') or params.get('use_tbf')):
            cmds += ['%s class add dev %s parent 5:0 classid 5:2 htb rate 64kbit burst 15k quantum 1514',
                     # after a silent failure's black hole (faults.BLACKHOLE_PREF), which takes BFD too
                     '%s filter add dev %s parent 5:0 protocol ip prio ' + str(int(faults.BLACKHOLE_PREF) + 1)
                     + ' u32 match ip protocol 17 0xff '
                     'match ip dport ' + str(BFD_UDP_PORT) + ' 0xffff flowid 5:2']
        return cmds, parent


class ShapedLink(TCLink):
    """Mininet's TCLink with ``ShapedIntf`` ends."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault('cls1', ShapedIntf)
        kwargs.setdefault('cls2', ShapedIntf)
        super().__init__(*args, **kwargs)


class BatchedIntf(Intf):
    """An interface configured in bulk by BatchedMininet: constructing one
    runs no command (Mininet's Intf sets MAC and up-state through a shell
    round trip per interface)."""

    def config(self, mac=None, ip=None, up=True, **_params):
        return {}


class BatchedLink(Link):
    """A veth pair that BatchedMininet creates with every other one in one
    ``ip -batch``, instead of a shell round trip per pair."""

    def __init__(self, node1, node2, **params):
        params['intf'] = BatchedIntf  # Mininet.addLink passes its own default
        super().__init__(node1, node2, **params)

    def makeIntfPair(self, intfname1, intfname2, addr1=None, addr2=None, node1=None, node2=None,
                     deleteIntfs=True):
        self.pair = (intfname1, intfname2, addr1, addr2, node1, node2)


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
        self._ip_batch(lines)
        for netns, names in up_in.items():
            self._ip_batch(['link set %s up' % name for name in names], netns)
        progress('configuring %d hosts' % len(self.hosts))
        self.configure_hosts()

    @staticmethod
    def _netns(node):
        """``ip link add`` words that put a veth end where ``node`` lives."""
        instance = getattr(node, 'instance', None)
        if instance:
            return 'netns %s' % instance.netns
        return 'netns %d' % node.pid if node.inNamespace else ''

    @staticmethod
    def _ip_batch(lines, netns=None):
        created = subprocess.run(['ip'] + (['-n', netns] if netns else []) + ['-batch', '-'],
                                 input='\n'.join(lines) + '\n', capture_output=True, text=True)
        if created.returncode != 0:
            raise SetupError('creating veths failed: %s' % created.stderr.strip()[:500])

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


_PROGRESS_T0 = []


def progress(message):
    """A step of long work, stamped with seconds since the first step (where the time goes at k=16)."""
    now = time.monotonic()
    _PROGRESS_T0[:] = _PROGRESS_T0 or [now]
    print('... [%6.1f s] %s' % (now - _PROGRESS_T0[0], message), file=sys.stderr, flush=True)


def hosts_tx_offload_off(net):
    """TCP over veth into a software switch hangs with TX checksum offload on.
    Sent to every host before any answer is awaited."""
    for host in net.hosts:
        host.sendCmd('; '.join('ethtool -K %s tx off >/dev/null 2>&1' % intf.name
                               for intf in host.intfList()))
    for host in net.hosts:
        host.waitOutput()


# Memory a fabric takes: a k=16 fat-tree (1,344 node shells, 5,120 switch
# ports) raised the machine's used memory by about 1.3 GB; these round that
# up (a shell per node, ovs-vswitchd's share per switch port).
MB_PER_NODE = 1.0
MB_PER_SWITCH_PORT = 0.25


def memory_needed_mb(nodes, switch_ports):
    return nodes * MB_PER_NODE + switch_ports * MB_PER_SWITCH_PORT


def available_memory_mb():
    with open('/proc/meminfo') as meminfo:
        for line in meminfo:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) // 1024
    raise SetupError('cannot read MemAvailable from /proc/meminfo')


def check_memory(name, nodes, switch_ports):
    """Before anything starts (and before a large model is built): the
    machine has the memory a fabric of this size needs."""
    needed, available = memory_needed_mb(nodes, switch_ports), available_memory_mb()
    if needed > available:
        raise SetupError('%s needs about %d MB of memory, %d MB are available'
                         % (name, needed, available))


def check_fits(model, memory=True):
    """Before anything starts: Mininet can name every interface, and (with
    ``memory``) this machine has the memory the fabric needs."""
    if memory:
        check_memory(model.name, len(model.nodes), sum(len(model.ports(s.name)) for s in model.switches))
    for node in model.nodes.values():
        try:
            ModelTopo.check_interface_names(model, node)
        except ValueError as err:
            raise SetupError(str(err)) from None


def check_machine():
    if os.geteuid() != 0:
        raise SetupError('emulation needs root (Mininet creates namespaces and veths)')
    probe = subprocess.run(['ovs-vsctl', '--timeout=5', 'show'], capture_output=True, text=True)
    if probe.returncode != 0:
        raise SetupError('Open vSwitch is not running (%s); run scripts/setup.sh'
                         % (probe.stderr.strip() or 'ovs-vsctl failed'))


def terminate_on_sigterm():
    def handler(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, handler)


class ListeningController(RemoteController):
    """The controller is started and awaited by Controller.start; Mininet's
    own check telnets to it and decodes OpenFlow's binary HELLO as text,
    which fails at random (UnicodeDecodeError)."""

    def checkListening(self):
        pass


def end_process(process, grace_s=10):
    """SIGTERM, then SIGKILL if it has not exited within ``grace_s``."""
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop_ovs_network(net, instances=None):
    """Tear an OVS fabric down in three batched steps instead of Mininet's
    net.stop(), which deletes every interface through a node's shell, one at
    a time, while its bridge still exists (ovs-vswitchd reconfigures after
    each: minutes at k=16): every bridge in one ovsdb transaction, every
    switch-side veth (and so its peer) in one ``ip link delete group``
    (BatchedMininet), then the node shells (a host's namespace goes with its
    shell). Each step runs even if one before it failed; the first failure
    is raised at the end. ovs-vswitchd drops the bridges in its own time,
    and nothing here needs to wait for it.

    Switches on Open vSwitch instances of their own (``instances``,
    scripts/ovs_instances) go with their instances instead: their shells
    end, then the daemons and the namespaces (and so every veth with an end
    there), with nothing for a daemon to reconfigure."""
    errors = []
    if instances is not None:
        for switch in net.switches:
            switch.terminate()
        instances.stop()
    bridges = [switch.name for switch in net.switches if not getattr(switch, 'instance', None)]
    try:
        if bridges:
            ovsdb.delete_bridges(bridges)
    except Exception as error:  # the veths and shells must go whatever happened here
        errors.append('deleting bridges: %s' % error)
    link_group = getattr(net, 'link_group', None)
    if link_group is not None:
        subprocess.run(['ip', 'link', 'delete', 'group', str(link_group)], capture_output=True)
    # what the group did not hold (TCLink makes its own veths); -force: a
    # veth already gone with its peer is no reason to stop
    interfaces = [intf.name for s in net.switches if not getattr(s, 'instance', None)
                  for intf in s.intfList() if intf.name != 'lo']
    subprocess.run(['ip', '-force', '-batch', '-'], capture_output=True, text=True,
                   input=''.join('link del dev %s\n' % name for name in interfaces))
    for node in net.hosts + net.switches:
        node.terminate()
    net.links, net.hosts, net.switches = [], [], []
    if errors:
        raise SetupError('; '.join(errors))


class Controller:
    """A dcfabric controller (python -m controller.ryuapp.manager) as a subprocess.
    ``ready_path``: the REST path that answers ``{"ready": true}`` once the
    controller has programmed the whole fabric (None: not awaited)."""

    def __init__(self, app, params, ofp_port=6653, rest_port=8080, log_path=None, ready_path=None,
                 stats_period=None, listen='127.0.0.1'):
        self.app, self.params = app, params
        self.ready_path = ready_path
        self.stats_period = stats_period  # the live view's counter polls (manager's default if None)
        self.ofp_port, self.rest_port = ofp_port, rest_port
        self.listen = listen
        self.log_path = log_path or tempfile.mktemp(prefix='dcfabric-controller-', suffix='.log')
        self.process = None

    def start(self, timeout=30):
        try:
            check_port_free(self.listen, self.ofp_port, 'OpenFlow')
            check_port_free(self.listen, self.rest_port, 'REST')
        except PortInUseError as err:
            raise SetupError(str(err)) from None
        cmd = [sys.executable, '-m', 'controller.ryuapp.manager', self.app, '--params', json.dumps(self.params),
               '--ofp-port', str(self.ofp_port), '--rest-port', str(self.rest_port), '--log', self.log_path,
               '--listen', self.listen]
        if self.stats_period is not None:
            cmd += ['--stats-period', str(self.stats_period)]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                        cwd=REPO_ROOT, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SetupError('controller exited with %d; log: %s\n%s'
                                 % (self.process.returncode, self.log_path, self.log_tail()))
            with socket.socket() as probe:
                if probe.connect_ex((self.listen, self.ofp_port)) == 0:
                    return self
            time.sleep(0.2)
        raise SetupError('controller did not listen on port %d within %ds' % (self.ofp_port, timeout))

    def readiness(self):
        """The controller's ready section (a dict), or None while it cannot answer."""
        # REST listens where OpenFlow does (--listen): the head's address with --cluster
        url = 'http://%s:%d%s' % (self.listen, self.rest_port, self.ready_path)
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                return json.load(reply)
        except (OSError, ValueError):
            return None

    def wait_ready(self, timeout):
        deadline = time.time() + timeout
        state = None
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SetupError('controller exited with %d; log: %s\n%s'
                                 % (self.process.returncode, self.log_path, self.log_tail()))
            state = self.readiness()
            if state and state.get('ready'):
                return state
            time.sleep(0.2)
        raise SetupError('controller not ready after %ds: %s' % (timeout, state))

    def log_tail(self, lines=20):
        try:
            with open(self.log_path) as log:
                return ''.join(log.readlines()[-lines:])
        except OSError:
            return ''

    def stop(self):
        """Stop the controller; its log is kept only if it had died by itself."""
        crashed = self.process is not None and self.process.poll() is not None
        if self.process and not crashed:
            end_process(self.process)
        if not crashed and os.path.exists(self.log_path):
            os.unlink(self.log_path)


class MininetContext:
    """What every emulated fabric runner shares: ``with`` starts it and, if
    starting fails part-way or the block ends, stops the network and then
    releases whatever else the runner holds; nodes are looked up by the
    model's names. A runner implements ``start()`` and ``release()``."""
    model = None
    net = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def stop(self):
        try:
            if self.net is not None:
                self.stop_network()
                self.net = None
        finally:
            self.release()

    def stop_network(self):
        self.net.stop()

    def node(self, name):
        """The Mininet host or switch the model calls ``name``."""
        self.model.node(name)
        return self.net.get(name)


class Fabric(MininetContext):
    """Start ``model`` in Mininet with controller app ``app``.

    bw: host and switch link rate in Mbit/s (HTB shaping), None for unshaped.
    bfd_ms: BFD interval on every switch-to-switch link (detection after 3
    missed), None for no BFD.
    listen: the controller's address (switches connect to it).
    ovs_instances: Open vSwitch daemons the switches are spread over (1: the
    machine's own; more: private ones, scripts/ovs_instances.py; unshaped
    links only).

    ``start`` returns when the fabric is ready: every BFD session is up and,
    when the controller has a ready path, it has acknowledged programming
    every switch and holds no failures.

    Subclasses that run the switches elsewhere (scripts/cluster) override
    ``check``, ``make_net``, ``stop_network``, ``sites`` (where switch
    commands run), ``host_sites`` (where hosts run) and ``bfd_at_creation``.
    """
    sites = faults.LOCAL
    host_sites = faults.LOCAL  # where hosts run
    bfd_at_creation = True  # UserOVSSwitch.configured; otherwise enabled once the switches run

    def __init__(self, model, app, params, ofp_port=6653, rest_port=8080, bw=None,
                 controller=True, log_level='warning', bfd_ms=None, ready_path=None, stats_period=None,
                 listen='127.0.0.1', ovs_instances=1):
        self.model = model
        self.ovs, self.instance_of = None, None
        if ovs_instances > 1:
            if bw:
                raise SetupError('%d Open vSwitch instances need unshaped links: --bw shapes them with '
                                 'Mininet\'s TCLink, which makes its veths in this namespace (use '
                                 '--ovs-instances 1 with --bw)' % ovs_instances)
            self.ovs = OvsInstances(ovs_instances, listen, ofp_port)
            self.instance_of = {switch: self.ovs.instances[index] for switch, index
                                in instance_placement(switch_ports(model), ovs_instances).items()}
            self.sites = InstanceSites(self.instance_of, self.ovs.instances)
        self.bw = bw
        self.bfd_ms = bfd_ms
        self.bfd_column = bfd.interface_options(bfd_ms) if bfd_ms else None
        self.listen = listen
        self.controller = (Controller(app, params, ofp_port, rest_port, ready_path=ready_path,
                                      stats_period=stats_period, listen=listen) if controller else None)
        self.ofp_port = ofp_port
        self.net = None
        self.started_at = None  # when net.start() returned
        self.ready_at = None  # when BFD was up and the controller ready
        self.daemon_settings = None  # scripts.vswitchd.DaemonSettings once applied
        self.host_group = None  # the hosts' HostCpuGroup once made
        self.send_buffer = None  # scripts.vswitchd.SendBuffer once applied (shaped links)
        self.log_level = log_level

    def check(self):
        check_machine()
        if self.ovs:
            try:
                require_tools()
            except OvsInstanceError as error:
                raise SetupError(str(error)) from None

    def make_net(self, topo, link_class, cpu_group):
        switch_class = UserOVSSwitch.configured(self.bfd_column, self.instance_of)
        net_class = BatchedMininet if link_class is BatchedLink else Mininet
        return net_class(topo=topo, switch=switch_class, host=FabricHost.in_group(cpu_group),
                         link=link_class, build=False,
                         controller=None, autoSetMacs=False, autoStaticArp=False)

    def start(self):
        self.check()
        terminate_on_sigterm()
        setLogLevel(self.log_level)
        if self.controller:
            self.controller.start()
        link_opts, link_class = None, BatchedLink
        if self.bw:
            # TCLink shapes each interface as it makes it (and would turn
            # offloads back on: keep them off).
            link_opts, link_class = {'bw': self.bw, 'txo': False, 'rxo': False}, ShapedLink
        topo = ModelTopo(self.model, link_opts=link_opts)
        if self.ovs:
            progress('starting %d Open vSwitch instances' % len(self.ovs.instances))
            try:
                stale = self.ovs.start()
            except OvsInstanceError as error:
                raise SetupError(str(error)) from None
            if stale:
                progress('removed %d Open vSwitch instances left by an earlier run' % stale)
        self.host_group = HostCpuGroup(self.host_sites)
        cpu_group = self.host_group.make()
        if self.host_group.stale_removed:
            progress('removed %d hosts CPU groups left by earlier runs' % self.host_group.stale_removed)
        if self.host_group.unavailable:
            progress('warning: no cgroup v1 cpu hierarchy (%s) on %s: hosts are not grouped, and heavy '
                     'traffic can starve ovs-vswitchd (scripts/host_cpu_group.py)'
                     % (self.host_group.root, ', '.join(server or 'this machine'
                                                         for server in self.host_group.unavailable)))
        self.net = self.make_net(topo, link_class, cpu_group)
        self.net.addController(ListeningController('c0', ip=self.listen, port=self.ofp_port))
        progress('building %s: %d switches, %d hosts, %d links'
                 % (self.model.name, len(self.model.switches), len(self.model.hosts),
                    len(self.model.links)))
        self.net.build()
        if self.bfd_ms:
            progress('while the fabric runs, ovs-vswitchd caches exact-match datapath flows '
                     '(megaflows go stale across failures): scripts/vswitchd.py')
        self.daemon_settings = vswitchd.DaemonSettings(self.sites, exact_match=bool(self.bfd_ms))
        self.daemon_settings.apply()
        if self.sites is faults.LOCAL and not vswitchd.uses_jemalloc():
            progress('warning: ovs-vswitchd allocates with glibc\'s malloc and forwards about '
                     'a quarter less (restart it: LD_PRELOAD=%s /usr/share/openvswitch/scripts/ovs-ctl '
                     'restart; scripts/vswitchd.py)' % vswitchd.JEMALLOC)
        progress('starting switches' + (' with BFD every %d ms on %d links (detection %d ms)' % (
            self.bfd_ms, len(self.model.switch_links()), bfd.detection_ms(self.bfd_ms))
            if self.bfd_ms else ''))
        self.net.start()
        self.started_at = time.time()
        hosts_tx_offload_off(self.net)
        # generous: ovs-vswitchd brings sessions up one poll loop at a time
        timeout = 60 + len(self.model.switches) // 2
        if self.bfd_ms:
            if not self.bfd_at_creation:
                faults.enable_bfd(self.model, self.bfd_column, sites=self.sites)
            progress('waiting for BFD on %d interfaces' % (2 * len(self.model.switch_links())))
            faults.wait_bfd_up(self.model, timeout=timeout, sites=self.sites)
        if self.controller and self.controller.ready_path:
            progress('waiting for the controller to program %d switches' % len(self.model.switches))
            self.controller.wait_ready(timeout)
        if self.bw:
            ports = sum(len(self.model.ports(switch.name)) for switch in self.model.switches)
            size = vswitchd.send_buffer_bytes(ports)
            progress('ovs-vswitchd\'s send socket: %d MiB of buffer, more than the queues of %d shaped '
                     'ports hold (scripts/vswitchd.py SendBuffer)' % (size >> 20, ports))
            self.send_buffer = vswitchd.SendBuffer(size)
            self.send_buffer.apply(self.send_one_frame)
        self.ready_at = time.time()

    def send_one_frame(self):
        """Make the switches' daemon send one frame: a host's edge switch
        sends it a frame of the local experimental ethertype, which the host
        drops."""
        host = self.model.hosts[0]
        switch, port = self.model.host_attachment(host.name)
        frame = host.mac.replace(':', '') + '020000000000' + '88b5' + '00' * 46
        faults.run_command('ovs-ofctl', '-O', 'OpenFlow13', 'packet-out', switch,
                           'in_port=controller packet=%s actions=output:%d' % (frame, ofport(port)))

    def stop_network(self):
        progress('stopping %s' % self.model.name)
        stop_ovs_network(self.net, self.ovs)

    def release(self):
        if self.ovs:
            self.ovs.stop()  # again if the network never started
        if self.daemon_settings and self.ovs is None:  # private daemons end with the fabric
            self.daemon_settings.undo()
        self.daemon_settings = None
        if self.send_buffer:
            self.send_buffer.undo()
        self.send_buffer = None
        if self.host_group:
            self.host_group.remove()  # after the network: it ended the hosts
        self.host_group = None
        if self.controller:
            self.controller.stop()
