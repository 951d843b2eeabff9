"""Kevin(n, k_s, k_d) model: matching decomposition (Observation 1), cabling,
IP embedding and parameter errors."""
import ipaddress

import pytest

from topologies.kevin import (
    IpEmbedding, Kevin, KevinParameterError, check_decomposition, db_successors,
    perfect_matchings)
from topologies.model import ofport


@pytest.mark.parametrize('n,k_s,k_d', [(8, 2, 2), (16, 2, 1), (9, 3, 0), (27, 3, 2), (64, 2, 6),
                                       (256, 2, 6), (16, 4, 2)])
def test_static_spines_are_perfect_matchings_covering_de_bruijn(n, k_s, k_d):
    kevin = Kevin(n, k_s, k_d)
    assert len(kevin.static_matchings) == k_s
    edges = sorted((v, w) for v in kevin.addresses for w in db_successors(v, k_s))
    used = sorted((v, w) for m in kevin.static_matchings for v, w in m.items())
    assert used == edges
    for m in kevin.static_matchings:
        assert sorted(m.values()) == sorted(kevin.addresses)  # every ToR receives once


def test_label_matchings_are_not_perfect_so_decomposition_is_needed():
    # v -> v[1:] + (x,) for a fixed label x maps 011 and 111 to the same node.
    addresses = Kevin(8, 2, 0).addresses
    label0 = {v: v[1:] + (0,) for v in addresses}
    successors = {v: db_successors(v, 2) for v in addresses}
    with pytest.raises(AssertionError, match='not a perfect matching'):
        check_decomposition([label0, {v: v[1:] + (1,) for v in addresses}], successors, addresses)


def test_irregular_graph_is_rejected():
    with pytest.raises(KevinParameterError, match='not regular'):
        perfect_matchings({'a': ['a', 'b'], 'b': ['a']}, ['a', 'b'])


def test_db23_cabling_ports_and_ips():
    kevin = Kevin(8, 2, 2, hosts_per_tor=2)
    assert kevin.d == 3 and kevin.k == 4
    assert len(kevin.switches) == 8 + 4 and len(kevin.hosts) == 16
    tor = kevin.tor((0, 1, 1))
    assert kevin.node(tor).ip == '10.96.0.0'  # 10.0.0.0/8 then 011 then 21 host bits
    assert kevin.node('kvh011_0').ip == '10.96.0.1'
    assert kevin.host_attachment('kvh011_1') == (tor, 5)
    for i, spine in enumerate(['kvs0', 'kvs1', 'kvd0', 'kvd1']):
        assert kevin.peer(tor, i) == (spine, 3)  # spine port = ToR index 3 (011)
    assert kevin.node('kvd1').role == 'da_spine' and kevin.node('kvs1').role == 'static_spine'
    assert ofport(kevin.da_port(1)) == 4
    assert len({n.dpid for n in kevin.switches}) == 12
    assert all(len(n.name) + len('-eth12') <= 15 for n in kevin.nodes.values())


def test_ip_embedding_prefixes_and_reverse_lookup():
    ip = IpEmbedding(3, 3, '10.8.0.0/14')  # 2 bits per symbol: /20 per ToR
    assert ip.symbol_bits == 2 and ip.tor_length == 20
    network, length = ip.prefix((2, 1))
    assert (str(ipaddress.IPv4Address(network)), length) == ('10.10.64.0', 18)
    assert ip.tor_address(ip.host_ip((2, 1, 0), 7)) == (2, 1, 0)
    assert ip.tor_address('10.11.240.1') is None  # symbol code 3 is not a ToR
    assert ip.tor_address('11.0.0.1') is None


@pytest.mark.parametrize('args,message', [
    ((6, 2, 2), 'power of k_s'), ((8, 1, 2), 'k_s must be >= 2'), ((2, 2, 1), 'n must be >= 4'),
    ((8, 2, -1), 'k_d must be >= 0'), ((8.0, 2, 2), 'n must be an integer'),
    ((8, True, 2), 'k_s must be an integer')])
def test_bad_parameters_name_the_problem(args, message):
    with pytest.raises(KevinParameterError, match=message):
        Kevin(*args)


def test_bad_base_and_hosts_name_the_problem():
    with pytest.raises(KevinParameterError, match='not an IPv4 network'):
        Kevin(8, 2, 1, base='10.0.0.1/8')
    with pytest.raises(KevinParameterError, match='too few for 4 hosts'):
        Kevin(8, 2, 1, hosts_per_tor=4, base='10.0.0.0/27')
    with pytest.raises(KevinParameterError, match='not a ToR address'):
        Kevin(8, 2, 1).check_address((0, 2, 1))
    with pytest.raises(KevinParameterError, match='DA spines 0..0'):
        Kevin(8, 2, 1).da_port(1)
