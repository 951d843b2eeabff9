"""Run a dcfabric network: a model's Mininet topology on userspace Open
vSwitch, driven by a dcfabric Ryu app in a controller subprocess.

``Fabric`` is a context manager that always tears down what it started (the
Mininet network, its veths and bridges, the controller and any process
started in a host) on exit, error, Ctrl-C or SIGTERM.
"""
import functools
import os
import subprocess
import time

from mininet.log import setLogLevel
from mininet.net import Mininet

from scripts.emulator import clean, faults, run_record
from scripts.emulator.bfd import policy as bfd_policy, sessions as bfd_sessions
from scripts.emulator.controller_process import Controller
from scripts.emulator.errors import SetupError
from scripts.emulator.host_cpu_group import HostCpuGroup, group_name
from scripts.emulator.machine_checks import check_machine
from scripts.emulator.mininet_classes import (BatchedLink, BatchedMininet, BatchedShapedLink, FabricHost,
                                              KernelBridge, ListeningController, TX_CHECKSUM_OFF, UserOVSSwitch,
                                              hosts_offloads, hosts_tcp, HOST_TCP)
from scripts.emulator.ovs import daemon_policy, ovsdb, vswitchd
from scripts.emulator.ovs.instances import (InstanceSites, OvsInstanceError, OvsInstances,
                                            placement as instance_placement, require_tools)
from scripts.emulator.progress import progress
from scripts.emulator.teardown import Steps, TeardownError, end_on_signals, ending, signals_deferred
from topologies.mininet_topo import ModelTopo, interface_name
from topologies.model import ofport


# a bulk deletion of k=16's thousands of veths takes minutes
BULK_DELETE_TIMEOUT_S = 900


def stop_ovs_network(net, instances=None):
    """Tear an OVS fabric down in three batched steps instead of Mininet's
    net.stop(), which deletes every interface through a node's shell, one at
    a time, while its bridge still exists (ovs-vswitchd reconfigures after
    each: minutes at k=16): every bridge in one ovsdb transaction, every
    switch-side veth (and so its peer) in one ``ip link delete group``
    (BatchedMininet), then the node shells (a host's namespace goes with its
    shell). Each step runs even if one before it failed; the failures are
    raised together at the end. ovs-vswitchd drops the bridges in its own time,
    and nothing here needs to wait for it.

    Switches on Open vSwitch instances of their own (``instances``,
    scripts/emulator/ovs/instances.py) go with their instances instead: their shells
    end, then the daemons and the namespaces (and so every veth with an end
    there), with nothing for a daemon to reconfigure."""
    steps = Steps(progress)
    if instances is not None:
        steps.run('ending the switch shells', lambda: [switch.terminate() for switch in net.switches])
        steps.run('stopping the Open vSwitch instances', instances.stop)
    kernel_bridges = [switch.name for switch in net.switches if isinstance(switch, KernelBridge)]
    bridges = [switch.name for switch in net.switches
               if not getattr(switch, 'instance', None) and switch.name not in kernel_bridges]
    if bridges:
        steps.run('deleting bridges', ovsdb.delete_bridges, bridges)
    link_group = getattr(net, 'link_group', None)
    if link_group is not None:
        # no check: the group is empty when the instances took every veth with them
        steps.run('deleting the veth group', subprocess.run, ['ip', 'link', 'delete', 'group', str(link_group)],
                  capture_output=True, timeout=BULK_DELETE_TIMEOUT_S)
    # what the group did not hold (TCLink makes its own veths); -force: a
    # veth already gone with its peer is no reason to stop
    interfaces = [intf.name for s in net.switches if not getattr(s, 'instance', None)
                  for intf in s.intfList() if intf.name != 'lo']
    steps.run('deleting veths', clean.delete_links, interfaces, BULK_DELETE_TIMEOUT_S)
    if kernel_bridges:
        steps.run('deleting kernel bridges', clean.delete_links, kernel_bridges)
    steps.run('ending the node shells', lambda: [node.terminate() for node in net.hosts + net.switches])
    net.links, net.hosts, net.switches = [], [], []
    steps.raise_errors()


