"""The live view's and the metrics' pure parts: layout from the model, link
states from the one port-state tracker, rates from port counters, the event
log and overlays (controller.ryuapp.observation)."""
import pytest

from controller.openflow.port_states import PortStates
from controller.ryuapp.observation import FabricObservation, PortCounters, layout, overlay_view, poll_period
from topologies.fattree import FatTree
from topologies.kevin import Kevin
from topologies.model import Node, Topology, model_port
from topologies.nbridge import NBridge


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def rows(drawing):
    by_y = {}
    for node in drawing['nodes']:
        by_y.setdefault(node['y'], []).append(node['name'])
    return [names for _, names in sorted(by_y.items())]


def test_fattree_layout_rows_by_role_pods_together():
    drawing = layout(FatTree(4))
    assert len(drawing['nodes']) == 36 and len(drawing['links']) == 48
    core, aggregation, edge, hosts = rows(drawing)
    assert core == ['c1_1', 'c1_2', 'c2_1', 'c2_2']
    assert aggregation == ['a0_2', 'a0_3', 'a1_2', 'a1_3', 'a2_2', 'a2_3', 'a3_2', 'a3_3']
    assert edge[:2] == ['e0_0', 'e0_1'] and len(hosts) == 16
    assert {l['id'] for l in drawing['links']} >= {'a0_2-c1_1', 'e0_0-h0_0_2'}
    link = next(l for l in drawing['links'] if l['id'] == 'a0_2-c1_1')
    assert (link['port_a'], link['port_b']) == (3, 1)  # OpenFlow ports: paper port + 1
    xs = [n['x'] for n in drawing['nodes'] if n['name'] in core]
    assert xs == sorted(xs) and all(40 < x < 960 for x in xs)


def test_kevin_layout_static_spines_before_da_spines():
    kevin = Kevin(8, 2, 1)
    spines, tors, hosts = rows(layout(kevin))
    assert spines == [kevin.spine_name(0), kevin.spine_name(1), kevin.spine_name(2)]
    assert len(tors) == 8 and len(hosts) == 8


def test_nbridge_layout_one_root_row_per_dimension():
    nbridge = NBridge((4, 3), 1, 1)
    dim1, dim0, leaves, hosts = rows(layout(nbridge))
    assert len(dim1) == 3 and len(dim0) == 4  # lines of dimension 1 (K_0 = 3) and 0 (K_1 = 4)
    assert all(nbridge.nodes[r].coords[0] == 1 for r in dim1)
    assert len(leaves) == 12 and len(hosts) == 12


def test_unknown_role_is_named():
    topo = Topology('odd')
    topo.add_node(Node('x', 'spaceship', '10.0.0.1', (), 1))
    with pytest.raises(ValueError, match="no drawing row for role 'spaceship' of x"):
        layout(topo)


def observed():
    clock = Clock()
    topo = FatTree(4)
    return FabricObservation(topo, clock, PortStates(topo, grace_s=30.0)), clock


def report(obs, switch, port, carrier, live):
    """What the app does with a port description: the tracker first, then the observation."""
    before = obs.ports.state(switch, model_port(port))
    if obs.ports.update(switch, model_port(port), carrier, live, obs.clock()):
        obs.port_changed(switch, port, before)


@pytest.mark.parametrize('a, b, state', [
    ((True, True), (True, True), 'up'),
    ((True, True), (False, False), 'carrier_down'),
    ((True, False), (True, True), 'bfd_down'),
    ((True, False), (False, False), 'carrier_down'),
    ((True, True), None, 'up'),  # the other end not reported yet
    (None, None, 'unknown'),
])
def test_link_is_as_bad_as_its_worse_end(a, b, state):
    obs, _ = observed()
    for switch, port, end in (('a0_2', 3, a), ('c1_1', 1, b)):  # the ends of a0_2-c1_1
        if end is not None:
            report(obs, switch, port, True, True)  # live once: not coming up any more
            report(obs, switch, port, *end)
    assert {row['id']: row['state'] for row in obs.links()}['a0_2-c1_1'] == state
    assert obs.failed_links() == ([('a0_2', 'c1_1')] if state.endswith('_down') else [])


def test_the_view_shows_a_port_coming_up_as_routing_treats_it():
    obs, clock = observed()
    report(obs, 'a0_2', 3, True, False)  # BFD not up yet since start
    assert {row['id']: row['state'] for row in obs.links()}['a0_2-c1_1'] == 'coming_up'
    assert obs.failed_links() == []
    clock.now += 30  # start-up made no progress for the grace: failed, for routing and the view alike
    assert {row['id']: row['state'] for row in obs.links()}['a0_2-c1_1'] == 'bfd_down'
    assert obs.failed_links() == [('a0_2', 'c1_1')] and obs.ports.failed_links(clock.now)


