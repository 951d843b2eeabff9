"""Control-plane entries of the P4 programs (controller.p4.entries) and the
P4 fabric models: pure, no P4 tool needed."""
import struct

import pytest

from controller.p4.entries import (
    fattree_commands, letflow_commands, sketch_commands, tcam_entries, two_level_commands)
from controller.fattree.twolevel import TwoLevelTable, all_tables, switch_table
from scripts.p4.bmv2_fabric import decode_report, fattree_model, letflow_model, sketch_model
from topologies.addressing import ip_to_int
from topologies.fattree import FatTree

K4 = FatTree(4)


def tcam_lookup(entries, ip):
    """What the TCAM does: the lowest-addressed matching word's port (None:
    a drop word or no match)."""
    for entry in sorted(entries, key=lambda e: e.address):
        if ip_to_int(ip) & ip_to_int(entry.mask) == ip_to_int(entry.value):
            return entry.port
    return None


def test_aggregation_switch_entries_are_the_papers_tcam():
    # Figure 5 of the paper for switch 10.2.2.1: prefixes at the low
    # addresses, suffixes above them; ports are OpenFlow ports (paper + 1).
    assert two_level_commands(switch_table(K4, 'a2_2')) == [
        'table_add TwoLevelIngress.tcam output 10.2.0.0&&&255.255.255.0 => 1 0',
        'table_add TwoLevelIngress.tcam output 10.2.1.0&&&255.255.255.0 => 2 1',
        'table_add TwoLevelIngress.tcam output 0.0.0.2&&&0.0.0.255 => 3 2',
        'table_add TwoLevelIngress.tcam output 0.0.0.3&&&0.0.0.255 => 4 3',
    ]


def test_edge_switch_entries():
    assert two_level_commands(switch_table(K4, 'e0_1')) == [
        'table_add TwoLevelIngress.tcam output 10.0.1.2&&&255.255.255.255 => 1 0',
        'table_add TwoLevelIngress.tcam output 10.0.1.3&&&255.255.255.255 => 2 1',
        'table_add TwoLevelIngress.tcam output 0.0.0.2&&&0.0.0.255 => 4 2',
        'table_add TwoLevelIngress.tcam output 0.0.0.3&&&0.0.0.255 => 3 3',
    ]


def test_core_switch_entries():
    assert two_level_commands(switch_table(K4, 'c2_1')) == [
        'table_add TwoLevelIngress.tcam output 10.%d.0.0&&&255.255.0.0 => %d %d' % (pod, pod + 1, pod)
        for pod in range(4)]


def test_prefix_wins_over_suffix():
    # 10.2.0.3 matches 10.2.0.0/24 (port 0) and suffix .3 (port 3).
    entries = tcam_entries(switch_table(K4, 'a2_2'))
    assert tcam_lookup(entries, '10.2.0.3') == 0
    assert tcam_lookup(entries, '10.3.0.3') == 3


@pytest.mark.parametrize('k', [4, 6])
def test_tcam_forwards_like_the_two_level_table_everywhere(k):
    topo = FatTree(k)
    for name, table in all_tables(topo).items():
        entries = tcam_entries(table)
        for host in topo.hosts:
            assert tcam_lookup(entries, host.ip) == table.lookup(host.ip), (name, host.name)


def test_non_terminating_prefix_below_slash_zero():
    # A general two-level table: a suffix table under 10.1.0.0/16 and a
    # shorter terminating prefix. The suffix words carry the prefix's bits, a
    # drop word keeps an unmatched 10.1.x.x from reaching 10.0.0.0/8, and a
    # suffix overlapping a /28 with other bits can never match and is left out.
    table = TwoLevelTable('x')
    table.add_suffix('s', '0.0.0.5', 8, 7)
    table.add_suffix('s', '0.0.0.1', 1, 8)
    table.add_prefix('10.1.0.0', 16, suffix_table='s')
    table.add_prefix('10.0.0.0', 8, port=1)
    table.add_suffix('t', '0.0.0.5', 8, 9)
    table.add_prefix('10.2.2.16', 28, suffix_table='t')
    entries = tcam_entries(table)
    assert [(e.value, e.mask, e.port) for e in entries] == [
        ('10.2.2.16', '255.255.255.240', None),
        ('10.1.0.5', '255.255.0.255', 7),
        ('10.1.0.1', '255.255.0.1', 8),
        ('10.1.0.0', '255.255.0.0', None),
        ('10.0.0.0', '255.0.0.0', 1),
    ]
    for ip in ('10.1.3.5', '10.1.3.7', '10.1.3.6', '10.9.9.9', '10.2.2.21', '10.2.2.5', '11.0.0.1'):
        assert tcam_lookup(entries, ip) == table.lookup(ip), ip


