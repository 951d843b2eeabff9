"""The incremental failure recompute (controller.fattree.failover.FailureRouting)
against the full one: after every step of random sequences of link and
switch failures and recoveries, applied to one instance, its tables and
avoidance equal tables_with_failures and avoidance for the same set, and it
reports exactly the switches whose tables changed. The full path's detour
search is checked in turn against the original switch-by-destination walk
(kept here as the reference)."""
import random

import pytest

from controller.fattree.failover import (
    _Cabling, _Delivery, FailureRouting, PortChoices, broadcast_tables, detours, expand_failures,
    hop_distances, link_key, live_neighbours, routing, tables_with_failures)
from controller.fattree.pipeline import compile_table
from controller.fattree.twolevel import all_tables
from topologies.fattree import FatTree
from topologies.walk import walk


def reference_detours(topo, failed, tables):
    """detours as first written: every lower switch's subnet, switch by
    switch, over every choice the tables leave (a depth-first walk)."""
    neighbours = live_neighbours(topo, failed)
    edges = [sw.name for sw in topo.switches_of_role('edge')]
    choices = {name: PortChoices(table) for name, table in tables.items()}
    entries = {}
    for edge in edges:
        distance = hop_distances(neighbours, edge)
        host = topo.peer(edge, topo.down_ports(edge)[0])[0]
        ip = topo.node(host).ip
        verdict = {edge: True}

        def delivers(switch):
            if switch in verdict:
                return bool(verdict[switch])  # None: being explored, so a loop
            verdict[switch] = None
            ok = True
            for port in choices[switch](ip) or (None,):
                peer = topo.peer(switch, port) if port is not None else None
                if peer is None or topo.nodes[peer[0]].is_host or link_key(switch, peer[0]) in failed \
                        or not delivers(peer[0]):
                    ok = False
                    break
            verdict[switch] = ok
            return ok
        todo, seen = [e for e in edges if e in distance], set()
        while todo:
            switch = todo.pop()
            if switch in seen or delivers(switch):
                continue
            seen.add(switch)
            port, peer = min((port, peer) for port, peer in neighbours[switch]
                             if distance.get(peer) == distance[switch] - 1)
            pod, z = topo.node(edge).coords
            entries.setdefault(switch, {})[('10.%d.%d.0' % (pod, z), 24)] = port
            todo.append(peer)
    return entries


def random_steps(topo, rng, steps, most):
    """Failure sets, each one random change away from the one before: a
    link fails or recovers, a switch fails or recovers (all its links), a
    burst of several at once, or everything recovers; ``most``: the number
    of failed links past which recoveries are favoured."""
    links = sorted(tuple(sorted((l.node_a, l.node_b))) for l in topo.switch_links())
    switches = sorted(s.name for s in topo.switches)
    failed = set()
    for _ in range(steps):
        for _ in range(rng.choice((1, 1, 1, 1, 2, 5))):
            roll = rng.random()
            recover = rng.random() < len(failed) / (2.0 * most)
            if roll < 0.03:
                failed.clear()
            elif roll < 0.15:
                switch_links = expand_failures(topo, failed_switches=[rng.choice(switches)])
                failed = failed - switch_links if recover else failed | switch_links
            elif recover and failed:
                failed.discard(rng.choice(sorted(failed, key=sorted)))
            else:
                failed.add(link_key(*rng.choice(links)))
        yield frozenset(failed)


# 3,100 failure sets of up to 10, 21 and 39 failed links; 579, 314 and 145
# of them need detours
@pytest.mark.parametrize('k, steps, most', [(4, 1500, 4), (6, 1000, 10), (8, 600, 20)])
def test_incremental_equals_full_recompute_step_by_step(k, steps, most):
    topo = FatTree(k)
    incremental = FailureRouting(topo)
    rng = random.Random(k)
    sizes = set()
    for failed in random_steps(topo, rng, steps, most):
        before = dict(incremental.tables)
        changed = incremental.update(failed)
        full, avoid = routing(topo, failed)  # tables_with_failures and avoidance
        assert incremental.failed == failed
        assert incremental.tables == full, sorted(failed, key=sorted)
        assert incremental.avoidance() == avoid
        assert changed == {name: table for name, table in full.items() if table != before[name]}
        sizes.add(len(failed))
    assert max(sizes) >= most  # the sets grew past single and double failures


