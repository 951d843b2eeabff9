"""What keeps the central scheduler's rounds short at scale without
changing its answers: a rejected flow is not searched again until the
reservations change, and a rearrangement reports the moved flows' old
placements (``previous``) without copying every placement."""
import random

import pytest

from controller.fattree import scheduler as scheduler_module
from controller.fattree.classifier import FlowKey
from controller.fattree.scheduler import FlowScheduler
from topologies.fattree import FatTree

TOPO = FatTree(4)


def permutation_flows(seed):
    hosts = TOPO.hosts
    dsts = hosts[:]
    random.Random(seed).shuffle(dsts)
    return [FlowKey(a.ip, b.ip, 6, 5201) for a, b in zip(hosts, dsts) if a is not b]


def count_searches(monkeypatch, sched):
    calls = []
    place = FlowScheduler._place
    monkeypatch.setattr(sched, '_place', lambda flow: calls.append(flow) or place(sched, flow))
    return calls


def test_a_rejected_flow_is_searched_again_only_after_a_change(monkeypatch):
    clock = [0.0]
    sched = FlowScheduler(TOPO, gc_timeout=3.0, clock=lambda: clock[0])
    flows = permutation_flows(0)
    rejected = next(f for f in flows if not sched.notify(f) and sched.candidates(f))
    searches = count_searches(monkeypatch, sched)
    clock[0] = 1.0
    assert sched.notify(rejected) == []  # nothing changed: the same search would fail again
    assert searches == [] and sched.rejected[rejected] == 1.0
    clock[0] = 5.0  # every other flow goes unreported past gc_timeout: their links free again
    for flow in flows:
        if flow != rejected:
            sched.last_seen[flow] = 0.0
    sched.last_seen[rejected] = 4.0
    assert sched.collect()
    placed = sched.notify(rejected)
    assert searches == [rejected] and [p.flow for p in placed] == [rejected]
    assert rejected not in sched.rejected


def test_a_rearrangement_reports_the_moved_flows_old_placements():
    for seed in range(50):
        sched = FlowScheduler(TOPO, gc_timeout=3.0, clock=lambda: 0.0, rearrange=8)
        for flow in permutation_flows(seed):
            before = dict(sched.placements)
            placed = sched.notify(flow)
            moved = {p.flow for p in placed[1:]}
            assert sched.previous == {f: before[f] for f in moved}
            if moved:
                assert all(before[f] != sched.placements[f] for f in moved)
                return
    pytest.fail('no rearrangement in 50 permutations')


def test_the_search_node_limit_still_bounds_a_failing_rearrangement(monkeypatch):
    monkeypatch.setattr(scheduler_module, 'SEARCH_NODE_LIMIT', 0)
    sched = FlowScheduler(TOPO, gc_timeout=3.0, clock=lambda: 0.0, rearrange=8)
    results = [sched.notify(f) for f in permutation_flows(0)]
    assert all(len(r) <= 1 for r in results)  # no search node: nothing is ever moved


@pytest.mark.parametrize('k', [4, 8])
def test_placement_builds_the_search_order_lazily_and_identically(k):
    topo = FatTree(k)
    sched = FlowScheduler(topo, gc_timeout=3.0, clock=lambda: 0.0)
    hosts = topo.hosts
    for src in hosts[::3]:
        for dst in hosts:
            flow = FlowKey(src.ip, dst.ip, 6, 5201)
            assert list(sched._placement_order(flow)) == sched.search_order(flow)