def test_fattree_model_uses_prefixed_names_and_the_same_entries():
    model, commands = fattree_model(4)
    assert sorted(commands) == sorted(n.name for n in model.switches)
    assert all(name.startswith('p4') for name in model.nodes)
    assert commands['p4a2_2'] == two_level_commands(switch_table(K4, 'a2_2'))
    assert fattree_commands(K4)['e0_1'] == two_level_commands(switch_table(K4, 'e0_1'))
    assert model.node('p4h0_1_2').mac == K4.node('h0_1_2').mac


def test_letflow_leaf_and_spine_entries():
    topo, commands = letflow_model(delta_us=20000, weights={'spine1': 3})
    assert commands['p4leaf0'] == [
        'table_set_default LetFlowIngress.config set_config 20000 4',
        'table_add LetFlowIngress.ecmp_member set_uplink 0 => 3',
        'table_add LetFlowIngress.ecmp_member set_uplink 1 => 4',
        'table_add LetFlowIngress.ecmp_member set_uplink 2 => 4',
        'table_add LetFlowIngress.ecmp_member set_uplink 3 => 4',
        'table_add LetFlowIngress.routes to_port 10.0.0.2/32 => 1',
        'table_add LetFlowIngress.routes to_port 10.0.0.3/32 => 2',
        'table_add LetFlowIngress.routes to_uplinks 10.0.1.0/24 =>',
    ]
    assert commands['p4spine1'] == [
        'table_set_default LetFlowIngress.config set_config 50000 0',
        'table_add LetFlowIngress.routes to_port 10.0.0.0/24 => 1',
        'table_add LetFlowIngress.routes to_port 10.0.1.0/24 => 2',
    ]
    assert topo.peer('p4leaf1', 3) == ('p4spine1', 1)


@pytest.mark.parametrize('kwargs', [
    {'uplinks': [2], 'weights': {3: 1}},
    {'uplinks': [2], 'weights': {2: 0}},
    {'uplinks': [2], 'weights': {2: 256}},
    {'uplinks': [2], 'delta_us': 0},
])
def test_letflow_rejects_bad_configuration(kwargs):
    with pytest.raises(ValueError):
        letflow_commands({'10.0.0.0/24': None}, **kwargs)


def test_sketch_entries():
    topo, commands = sketch_model(window_us=5000000, threshold_bytes=100000)
    assert commands['p4tor0'] == [
        'table_set_default SketchIngress.config set_config 5000000 100000',
        'mirroring_add 100 4',
        'table_add SketchIngress.routes deliver 10.0.0.2/32 => 1',
        'table_add SketchIngress.routes forward 10.1.0.2/32 => 2',
        'table_add SketchIngress.routes forward 10.2.0.2/32 => 3',
        'table_add SketchIngress.src_tor set_src_tor 10.1.0.0/16 => 1',
        'table_add SketchIngress.src_tor set_src_tor 10.2.0.0/16 => 2',
    ]
    assert topo.peer('p4tor0', 3) == ('p4cpu', 0)
    with pytest.raises(ValueError):
        sketch_commands({}, {}, {'10.1.0.0/16': 1024}, 3, 1000, 1000)


def test_decode_report():
    frame = b'\xff' * 12 + struct.pack('!HHII', 0x88B5, 2, 123456, 7)
    assert decode_report(frame) == (2, 123456, 7)
    assert decode_report(b'\xff' * 12 + b'\x08\x00' + bytes(40)) is None
