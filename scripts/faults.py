"""Failure injection on a running fabric, by the topology's own names.

Works from any root shell next to a running fabric (it acts on the
switches' interfaces in the root namespace, not through Mininet) and from
the Mininet CLI with ``sh dcfabric fail ...``:

  hard link failure    carrier down on both ends (ip link set down)
  silent link failure  carrier stays up, every packet is black-holed in both
                       directions (tc mirred to the down ifb0): only BFD sees it
  switch failure       every link of the switch (host links too), hard or silent
A host link's host end lives in the host's network namespace: it is found
through the host's Mininet shell process and acted on with mnexec.
and the matching recovery for each. BFD on every switch-to-switch link
(Open vSwitch's own) is set up here too.
"""
import json
import os
import subprocess
import time

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


def _sh(*cmd, check=True):
    result = subprocess.run(cmd, capture_output=True, text=True)
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


class Interface:
    """One end of a link: a switch's in the root namespace, a host's in the
    host's own namespace (commands run there through mnexec)."""

    def __init__(self, model, node, port):
        self.name = interface_name(model, node, port)
        self.in_host = model.nodes[node].is_host
        self.prefix = ('mnexec', '-a', str(host_pid(node))) if self.in_host else ()
        self.sink = HOST_BLACKHOLE_SINK if self.in_host else BLACKHOLE_SINK

    def run(self, *cmd, check=True):
        return _sh(*(self.prefix + cmd), check=check)

    def exists(self):
        return self.run('ip', 'link', 'show', self.name, check=False).returncode == 0


def link_interfaces(model, a, b):
    """Both ends (Interface) of the cable between a and b (names as the topology has them)."""
    model.node(a)
    model.node(b)
    for port in model.ports(a):
        peer, peer_port = model.peer(a, port)
        if peer == b:
            interfaces = [Interface(model, a, port), Interface(model, b, peer_port)]
            for interface in interfaces:
                if not interface.exists():
                    raise FaultError('interface %s does not exist: is a %s running?'
                                     % (interface.name, model.name))
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


def fail_link(model, a, b, silent=False):
    for interface in link_interfaces(model, a, b):
        if silent:
            blackhole(interface)
        else:
            interface.run('ip', 'link', 'set', interface.name, 'down')


def recover_link(model, a, b):
    """Undo either kind of failure of the link (both are idempotent to undo)."""
    for interface in link_interfaces(model, a, b):
        unblackhole(interface)
        interface.run('ip', 'link', 'set', interface.name, 'up')


def fail_switch(model, switch, silent=False):
    for a, b in switch_links(model, switch):
        fail_link(model, a, b, silent)


def recover_switch(model, switch):
    for a, b in switch_links(model, switch):
        recover_link(model, a, b)


def fail(model, element, silent=False):
    """Fail ``('link', a, b)`` or ``('switch', s)``."""
    if element[0] == 'link':
        fail_link(model, element[1], element[2], silent)
    else:
        fail_switch(model, element[1], silent)


def recover(model, element):
    """Recover ``('link', a, b)`` or ``('switch', s)``."""
    if element[0] == 'link':
        recover_link(model, element[1], element[2])
    else:
        recover_switch(model, element[1])


def exact_match_datapath():
    """Make ovs-vswitchd cache exact-match datapath flows, not megaflows.

    Why: with megaflows, Open vSwitch 3.1's userspace datapath kept a
    wildcarded flow whose output port had gone down after the controller had
    rerouted: after a core switch failure, an upper switch went on sending
    some destinations to its dead core port for as long as they had traffic,
    while its OpenFlow table and ofproto/trace said otherwise
    (`ovs-appctl revalidator/wait` did not fix it, `revalidator/purge`
    did). Seen in 4 of 4 runs of the fault tests after another fabric, 0 of
    5 with exact-match flows. It is daemon-wide and lasts until ovs-vswitchd
    restarts (scripts.fabric.Fabric turns megaflows back on at teardown);
    exact-match flows only cost more upcalls."""
    _sh('ovs-appctl', 'upcall/disable-megaflows')


def megaflows_on():
    """Undo exact_match_datapath when the fabric that needed it is gone."""
    _sh('ovs-appctl', 'upcall/enable-megaflows')


def enable_bfd(model, interval_ms=100, mult=3):
    """Open vSwitch BFD on both ends of every switch-to-switch link, one transaction."""
    cmd = ['ovs-vsctl']
    for link in model.switch_links():
        for node, port in ((link.node_a, link.port_a), (link.node_b, link.port_b)):
            cmd += ['--', 'set', 'interface', interface_name(model, node, port), 'bfd:enable=true',
                    'bfd:min_tx=%d' % interval_ms, 'bfd:min_rx=%d' % interval_ms, 'bfd:mult=%d' % mult]
    _sh(*cmd)


def bfd_states(model):
    """{interface: BFD state} for every switch-to-switch interface."""
    out = _sh('ovs-vsctl', '-f', 'json', '--columns=name,bfd_status', 'list', 'interface').stdout
    states = {}
    for name, (_, status) in json.loads(out)['data']:
        states[name] = dict(status).get('state')
    wanted = {interface_name(model, n, p) for l in model.switch_links()
              for n, p in ((l.node_a, l.port_a), (l.node_b, l.port_b))}
    return {name: state for name, state in states.items() if name in wanted}


def wait_bfd_up(model, timeout=30):
    deadline = time.time() + timeout
    while True:
        states = bfd_states(model)
        down = sorted(name for name, state in states.items() if state != 'up')
        if not down:
            return
        if time.time() > deadline:
            raise FaultError('BFD not up on %d interfaces after %ds: %s' % (len(down), timeout, down[:8]))
        time.sleep(0.2)
