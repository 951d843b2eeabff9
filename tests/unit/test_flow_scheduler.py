"""Central flow scheduler (section 3.7): search order, reservation, rejection,
garbage collection, link failures -- and no link ever reserved twice."""
import itertools
import random

import pytest

from controller.fattree.classifier import FlowKey
from controller.fattree.scheduler import Change, FlowScheduler, large_flows, reported_flows
from scripts.experiments.patterns import seeded
from controller.fattree.twolevel import all_tables
from topologies.fattree import FatTree
from topologies.walk import walk


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def sched(clock):
    return FlowScheduler(FatTree(4), gc_timeout=3.0, clock=clock)


def f(src, dst, dport=5201):
    return FlowKey(src, dst, 6, dport)


def place(s, flow):
    """notify() for a scheduler that never rearranges: at most one change."""
    changes = s.notify(flow)
    assert len(changes) <= 1
    return changes[0] if changes else None


def invariant(s):
    """Reservations and placements agree; no link held twice or while down."""
    held = [link for p in s.placements.values() for link in p.links]
    assert len(held) == len(set(held))
    assert set(held) == set(s.reserved)
    assert all(s.reserved[link] == p.flow for p in s.placements.values() for link in p.links)
    assert not set(held) & s.down


def test_large_flow_detection_threshold():
    a, b = f('10.0.0.2', '10.1.0.2'), f('10.0.0.3', '10.1.0.2')
    assert large_flows({a: 2e6, b: 0.5e6}, 1e6) == [a]
    assert large_flows({a: 1e6}, 1e6) == []


def test_search_is_linear_over_cores_from_the_two_level_one(sched):
    flow = f('10.0.0.2', '10.2.1.3')  # host ID 3: two-level path e0_0 -> a0_3 -> c2_1
    assert sched.two_level_via(flow) == 'c2_1'
    assert [via for via, _, _ in sched.search_order(flow)] == ['c2_1', 'c2_2', 'c1_1', 'c1_2']
    assert [via for via, _, _ in sched.candidates(flow)] == ['c1_1', 'c1_2', 'c2_1', 'c2_2']
    # a flow whose own path is free keeps it: nothing moves
    p = place(sched, flow)
    assert p.via == 'c2_1'
    assert p.links == (('e0_0', 'a0_3'), ('a0_3', 'c2_1'), ('c2_1', 'a2_3'), ('a2_3', 'e2_1'))
    assert p.ports == (('e0_0', 3), ('a0_3', 2))
    # the same two-level path out of e0_0: c2_1 and c2_2 need e0_0->a0_3, so
    # the search wraps around to c1_1
    q = place(sched, f('10.0.0.3', '10.3.0.3'))
    assert q.via == 'c1_1' and q.ports == (('e0_0', 2), ('a0_2', 2))
    # from another pod into e2_1 by c2_1: c2_1->a2_3 and a2_3->e2_1 are held,
    # so c2_2 is out too; c1_1 is held only towards pod 3
    r = place(sched, f('10.1.0.3', '10.2.1.3'))
    assert sched.two_level_via(r.flow) == 'c2_1'
    assert r.via == 'c1_1' and r.links[2:] == (('c1_1', 'a2_2'), ('a2_2', 'e2_1'))
    invariant(sched)


@pytest.mark.parametrize('k', [4, 8])
def test_the_search_starts_on_the_path_two_level_routing_walks(k):
    """The first candidate is the flow's two-level path as the tables route
    a packet hop by hop (topologies.walk), for every pair of hosts."""
    topo = FatTree(k)
    sched = FlowScheduler(topo, gc_timeout=3.0, clock=Clock())
    tables = all_tables(topo)
    for src in topo.hosts[::3]:
        for dst in topo.hosts:
            flow = f(src.ip, dst.ip)
            hops = walk(topo, lambda switch, _, ip: tables[switch].lookup(ip), src.name, dst.name)
            walked = tuple((switch, topo.peer(switch, port)[0]) for switch, port in hops)[:-1]
            order = sched.search_order(flow)
            assert (order[0][1] if order else ()) == (walked if len(walked) > 1 else ())


def test_edge_reports_large_flows_and_placed_flows_still_sending():
    a, b, c = f('10.0.0.2', '10.1.0.2'), f('10.0.0.3', '10.1.0.2'), f('10.0.1.2', '10.1.0.3')
    assert reported_flows({a: 2e6, b: 0.5e6, c: 0.0}, 1e6, placed=set()) == [a]
    # b backed off below the threshold but holds a reservation: still reported;
    # c has stopped: its reservation will be collected
    assert reported_flows({a: 2e6, b: 0.5e6, c: 0.0}, 1e6, placed={b, c}) == [a, b]


