"""The flow backend's paths (scripts.flow.pipeline_walk): its compiled
tables give every packet the rule a linear scan of the controller's rules
gives (controller.openflow.lookup), flow-mods replace and delete as
OpenFlow's ADD and DELETE_STRICT, and the paths walked through the
two-level export are the paper's two-level paths."""
import itertools
import random

import pytest

from controller.fattree.classifier import FlowKey
from controller.fattree.scheme_table0_rules import flow_rule
from controller.fattree.twolevel import all_tables
from controller.openflow.lookup import pipeline, rules_hit, tables_walked
from scripts.flow.pipeline_walk import SwitchPipeline, compiled_switches, trace_packet
from scripts.sim import rules_export
from topologies.addressing import ip_to_int
from topologies.fattree import FatTree
from topologies.walk import walk

TOPO = FatTree(4)


def packets(topo, draw, n):
    hosts = [ip_to_int(h.ip) for h in topo.hosts]
    for _ in range(n):
        proto = draw.choice((6, 17))
        name = {6: 'tcp', 17: 'udp'}[proto]
        yield {'eth_type': 0x0800, 'ipv4_src': draw.choice(hosts), 'ipv4_dst': draw.choice(hosts),
               'ip_proto': proto, name + '_src': draw.randrange(32768, 61000), name + '_dst': 5201,
               'in_port': draw.randrange(1, 5), 'metadata': 0}


@pytest.mark.parametrize('scheme', ['twolevel', 'ecmp', 'classifier', 'scheduler'])
def test_compiled_lookup_is_the_linear_scan(scheme):
    export = rules_export.export_switches(TOPO, scheme)
    compiled = compiled_switches(export)
    draw = random.Random(scheme)
    for name in ('e0_0', 'a1_2', 'c1_1'):
        linear = pipeline(export[name]['rules'])
        for packet in packets(TOPO, draw, 200):
            assert tables_walked(compiled[name].first_match, dict(packet)) == rules_hit(linear, dict(packet))


def test_flow_mods_replace_and_delete_strictly():
    flow = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201)
    switch = SwitchPipeline(rules_export.export_switches(TOPO, 'scheduler')['e0_0']['rules'], [])
    packet = {'eth_type': 0x0800, 'ipv4_src': ip_to_int(flow.src), 'ipv4_dst': ip_to_int(flow.dst),
              'ip_proto': 6, 'tcp_src': 40000, 'tcp_dst': 5201, 'in_port': 1, 'metadata': 0}
    new_flow = switch.first_match(0, packet)
    assert ('controller',) in new_flow.actions  # unknown: its first packet goes to the controller
    switch.add(flow_rule(flow, 2))
    assert switch.first_match(0, packet) == flow_rule(flow, 2)
    switch.add(flow_rule(flow, 3))  # same table, priority and match: replaced, not added
    assert switch.first_match(0, packet) == flow_rule(flow, 3)
    assert switch.delete_strict(flow_rule(flow, 2))  # strict delete ignores the actions
    assert switch.first_match(0, packet) == new_flow
    assert not switch.delete_strict(flow_rule(flow, 3))


def test_two_level_paths_are_the_papers():
    export = rules_export.export_switches(TOPO, 'twolevel')
    switches = compiled_switches(export)
    tables = all_tables(TOPO)
    hosts = [h.name for h in TOPO.hosts]
    for src, dst in itertools.permutations(hosts, 2):
        trace = trace_packet(TOPO, switches, src, dst, 6, 40000, 5201)
        assert trace.end == dst
        assert trace.hops == walk(TOPO, lambda s, _, ip: tables[s].lookup(ip), src, dst)
    # Section 3.4: switch z of a pod sends host ID i up port (i - 2 + z) mod k/2
    # + k/2: to 10.2.0.3, e0_0 takes port 3 (a0_3), a0_3 port 2 (core c2_1).
    trace = trace_packet(TOPO, switches, 'h0_0_2', 'h2_0_3', 6, 40000, 5201)
    assert [s for s, _ in trace.hops] == ['e0_0', 'a0_3', 'c2_1', 'a2_3', 'e2_0']


def test_ecmp_spreads_by_the_source_port():
    switches = compiled_switches(rules_export.export_switches(TOPO, 'ecmp'))
    cores = {trace_packet(TOPO, switches, 'h0_0_2', 'h2_0_3', 6, sport, 5201).hops[2][0]
             for sport in range(40000, 40064)}
    assert cores == {'c1_1', 'c1_2', 'c2_1', 'c2_2'}


def test_held_first_packet_ends_at_the_controller():
    switches = compiled_switches(rules_export.export_switches(TOPO, 'classifier'))
    trace = trace_packet(TOPO, switches, 'h0_0_2', 'h2_0_3', 6, 40000, 5201)
    assert (trace.end, trace.packet_ins, trace.hops) == ('controller@e0_0', ['e0_0'], [])
    local = trace_packet(TOPO, switches, 'h0_0_2', 'h0_0_3', 6, 40000, 5201)
    assert local.end == 'h0_0_3' and not local.packet_ins
