"""The compiled N-Bridge rules in real userspace OVS bridges: every host pair
traced with ovs-appctl ofproto/trace against the model's walk, before,
during and after a shield applied as the controller applies it (deleting and
adding only the changed rules), and renew leaving the bridges' flow tables
exactly as they were."""
import itertools

import pytest

from controller.nbridge.routing import NBridgeRouting
from topologies.walk import walk
from tests.ovs.ovs_fabric import OvsFabric
from topologies.nbridge import NBridge


def apply_changes(fabric, changes):
    """Apply {switch: ordered diff} as the Ryu app does."""
    for switch, ops in changes.items():
        fabric.apply(switch, ops)


def traced(fabric, src, dst):
    """ofproto/trace hops in walk's terms (an IN_PORT output is the ingress port)."""
    hops, ttl = fabric.trace(src, dst)
    fixed, in_port = [], fabric.topo.host_attachment(src)[1]
    for switch, port in hops:
        port = in_port if port == 'in_port' else port
        fixed.append((switch, port))
        peer = fabric.topo.peer(switch, port)
        in_port = peer[1] if peer else None
    return fixed, ttl


@pytest.fixture(scope='module')
def bridges(require_ovs):
    topo = NBridge((3, 3), q=2)
    routing = NBridgeRouting(topo)
    with OvsFabric(topo, 'o') as fabric:
        for switch in topo.switches:
            fabric.install(switch.name, routing.rules_for(switch.name))
        yield topo, routing, fabric


def flow_tables(fabric):
    """Every bridge's flows, order-free (dump-flows order is OVS's own)."""
    return {s.name: sorted(fabric.dump_flows(s.name).splitlines()) for s in fabric.topo.switches}


def check_all_pairs(topo, routing, fabric, avoid=None):
    for src, dst in itertools.permutations([h.name for h in topo.hosts], 2):
        if avoid and avoid in (topo.leaf_of(src), topo.leaf_of(dst)):
            continue
        expected = walk(topo, routing.forward, src, dst)
        hops, ttl = traced(fabric, src, dst)
        assert hops == expected, (src, dst)
        assert ttl == 64 - len(hops)
        if avoid:
            assert topo.leaf_name(avoid) not in [s for s, _ in hops]


def test_every_pair_normally_shielded_and_renewed(bridges):
    topo, routing, fabric = bridges
    check_all_pairs(topo, routing, fabric)
    before = flow_tables(fabric)
    failed = (1, 0)  # LSW(2,0) -> LSW(1,*) traffic U-turns at the dimension-1 roots
    apply_changes(fabric, routing.shield(failed))
    check_all_pairs(topo, routing, fabric, avoid=failed)
    hops, _ = traced(fabric, 'nh2_0_0', 'nh1_2_0')
    assert [s for s, _ in hops] == ['nl2_0', 'nr1_0_0', 'nl2_0', 'nr0_2_0', 'nl2_1', 'nr1_1_0', 'nl1_1',
                                    'nr0_1_0', 'nl1_2']
    apply_changes(fabric, routing.renew(failed))
    assert flow_tables(fabric) == before
    check_all_pairs(topo, routing, fabric)


def test_two_lap_detour_in_3d(require_ovs):
    """The longest 3-D detour (+10, with a U-turn at the second shielded
    root) as the OVS bridges execute it."""
    topo = NBridge((2, 2, 3))
    routing = NBridgeRouting(topo)
    routing.shield((0, 0, 0))
    with OvsFabric(topo, 'o') as fabric:
        for switch in topo.switches:
            fabric.install(switch.name, routing.rules_for(switch.name))
        for src, dst in (('nh1_0_0_0', 'nh0_0_2_0'), ('nh1_0_0_0', 'nh0_0_1_0'), ('nh1_0_0_0', 'nh0_1_1_0')):
            expected = walk(topo, routing.forward, src, dst)
            hops, ttl = traced(fabric, src, dst)
            assert hops == expected and ttl == 64 - len(hops)
            assert 'nl0_0_0' not in [s for s, _ in hops]
        assert len(traced(fabric, 'nh1_0_0_0', 'nh0_0_2_0')[0]) == 5 + 10


def test_flow_tables_hold_no_flooding(bridges):
    topo, _, fabric = bridges
    for name in ('nl0_0', 'nr1_0_0', 'nr0_0_1'):
        flows = fabric.dump_flows(name)
        assert flows.count('priority=0 actions=drop') == 3
        assert 'FLOOD' not in flows and 'NORMAL' not in flows and 'ALL' not in flows
