"""Failures in a running k=4 fat-tree with BFD: each class, hard and silent,
keeps every pair reachable while it lasts, and recovery restores every
switch's original flow table and groups. One fabric for the module."""
import time

import pytest

from scripts.emulator import faults, traffic
from scripts.emulator.bfd import sessions as bfd_sessions
from scripts.emulator.fabric import Fabric
from tests.conftest import free_port
from tests.emulation.fabric_state import state, wait_for
from topologies.fattree import FatTree
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

# Mininet names of its own: switch interfaces live in the root namespace, and
# another emulation of a k=4 fat-tree on the machine (a `dcfabric run`, the
# outage script failing c1_1) would otherwise recreate or fail this fabric's
# interfaces under it.
PREFIX = 'ft'
CASES = [('link', PREFIX + 'e1_0', PREFIX + 'a1_2'), ('link', PREFIX + 'a1_3', PREFIX + 'c2_2'),
         ('switch', PREFIX + 'a2_2'), ('switch', PREFIX + 'c1_1')]


@pytest.fixture(scope='module')
def k4(require_ovs):
    topo = renamed(FatTree(4), PREFIX)
    with Fabric(topo, 'controller.fattree.routing_app', {'k': 4}, ofp_port=free_port(),
                rest_port=free_port(), bfd_ms=100) as fabric:
        traffic.wait_all_pairs(fabric.net, [h.name for h in topo.hosts], progress=lambda m: None)
        yield topo, fabric


def wait_settled(topo, before, timeout=30):
    """Wait until the controller has pushed its changes: the tables differ
    from ``before`` and stay the same for a second."""
    deadline = time.time() + timeout
    last = state(topo)
    while True:
        time.sleep(1.0)
        now = state(topo)
        if now == last and now != before:
            return
        assert time.time() < deadline, 'routing did not settle after the failure'
        last = now


@pytest.mark.parametrize('silent', [False, True], ids=['hard', 'silent'])
@pytest.mark.parametrize('case', CASES, ids=['e1_0-a1_2', 'a1_3-c2_2', 'a2_2', 'c1_1'])
def test_failure_keeps_pairs_reachable_and_recovery_restores_tables(k4, case, silent):
    topo, fabric = k4
    before = state(topo)
    hosts = [h.name for h in topo.hosts]
    faults.fail(topo, case, silent)
    try:
        # the controller learns of it (BFD ~300 ms for a silent failure) and pushes changes
        wait_settled(topo, before)
        results = traffic.reachability(fabric.net, hosts, retries=2)
        assert all(results.values()), [p for p, ok in results.items() if not ok]
    finally:
        faults.recover(topo, case)
    bfd_sessions.wait_up(topo)
    wait_for(lambda: state(topo) == before, 30, 'tables not restored after recovery')


def test_bfd_runs_on_every_switch_link(k4):
    topo, _ = k4
    bfd_sessions.wait_up(topo)
    states = bfd_sessions.states(topo)
    assert len(states) == 2 * len(topo.switch_links()) == 64
    assert set(states.values()) == {'up'}


def test_bad_names_list_what_exists(k4):
    topo, _ = k4
    with pytest.raises(faults.FaultError, match='fte0_0 links to: fta0_2 fta0_3 fth0_0_2 fth0_0_3'):
        faults.fail_link(topo, 'fte0_0', 'ftc1_1')
    with pytest.raises(KeyError, match="unknown node 'zz'"):
        faults.fail_switch(topo, 'zz')