def test_no_change_changes_nothing():
    topo = FatTree(4)
    routing = FailureRouting(topo)
    failed = expand_failures(topo, [('e0_0', 'a0_2')])
    assert routing.update(failed)
    assert routing.update(set(failed)) == {}


def test_a_failure_and_a_second_that_needs_detours_exactly():
    topo = FatTree(4)
    routing = FailureRouting(topo)
    base = all_tables(topo)
    # lower-upper: the pod's other lower switch, the same-row upper switches
    # of the other pods and their lower switches change (test_failover)
    first = expand_failures(topo, [('e0_0', 'a0_2')])
    changed = routing.update(first)
    assert set(changed) == {'e0_0', 'e0_1', 'a1_2', 'a2_2', 'a3_2',
                            'e1_0', 'e1_1', 'e2_0', 'e2_1', 'e3_0', 'e3_1'}
    assert changed['e0_1'].lookup('10.0.0.2') == topo.port_to('e0_1', 'a0_3')
    # e0_1 now keeps only a0_2 too: the only paths between the two go up,
    # down into another pod's lower switch, and up again
    both = expand_failures(topo, [('e0_0', 'a0_2'), ('e0_1', 'a0_3')])
    changed = routing.update(both)
    # the second link's broadcast (row 3 of the other pods and every lower
    # switch outside pod 0) and the detours (the two paths' switches)
    assert set(changed) == {'e0_0', 'e0_1', 'a1_3', 'a2_3', 'a3_3', 'e1_0', 'e1_1', 'e2_0', 'e2_1', 'e3_0', 'e3_1',
                            'a0_2', 'a0_3', 'a1_2', 'c1_1', 'c2_1'}
    assert changed['c1_1'].lookup('10.0.0.2') == topo.port_to('c1_1', 'a1_2')
    tables = routing.tables
    hops = walk(topo, lambda sw, _, ip: tables[sw].lookup(ip), 'h0_0_2', 'h0_1_3')
    assert [sw for sw, _ in hops] == ['e0_0', 'a0_3', 'c2_1', 'a1_3', 'e1_0', 'a1_2', 'c1_2', 'a0_2', 'e0_1']
    assert routing.avoidance()['e0_0'][('10.0.1.0', 24)] == {topo.port_to('e0_0', 'a0_2')}
    assert tables == tables_with_failures(topo, both)
    # recovery in the other order ends where it began, and says so
    assert routing.update(expand_failures(topo, [('e0_1', 'a0_3')]))
    recovered = routing.update(frozenset())
    assert routing.tables == base
    assert set(recovered) == {name for name in base if base[name] != tables_with_failures(
        topo, expand_failures(topo, [('e0_1', 'a0_3')]))[name]}
    assert {name: compile_table(t) for name, t in routing.tables.items()} == \
        {name: compile_table(t) for name, t in base.items()}


@pytest.mark.parametrize('k', [4, 6, 8])
def test_with_nothing_failed_every_switch_delivers_everywhere(k):
    # FailureRouting starts from this instead of computing it
    topo = FatTree(k)
    delivery = _Delivery(_Cabling(topo), broadcast_tables(topo, frozenset()), frozenset())
    assert set(delivery.sets.values()) == {delivery.everything}


@pytest.mark.parametrize('k, sets, most', [(4, 300, 4), (6, 200, 10), (8, 60, 20)])
def test_detours_equal_the_switch_by_destination_walk(k, sets, most):
    topo = FatTree(k)
    rng = random.Random(100 + k)
    found = 0
    for failed in random_steps(topo, rng, sets, most):
        paper = broadcast_tables(topo, failed)
        entries = detours(topo, failed, paper)
        assert entries == reference_detours(topo, failed, paper), sorted(failed, key=sorted)
        found += bool(entries)
    assert found >= sets // 10  # the sets exercise the detours, not only the broadcast
