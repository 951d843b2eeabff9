"""Greedy LPM routing (Algorithm 1, reduce step, Claim 1) against the seed's
DB(2,3) examples, and exhaustively on DB(2,3), DB(2,4), DB(3,3) with and
without random DA matchings."""
import itertools
import random

import pytest

from controller.kevin.routing import (
    DaPortBusyError, GreedyLpmTable, KevinRouting, LpmEntry, overlap)
from topologies.walk import walk
from topologies.kevin import Kevin, KevinParameterError


def A(text):
    return tuple(int(c) for c in text)


def table_of(table):
    return {''.join(map(str, e.symbols)): sorted(e.ports) for e in table.entries}


def test_figure3_table_of_011_from_neighbours_110_and_111():
    table = GreedyLpmTable(A('011'), 2, [(0, A('110')), (1, A('111'))])
    # Algorithm 1: the suffixes of each neighbour; the reduce step drops 1**
    # (10* and 11* decide every 1xx) and also 11* (110 and 111 both exact).
    assert set(table.candidates()) == {A(w) for w in ('110', '10', '0', '111', '11', '1', '011')}
    assert table_of(table) == {'011': [], '110': [0], '111': [1], '10': [0], '0': [0]}
    assert table.format().splitlines() == [
        'ToR 011 (5 entries)', '  011 -> local', '  110 -> 0', '  111 -> 1', '  10* -> 0',
        '  0** -> 0']
    assert table.size() == 4 <= table.bound() == 6


def test_figure4_table_of_011_after_da_link_to_100_and_back():
    table = GreedyLpmTable(A('011'), 2, [(0, A('110')), (1, A('111'))])
    before = table.entries
    table.add_neighbour(2, A('100'))
    assert table_of(table) == {'011': [], '100': [2], '110': [0], '111': [1], '00': [2],
                               '10': [0], '0': [0, 2]}
    assert table.lookup(A('001')) == LpmEntry(A('00'), frozenset({2}))  # 00* uses the DA port
    assert table.lookup(A('010')).ports == {0, 2}  # two equal-length routes
    assert table.remove_neighbour(2) == A('100')
    assert table.entries == before


def test_db23_routes_of_the_seed():
    kevin = Kevin(8, 2, 1)
    routing = KevinRouting(kevin)
    assert routing.paths(A('011'), A('001')) == [[A('011'), A('110'), A('100'), A('001')]]
    routing.add_da_link(0, A('011'), A('100'))
    assert routing.paths(A('011'), A('001')) == [[A('011'), A('100'), A('001')]]
    assert sorted(routing.paths(A('011'), A('010'))) == [
        [A('011'), A('100'), A('001'), A('010')], [A('011'), A('110'), A('101'), A('010')]]
    routing.remove_da_link(0, A('011'))
    assert routing.paths(A('011'), A('001')) == [[A('011'), A('110'), A('100'), A('001')]]


def test_model_table_matches_figure3_up_to_port_numbering():
    kevin = Kevin(8, 2, 0)
    table = KevinRouting(kevin).tables[A('011')]
    by_neighbour = {''.join(map(str, e.symbols)): sorted(''.join(map(str, table.neighbours[p]))
                                                        for p in e.ports) for e in table.entries}
    assert by_neighbour == {'011': [], '110': ['110'], '111': ['111'], '10': ['110'],
                            '0': ['110']}


def random_da_matchings(kevin, routing, rng):
    """Fill every DA spine with a random directed matching (no self-loops)."""
    for j in range(kevin.k_d):
        targets = list(kevin.addresses)
        rng.shuffle(targets)
        for s, t in zip(kevin.addresses, targets):
            if s != t:
                routing.add_da_link(j, s, t)


@pytest.mark.parametrize('n,k_s,k_d', [(8, 2, 0), (16, 2, 0), (27, 3, 0),
                                       (8, 2, 2), (16, 2, 2), (27, 3, 2)])
def test_every_pair_within_d_hops_loop_free_greedy(n, k_s, k_d):
    kevin = Kevin(n, k_s, k_d)
    rng = random.Random(n * 10 + k_s)
    for trial in range(3 if k_d else 1):
        routing = KevinRouting(kevin)
        random_da_matchings(kevin, routing, rng)
        for s, t in itertools.product(kevin.addresses, repeat=2):
            for path in routing.paths(s, t):  # every port-group choice
                assert len(path) - 1 <= kevin.d
                assert len(set(path)) == len(path)  # loop-free
                # every hop strictly raises the overlap with t (greedy progress)
                assert all(overlap(b, t) > overlap(a, t) for a, b in zip(path, path[1:]))
                if not k_d:
                    assert len(path) - 1 == kevin.d - overlap(s, t)  # shortest in DB
        for v, table in routing.tables.items():
            assert table.size() <= table.bound() <= kevin.k * kevin.d


@pytest.mark.parametrize('n,k_s', [(8, 2), (27, 3)])
def test_da_links_never_lengthen_a_route_and_removal_restores_tables(n, k_s):
    kevin = Kevin(n, k_s, 2)
    static = KevinRouting(kevin)
    routing = KevinRouting(kevin)
    random_da_matchings(kevin, routing, random.Random(7))
    for s, t in itertools.product(kevin.addresses, repeat=2):
        assert routing.hops(s, t) <= static.hops(s, t)
    for j, s, _ in routing.da_links():
        routing.remove_da_link(j, s)
    assert all(routing.tables[v].entries == static.tables[v].entries for v in kevin.addresses)


def test_walk_over_model_crosses_spines_and_delivers_every_host_pair():
    kevin = Kevin(8, 2, 1, hosts_per_tor=2)
    routing = KevinRouting(kevin)
    routing.add_da_link(0, A('011'), A('100'))
    forward = routing.walk_forwarder()
    hosts = [h.name for h in kevin.hosts]
    for src, dst in itertools.permutations(hosts, 2):
        hops = walk(kevin, forward, src, dst)
        tors = [sw for sw, _ in hops if sw.startswith('kvt')]
        assert len(tors) - 1 == routing.hops(kevin.node(src).coords[:3], kevin.node(dst).coords[:3])
    hops = walk(kevin, forward, 'kvh011_0', 'kvh001_1')
    assert [sw for sw, _ in hops] == ['kvt011', 'kvd0', 'kvt100', hops[3][0], 'kvt001']
    assert hops[:2] == [('kvt011', 2), ('kvd0', 4)] and hops[-1] == ('kvt001', 4)


def test_bad_da_links_are_rejected_with_the_reason():
    routing = KevinRouting(Kevin(8, 2, 1))
    routing.add_da_link(0, A('011'), A('100'))
    with pytest.raises(DaPortBusyError, match='011 already transmits to 100'):
        routing.add_da_link(0, A('011'), A('000'))
    with pytest.raises(DaPortBusyError, match='100 already receives from 011'):
        routing.add_da_link(0, A('000'), A('100'))
    with pytest.raises(KevinParameterError, match='self-loop'):
        routing.add_da_link(0, A('000'), A('000'))
    with pytest.raises(KevinParameterError, match='DA spines 0..0'):
        routing.add_da_link(1, A('000'), A('001'))
    with pytest.raises(KevinParameterError, match='no link from 000'):
        routing.remove_da_link(0, A('000'))
    with pytest.raises(KevinParameterError, match='not a 3-symbol address'):
        GreedyLpmTable(A('011'), 2, [(0, A('11'))])
