"""Several Open vSwitch daemons for one large fabric on one machine.

Why: the userspace datapath of one ovs-vswitchd holds every bridge's ports
and adds and removes them one at a time, each step over all ports it has (twice
the ports, about four times as long: scripts/emulator/benchmarks/ovs_port_cost.py;
k=16 has 5,120); one
daemon forwards every packet with one thread, on one core; and it runs every
BFD session in one monitor thread (more than ``scripts.emulator.bfd.policy.MAX_SESSIONS`` fall
behind). Split over ``n`` daemons, each holds a share of the switches,
they work in parallel on both cores, and teardown is ending them.

Each instance is an ovsdb-server and an ovs-vswitchd with a run directory
of their own (``OVS_RUNDIR``: every ovs-vsctl/ovs-ofctl/ovs-appctl run with
it talks to that instance) in a network namespace of their own: the
userspace datapath makes a tap device named ``ovs-netdev``, one per
namespace. Its switches' ports are veth ends in that namespace, and its
switches reach the controller (on 127.0.0.1 here) through a Unix socket in
its run directory (ovs-vswitchd connects to no other), relayed by socat,
since the namespace has a loopback of its own.

How many instances a fabric gets is scripts/emulator/ovs/daemon_policy.py's;
``placement`` (which switch goes to which instance) is pure and unit tested.
"""
import os
import shutil
import signal
import subprocess
import time

from scripts.emulator.faults import run_command
from scripts.emulator.ovs.vswitchd import JEMALLOC, TSO_CONFIG

RUN_ROOT = '/run/dcfabric'
NETNS_PREFIX = 'dcfovs'
SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema'
COMMAND_TIMEOUT_S = 60


class OvsInstanceError(RuntimeError):
    pass


def placement(switch_ports, count):
    """{switch: instance index} for ``switch_ports`` ({switch: its port
    count}, in the model's order): each switch in turn goes to the instance
    with the fewest ports so far (the lowest index on a tie), so that
    ports, and with them BFD sessions, are balanced."""
    if count < 1:
        raise ValueError('need at least one Open vSwitch instance, got %d' % count)
    if count > len(switch_ports):
        raise ValueError('%d Open vSwitch instances for %d switches: at most one per switch'
                         % (count, len(switch_ports)))
    load = [0] * count
    result = {}
    for switch, ports in switch_ports.items():
        index = min(range(count), key=lambda i: (load[i], i))
        result[switch] = index
        load[index] += ports
    return result