def test_ack_streams_are_never_reported_whatever_their_measured_rate():
    data, acks = f('10.0.0.2', '10.1.0.2'), f('10.1.0.2', '10.0.0.2', dport=40000)
    rates = {data: 2e6, acks: 1.5e6}  # the ACK stream read past the threshold
    assert reported_flows(rates, 1e6, placed=set()) == [data, acks]  # as a flow of its own
    assert reported_flows(rates, 1e6, placed=set(), acks={acks}) == [data]
    # nor kept when it holds a reservation: it is collected
    assert reported_flows(rates, 1e6, placed={acks}, acks={acks}) == [data]


def test_directions_are_reserved_separately(sched):
    there = place(sched, f('10.0.0.2', '10.1.0.2'))
    back = place(sched, f('10.1.0.2', '10.0.0.2'))
    assert there.via == back.via == 'c1_1'
    invariant(sched)


def test_intra_pod_search_uses_upper_pod_switches(sched):
    p = place(sched, f('10.1.0.2', '10.1.1.2'))
    assert p.via == 'a1_2' and p.links == (('e1_0', 'a1_2'), ('a1_2', 'e1_1'))
    assert p.ports == (('e1_0', 2),)
    q = place(sched, f('10.1.0.3', '10.1.1.3'))
    assert q.via == 'a1_3' and q.ports == (('e1_0', 3),)
    invariant(sched)


def test_same_edge_flows_have_no_choice(sched):
    assert place(sched, f('10.0.0.2', '10.0.0.3')) is None
    assert sched.placements == {} and sched.rejected == {}


def test_placed_flow_is_kept_not_replaced(sched):
    flow = f('10.0.0.2', '10.1.0.2')
    first = place(sched, flow)
    assert place(sched, flow) is None
    assert sched.placements[flow] is first


def test_full_fabric_rejects_cleanly_and_retries_later(sched, clock):
    # Two flows leave e0_0 (its two uplinks) and two more leave e0_1; pod 0's
    # four core uplinks are then all held: a fifth flow out of pod 0 has no path.
    flows = [f('10.0.0.2', '10.1.0.2'), f('10.0.0.3', '10.1.0.3'),
             f('10.0.1.2', '10.2.0.2'), f('10.0.1.3', '10.2.0.3')]
    # (their own two-level paths: no two share a link)
    assert [place(sched, x).via for x in flows] == ['c1_1', 'c2_1', 'c2_2', 'c1_2']
    reserved_before = dict(sched.reserved)
    extra = f('10.0.0.2', '10.3.1.2', dport=5202)
    assert place(sched, extra) is None
    assert sched.reserved == reserved_before and extra not in sched.placements
    assert extra in sched.rejected
    invariant(sched)
    clock.now = 2.0
    for x in flows[1:]:
        place(sched, x)
    clock.now = 4.0
    assert [p.flow for p in sched.collect()] == [flows[0]]
    assert place(sched, extra).via == 'c1_1'
    assert extra not in sched.rejected
    invariant(sched)


def test_garbage_collection_frees_links(sched, clock):
    a, b = f('10.0.0.2', '10.1.0.2'), f('10.2.0.2', '10.3.0.2')
    place(sched, a)
    clock.now = 2.0
    place(sched, b)
    clock.now = 3.0
    assert sched.collect() == []  # a is exactly gc_timeout old: kept
    clock.now = 3.5
    released = sched.collect()
    assert [p.flow for p in released] == [a]
    assert all(link not in sched.reserved for link in released[0].links)
    assert set(sched.placements) == {b} and set(sched.last_seen) == {b}
    clock.now = 10.0
    assert [p.flow for p in sched.collect()] == [b]
    assert sched.reserved == {} and sched.placements == {}


def test_rejected_flows_are_collected_too(sched, clock):
    for x in [f('10.0.0.2', '10.1.0.2'), f('10.0.0.3', '10.1.0.3'),
              f('10.0.1.2', '10.2.0.2'), f('10.0.1.3', '10.2.0.3')]:
        place(sched, x)
    place(sched, f('10.0.0.2', '10.3.0.2', 1))
    clock.now = 5.0
    assert len(sched.collect()) == 4
    assert sched.rejected == {} and sched.last_seen == {}


