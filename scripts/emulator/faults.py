"""Failure injection on a running fabric, by the topology's own names.

Works from any root shell next to a running fabric (it acts on the
switches' interfaces in the root namespace, not through Mininet) and from
the Mininet CLI with ``sh dcfabric fail ...``:

  hard link failure    carrier down on both ends (ip link set down)
  silent link failure  carrier stays up, every packet is black-holed in both
                       directions (tc mirred to the down ifb0): only BFD sees it
  switch failure       every link of the switch (host links too), hard or silent
and the matching recovery for each. A host link's host end lives in the
host's network namespace: it is found through the host's Mininet shell
process and acted on with mnexec. BFD on every switch-to-switch link
(Open vSwitch's own) is set up here too.

Commands run where the switch is: ``sites`` says on which server each
switch runs and runs commands there (``LOCAL``: this machine; a fabric
spread over servers passes its own, see scripts/cluster/sites.py).
"""
import os
import subprocess

from topologies.mininet_topo import interface_name

# A root qdisc handle of our own, so recovery removes only what we added.
BLACKHOLE_HANDLE = 'dcfa:'
BLACKHOLE_PREF = '7'
# Where a silent failure sends packets: the down ifb0 of the root namespace
# (switch interfaces). A host's namespace has no ifb; its loopback drops
# them instead (not addressed to the host, no forwarding, no ARP on lo).
BLACKHOLE_SINK = 'ifb0'
HOST_BLACKHOLE_SINK = 'lo'


class FaultError(RuntimeError):
    pass


# long enough for a batched command on k=16's thousands of interfaces
COMMAND_TIMEOUT_S = 300


def run_command(*cmd, check=True, timeout=COMMAND_TIMEOUT_S):
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise FaultError('%s did not finish within %d s' % (' '.join(cmd), timeout)) from None
    if check and result.returncode != 0:
        raise FaultError('%s failed: %s' % (' '.join(cmd), result.stderr.strip()))
    return result


def host_pid(name):
    """PID of a running Mininet host's shell (``bash ... mininet:NAME``),
    whose network namespace holds the host's end of its link."""
    tag = ('mininet:' + name).encode()
    pids = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/cmdline' % entry, 'rb') as f:
                    argv = f.read().split(b'\0')
            except OSError:  # the process ended meanwhile
                continue
            if argv[0] == b'bash' and tag in argv:
                pids.append(int(entry))
    if len(pids) != 1:
        raise FaultError('%s Mininet hosts named %s are running (need exactly one)'
                         % (len(pids) or 'no', name))
    return pids[0]


class LocalSite:
    """Every switch runs on this machine."""

    @staticmethod
    def server_of(node):
        return None

    @staticmethod
    def servers():
        return [None]

    @staticmethod
    def run(server, *cmd, check=True):
        return run_command(*cmd, check=check)


LOCAL = LocalSite()


class Interface:
    """One end of a link and where its commands run: a switch's in the root
    namespace of its server (``sites``), a host's in the host's own
    namespace on this machine (through mnexec)."""

    def __init__(self, model, node, port, sites=LOCAL):
        self.name = interface_name(model, node, port)
        self.server = sites.server_of(node)
        self.in_host = model.nodes[node].is_host
        if self.in_host and self.server is not None:
            raise FaultError('%s runs on %s: host links are failed only on this machine'
                             % (node, self.server))
        self.prefix = ('mnexec', '-a', str(host_pid(node))) if self.in_host else ()
        self.sink = HOST_BLACKHOLE_SINK if self.in_host else BLACKHOLE_SINK
        self.sites = sites

    def run(self, *cmd, check=True):
        return self.sites.run(self.server, *(self.prefix + cmd), check=check)

    def exists(self):
        return self.run('ip', 'link', 'show', self.name, check=False).returncode == 0


def link_interfaces(model, a, b, sites=LOCAL):
    """Both ends (Interface) of the cable between a and b (names as the topology has them)."""
    model.node(a)
    model.node(b)
    for port in model.ports(a):
        peer, peer_port = model.peer(a, port)
        if peer == b:
            interfaces = [Interface(model, a, port, sites), Interface(model, b, peer_port, sites)]
            for interface in interfaces:
                if not interface.exists():
                    raise FaultError('interface %s does not exist%s: is a %s running?'
                                     % (interface.name, ' on %s' % interface.server if interface.server
                                        else '', model.name))
            return interfaces
    neighbours = sorted(model.peer(a, p)[0] for p in model.ports(a))
    raise FaultError('no link %s-%s; %s links to: %s' % (a, b, a, ' '.join(neighbours)))


def switch_links(model, switch):
    node = model.node(switch)
    if node.is_host:
        raise FaultError('%s is a host, not a switch' % switch)
    return [(switch, model.peer(switch, port)[0]) for port in model.ports(switch)]


def _root_qdisc(interface):
    out = interface.run('tc', 'qdisc', 'show', 'dev', interface.name).stdout
    for line in out.splitlines():
        words = line.split()
        if 'root' in words:
            return words[2]
    return None


def blackhole(interface):
    if not interface.run('ip', 'link', 'show', interface.sink, check=False).returncode == 0:
        raise FaultError('silent failures need the %s device (ifb), which is missing' % interface.sink)
    parent = _root_qdisc(interface)
    if parent in (None, 'noqueue', '0:'):
        interface.run('tc', 'qdisc', 'add', 'dev', interface.name, 'root', 'handle', BLACKHOLE_HANDLE, 'htb')
        parent = BLACKHOLE_HANDLE
    interface.run('tc', 'filter', 'add', 'dev', interface.name, 'parent', parent, 'protocol', 'all', 'pref',
                  BLACKHOLE_PREF, 'u32', 'match', 'u32', '0', '0', 'action', 'mirred', 'egress',
                  'redirect', 'dev', interface.sink)


def unblackhole(interface):
    parent = _root_qdisc(interface)
    if parent == BLACKHOLE_HANDLE:
        interface.run('tc', 'qdisc', 'del', 'dev', interface.name, 'root')
    elif parent:
        interface.run('tc', 'filter', 'del', 'dev', interface.name, 'parent', parent, 'pref',
                      BLACKHOLE_PREF, check=False)


def fail_link(model, a, b, silent=False, sites=LOCAL):
    for interface in link_interfaces(model, a, b, sites):
        if silent:
            blackhole(interface)
        else:
            interface.run('ip', 'link', 'set', interface.name, 'down')


def recover_link(model, a, b, sites=LOCAL):
    """Undo either kind of failure of the link (both are idempotent to undo)."""
    for interface in link_interfaces(model, a, b, sites):
        unblackhole(interface)
        interface.run('ip', 'link', 'set', interface.name, 'up')


def fail_switch(model, switch, silent=False, sites=LOCAL):
    for a, b in switch_links(model, switch):
        fail_link(model, a, b, silent, sites)


def recover_switch(model, switch, sites=LOCAL):
    for a, b in switch_links(model, switch):
        recover_link(model, a, b, sites)


def fail(model, element, silent=False, sites=LOCAL):
    """Fail ``('link', a, b)`` or ``('switch', s)``."""
    if element[0] == 'link':
        fail_link(model, element[1], element[2], silent, sites)
    else:
        fail_switch(model, element[1], silent, sites)


def recover(model, element, sites=LOCAL):
    """Recover ``('link', a, b)`` or ``('switch', s)``."""
    if element[0] == 'link':
        recover_link(model, element[1], element[2], sites)
    else:
        recover_switch(model, element[1], sites)
