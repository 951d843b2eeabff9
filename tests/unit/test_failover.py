"""Failure broadcast (section 3.8) over the model: who changes what for each
failure class, exact reversal, all-pairs delivery under every single link
and switch failure, and the per-destination detours that route every
connected pair under every double link failure."""
import itertools

import pytest

from controller.fattree.failover import (ALL, avoidance, broadcast_tables, detours, expand_failures,
                                         link_key, repair_point, tables_with_failures, usable_port)
from controller.fattree.pipeline import compile_table
from controller.fattree.twolevel import all_tables
from scripts.fattree.failure_check import link_sets, switch_sets, unrouted_pairs
from topologies.walk import RoutingError, walk
from topologies.fattree import FatTree


@pytest.fixture(scope='module', params=[4, 6])
def topo(request):
    return FatTree(request.param)


def changed_switches(topo, failed):
    base = {n: compile_table(t) for n, t in all_tables(topo).items()}
    now = {n: compile_table(t) for n, t in tables_with_failures(topo, failed).items()}
    return {n for n in base if base[n] != now[n]}


def reach_all(topo, failed):
    """Walk every host pair over the tables computed for ``failed`` (each
    suffix's own port); a hop over a failed link is a loss."""
    tables = tables_with_failures(topo, failed)

    def forward(switch, _in_port, dst_ip):
        port = tables[switch].lookup(dst_ip)
        peer = topo.peer(switch, port) if port is not None else None
        if peer and link_key(switch, peer[0]) in failed:
            return None
        return port
    hosts = [h.name for h in topo.hosts]
    for src, dst in itertools.permutations(hosts, 2):
        walk(topo, forward, src, dst)


def test_lower_upper_failure_broadcast(topo):
    half, k = topo.half, topo.k
    failed = expand_failures(topo, [('e1_0', 'a1_%d' % half)])
    avoid = avoidance(topo, failed)
    subnet = ('10.1.0.0', 24)
    up = topo.port_to('e1_0', 'a1_%d' % half)
    # the lower switch stops using the link for everything
    assert avoid['e1_0'] == {ALL: {up}}
    # the other lower switches of the pod avoid the upper switch for the subnet
    for z in range(1, half):
        assert avoid['e1_%d' % z] == {subnet: {topo.port_to('e1_%d' % z, 'a1_%d' % half)}}
    # the same-row upper switches of every other pod avoid each affected core;
    # having no core left, their lower switches avoid them for the subnet
    for pod in set(range(k)) - {1}:
        assert avoid['a%d_%d' % (pod, half)] == {subnet: set(range(half, k))}
        for z in range(half):
            edge = 'e%d_%d' % (pod, z)
            assert avoid[edge] == {subnet: {topo.port_to(edge, 'a%d_%d' % (pod, half))}}
    assert set(avoid) == ({'e1_%d' % z for z in range(half)} | {'a%d_%d' % (p, half) for p in range(k) if p != 1}
                          | {'e%d_%d' % (p, z) for p in range(k) if p != 1 for z in range(half)})
    # cores and the other upper switches keep their tables
    assert changed_switches(topo, failed) == set(avoid)


def test_upper_core_failure_broadcast(topo):
    half, k = topo.half, topo.k
    failed = expand_failures(topo, [('a2_%d' % half, 'c1_1')])
    avoid = avoidance(topo, failed)
    assert avoid['a2_%d' % half] == {ALL: {topo.port_to('a2_%d' % half, 'c1_1')}}
    for pod in set(range(k)) - {2}:
        upper = 'a%d_%d' % (pod, half)
        assert avoid[upper] == {('10.2.0.0', 16): {topo.port_to(upper, 'c1_1')}}
    assert set(avoid) == {'a%d_%d' % (p, half) for p in range(k)}
    assert changed_switches(topo, failed) == set(avoid)