def test_bad_gc_timeout_and_unknown_host():
    with pytest.raises(ValueError, match='gc_timeout'):
        FlowScheduler(FatTree(4), gc_timeout=0, clock=Clock())
    with pytest.raises(ValueError, match='not a host'):
        FlowScheduler(FatTree(4), 1, Clock()).notify(f('10.9.0.2', '10.1.0.2'))


def test_link_down_replaces_or_releases_and_link_up_restores(sched):
    a = f('10.0.0.2', '10.1.0.2')
    assert place(sched, a).via == 'c1_1'
    changes = sched.link_down('a0_2', 'c1_1')
    assert len(changes) == 1 and changes[0].placement.via == 'c1_2'
    assert changes[0].placement.ports == (('e0_0', 2), ('a0_2', 3))
    invariant(sched)
    # c1_1 is out for a flow into pod 0 too: a cable is down in both directions
    b = f('10.1.0.3', '10.0.1.2')
    assert place(sched, b).via == 'c1_2'
    assert sched.link_down('c1_1', 'a1_2') == []
    # with both cores of a0_2 gone, both flows move to aggregation 3's first core
    assert [(c.flow, c.placement.via) for c in sched.link_down('c1_2', 'a0_2')] == [
        (a, 'c2_1'), (b, 'c2_1')]
    invariant(sched)
    # e0_0's other uplink down too: no path left for a, released
    assert sched.link_down('e0_0', 'a0_3') == [Change(a, None)]
    assert a not in sched.placements and b in sched.placements
    invariant(sched)
    sched.link_up('e0_0', 'a0_3')
    assert ('e0_0', 'a0_3') not in sched.down and ('a0_3', 'e0_0') not in sched.down
    assert place(sched, a).via == 'c2_1'
    invariant(sched)
    with pytest.raises(ValueError, match='no switch link'):
        sched.link_down('e0_0', 'c1_1')


def test_random_workload_never_double_reserves(clock):
    topo = FatTree(4)
    sched = FlowScheduler(topo, gc_timeout=2.0, clock=clock)
    ips = [h.ip for h in topo.hosts]
    links = sorted((l.node_a, l.node_b) for l in topo.switch_links())
    rng = random.Random(7)
    for step in range(2000):
        clock.now = step * 0.1
        action = rng.random()
        if action < 0.7:
            src, dst = rng.sample(ips, 2)
            placement = place(sched, f(src, dst, rng.randrange(3)))
            if placement is not None:
                assert all(link not in sched.down for link in placement.links)
        elif action < 0.8:
            sched.link_down(*rng.choice(links))
        elif action < 0.9:
            sched.link_up(*rng.choice(links))
        else:
            sched.collect()
        invariant(sched)


def test_every_candidate_path_is_a_real_walk():
    topo = FatTree(4)
    sched = FlowScheduler(topo, gc_timeout=1, clock=Clock())
    for src, dst in itertools.permutations(topo.hosts, 2):
        for via, links, ports in sched.candidates(f(src.ip, dst.ip)):
            edge_s, _ = topo.host_attachment(src.name)
            edge_d, _ = topo.host_attachment(dst.name)
            assert links[0][0] == edge_s and links[-1][1] == edge_d
            assert all(a[1] == b[0] for a, b in zip(links, links[1:]))
            assert via in {n for link in links for n in link}
            for switch, port in ports:
                nxt = topo.peer(switch, port)[0]
                assert (switch, nxt) in links


def test_rearrangement_moves_one_reserved_flow_to_make_room(clock):
    sched = FlowScheduler(FatTree(4), 3.0, clock, rearrange=1)
    held = [f('10.0.1.2', '10.3.1.2'),   # e0_1 -> a0_3 -> c2_2 -> pod 3
            f('10.1.0.2', '10.1.1.3'),   # intra-pod 1 by a1_3: holds a1_3 -> e1_1
            f('10.0.0.3', '10.1.0.2')]   # e0_0 -> a0_2 -> c1_1 -> a1_2 -> e1_0
    assert [place(sched, x).via for x in held] == ['c2_2', 'a1_3', 'c1_1']
    new = f('10.0.0.2', '10.1.1.2')
    # no plane is free at both lower switches: e0_0 has plane 1 (a0_3) free,
    # e1_1 plane 0 (a1_2 -> e1_1). The plane 1/0 path from e1_1 is held[1]
    # alone (e1_0 has no plane-0 flow up), which moves to plane 0; the new
    # flow takes plane 1 and its first free core there.
    plain = FlowScheduler(FatTree(4), 3.0, clock)
    for x in held:
        plain.notify(x)
    assert plain.notify(new) == [] and new in plain.rejected
    changes = sched.notify(new)
    assert [(c.flow, c.via) for c in changes] == [(new, 'c2_1'), (held[1], 'a1_2')]
    assert changes[1].ports == (('e1_0', 2),)
    assert sched.previous == {held[1]: plain.placements[held[1]]}
    assert sched.placements[held[1]] is changes[1] and new not in sched.rejected
    invariant(sched)