class MininetContext:
    """What every emulated fabric runner shares: ``with`` starts it and, if
    starting fails part-way or the block ends, stops the network and then
    releases whatever else the runner holds; nodes are looked up by the
    model's names. A runner implements ``start()`` and ``release()``, and
    says what it makes on this machine (``made_here``, ``running_here``)
    for the run record (scripts/emulator/run_record.py).

    Every way the session ends tears it down (scripts/emulator/teardown.py):
    the ending signals raise, and ``stop`` runs once, with them deferred,
    every step guarded. Its entry in the run record goes only when nothing
    failed; otherwise ``dcfabric clean`` finds what is left once this
    process has ended."""
    model = None
    net = None
    record_key = None  # this fabric's entry in the run record while it may have left something
    stopping = False

    def __enter__(self):
        end_on_signals()
        clean.refuse_stale_state()
        self.record_key = run_record.begin(self.model.name)
        try:
            run_record.add(self.record_key, **self.made_here())
            self.start()
            run_record.started(self.record_key)
            run_record.add(self.record_key, **self.running_here())
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def made_here(self):
        """What ``start`` makes on this machine that outlives this process
        unless removed: {what: names} (run_record.py's keys)."""
        return {}

    def running_here(self):
        """The processes the started fabric runs here: {what: pids}."""
        return {'shells': [node.pid for node in self.net.hosts + self.net.switches if node.pid]}

    def stop(self):
        """Tear down once: a stop while stopping (a handler, a nested exit) does nothing."""
        if self.stopping:
            return
        self.stopping = True
        try:
            with signals_deferred() as caught:
                steps = self.teardown = Steps()
                if self.net is not None:
                    steps.run('stopping the network', self.stop_network)
                    self.net = None
                steps.run('releasing', self.release)
                if not steps.errors and self.record_key is not None:
                    run_record.finish(self.record_key)
                    self.record_key = None
        finally:
            self.stopping = False
        if steps.errors:
            raise TeardownError('teardown incomplete (%s); `dcfabric clean` removes what is left once '
                                'this process has ended' % '; '.join(steps.errors))
        if caught:
            raise ending(caught[0])

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
    machine's own; more: private ones, scripts/emulator/ovs/instances.py): a
    count asked for, a daemon_policy.DaemonChoice, or None for the policy's
    choice for this fabric on this machine (printed at start).

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
    shaped_link = BatchedShapedLink  # the link class of --bw

    def __init__(self, model, app, params, ofp_port=6653, rest_port=8080, bw=None,
                 controller=True, log_level='warning', bfd_ms=None, ready_path=None, stats_period=None,
                 listen='127.0.0.1', ovs_instances=None):
        self.model = model
        self.ovs, self.instance_of = None, None
        self.daemons = (ovs_instances if isinstance(ovs_instances, daemon_policy.DaemonChoice)
                        else daemon_policy.choose_for(model, bw, ovs_instances))
        if self.daemons.count > 1:
            self.ovs = OvsInstances(self.daemons.count, listen, ofp_port)
            self.instance_of = {switch: self.ovs.instances[index] for switch, index
                                in instance_placement(daemon_policy.switch_ports(model), self.daemons.count).items()}
            self.sites = InstanceSites(self.instance_of, self.ovs.instances)
        self.bw = bw
        self.bfd_ms = bfd_ms
        self.bfd_column = bfd_policy.interface_options(bfd_ms) if bfd_ms else None
        self.listen = listen
        self.controller = (Controller(app, params, ofp_port, rest_port, ready_path=ready_path,
                                      stats_period=stats_period, listen=listen) if controller else None)
        self.ofp_port = ofp_port
        self.net = None
        self.started_at = None  # when net.start() returned
        self.ready_at = None  # when BFD was up and the controller ready
        self.daemon_settings = None  # scripts.emulator.ovs.vswitchd.DaemonSettings once applied
        self.host_group = None  # the hosts' HostCpuGroup once made
        self.send_buffers = []  # scripts.emulator.ovs.vswitchd.SendBuffer, one per daemon (shaped links)
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
        net_class = BatchedMininet if issubclass(link_class, BatchedLink) else Mininet
        return net_class(topo=topo, switch=switch_class, host=FabricHost.in_group(cpu_group),
                         link=link_class, build=False,
                         controller=None, autoSetMacs=False, autoStaticArp=False)

    def start(self):
        self.check()
        setLogLevel(self.log_level)
        progress(self.switches_line())
        if self.controller:
            self.controller.start()
        if self.ovs:
            progress('starting %d Open vSwitch instances' % len(self.ovs.instances))
            try:
                stale = self.ovs.start()
            except OvsInstanceError as error:
                raise SetupError(str(error)) from None
            if stale:
                progress('removed %d Open vSwitch instances left by an earlier run' % stale)
        link_opts, link_class = None, BatchedLink
        if self.bw:
            # TCLink shapes each interface as it makes it, and would turn
            # offloads back on: keep them off (hosts_offloads below says why).
            link_opts, link_class = {'bw': self.bw, 'txo': False, 'rxo': False}, self.shaped_link
        topo = ModelTopo(self.model, link_opts=link_opts)
        self.host_group = HostCpuGroup(self.host_sites)
        cpu_group = self.host_group.make()
        if self.host_group.stale_removed:
            progress('removed %d hosts CPU groups left by earlier runs' % self.host_group.stale_removed)
        if self.host_group.unavailable:
            progress('warning: no cpu cgroup hierarchy (v1, or v2 with the cpu controller: %s) on %s: hosts are '
                     'not grouped, and heavy traffic can starve ovs-vswitchd (scripts/emulator/host_cpu_group.py)'
                     % (', '.join(self.host_group.roots), ', '.join(server or 'this machine'
                                                         for server in self.host_group.unavailable)))
        self.net = self.make_net(topo, link_class, cpu_group)
        self.net.addController(ListeningController('c0', ip=self.listen, port=self.ofp_port))
        progress('building %s: %d switches, %d hosts, %d links'
                 % (self.model.name, len(self.model.switches), len(self.model.hosts),
                    len(self.model.links)))
        self.net.build()
        if self.bfd_ms:
            progress('while the fabric runs, ovs-vswitchd caches exact-match datapath flows '
                     '(megaflows go stale across failures): scripts/emulator/ovs/vswitchd.py')
        self.configure_daemons()
        progress('starting switches' + (' with BFD every %d ms on %d links (detection %d ms)' % (
            self.bfd_ms, len(self.model.switch_links()), bfd_policy.detection_ms(self.bfd_ms))
            if self.bfd_ms else ''))
        self.net.start()
        self.started_at = time.time()
        hosts_offloads(self.net, TX_CHECKSUM_OFF, shaped=bool(self.bw))
        if self.host_sites is faults.LOCAL:
            hosts_tcp(self.net)
        else:
            progress('hosts on servers keep their kernels\' default TCP congestion control (this machine\'s '
                     'hosts run %s: scripts/emulator/mininet_classes.py HOST_TCP)' % HOST_TCP)
        # generous: ovs-vswitchd brings sessions up one poll loop at a time
        timeout = 60 + len(self.model.switches) // 2
        if self.bfd_ms:
            if not self.bfd_at_creation:
                bfd_sessions.enable(self.model, self.bfd_column, sites=self.sites)
            progress('waiting for BFD on %d interfaces' % (2 * len(self.model.switch_links())))
            bfd_sessions.wait_up(self.model, timeout=timeout, sites=self.sites)
        if self.controller and self.controller.ready_path:
            progress('waiting for the controller to program %d switches' % len(self.model.switches))
            self.controller.wait_ready(timeout)
        if self.bw:
            self.size_send_buffers()
        self.ready_at = time.time()

    def configure_daemons(self):
        """The fabric's settings of the ovs-vswitchd daemons it runs on (put back by ``release``)."""
        self.daemon_settings = vswitchd.DaemonSettings(self.sites, exact_match=bool(self.bfd_ms))
        self.daemon_settings.apply()
        if self.sites is faults.LOCAL and not vswitchd.uses_jemalloc():
            progress('warning: ovs-vswitchd allocates with glibc\'s malloc and forwards about '
                     'a quarter less (restart it: LD_PRELOAD=%s /usr/share/openvswitch/scripts/ovs-ctl '
                     'restart; scripts/emulator/ovs/vswitchd.py)' % vswitchd.JEMALLOC)

    def size_send_buffers(self):
        """Each daemon's send socket holds more than its shaped ports' queues (put back by ``release``)."""
        ports = sum(len(self.model.ports(switch.name)) for switch in self.model.switches)
        size = vswitchd.send_buffer_bytes(ports)
        progress('ovs-vswitchd\'s send socket: %d MiB of buffer, more than the queues of %d shaped '
                 'ports hold (scripts/emulator/ovs/vswitchd.py SendBuffer)' % (size >> 20, ports))
        for switch, server in self.switch_per_daemon().items():
            buffer = vswitchd.SendBuffer(size, server.pid('ovs-vswitchd') if server else None)
            self.send_buffers.append(buffer)
            buffer.apply(functools.partial(self.send_one_frame, switch, server))

    def switches_line(self):
        """What the switches run on, printed at start."""
        return daemon_policy.describe(self.daemons)

    def switch_per_daemon(self):
        """{a switch: its daemon's server (None: this machine's Open vSwitch)}, one switch per daemon."""
        chosen = {}
        for switch in self.model.switches:
            server = self.sites.server_of(switch.name)
            chosen.setdefault(server, switch.name)
        return {switch: server for server, switch in chosen.items()}

    def send_one_frame(self, switch, server):
        """Make ``switch``'s daemon send one frame: out of its first port, of
        the local experimental ethertype, which the peer drops."""
        frame = '020000000001' + '020000000000' + '88b5' + '00' * 46
        port = self.model.ports(switch)[0]
        self.sites.run(server, 'ovs-ofctl', '-O', 'OpenFlow13', 'packet-out', switch,
                       'in_port=controller packet=%s actions=output:%d' % (frame, ofport(port)))

    def stop_network(self):
        progress('stopping %s' % self.model.name)
        stop_ovs_network(self.net, self.ovs)

    def made_here(self):
        made = {}
        if self.ovs:
            made['ovs_instances'] = [instance.index for instance in self.ovs.instances]
        if self.sites is faults.LOCAL:  # on instances, the bridges and veths go with their namespaces
            made['bridges'] = [switch.name for switch in self.model.switches]
            made['veths'] = [interface_name(self.model, switch.name, port) for switch in self.model.switches
                             for port in self.model.ports(switch.name)]
        if self.host_sites is faults.LOCAL:
            made['cpu_groups'] = [group_name(os.getpid())]
        return made

    def running_here(self):
        running = super().running_here()
        if self.controller:
            running['controller_pid'] = self.controller.process.pid
        return running

    def release(self):
        steps = self.teardown
        if self.ovs:
            steps.run('stopping the Open vSwitch instances', self.ovs.stop)  # again if the network never started
        if self.daemon_settings and self.ovs is None:  # private daemons end with the fabric
            steps.run('putting ovs-vswitchd settings back', self.daemon_settings.undo)
        self.daemon_settings = None
        for buffer in self.send_buffers:  # a private daemon's ended with it: nothing to put back
            steps.run("putting ovs-vswitchd's send buffer back", buffer.undo)
        self.send_buffers = []
        if self.host_group:
            steps.run("removing the hosts' CPU group", self.host_group.remove)  # after the network: it ended the hosts
        self.host_group = None
        if self.controller:
            steps.run('stopping the controller', self.controller.stop)


