"""BFS-DA-links / Greedy-DA-links (Algorithms 2-3), their timing (delta, r)
and the demand meter, with an injected clock."""
import random

import pytest

from controller.kevin.scheduler import ALGORITHMS, DaScheduler, DemandMeter, sorted_demands
from topologies.kevin import Kevin, KevinParameterError


def A(text):
    return tuple(int(c) for c in text)


def random_demand(kevin, rng, pairs):
    return {(rng.choice(kevin.addresses), rng.choice(kevin.addresses)): rng.paretovariate(1.2)
            for _ in range(pairs)}


def check_matchings(scheduler):
    """Every decided DA link uses its transmit and receive port once."""
    links = scheduler.circuits.links()
    assert len({(l.spine, l.source) for l in links}) == len(links)
    assert len({(l.spine, l.destination) for l in links}) == len(links)
    assert all(l.source != l.destination for l in links)


@pytest.mark.parametrize('algorithm', ALGORITHMS)
@pytest.mark.parametrize('n,k_s,k_d', [(8, 2, 2), (16, 2, 3), (27, 3, 2), (64, 2, 6)])
def test_no_port_used_twice_and_paths_never_longer(algorithm, n, k_s, k_d):
    kevin = Kevin(n, k_s, k_d)
    rng = random.Random(n + k_d)
    scheduler = DaScheduler(kevin, algorithm, period=1, delta=0, reservation=2)
    for now in range(6):
        demand = random_demand(kevin, rng, 4 * n)
        plan = scheduler.schedule(demand, now)
        scheduler.activate(now)
        check_matchings(scheduler)
        assert all(l.reserved_until <= now for l in plan.removed)  # only expired links go
        for s, t in demand:
            assert scheduler.routing.hops(s, t) <= scheduler.static_routing.hops(s, t)


def test_greedy_connects_the_heaviest_pairs_directly():
    kevin = Kevin(8, 2, 1)
    scheduler = DaScheduler(kevin, 'greedy')
    demand = {(A('011'), A('001')): 9, (A('011'), A('000')): 5, (A('010'), A('001')): 4,
              (A('101'), A('000')): 3, (A('000'), A('001')): 8}  # last: static neighbours
    plan = scheduler.schedule(demand, 0)
    assert [(l.spine, l.source, l.destination) for l in plan.added] == [
        (0, A('011'), A('001')), (0, A('101'), A('000'))]
    scheduler.activate(0)
    assert scheduler.routing.hops(A('011'), A('001')) == 1


def test_bfs_builds_a_multi_hop_shortcut_when_the_source_is_busy():
    kevin = Kevin(16, 2, 1)
    scheduler = DaScheduler(kevin, 'bfs', reservation=10)
    first = {(A('0110'), A('0000')): 10}
    assert [str(l) for l in scheduler.schedule(first, 0).added] == ['DA0:0110->0000']
    # 0110's only DA port is reserved, so x moves along the static greedy path
    # 0110 -> 1100 -> ... and the BFS from 0010 finds 0010 itself free.
    plan = scheduler.schedule({**first, (A('0110'), A('0010')): 5}, 1)
    assert [str(l) for l in plan.added] == ['DA0:1100->0010']
    scheduler.activate(1)
    assert scheduler.routing.path(A('0110'), A('0010')) == [A('0110'), A('1100'), A('0010')]
    assert scheduler.static_routing.hops(A('0110'), A('0010')) == 3


def test_bfs_sets_a_shortcut_that_only_ties_the_current_path():
    # Algorithm 2 accepts "equal or shorter": 1100 -> 0001 is set although the
    # greedy path 0110 -> 0000 -> 0001 over the first DA link is as short.
    kevin = Kevin(16, 2, 1)
    scheduler = DaScheduler(kevin, 'bfs', reservation=10)
    first = {(A('0110'), A('0000')): 10}
    scheduler.schedule(first, 0)
    plan = scheduler.schedule({**first, (A('0110'), A('0001')): 5}, 1)
    assert [str(l) for l in plan.added] == ['DA0:1100->0001']
    scheduler.activate(1)
    assert scheduler.routing.path(A('0110'), A('0001')) == [A('0110'), A('0000'), A('0001')]


def test_delta_delays_use_and_reservation_protects_links():
    kevin = Kevin(8, 2, 1)
    scheduler = DaScheduler(kevin, 'greedy', period=1, delta=0.5, reservation=3)
    assert scheduler.due(0)
    (link,) = scheduler.schedule({(A('011'), A('001')): 9}, 0).added
    assert not scheduler.due(0.9) and scheduler.due(1)
    assert scheduler.activate(0.4) == [] and scheduler.routing.hops(A('011'), A('001')) == 3
    assert scheduler.activate(0.5) == [link] and scheduler.routing.hops(A('011'), A('001')) == 1
    # A larger demand from 011 cannot take the port before r has passed ...
    heavier = {(A('011'), A('000')): 20}
    assert scheduler.schedule(heavier, 2).added == []
    # ... and afterwards the old link is replaced, and leaves routing at once.
    plan = scheduler.schedule(heavier, 3)
    assert plan.removed == [link] and [l.destination for l in plan.added] == [A('000')]
    assert scheduler.routing.da_links() == []
    assert [l.destination for l in scheduler.activate(3.5)] == [A('000')]


def test_a_served_demand_keeps_its_expired_link_against_smaller_ones():
    kevin = Kevin(8, 2, 1)
    scheduler = DaScheduler(kevin, 'greedy', reservation=1)
    (link,) = scheduler.schedule({(A('011'), A('001')): 9}, 0).added
    scheduler.activate(0)
    plan = scheduler.schedule({(A('011'), A('001')): 9, (A('011'), A('000')): 1}, 5)
    assert plan.added == [] and plan.removed == [] and scheduler.circuits.links() == [link]


def test_sorted_demands_and_meter():
    assert sorted_demands({(A('01'), A('10')): 1, (A('00'), A('00')): 5, (A('11'), A('10')): 3,
                           (A('10'), A('01')): 0}) == [(A('11'), A('10'), 3), (A('01'), A('10'), 1)]
    assert sorted_demands({(A('01'), A('10')): 1, (A('11'), A('10')): 3}, threshold=2) == [
        (A('11'), A('10'), 3)]
    meter = DemandMeter()
    assert meter.update(10, {('a', 'b'): 100}) == {}
    assert meter.update(12, {('a', 'b'): 300, ('a', 'c'): 50}) == {('a', 'b'): 100}
    assert meter.update(13, {('a', 'b'): 40}) == {('a', 'b'): 40}  # counter reset
    # ('a', 'c') missed the poll at 13 (a late stats reply): its rate since its
    # own last sample, not its 5050 bytes as one spike
    assert meter.update(14, {('a', 'b'): 40, ('a', 'c'): 5050}) == {('a', 'b'): 0, ('a', 'c'): 2500}


@pytest.mark.parametrize('kwargs,message', [
    ({'algorithm': 'sa'}, 'one of bfs, greedy'), ({'period': 0}, 'period must be > 0'),
    ({'delta': -1}, 'delta must be a number >= 0'), ({'reservation': 'x'}, 'reservation must')])
def test_bad_scheduler_parameters(kwargs, message):
    with pytest.raises(KevinParameterError, match=message):
        DaScheduler(Kevin(8, 2, 1), **kwargs)
    with pytest.raises(KevinParameterError, match='no DA spines'):
        DaScheduler(Kevin(8, 2, 0))
