"""What keeps the central scheduler's rounds short at scale without
changing its answers: a rejected flow is not searched again until the
reservations change, a rearrangement reports the moved flows' old
placements (``previous``) without copying every placement, and the first
fit read from busy bits is the paper's linear search."""
import random

import pytest

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


@pytest.mark.parametrize('k', [4, 8])
def test_the_first_fit_is_the_papers_linear_search(k):
    """Placement reads free cores from busy bits; it must take the same
    path as the linear search over the search order would: the first
    candidate whose links are all free and up."""
    topo = FatTree(k)
    rng = random.Random(k)
    links = sorted((l.node_a, l.node_b) for l in topo.switch_links())
    hosts = topo.hosts
    for trial in range(20):
        sched = FlowScheduler(topo, gc_timeout=3.0, clock=lambda: 0.0)
        for a, b in rng.sample(links, trial % 4):
            sched.link_down(a, b)
        for _ in range(len(hosts) * trial // 10):
            src, dst = rng.sample(hosts, 2)
            sched.notify(FlowKey(src.ip, dst.ip, 6, rng.randrange(5201, 5205)))
        for src in hosts[::5]:
            for dst in hosts[::3]:
                flow = FlowKey(src.ip, dst.ip, 6, 6000)
                if not sched.candidates(flow):  # one lower switch: nothing to place
                    continue
                linear = next(((via, links) for via, links, _ in sched.search_order(flow)
                               if all(sched._usable(link) for link in links)), None)
                placed = sched._place(flow)
                assert (placed and (placed.via, placed.links)) == linear or (placed is None and linear is None)
                if placed:
                    sched._release(flow)