def test_upper_switch_without_core_links_is_avoided_for_other_pods(topo):
    half, k = topo.half, topo.k
    upper = 'a0_%d' % half
    failed = frozenset(link_key(upper, topo.peer(upper, p)[0]) for p in range(half, k))
    avoid = avoidance(topo, failed)
    for z in range(half):
        edge = 'e0_%d' % z
        assert avoid[edge] == {('10.%d.0.0' % q, 16): {topo.port_to(edge, upper)} for q in range(1, k)}
    reach_all(topo, failed)
    # intra-pod traffic still goes through it
    tables = tables_with_failures(topo, failed)
    assert tables['e0_0'].lookup('10.0.1.2') == topo.port_to('e0_0', upper)


def test_switch_failure_is_all_its_links(topo):
    half = topo.half
    failed = expand_failures(topo, failed_switches=['a0_%d' % half])
    assert failed == {link_key('a0_%d' % half, peer) for peer in
                      ['e0_%d' % z for z in range(half)] + ['c1_%d' % i for i in range(1, half + 1)]}
    with pytest.raises(KeyError, match='unknown node'):
        expand_failures(topo, failed_switches=['a9_9'])


def test_recovery_restores_every_table_exactly(topo):
    base = {n: compile_table(t) for n, t in all_tables(topo).items()}
    assert {n: compile_table(t) for n, t in tables_with_failures(topo, frozenset()).items()} == base
    failed = expand_failures(topo, [('e0_0', 'a0_%d' % topo.half)], ['c1_1'])
    assert changed_switches(topo, failed)
    assert changed_switches(topo, frozenset()) == set()


def test_every_pair_reaches_under_every_single_link_failure(topo):
    """Over every choice the tables leave (fast failover, ECMP hashing)."""
    pairs = len(topo.hosts) * (len(topo.hosts) - 1)
    for links, _ in link_sets(topo, 1):
        failed = expand_failures(topo, links)
        assert unrouted_pairs(topo, tables_with_failures(topo, failed), failed) == (pairs, []), links


def test_every_pair_reaches_under_every_switch_failure(topo):
    for _, switches in switch_sets(topo, 1):
        failed = expand_failures(topo, failed_switches=switches)
        connected, unrouted = unrouted_pairs(topo, tables_with_failures(topo, failed), failed, switches)
        assert unrouted == [], switches
        # only the hosts of a failed lower switch are cut off
        cut_off = topo.half if topo.node(switches[0]).role == 'edge' else 0
        assert connected == (len(topo.hosts) - cut_off) * (len(topo.hosts) - cut_off - 1)


def test_without_the_broadcast_remote_pods_would_lose_the_subnet(topo):
    # the paper's literal step (avoid only "the affected core") is not enough
    failed = frozenset({link_key('e1_0', 'a1_%d' % topo.half)})
    tables = all_tables(topo)

    def forward(switch, _in, dst_ip):
        port = tables[switch].lookup(dst_ip)
        return None if link_key(switch, topo.peer(switch, port)[0]) in failed else port
    with pytest.raises(RoutingError):
        for src in [h.name for h in topo.hosts if topo.pod_of(h.name) != 1]:
            walk(topo, forward, src, 'h1_0_2')


def test_usable_port_skips_avoided_cyclically():
    assert usable_port(2, set(), [2, 3]) == 2
    assert usable_port(2, {2}, [2, 3]) == 3
    assert usable_port(3, {3}, [3, 4, 5]) == 4
    assert usable_port(5, {5}, [3, 4, 5]) == 3
    assert usable_port(2, {2, 3}, [2, 3]) is None


def test_local_fast_failover_groups_follow_the_usable_ports():
    topo = FatTree(4)
    rules, groups = compile_table(tables_with_failures(topo, frozenset())['e0_0'])
    assert sorted(tuple(b[0] for b in g.buckets) for g in groups) == [(3, 4), (4, 3)]
    assert all(g.kind == 'fast_failover' for g in groups)
    failed = frozenset({link_key('e0_0', 'a0_2')})
    rules, groups = compile_table(tables_with_failures(topo, failed)['e0_0'])
    assert [tuple(b[0] for b in g.buckets) for g in groups] == []  # one port left: plain output
    assert {a for r in rules if r.table == 2 and r.priority for a in r.actions} >= {('output', 4)}


