"""Placement of a fat-tree over servers: whole pods per server, cores dealt
round robin, and only aggregation-core links crossing servers."""
import pytest

from scripts.cluster.placement import (PlacementError, cross_server_links, nodes_by_server,
                                       parse_servers, place_fattree)
from topologies.fattree import FatTree


def test_two_servers_k4_whole_pods_and_spread_cores():
    topo = FatTree(4)
    placement = place_fattree(topo, ['s1', 's2'])
    assert set(placement) == set(topo.nodes)
    for node in topo.nodes.values():
        if node.role != 'core':
            assert placement[node.name] == ('s1' if topo.pod_of(node.name) < 2 else 's2')
    assert [placement[c] for c in ('c1_1', 'c1_2', 'c2_1', 'c2_2')] == ['s1', 's2', 's1', 's2']
    by_server = nodes_by_server(placement)
    assert len(by_server['s1']) == len(by_server['s2']) == 18


@pytest.mark.parametrize('k, servers, tunnels', [
    (4, 1, 0),
    (4, 2, 8),     # 4 cores x 2 pods on the other server
    (4, 3, 10),    # pods 2/1/1: cores on s1 cross 2 links, on s2 and s3 3
    (4, 4, 12),    # every core reaches 3 foreign pods
    (8, 2, 64),    # 16 cores x 4 foreign pods
    (8, 3, 85),    # pods 3/3/2, cores 6/5/5: 6*5 + 5*5 + 5*6
])
def test_only_upper_core_links_cross_and_their_count(k, servers, tunnels):
    topo = FatTree(k)
    names = ['s%d' % i for i in range(servers)]
    placement = place_fattree(topo, names)
    crossing = cross_server_links(topo, placement)
    roles = {frozenset((topo.nodes[l.node_a].role, topo.nodes[l.node_b].role)) for l in crossing}
    assert roles <= {frozenset(('aggregation', 'core'))}
    assert len(crossing) == tunnels
    pods = {}
    for node in topo.nodes.values():
        if node.role != 'core':
            pods.setdefault(topo.pod_of(node.name), set()).add(placement[node.name])
    assert all(len(where) == 1 for where in pods.values())


def test_more_servers_than_pods_is_refused_naming_them():
    with pytest.raises(PlacementError, match=r'5 servers \(a, b, c, d, e\).*only 4 pods'):
        place_fattree(FatTree(4), list('abcde'))


def test_same_server_twice_is_refused():
    with pytest.raises(PlacementError, match='server 10.0.0.2 is named twice'):
        parse_servers('10.0.0.1,10.0.0.2, 10.0.0.2')
    with pytest.raises(PlacementError, match='servers named twice: a'):
        place_fattree(FatTree(4), ['a', 'b', 'a'])


@pytest.mark.parametrize('text', ['', 'a,,b', 'root@a', 'a:22', 'a b', '-oProxyCommand=x'])
def test_bad_server_names_are_refused(text):
    with pytest.raises(PlacementError, match='bad server name'):
        parse_servers(text)


def test_server_names_parse():
    assert parse_servers('alpha.lab, 192.168.1.7') == ['alpha.lab', '192.168.1.7']


def test_cli_refuses_repeated_server_and_too_many_before_starting(capsys):
    from scripts.cli import main
    with pytest.raises(SystemExit) as exit_info:
        main(['run', '--cluster', 's1,s2,s1'])
    assert exit_info.value.code == 2
    assert 'server s1 is named twice' in capsys.readouterr().err
    with pytest.raises(SystemExit, match=r'5 servers \(a, b, c, d, e\) but fattree\(k=4\) has only 4 pods'):
        main(['run', '--cluster', 'a,b,c,d,e', '--tunnel', 'vxlan'])