class KernelBridgeFabric(Fabric):
    """``model`` with Linux kernel bridges for switches (mininet_classes.
    KernelBridge) and no controller: the same hosts, shaped links, queues
    and CPU group as a ``Fabric``, and no ovs-vswitchd between them. The
    bisection's non-blocking reference: it carries what its hosts' links
    can at any k and rate (docs/emulator.md)."""

    def __init__(self, model, bw=None):
        super().__init__(model, None, None, bw=bw, controller=False,
                         ovs_instances=daemon_policy.DaemonChoice(1, 'unused: kernel bridges'))

    def switches_line(self):
        return ('switches: %d Linux kernel bridge%s, no ovs-vswitchd (forwarding in the kernel, '
                'on every core)' % (len(self.model.switches), '' if len(self.model.switches) == 1 else 's'))

    def make_net(self, topo, link_class, cpu_group):
        return BatchedMininet(topo=topo, switch=KernelBridge, host=FabricHost.in_group(cpu_group),
                              link=link_class, build=False, controller=None, autoSetMacs=False,
                              autoStaticArp=False)

    def configure_daemons(self):
        pass

    def size_send_buffers(self):
        pass

    def made_here(self):
        made = super().made_here()
        made['kernel_bridges'] = made.pop('bridges')
        return made
