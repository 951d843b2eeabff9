"""The leaf-spine model (topologies.leafspine): cabling asked of the model
by the P4 LetFlow fabric, and bad sizes refused with their name."""
import pytest

from topologies.leafspine import LeafSpine


def test_ports_addresses_and_the_answers_the_p4_fabric_asks_for():
    topo = LeafSpine(3, 2, 2)
    assert topo.peer('leaf2', 0) == ('h2_2', 0) and topo.node('h2_2').ip == '10.0.2.2'
    assert topo.peer('leaf1', 3) == ('spine1', 1)  # leaf port hosts + j -> spine j, its port i
    assert topo.uplinks('leaf1') == [2, 3]
    assert topo.host_ports('leaf1') == {'10.0.1.2': 0, '10.0.1.3': 1}
    assert topo.subnet('leaf2') == '10.0.2.0/24'
    assert topo.leaf_names() == ['leaf0', 'leaf1', 'leaf2']
    assert len({n.dpid for n in topo.switches}) == 5


@pytest.mark.parametrize('args, message', [
    ((0, 2, 2), 'leaves must be >= 1'), ((2, True, 2), 'spines must be an integer'),
    ((2, 2, 254), 'at most 254 leaves and spines and 253 hosts per leaf')])
def test_bad_sizes_are_named(args, message):
    with pytest.raises(ValueError, match=message):
        LeafSpine(*args)