def test_port_changes_are_logged_and_live_changes_counted():
    obs, clock = observed()
    report(obs, 'a0_2', 3, True, True)  # first sight: no event
    assert obs.events_since(0) == []
    clock.now = 1001.5
    report(obs, 'a0_2', 3, True, False)
    report(obs, 'a0_2', 3, False, False)
    report(obs, 'a0_2', 3, True, True)
    events = obs.events_since(0)
    assert [(e['seq'], e['kind'], e['text']) for e in events] == [
        (0, 'failure', 'a0_2 port 3 (to c1_1): not live'),
        (1, 'failure', 'a0_2 port 3 (to c1_1): carrier down'),
        (2, 'recovery', 'a0_2 port 3 (to c1_1): carrier up')]
    assert events[0]['time'] == 1001.5
    assert obs.events_since(2) == events[2:]
    assert obs.live_changes == {('a0_2', 3): 1}


def test_failed_links_are_switch_links_with_an_end_not_live():
    obs, _ = observed()
    for switch in ('a0_2', 'c1_1', 'e0_0'):
        for port in (1, 2, 3, 4):
            report(obs, switch, port, True, True)
    report(obs, 'c1_1', 1, True, False)  # to a0_2 (BFD down)
    report(obs, 'e0_0', 1, False, False)  # to host h0_0_2: not a switch link
    assert obs.failed_links() == [('a0_2', 'c1_1')]
    states = {row['id']: row['state'] for row in obs.links()}
    assert states['a0_2-c1_1'] == 'bfd_down'
    assert states['e0_0-h0_0_2'] == 'carrier_down'
    assert states['e0_0-a0_2'] == 'up'
    assert states['e1_0-a1_2'] == 'unknown'


def test_rates_from_successive_counters_in_both_directions():
    obs, _ = observed()
    obs.port_stats('a0_2', 3, PortCounters(1000, 5000, 10, 50), now=10.0)
    rows_before = {r['id']: r for r in obs.links()}
    assert rows_before['a0_2-c1_1']['a_to_b_bps'] is None  # one reading: no rate yet
    obs.port_stats('a0_2', 3, PortCounters(3000, 15000, 30, 150), now=12.0)
    obs.port_stats('e0_0', 1, PortCounters(0, 0, 0, 0), now=10.0)
    obs.port_stats('e0_0', 1, PortCounters(250, 500, 1, 2), now=11.0)
    rows_after = {r['id']: r for r in obs.links()}
    assert rows_after['a0_2-c1_1']['a_to_b_bps'] == 8 * 10000 / 2  # a0_2 transmits
    assert rows_after['a0_2-c1_1']['b_to_a_bps'] == 8 * 2000 / 2   # a0_2 receives
    # a host end has no counters: the switch end's receive is the host's transmit
    assert (rows_after['e0_0-h0_0_2']['a_to_b_bps'], rows_after['e0_0-h0_0_2']['b_to_a_bps']) == (4000, 2000)
    obs.port_stats('a0_2', 3, PortCounters(0, 0, 0, 0), now=13.0)  # counters restarted
    assert {r['id']: r for r in obs.links()}['a0_2-c1_1']['a_to_b_bps'] is None


def test_messages_counted_per_switch_and_kind():
    obs, _ = observed()
    obs.message_sent('e0_0', True)
    obs.message_sent('e0_0', True)
    obs.message_sent('e0_0', False)
    obs.message_received('e0_0', 'OFPPacketIn')
    obs.message_received('e0_0', 'OFPPortStatus')
    assert obs.sent == {('e0_0', 'flow'): 2, ('e0_0', 'other'): 1}
    assert obs.received == {('e0_0', 'OFPPacketIn'): 1, ('e0_0', 'OFPPortStatus'): 1}
    assert obs.packet_ins == {'e0_0': 1}


def test_overlay_names_become_link_ids_in_model_order():
    view = overlay_view(FatTree(4), {'avoided': [('c1_1', 'a0_2')],
                                     'reserved': [('e0_0', 'a0_2', 'flow x')],
                                     'shielded': ['e0_1']})
    assert view == {'avoided': ['a0_2-c1_1'], 'da_links': [], 'shielded': ['e0_1'],
                    'reserved': [{'link': 'e0_0-a0_2', 'from': 'e0_0', 'to': 'a0_2', 'label': 'flow x'}]}
    kevin = Kevin(8, 2, 1)
    source, destination, spine = kevin.tor((0, 0, 1)), kevin.tor((1, 1, 0)), kevin.spine_name(2)
    (da,) = overlay_view(kevin, {'da_links': [(source, spine, destination)]})['da_links']
    assert da['links'] == ['%s-%s' % (source, spine), '%s-%s' % (destination, spine)]
    with pytest.raises(ValueError, match='e0_0 and c1_1 are not linked'):
        overlay_view(FatTree(4), {'avoided': [('e0_0', 'c1_1')]})


def test_counter_polls_slow_down_above_80_switches_and_an_explicit_period_wins():
    assert poll_period(None, 20) == 2.0  # k=4
    assert poll_period(None, 80) == 2.0  # k=8
    assert poll_period(None, 320) == 8.0  # k=16: 1,280 requests per 8 s
    assert poll_period(0, 320) == 0  # no polls
    assert poll_period(0.5, 320) == 0.5
