"""The simulator's switches forward as real bridges holding the same rules:
the two-level rules of k=4 with a lower-upper link failed, installed in
userspace OVS bridges and read back with ovs-ofctl (controller.openflow.
ofctl_dump), walked for every connected host pair; path_trace over the
export gives the same hops."""
import subprocess

from controller.fattree.failover import expand_failures
from scripts.fattree.installed_check import InstalledState, connected_pairs, installed_forward
from scripts.sim import rules_export
from scripts.sim.ns3 import build
from tests.ovs.ovs_fabric import OvsFabric
from topologies.fattree import FatTree
from topologies.walk import walk

FAILED_LINKS = (('e0_0', 'a0_2'),)


def test_simulated_paths_equal_the_installed_state(require_ovs, tmp_path):
    topo = FatTree(4)
    export = rules_export.export_switches(topo, 'twolevel', FAILED_LINKS)
    path = tmp_path / 'export.txt'
    rules_export.write_export(export, path, topo=topo, scheme='twolevel')
    failed = expand_failures(topo, FAILED_LINKS)
    with OvsFabric(topo, 'sp') as fabric:
        for name, state in export.items():
            fabric.install(name, state['rules'], state['groups'])
        states = {name: InstalledState(fabric.dump_flows(name), fabric.dump_groups(name))
                  for name in export}
    forward = installed_forward(topo, states, failed, frozenset())
    pairs = connected_pairs(topo, failed, frozenset())
    queries = ['dead_link %s %s' % link for link in FAILED_LINKS]
    queries += ['trace %s %s 1 0 0 100' % pair for pair in pairs]
    done = subprocess.run([str(build.path_trace()), str(path)], input='\n'.join(queries) + '\n',
                          capture_output=True, text=True, check=True, timeout=120)
    for (src, dst), line in zip(pairs, done.stdout.splitlines()):
        hops = ' '.join('%s:%d' % hop for hop in walk(topo, forward, src, dst))
        assert line == '%s %s 1 0 0: %s -> %s' % (src, dst, hops, dst)
