"""Two-level tables: Algorithms 1 and 2 exactly for k=4, the routing example
of section 3.5, and hop-by-hop walks for every host pair."""
from collections import Counter
import itertools

import pytest

from controller.fattree.pipeline import compile_table, rule_counts
from controller.fattree.twolevel import Prefix, Suffix, TwoLevelTable, all_tables
from topologies.walk import walk
from topologies.fattree import FatTree


@pytest.fixture(scope='module')
def k4():
    topo = FatTree(4)
    return topo, all_tables(topo)


def entries(table):
    prefixes = [(str(p), p.port if p.terminating else p.suffix_table) for p in table.prefixes]
    suffixes = {name: [(str(s), s.port) for s in entries]
                for name, entries in table.suffix_tables.items()}
    return prefixes, suffixes


def test_upper_switch_table_is_figure_4(k4):
    _, tables = k4
    # Figure 4 of the paper: switch 10.2.2.1
    assert entries(tables['a2_2']) == (
        [('10.2.0.0/24', 0), ('10.2.1.0/24', 1), ('0.0.0.0/0', 'hostid')],
        {'hostid': [('0.0.0.2/8', 2), ('0.0.0.3/8', 3)]})


@pytest.mark.parametrize('pod', range(4))
def test_every_k4_pod_switch_follows_algorithm_1(k4, pod):
    _, tables = k4
    for z in range(4):
        name = ('e%d_%d' if z < 2 else 'a%d_%d') % (pod, z)
        prefixes, suffixes = entries(tables[name])
        if z < 2:   # lower: own hosts delivered, no /24 step
            assert prefixes == [('10.%d.%d.2/32' % (pod, z), 0), ('10.%d.%d.3/32' % (pod, z), 1),
                                ('0.0.0.0/0', 'hostid')]
        else:
            assert prefixes == [('10.%d.0.0/24' % pod, 0), ('10.%d.1.0/24' % pod, 1),
                                ('0.0.0.0/0', 'hostid')]
        # output port (ID - 2 + z) mod (k/2) + k/2
        assert suffixes == {'hostid': [('0.0.0.2/8', z % 2 + 2), ('0.0.0.3/8', (1 + z) % 2 + 2)]}


def test_every_k4_core_switch_follows_algorithm_2(k4):
    topo, tables = k4
    for core in topo.switches_of_role('core'):
        assert entries(tables[core.name]) == (
            [('10.%d.0.0/16' % pod, pod) for pod in range(4)], {})


def test_routing_example_of_section_3_5(k4):
    topo, tables = k4
    hops = walk(topo, lambda sw, _in, dst: tables[sw].lookup(dst), 'h0_1_2', 'h2_0_3')
    names = [topo.node(sw).ip for sw, _ in hops]
    ports = [port for _, port in hops]
    assert names[:2] == ['10.0.1.1', '10.0.2.1'] and ports[:2] == [2, 3]
    assert topo.node(hops[2][0]).role == 'core' and ports[2] == 2
    assert names[3:] == ['10.2.2.1', '10.2.0.1'] and ports[3] == 0
    # the simultaneous 10.0.1.3 -> 10.2.0.2 flow leaves 10.0.1.1 toward 10.0.3.1
    second = walk(topo, lambda sw, _in, dst: tables[sw].lookup(dst), 'h0_1_3', 'h2_0_2')
    assert topo.peer(*second[0])[0] == 'a0_3'


def test_left_handed_prefix_beats_right_handed_suffix():
    # Section 3.4: 10.2.0.3 matches 10.2.0.X and X.X.X.3; the prefix wins.
    table = TwoLevelTable('example')
    table.suffix_tables['s'] = []
    table.add_prefix('10.2.0.0', 24, port=0)
    table.add_prefix('0.0.0.0', 0, suffix_table='s')
    table.add_suffix('s', '0.0.0.2', 8, 2)
    table.add_suffix('s', '0.0.0.3', 8, 3)
    assert table.lookup('10.2.0.3') == 0
    assert table.lookup('10.3.1.2') == 2
    assert table.lookup('10.3.1.9') is None


