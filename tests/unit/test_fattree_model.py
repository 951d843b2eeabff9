"""The fat-tree model: the paper's addressing, ports, dpids; bad k rejected."""
import pytest

from topologies.fattree import FatTree, check_k, fattree_size
from topologies.model import UnknownNodeError, mac_from_ip, ofport


@pytest.mark.parametrize('k', [3, 5, 2, 0, -4, 256, 300, 4.0, '4', True])
def test_bad_k_is_rejected_with_a_reason(k):
    with pytest.raises(ValueError, match='fat-tree k must'):
        check_k(k)


@pytest.mark.parametrize('k', [4, 6, 8, 254])
def test_sizes(k):
    if k == 254:
        assert check_k(k) == 254
        return
    topo = FatTree(k)
    roles = [n.role for n in topo.nodes.values()]
    assert roles.count('edge') == roles.count('aggregation') == k * k // 2
    assert roles.count('core') == (k // 2) ** 2
    assert roles.count('host') == k ** 3 // 4
    assert len(topo.links) == 3 * k ** 3 // 4
    assert len({s.dpid for s in topo.switches}) == len(topo.switches)
    assert len({n.ip for n in topo.nodes.values()}) == len(topo.nodes)
    for sw in topo.switches:
        assert topo.ports(sw.name) == list(range(k))


def test_paper_addressing_k4():
    topo = FatTree(4)
    assert topo.node('e0_1').ip == '10.0.1.1'
    assert topo.node('a2_2').ip == '10.2.2.1'
    assert topo.node('c1_2').ip == '10.4.1.2'
    assert topo.node('h2_0_3').ip == '10.2.0.3'
    assert {h.ip.split('.')[3] for h in topo.hosts} == {'2', '3'}
    assert topo.node('h2_0_3').mac == '02:00:0a:02:00:03' == mac_from_ip('10.2.0.3')


def test_dpid_encodes_role_and_address():
    topo = FatTree(4)
    assert topo.node('e0_1').dpid == 0x1_0a000101
    assert topo.node('a2_2').dpid == 0x2_0a020201
    assert topo.node('c1_2').dpid == 0x3_0a040102
    assert topo.by_dpid(0x2_0a020201).name == 'a2_2'


def test_paper_ports_k4():
    topo = FatTree(4)
    # edge: 0..k/2-1 hosts, k/2.. up to the aggregation switch of the same index
    assert topo.peer('e0_1', 0) == ('h0_1_2', 0)
    assert topo.peer('e0_1', 1) == ('h0_1_3', 0)
    assert topo.peer('e0_1', 2) == ('a0_2', 1)
    assert topo.peer('e0_1', 3) == ('a0_3', 1)
    # aggregation: down to edge m on port m, up to core (z-k/2+1, m+1)
    assert topo.peer('a0_2', 0) == ('e0_0', 2)
    assert topo.peer('a0_2', 3) == ('c1_2', 0)
    assert topo.peer('a0_3', 2) == ('c2_1', 0)
    # core port i to pod i
    for pod in range(4):
        assert topo.peer('c1_2', pod) == ('a%d_2' % pod, 3)
    assert ofport(0) == 1


def test_unknown_names_list_what_exists():
    with pytest.raises(UnknownNodeError, match='unknown node .e9_9.*a0_2'):
        FatTree(4).node('e9_9')


@pytest.mark.parametrize('k', [4, 6])
def test_up_and_down_ports_are_the_papers_halves(k):
    topo = FatTree(k)
    for switch in topo.switches:
        if switch.role == 'core':
            assert topo.up_ports(switch.name) == [] and topo.down_ports(switch.name) == list(range(k))
        else:
            assert topo.up_ports(switch.name) == list(range(k // 2, k))
            assert topo.down_ports(switch.name) == list(range(k // 2))


@pytest.mark.parametrize('k', [4, 6, 8])
def test_size_before_building_matches_the_model(k):
    topo = FatTree(k)
    assert fattree_size(k) == (len(topo.switches), len(topo.hosts),
                               sum(len(topo.ports(s.name)) for s in topo.switches))
def test_a_core_port_leads_to_its_rows_upper_switch_of_each_pod():
    topo = FatTree(6)
    for pod in range(6):
        assert topo.peer('c2_3', topo.port_to_pod('c2_3', pod)) == ('a%d_4' % pod, 5)
    with pytest.raises(ValueError, match='c1_1 has no port to pod 6'):
        topo.port_to_pod('c1_1', 6)
