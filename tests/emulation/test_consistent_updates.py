"""Updates are consistent across switches: in a k=4 fabric, UDP streams
whose paths change run while the link e0_0-a0_2 fails and recovers five
times (scripts/fattree/hitless.py drives the streams and the steps).

While the link is down the other pods reach e0_0's hosts through the a*_3
aggregation switches; when it recovers their edge switches go back to the
a*_2 ones, whose tables must first regain the way down to pod 0. Updated
in any order, an edge switch can send there before they have it (the
model shows it: tests/unit/test_update_stages.py), and packets are lost
after the recovery, when no link is down. Updated downstream first, stage
by stage with barriers, nothing is lost after a recovery. Loss after a
failure is the failure's (until the fast-failover groups and the
broadcast repair it) and is reported, not asserted on. Loss is counted by
when a packet was due to be sent, and a starved sender sends late: each
recovery is followed by a step that changes nothing (the link recovered
again), so that the next failure's first losses never fall in the window
after the recovery."""
import pytest

from controller.fattree import READY_PATH
from scripts.emulator import faults, traffic
from scripts.emulator.fabric import Fabric
from scripts.fattree.hitless import run
from tests.conftest import free_port
from topologies.fattree import FatTree
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

# Names of its own (see test_fault_emulation.py).
PREFIX = 'cu'
CYCLES = 5
SEQUENCE = (('fail', 'e0_0', 'a0_2'), ('recover', 'e0_0', 'a0_2'), ('recover', 'e0_0', 'a0_2')) * CYCLES
# Every pair whose delivery some single switch's early update breaks on recovery (the model's answer).
STREAMS = tuple((src, 'h0_0_2' if src.endswith(('0_2', '0_3')) else 'h0_0_3')
                for src in ('h1_0_2', 'h1_0_3', 'h1_1_2', 'h1_1_3', 'h2_0_2', 'h2_0_3', 'h2_1_2', 'h2_1_3',
                            'h3_0_2', 'h3_0_3', 'h3_1_2', 'h3_1_3'))


def test_no_packet_is_lost_to_an_update_after_a_recovery(require_ovs):
    model = FatTree(4)
    topo = renamed(model, PREFIX)
    with Fabric(topo, 'controller.fattree.routing_app', {'k': 4}, ofp_port=free_port(), rest_port=free_port(),
                ready_path=READY_PATH) as fabric:
        traffic.wait_all_pairs(fabric.net, [h.name for h in topo.hosts], progress=lambda m: None)
        try:
            results = run(fabric, model, topo, PREFIX, sequence=SEQUENCE, streams=STREAMS)
        finally:
            faults.recover_link(topo, PREFIX + 'e0_0', PREFIX + 'a0_2')
    # lost_at_step[i + 1]: lost after step i; the recoveries are steps 1, 4, 7, ...
    after_recovery = {stream: [r['lost_at_step'][i + 1] for i in range(1, len(SEQUENCE), 3)]
                      for stream, r in results.items()}
    report = ['%s->%s sent %d, lost after each step %s' % (s[0], s[1], r['sent'], r['lost_at_step'][1:])
              for s, r in results.items()]
    print('\n'.join(report))
    assert all(sum(lost) == 0 for lost in after_recovery.values()), report
