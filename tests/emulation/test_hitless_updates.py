"""Routing updates lose nothing themselves: in a k=4 fabric with
BFD, UDP streams run while e2_0-a2_2 fails, e1_0-a1_3 fails, e1_0-a1_3
recovers (a renumbering that once broke it: e0_0's table for 10.2.0.0/24
used to be renumbered and rewritten in place) and e2_0-a2_2 recovers
(scripts/fattree/hitless.py).

How update loss is told apart from failure loss: the failures are real
(carrier down on both ends, as `dcfabric fail link` does; the controller
has no administrative failure path, and a one-sided failure would still
break the link for BFD). The streams asserted loss-free are those the
model shows on the same path in every state of the sequence, over no link
that fails in it, through lower switches every step rewrites; any packet
they lose, the update lost. Every packet has a fresh source port, so each
is looked up in the switch's flow tables as they stand when it arrives.
The streams over the failed links are reported, not asserted on (their
loss is the failure's)."""
import pytest

from controller.fattree import READY_PATH
from scripts.emulator import faults, traffic
from scripts.emulator.fabric import Fabric
from scripts.fattree.hitless import AFFECTED, SEQUENCE, UNAFFECTED, classify, run
from tests.conftest import free_port
from topologies.fattree import FatTree
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

# Names of its own (see test_fault_emulation.py).
PREFIX = 'hu'


def test_streams_off_the_failed_links_lose_nothing_while_switches_are_rewritten(require_ovs):
    model = FatTree(4)
    kinds = classify(model, UNAFFECTED + AFFECTED)
    assert {s: kinds[s] for s in UNAFFECTED} == {s: 'unaffected' for s in UNAFFECTED}
    assert {s: kinds[s] for s in AFFECTED} == {s: 'affected' for s in AFFECTED}
    topo = renamed(model, PREFIX)
    with Fabric(topo, 'controller.fattree.routing_app', {'k': 4}, ofp_port=free_port(), rest_port=free_port(),
                bfd_ms=100, ready_path=READY_PATH) as fabric:
        traffic.wait_all_pairs(fabric.net, [h.name for h in topo.hosts], progress=lambda m: None)
        try:
            results = run(fabric, model, topo, PREFIX)
        finally:
            for _, a, b in SEQUENCE:
                faults.recover_link(topo, PREFIX + a, PREFIX + b)
    report = ['%s %s->%s lost %d of %d, per step %s' % (kinds[s], s[0], s[1], r['lost'], r['sent'],
                                                        r['lost_at_step']) for s, r in results.items()]
    print('\n'.join(report))
    assert all(results[s]['lost'] == 0 for s in UNAFFECTED), report
    # the affected streams ran too (they are delivered once the steps are over)
    assert all(results[s]['lost'] < results[s]['sent'] / 2 for s in AFFECTED), report