class OvsInstance:
    """One private ovsdb-server + ovs-vswitchd in network namespace
    ``dcfovsN``, run directory /run/dcfabric/ovsN."""

    def __init__(self, index):
        self.index = index
        self.netns = '%s%d' % (NETNS_PREFIX, index)
        self.rundir = os.path.join(RUN_ROOT, 'ovs%d' % index)
        self.relay = None  # the socat this process started

    def __repr__(self):
        return 'ovs%d' % self.index

    def prefix(self):
        """Words that run a command in this instance's namespace, with the
        OVS tools pointed at its daemons."""
        return ['ip', 'netns', 'exec', self.netns, 'env', 'OVS_RUNDIR=' + self.rundir,
                'OVS_DBDIR=' + self.rundir, 'OVS_LOGDIR=' + self.rundir]

    def db_remote(self):
        return 'unix:%s/db.sock' % self.rundir

    def controller_socket(self):
        return os.path.join(self.rundir, 'controller.sock')

    def pid(self, daemon):
        """The pid of ``daemon`` (ovs-vswitchd, ovsdb-server, controller-relay), None if unknown."""
        try:
            with open(os.path.join(self.rundir, daemon + '.pid')) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def running(self):
        pid = self.pid('ovs-vswitchd')
        return pid is not None and os.path.exists('/proc/%d' % pid)

    def start(self, ofp_address, ofp_port):
        os.makedirs(self.rundir, exist_ok=True)
        self.relay = relay = subprocess.Popen(
            ['socat', 'UNIX-LISTEN:%s,fork,mode=600' % self.controller_socket(),
             'TCP:%s:%d' % (ofp_address, ofp_port)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        with open(os.path.join(self.rundir, 'controller-relay.pid'), 'w') as f:
            f.write(str(relay.pid))
        steps = [['ip', 'netns', 'add', self.netns],
                 ['ip', '-n', self.netns, 'link', 'set', 'lo', 'up'],
                 # scripts/emulator/faults.py black-holes silent failures into ifb0 next to the switches
                 ['ip', '-n', self.netns, 'link', 'add', 'ifb0', 'type', 'ifb'],
                 ['ovsdb-tool', 'create', os.path.join(self.rundir, 'conf.db'), SCHEMA],
                 self.prefix() + ['ovsdb-server', os.path.join(self.rundir, 'conf.db'),
                                  '--remote=punix:%s/db.sock' % self.rundir, '--detach', '--pidfile',
                                  '--log-file'],
                 self.prefix() + ['ovs-vsctl', '--timeout=%d' % COMMAND_TIMEOUT_S, '--no-wait', 'init', '--',
                                  'set', 'Open_vSwitch', '.', 'other_config:%s=%s' % TSO_CONFIG],
                 self.prefix() + ['env', 'LD_PRELOAD=' + JEMALLOC, 'ovs-vswitchd', self.db_remote(),
                                  '--detach', '--pidfile', '--log-file']]
        for cmd in steps:
            try:
                result = subprocess.run(cmd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise OvsInstanceError('starting Open vSwitch instance %s: `%s` did not finish within %d s'
                                       % (self, ' '.join(cmd[-6:]), COMMAND_TIMEOUT_S)) from None
            if result.returncode != 0:
                raise OvsInstanceError('starting Open vSwitch instance %s: `%s` failed: %s'
                                       % (self, ' '.join(cmd[-6:]), result.stderr.strip()))
        deadline = time.monotonic() + 10
        while not os.path.exists(self.controller_socket()):
            if relay.poll() is not None or time.monotonic() > deadline:
                raise OvsInstanceError('the controller relay (socat) of %s did not start' % self)
            time.sleep(0.05)

    def stop(self):
        """End the daemons and the namespace (its interfaces, and so the
        veths with an end in it, go with it) and remove the run directory."""
        relay = self.pid('controller-relay')
        if relay is not None:  # with the child it forked per switch connection: its session
            subprocess.run(['pkill', '-TERM', '-s', str(relay)], capture_output=True, timeout=COMMAND_TIMEOUT_S)
        if self.relay is not None:
            try:
                self.relay.wait(5)
            except subprocess.TimeoutExpired:
                self.relay.kill()
                self.relay.wait(5)
            self.relay = None
        for daemon in ('ovs-vswitchd', 'ovsdb-server'):
            _end(self.pid(daemon))
        subprocess.run(['ip', 'netns', 'delete', self.netns], capture_output=True, timeout=COMMAND_TIMEOUT_S)
        shutil.rmtree(self.rundir, ignore_errors=True)


def _end(pid, grace_s=5):
    """SIGTERM ``pid``, SIGKILL if it is still there after ``grace_s``."""
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while os.path.exists('/proc/%d' % pid):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                break
            time.sleep(0.05)
    except ProcessLookupError:
        pass


def left_over():
    """Instances (run directories or namespaces) an earlier run left behind."""
    indexes = set()
    if os.path.isdir(RUN_ROOT):
        indexes.update(int(name[3:]) for name in os.listdir(RUN_ROOT)
                       if name.startswith('ovs') and name[3:].isdigit())
    namespaces = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True,
                                timeout=COMMAND_TIMEOUT_S).stdout
    indexes.update(int(word[len(NETNS_PREFIX):]) for word in namespaces.split()
                   if word.startswith(NETNS_PREFIX) and word[len(NETNS_PREFIX):].isdigit())
    return [OvsInstance(i) for i in sorted(indexes)]


class OvsInstances:
    """``count`` instances, started together (``start``) and stopped
    together (``stop``, safe to call twice and after a partial start)."""

    def __init__(self, count, ofp_address='127.0.0.1', ofp_port=6653):
        self.instances = [OvsInstance(i) for i in range(count)]
        self.ofp_address, self.ofp_port = ofp_address, ofp_port

    def start(self):
        """Start them, after removing what an earlier run left; return how many it left."""
        stale = left_over()
        for instance in stale:
            instance.stop()
        for instance in self.instances:
            instance.start(self.ofp_address, self.ofp_port)
        return len(stale)

    def stop(self):
        for instance in self.instances:
            instance.stop()


class InstanceSites:
    """scripts/emulator/faults.py's ``sites`` for a fabric on several instances: a
    switch's commands run in its instance's namespace with the OVS tools
    pointed at its daemons; a host's (None) on this machine."""

    def __init__(self, placement_of, instances):
        self.placement = placement_of  # {switch name: OvsInstance}
        self._instances = list(instances)

    @classmethod
    def running(cls):
        """The instances of the fabric running now (each asked for its
        bridges), or None when none runs."""
        instances = [i for i in left_over() if i.running()]
        if not instances:
            return None
        placement_of = {}
        for instance in instances:
            bridges = run_command(*instance.prefix(), 'ovs-vsctl', '--timeout=5', 'list-br').stdout.split()
            placement_of.update((bridge, instance) for bridge in bridges)
        return cls(placement_of, instances)

    def server_of(self, node):
        return self.placement.get(node)

    def servers(self):
        return list(self._instances)

    @staticmethod
    def run(server, *cmd, check=True):
        return run_command(*((server.prefix() if server is not None else []) + list(cmd)), check=check)


def require_tools():
    """Raise OvsInstanceError when a tool the instances need is missing."""
    for tool in ('socat', 'ovsdb-tool', 'ovsdb-server', 'ovs-vswitchd'):
        if shutil.which(tool) is None:
            raise OvsInstanceError('several Open vSwitch instances need %s, which is not installed '
                                   '(scripts/setup.sh installs it)' % tool)
