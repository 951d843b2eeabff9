"""The fault campaign's events (scripts.fattree.fault_events): seeded,
overlapping in time but never sharing a link, so that recovering one
failure never undoes part of another."""
import random

from scripts.fattree.fault_events import links_of, choose_events, physical_failures
from topologies.fattree import FatTree

MODEL = FatTree(4)


def campaign(seed, steps=300, max_failed=3):
    rng, failed, history = random.Random(seed), {}, []
    for _ in range(steps):
        history.append((choose_events(MODEL, rng, failed, max_failed), dict(failed)))
    return history


def test_the_same_seed_gives_the_same_events():
    assert [events for events, _ in campaign(37)] == [events for events, _ in campaign(37)]
    assert [events for events, _ in campaign(37)] != [events for events, _ in campaign(38)]


def test_failed_elements_never_share_a_link_and_stay_within_the_limit():
    kinds = set()
    for events, failed in campaign(37):
        kinds.update(e['kind'] for e in events)
        assert len(failed) <= 3
        elements = list(failed)
        for i, a in enumerate(elements):
            for b in elements[i + 1:]:
                assert not links_of(MODEL, a) & links_of(MODEL, b), (a, b)
    assert kinds == {'fail-link', 'fail-switch', 'recover', 'controller-restart', 'connection-drop'}


def test_two_neighbouring_switches_are_never_down_together():
    for _, failed in campaign(37):
        switches = [e[1] for e in failed if e[0] == 'switch']
        for s in switches:
            neighbours = {MODEL.peer(s, p)[0] for p in MODEL.ports(s)}
            assert not neighbours & set(switches)


def test_a_failed_switch_fails_every_switch_link_it_has():
    links, switches = physical_failures(MODEL, {('switch', 'a0_2'): False, ('link', 'e1_0', 'a1_2'): True})
    assert switches == {'a0_2'}
    assert len(links) == 4 + 1  # a0_2's two edges and two cores, and the link