def test_a_path_longer_than_the_budget_moves_nothing(clock):
    held = [f('10.0.1.2', '10.3.1.2'), f('10.1.0.2', '10.1.1.3'), f('10.0.0.3', '10.1.0.2')]
    sched = FlowScheduler(FatTree(4), 3.0, clock, rearrange=0)
    for x in held:
        sched.notify(x)
    placements, reserved = dict(sched.placements), dict(sched.reserved)
    new = f('10.0.0.2', '10.1.1.2')  # needs one flow moved (above)
    assert sched.notify(new) == [] and new in sched.rejected
    assert sched.placements == placements and sched.reserved == reserved


@pytest.mark.parametrize('k', [8, 16])
def test_with_room_to_move_every_flow_of_a_permutation_is_placed(k):
    """A fat-tree carries every permutation on link-disjoint paths, and
    alternating paths find them: with no bound on the flows moved, no flow
    of a full permutation is rejected."""
    topo = FatTree(k)
    for pattern in ('random', 'sameid-outgoing'):
        sched = FlowScheduler(topo, 3.0, Clock(), rearrange=len(topo.hosts))
        flows = [f(topo.node(s).ip, topo.node(d).ip) for s, d in seeded(pattern, topo, 1)]
        for x in flows:
            sched.notify(x)
        assert not sched.rejected, pattern
        assert len(sched.placements) == sum(1 for x in flows if sched.candidates(x))
        invariant(sched)


def test_rearrangement_avoids_down_links(clock):
    topo = FatTree(8)
    rng = random.Random(3)
    links = sorted((l.node_a, l.node_b) for l in topo.switch_links())
    sched = FlowScheduler(topo, 3.0, clock, rearrange=8)
    for a, b in rng.sample(links, 6):
        sched.link_down(a, b)
    for s, d in seeded('random', topo, 2):
        before = dict(sched.placements)
        changes = sched.notify(f(topo.node(s).ip, topo.node(d).ip))
        assert all(c.flow in before and before[c.flow] != c for c in changes[1:])
        assert len(changes) <= 9
        invariant(sched)


def test_rearrangement_places_whole_permutations_that_first_fit_cannot():
    topo = FatTree(4)
    for pattern in ('random', 'sameid-outgoing', 'interpod-incoming'):
        for seed in (1, 2, 3):
            flows = [f(topo.node(s).ip, topo.node(d).ip) for s, d in seeded(pattern, topo, seed)]
            first_fit = FlowScheduler(topo, 3.0, Clock())
            rearranging = FlowScheduler(topo, 3.0, Clock(), rearrange=8)
            for x in flows:
                first_fit.notify(x)
                before = dict(rearranging.placements)
                changes = rearranging.notify(x)
                # the new flow first; then only flows that really moved
                assert all(c.flow in before and before[c.flow] != c for c in changes[1:])
                invariant(rearranging)
            placed = sum(1 for x in flows if x in rearranging.placements)
            assert placed == sum(1 for x in flows if rearranging.candidates(x)), (pattern, seed)
            assert not rearranging.rejected
        assert any(first_fit.rejected for seed in (1, 2, 3)), pattern


def test_full_fabric_rejects_without_moving_anything(clock):
    sched = FlowScheduler(FatTree(4), 3.0, clock, rearrange=8)
    for x in [f('10.0.0.2', '10.1.0.2'), f('10.0.0.3', '10.1.0.3'),
              f('10.0.1.2', '10.2.0.2'), f('10.0.1.3', '10.2.0.3')]:
        sched.notify(x)
    placements, reserved = dict(sched.placements), dict(sched.reserved)
    extra = f('10.0.0.2', '10.3.1.2', dport=5202)  # pod 0 has no core uplink left
    assert sched.notify(extra) == [] and extra in sched.rejected
    assert sched.placements == placements and sched.reserved == reserved


def test_rearrange_must_be_a_non_negative_integer():
    for bad in (-1, 1.5, True, '2'):
        with pytest.raises(ValueError, match='rearrange'):
            FlowScheduler(FatTree(4), 3.0, Clock(), rearrange=bad)
