"""The simulator's switch pipeline (scripts/sim/ns3/of_pipeline.h) forwards
as the exported rules say: every host pair of k=4 and k=8, under no
failure, under failures the controller has routed around, and under
failures only the switches' groups have seen yet (BFD and fast failover,
the tables still the failure-free ones), for the static schemes. The C++
path (through the export file) must equal the path read from the
controller's own rule values by the flow-level backend's walk
(scripts.flow.pipeline_walk, whose lookup equals controller.openflow.lookup's
linear scan: tests/unit/test_flow_paths.py), hop by hop over the model's
cabling, with select groups hashed as OVS does (scripts.sim.ovs_select,
written a second time, in Python, from OVS's source) and the same entries
counted."""
import itertools
import subprocess

import pytest

from controller.fattree.failover import expand_failures
from scripts.fattree.installed_check import port_is_live
from scripts.flow.pipeline_walk import compiled_switches, trace_packet
from scripts.letflow.ns3.build import BuildError
from scripts.sim import rules_export
from scripts.sim.ns3 import build
from scripts.sim.ovs_select import ovs_symmetric_l3l4_hash
from topologies.addressing import ip_to_int
from topologies.fattree import FatTree
from topologies.nonblocking import NonBlocking

BYTES = 1500
TOPOLOGIES = {4: FatTree(4), 8: FatTree(8)}


@pytest.fixture(scope='session')
def path_trace():
    try:
        return str(build.path_trace())
    except BuildError as error:  # setup builds it: its absence is a failure, not a skip
        pytest.fail(str(error))


def reference_trace(topo, switches, indexes, live, failed_switches, src, dst, proto, sport, dport, counts):
    """What path_trace prints for one trace (its hops and end), from the
    rules as data; ``counts`` gains the entries met, by (switch, index)."""
    trace = trace_packet(topo, switches, src, dst, proto, sport, dport, live, failed_switches)
    for node, rule in trace.rules:
        key = (node, indexes[node][id(rule)])
        counts[key] = counts.get(key, 0) + 1
    return ['%s:%d' % hop for hop in trace.hops], trace.end


def flows_of(topo, per_pair):
    hosts = [h.name for h in topo.hosts]
    return [(src, dst, 6, 1024 + (7 * n + i) % 64000, 5201) for n, (src, dst) in
            enumerate(itertools.permutations(hosts, 2)) for i in range(per_pair)]