def test_a_suffix_table_may_be_shared():
    table = TwoLevelTable('shared')
    table.suffix_tables['s'] = []
    table.add_suffix('s', '0.0.0.2', 8, 5)
    table.add_prefix('10.1.0.0', 16, suffix_table='s')
    table.add_prefix('10.2.0.0', 16, suffix_table='s')
    assert table.lookup('10.1.7.2') == table.lookup('10.2.9.2') == 5
    assert len([r for r in compile_table(table)[0] if r.table == 2 and r.priority]) == 1
    with pytest.raises(ValueError, match='missing suffix table'):
        table.add_prefix('10.3.0.0', 16, suffix_table='nope')


def test_masks_are_checked():
    with pytest.raises(ValueError, match='outside its mask'):
        Prefix('10.2.0.3', 24, port=0)
    with pytest.raises(ValueError, match='outside its mask'):
        Suffix('10.2.0.3', 8, 0)
    with pytest.raises(ValueError, match='exactly one'):
        Prefix('10.2.0.0', 24)


def test_table_prints_in_paper_notation(k4):
    text = k4[1]['a2_2'].format()
    assert '10.2.0.0/24        0' in text and '0.0.0.0/0          -> hostid' in text
    assert '0.0.0.3/8          3' in text


@pytest.mark.parametrize('k', [4, 6, 8])
def test_all_pairs_arrive_loop_free_and_spread_evenly(k):
    topo = FatTree(k)
    tables = all_tables(topo)
    half = k // 2
    upper_use = Counter()
    core_use = Counter()
    for src, dst in itertools.permutations([h.name for h in topo.hosts], 2):
        hops = walk(topo, lambda sw, _in, ip: tables[sw].lookup(ip), src, dst)
        assert len(hops) <= 6 - 1  # at most 5 switches (6 links): edge-agg-core-agg-edge
        s_pod, s_z, _ = topo.node(src).coords
        d_pod, d_z, _ = topo.node(dst).coords
        expected = 1 if (s_pod, s_z) == (d_pod, d_z) else 3 if s_pod == d_pod else 5
        assert len(hops) == expected
        if s_pod != d_pod:
            upper_use[(hops[0][0], hops[1][0])] += 1
            core_use[(hops[0][0], hops[2][0])] += 1
    # Each edge switch spreads its inter-pod traffic evenly over its k/2 upper
    # switches and evenly over k/2 core switches (the destination host ID fixes
    # both choices, so one edge reaches k/2 cores); each pod's edges together
    # use all (k/2)^2 core switches evenly.
    uppers_per_edge = Counter(edge for edge, _ in upper_use)
    cores_per_edge = Counter(edge for edge, _ in core_use)
    assert set(uppers_per_edge.values()) == {half}
    assert set(cores_per_edge.values()) == {half}
    assert len(set(upper_use.values())) == 1 and len(set(core_use.values())) == 1
    pod_core_use = Counter()
    for (edge, core), n in core_use.items():
        pod_core_use[(topo.pod_of(edge), core)] += n
    assert len(pod_core_use) == k * half * half and len(set(pod_core_use.values())) == 1


@pytest.mark.parametrize('k', [4, 6, 8])
def test_rule_counts_within_paper_bounds(k):
    topo = FatTree(k)
    for name, table in all_tables(topo).items():
        prefixes, suffixes, housekeeping = rule_counts(topo, table)
        assert prefixes <= k and suffixes <= k // 2
        # IPv4 to routing and three miss drops; ARP: dropped, or on a lower
        # switch answered by k pod + k/2 subnet + k/2 host-ID entries and three misses.
        assert housekeeping == (4 + 1 + 2 * k + 3 if topo.node(name).role == 'edge' else 4 + 1)