def test_double_failure_the_broadcast_cannot_express_gets_detours_through_another_pod():
    # e0_0 keeps only a0_3, e0_1 only a0_2: the only paths between them go
    # up, down into another pod's lower switch, and up again
    topo = FatTree(4)
    failed = expand_failures(topo, [('e0_0', 'a0_2'), ('e0_1', 'a0_3')])
    paper = broadcast_tables(topo, failed)
    under_e0_0, under_e0_1 = {'h0_0_2', 'h0_0_3'}, {'h0_1_2', 'h0_1_3'}
    assert set(unrouted_pairs(topo, paper, failed)[1]) == (
        {(s, d) for s in under_e0_0 for d in under_e0_1} | {(s, d) for s in under_e0_1 for d in under_e0_0})
    assert detours(topo, failed, paper) == {
        'e0_0': {('10.0.1.0', 24): 3}, 'a0_3': {('10.0.1.0', 24): 2}, 'c2_1': {('10.0.1.0', 24): 1},
        'a1_3': {('10.0.1.0', 24): 0},
        'e0_1': {('10.0.0.0', 24): 2}, 'a0_2': {('10.0.0.0', 24): 2}, 'c1_1': {('10.0.0.0', 24): 1},
        'a1_2': {('10.0.0.0', 24): 0}}
    tables = tables_with_failures(topo, failed)
    assert unrouted_pairs(topo, tables, failed) == (240, [])
    hops = walk(topo, lambda sw, _, ip: tables[sw].lookup(ip), 'h0_0_2', 'h0_1_3')
    assert [sw for sw, _ in hops] == ['e0_0', 'a0_3', 'c2_1', 'a1_3', 'e1_0', 'a1_2', 'c1_2', 'a0_2', 'e0_1']
    # the detour replaced a0_3's own /24 towards the dead link
    assert [str(p) for p in tables['a0_3'].prefixes if p.network == '10.0.1.0'] == ['10.0.1.0/24']
    # the classifier is told to keep such flows on the detour's port
    assert avoidance(topo, failed)['e0_0'][('10.0.1.0', 24)] == {topo.port_to('e0_0', 'a0_2')}


def test_every_connected_pair_is_routed_under_every_double_link_failure():
    """Over every choice the tables leave (fast failover, ECMP hashing);
    k=6 and sampled k=8 sets: scripts/fattree/failure_check.py."""
    topo = FatTree(4)
    connected = 0
    for links, _ in link_sets(topo, 2):
        failed = expand_failures(topo, links)
        pairs, unrouted = unrouted_pairs(topo, tables_with_failures(topo, failed), failed)
        assert unrouted == [], links
        connected += pairs
    assert connected == 118592  # of 496 x 240: the rest have no physical path


@pytest.mark.parametrize('links, switches, src, dst, where', [
    ([('e0_0', 'a0_2')], [], 'h0_0_2', 'h2_0_2', ('e0_0', True)),
    ([('e0_0', 'a0_2')], [], 'h2_0_2', 'h0_0_2', ('a0_2', False)),  # its only way down
    ([], ['a0_2'], 'h2_0_2', 'h0_0_2', ('c1_1', False)),
    ([], ['c1_1'], 'h2_0_2', 'h0_0_2', ('a2_2', True))])
def test_repair_point_is_the_first_switch_before_the_failure(links, switches, src, dst, where):
    topo = FatTree(4)
    assert repair_point(topo, expand_failures(topo, links, switches), src, dst) == where
    with pytest.raises(ValueError, match='does not cross'):
        repair_point(topo, expand_failures(topo, links, switches), 'h1_0_2', 'h1_1_2')