def compare(path_trace, tmp_path, topo, scheme, flows, computed_for=((), ()), dead=((), ())):
    """Traces of the C++ pipeline and of the reference for ``flows`` over
    the rules computed for the failures ``computed_for`` with the links and
    switches ``dead`` not live; asserts they agree and returns the ends."""
    export = rules_export.export_switches(topo, scheme, *computed_for)
    path = tmp_path / 'export.txt'
    rules_export.write_export(export, path, topo=topo, scheme=scheme)
    dead_links, dead_switches = dead
    failed = expand_failures(topo, dead_links, dead_switches) if topo.name.startswith('fattree') \
        else frozenset()
    queries = ['dead_link %s %s' % link for link in dead_links]
    queries += ['dead_switch %s' % s for s in dead_switches]
    queries += ['trace %s %s %d %d %d %d' % (flow + (BYTES,)) for flow in flows]
    done = subprocess.run([path_trace, str(path)], input='\n'.join(queries) + '\n',
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    traced, counters = lines[:len(flows)], lines[len(flows):]

    def live(switch, port):
        return port_is_live(topo, switch, port, failed, dead_switches)
    switches = compiled_switches(export)
    indexes = {name: {id(r): i for i, r in enumerate(s['rules'])} for name, s in export.items()}
    counts, ends = {}, {}
    for flow, line in zip(flows, traced):
        hops, end = reference_trace(topo, switches, indexes, live, dead_switches, *flow, counts)
        assert line == '%s %s %d %d %d:%s -> %s' % (flow + (''.join(' ' + h for h in hops), end))
        kind = end.split('@')[0] if '@' in end else 'delivered'
        ends[kind] = ends.get(kind, 0) + 1
    assert sorted(counters) == sorted('counter %s %d %d %d' % (sw, i, n, n * BYTES)
                                      for (sw, i), n in counts.items())
    return ends


FAILURES = {
    4: [((('e0_0', 'a0_2'),), ()), ((('a1_3', 'c2_1'),), ()), ((), ('c1_2',)), ((), ('a2_2',)),
        ((('e0_0', 'a0_2'), ('e0_1', 'a0_3')), ())],
    8: [((('e0_0', 'a0_4'),), ()), ((('a3_5', 'c2_3'),), ()), ((), ('c3_3',)),
        ((('e1_2', 'a1_6'), ('a5_4', 'c1_1')), ('e6_3',))],
}


@pytest.mark.parametrize('k', [4, 8])
@pytest.mark.parametrize('scheme', ['twolevel', 'ecmp'])
def test_paths_equal_the_rules_paths_with_and_without_failures(path_trace, tmp_path, k, scheme):
    topo = TOPOLOGIES[k]
    flows = flows_of(topo, 2 if k == 4 else 1)
    ends = compare(path_trace, tmp_path, topo, scheme, flows)
    assert ends == {'delivered': len(flows)}
    for failure in FAILURES[k]:
        ends = compare(path_trace, tmp_path, topo, scheme, flows, computed_for=failure, dead=failure)
        # a dead edge switch's hosts are cut off; everything else is routed around
        cut = [h.name for h in topo.hosts if topo.host_attachment(h.name)[0] in failure[1]]
        assert ends.get('delivered') == len([f for f in flows if f[0] not in cut and f[1] not in cut])


@pytest.mark.parametrize('k', [4, 8])
@pytest.mark.parametrize('scheme', ['twolevel', 'ecmp'])
def test_local_repair_before_the_controller_knows(path_trace, tmp_path, k, scheme):
    """Failure-free rules, failed ports: fast-failover and select groups
    skip dead buckets; what no group can repair dies at the dead port."""
    topo = TOPOLOGIES[k]
    flows = flows_of(topo, 1)
    ends = [compare(path_trace, tmp_path, topo, scheme, flows, dead=failure) for failure in FAILURES[k]]
    assert all(e.get('delivered', 0) > 0 for e in ends)
    assert any(e.get('dead', 0) > 0 for e in ends)  # down-links have no alternative in the tables


def test_nonblocking_reference(path_trace, tmp_path):
    topo = NonBlocking(4)
    flows = flows_of(topo, 1)
    assert compare(path_trace, tmp_path, topo, 'nonblocking', flows) == {'delivered': len(flows)}


def test_dynamic_schemes_first_packets(path_trace, tmp_path):
    """The classifier holds a new upward flow's first packet at the
    controller; the scheduler copies it there and forwards on."""
    topo = TOPOLOGIES[4]
    flows = flows_of(topo, 1)
    held = compare(path_trace, tmp_path, topo, 'classifier', flows)
    local = sum(1 for f in flows if topo.host_attachment(f[0])[0] == topo.host_attachment(f[1])[0])
    assert held == {'controller': len(flows) - local, 'delivered': local}
    assert compare(path_trace, tmp_path, topo, 'scheduler', flows) == {'delivered': len(flows)}


def test_ovs_hash_matches_ecmp_spread():
    """The hash gives every slot of a select group's table to some flows."""
    slots = {ovs_symmetric_l3l4_hash(ip_to_int('10.0.0.2'), ip_to_int('10.3.1.3'), 6, port, 5201) & 15
             for port in range(40000, 40200)}
    assert slots == set(range(16))
    assert ovs_symmetric_l3l4_hash(1, 2, 17, 5, 6) == ovs_symmetric_l3l4_hash(1, 2, 17, 7, 8)
