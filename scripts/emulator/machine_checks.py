"""Before a fabric starts: root, a running Open vSwitch, the memory it
needs and interface names Mininet can make."""
import os
import subprocess

from scripts.emulator.errors import SetupError
from topologies.mininet_topo import ModelTopo


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
    probe = subprocess.run(['ovs-vsctl', '--timeout=5', 'show'], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        raise SetupError('Open vSwitch is not running (%s); run scripts/setup.sh'
                         % (probe.stderr.strip() or 'ovs-vsctl failed'))
