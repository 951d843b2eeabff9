"""Failures under every fat-tree scheme in a running fabric with BFD:
each scheme (two-level, ECMP, classifier, scheduler) keeps every pair that
still has a physical path reachable through a hard and a silent failure, a
failed lower switch or host link cuts off its hosts and only them, a double
failure the paper's broadcast cannot express is routed around, and recovery
restores every flow table and group. One fabric per scheme, its failures in
sequence, and a k=6 sample under ECMP (single elements:
tests/emulation/test_fault_emulation.py)."""
import itertools

import pytest

from scripts.emulator import faults, traffic
from scripts.emulator.bfd import sessions as bfd_sessions
from scripts.emulator.fabric import Fabric
from tests.conftest import free_port
from tests.emulation.fabric_state import state, wait_for
from topologies.fattree import FatTree
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

# Names of its own (see test_fault_emulation.py).
PREFIX = 'fs'
# (k, scheme) -> [(failed elements, silent?)], in the model's names
SEQUENCES = {
    (4, 'twolevel'): [([('switch', 'e0_0')], False),
                 ([('link', 'e1_1', 'h1_1_3')], True),
                 # e0_0 keeps only a0_3, e0_1 only a0_2: a detour through another pod
                 ([('link', 'e0_0', 'a0_2'), ('link', 'e0_1', 'a0_3')], False)],
    (4, 'ecmp'): [([('link', 'a0_2', 'c1_1')], False),  # left 24 of 240 pairs unreachable before
             ([('link', 'e1_0', 'a1_3')], True),
             ([('switch', 'e2_1')], True)],
    (4, 'classifier'): [([('link', 'a1_3', 'c2_2')], False),
                   ([('link', 'e0_1', 'a0_2')], True),
                   ([('link', 'e3_0', 'h3_0_2')], False)],
    (4, 'scheduler'): [([('switch', 'c1_1')], False),
                       ([('link', 'a2_2', 'c1_2')], True),
                       ([('link', 'a0_2', 'c1_1'), ('link', 'e2_0', 'a2_3')], True)],
    (6, 'ecmp'): [([('link', 'e0_0', 'a0_3'), ('link', 'a1_4', 'c2_1')], False),
                  ([('switch', 'e3_2')], True)],
}


def cut_off(topo, elements):
    """Hosts a set of failed elements leaves without any link to the fabric."""
    hosts = set()
    for element in elements:
        names = element[1:]
        hosts |= {n for n in names if topo.nodes[n].is_host}
        if element[0] == 'switch' and topo.nodes[names[0]].role == 'edge':
            hosts |= {topo.peer(names[0], p)[0] for p in topo.ports(names[0])
                      if topo.nodes[topo.peer(names[0], p)[0]].is_host}
    return hosts


@pytest.mark.parametrize('k, scheme', sorted(SEQUENCES), ids=['k%d-%s' % c for c in sorted(SEQUENCES)])
def test_scheme_routes_around_failures_and_recovers_exactly(require_ovs, k, scheme):
    topo = renamed(FatTree(k), PREFIX)
    hosts = [h.name for h in topo.hosts]
    with Fabric(topo, 'controller.fattree.routing_app', {'k': k, 'scheme': scheme}, ofp_port=free_port(),
                rest_port=free_port(), bfd_ms=100) as fabric:
        traffic.wait_all_pairs(fabric.net, hosts, progress=lambda m: None)
        before = state(topo)
        for elements, silent in SEQUENCES[(k, scheme)]:
            named = [(e[0],) + tuple(PREFIX + n for n in e[1:]) for e in elements]
            cut = cut_off(topo, named)
            connected = {p for p in itertools.permutations(hosts, 2) if not cut & set(p)}
            results = {}

            def routed():
                results.update(traffic.reachability(fabric.net, hosts, retries=1))
                return {p for p, ok in results.items() if ok} == connected
            try:
                for element in named:
                    faults.fail(topo, element, silent)
                # the controller learns of it (BFD ~300 ms if silent) and pushes changes
                wait_for(routed, 30, '%s, %s failure of %s: unreachable %s, reachable though cut off %s'
                         % (scheme, 'silent' if silent else 'hard', named,
                            sorted(connected - {p for p, ok in results.items() if ok})[:6],
                            sorted(p for p, ok in results.items() if ok and p not in connected)[:6]))
            finally:
                for element in named:
                    faults.recover(topo, element)
            bfd_sessions.wait_up(topo)
            wait_for(lambda: state(topo) == before, 30, '%s: tables not restored after %s' % (scheme, named))
            traffic.wait_all_pairs(fabric.net, hosts, deadline_s=20, progress=lambda m: None)
