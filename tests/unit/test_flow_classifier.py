"""Flow classification (section 3.6): assignment, rates, the rebalancing
heuristic, and the guard that keeps it at or above two-level routing."""
import pytest

from controller.fattree.failover import avoidance, link_key
from controller.fattree.classifier import (
    ACK_FRAME_BYTES, FlowClassifier, FlowKey, Move, PortBalancer, RateMeter, ack_streams)
from controller.fattree.fair_share import max_min_rates
from topologies.fattree import FatTree

M = 1e6


def flow(n, dport=5201):
    return FlowKey('10.0.0.2', '10.%d.0.2' % n, 6, dport)


def test_flow_key_validates_and_prints():
    assert str(FlowKey('10.0.0.2', '10.1.0.3', 6, 5201)) == '10.0.0.2->10.1.0.3 tcp/5201'
    with pytest.raises(ValueError, match='protocol'):
        FlowKey('10.0.0.2', '10.1.0.3', 1, 0)
    with pytest.raises(ValueError, match='port'):
        FlowKey('10.0.0.2', '10.1.0.3', 17, 70000)


def test_rate_meter_uses_age_first_then_deltas_and_forgets_missing():
    meter = RateMeter()
    assert meter.update(10.0, {flow(1): (1000, 2.0), flow(2): (0, 0.0)}) == {flow(1): 4000.0, flow(2): 0.0}
    assert meter.update(11.0, {flow(1): (2250, 3.0)}) == {flow(1): 10000.0}
    # flow(2) was forgotten: seen again, it is rated by its age; a counter
    # that went backwards (entry replaced) is too.
    assert meter.update(12.0, {flow(1): (500, 0.5), flow(2): (100, 1.0)}) == {flow(1): 8000.0, flow(2): 800.0}


def test_new_flows_start_on_their_two_level_port_unless_it_is_busier_beyond_tolerance():
    b = PortBalancer('e0_0', [2, 3], tolerance=1 * M)
    # nothing measured: every flow on its two-level port, however many share it
    assert [b.assign(flow(n), 3) for n in (1, 2, 3)] == [3, 3, 3]
    b.update({flow(1): 1 * M, flow(2): 0.0, flow(3): 0.0})
    assert b.assign(flow(4), 3) == 3  # 1 Mbit/s more than port 2: within tolerance
    b.update({flow(1): 1.5 * M, flow(2): 0.0, flow(3): 0.0, flow(4): 0.0})
    assert b.assign(flow(5), 3) == 2  # 1.5 more: the least-loaded port
    assert b.assign(flow(5), 3) == 2  # a known flow keeps its port
    assert b.home == {flow(n): 3 for n in range(1, 6)}
    with pytest.raises(ValueError, match='two-level port 1 .* not an upward port'):
        b.assign(flow(6), 1)


def test_off_its_two_level_port_a_new_flow_takes_the_least_loaded_then_emptiest_port():
    b = PortBalancer('a0_2', [2, 3, 4])
    b.port_of = {flow(1): 2, flow(2): 3, flow(3): 3}
    b.rate = {flow(1): 2 * M, flow(2): 0.0, flow(3): 0.0}
    b.home = dict.fromkeys(b.port_of, 2)
    assert b.assign(flow(4), 2) == 4  # ports 3 and 4 both idle: fewer flows
    assert b.assign(flow(5), 2) == 4
    assert b.assign(flow(6), 2) == 3  # equal counts too: lowest port


def test_update_drops_expired_flows_but_not_unmeasured_new_ones():
    b = PortBalancer('e0_0', [2, 3])
    b.assign(flow(1), 2)
    b.assign(flow(2), 3)
    b.update({flow(2): 3 * M})
    # flow(1) was assigned after the counters were read: kept, one round
    assert b.port_of == {flow(1): 2, flow(2): 3}
    assert b.loads() == {2: 0.0, 3: 3 * M}
    b.update({flow(2): 3 * M})
    assert b.port_of == {flow(2): 3} and b.home == {flow(2): 3}


def test_rebalance_moves_largest_flow_smaller_than_difference():
    b = PortBalancer('a0_2', [2, 3])
    b.port_of = {flow(1): 2, flow(2): 2, flow(3): 2, flow(4): 3}
    b.rate = {flow(1): 6 * M, flow(2): 3 * M, flow(3): 2 * M, flow(4): 1 * M}
    # loads 11 vs 1, D = 10: the 6 Mbit/s flow moves -> 5 vs 7; D = 2 and
    # no flow on port 3 is below 2 except... flow(4) at 1 -> 6 vs 6.
    assert b.rebalance(max_moves=3) == [Move('a0_2', flow(1), 2, 3), Move('a0_2', flow(4), 3, 2)]
    assert b.loads() == {2: 6 * M, 3: 6 * M}


def test_rebalance_is_bounded_and_respects_tolerance():
    b = PortBalancer('e0_0', [2, 3])
    b.port_of = {flow(n): 2 for n in range(1, 5)}
    b.rate = {flow(n): 1 * M for n in range(1, 5)}
    assert len(b.rebalance(max_moves=1)) == 1
    assert b.loads() == {2: 3 * M, 3: 1 * M}
    b.tolerance = 2 * M
    assert b.rebalance(max_moves=3) == []  # D = 2 is within tolerance
    b.tolerance = 0.0
    assert b.rebalance(max_moves=3) == [Move('e0_0', flow(3), 2, 3)]  # equal rates: highest key first


def test_rebalance_leaves_an_unsplittable_imbalance_alone():
    # One 10 Mbit/s flow against nothing: moving it would only swap the ports.
    b = PortBalancer('e0_0', [2, 3])
    b.port_of, b.rate = {flow(1): 2}, {flow(1): 10 * M}
    assert b.rebalance(max_moves=3) == []
    # Two equal flows on one port split.
    b.port_of[flow(2)], b.rate[flow(2)] = 2, 10 * M
    assert b.rebalance(max_moves=3) == [Move('e0_0', flow(2), 2, 3)]


def test_classifier_covers_pod_switches_and_their_upward_ports():
    topo = FatTree(4)
    c = FlowClassifier(topo)
    assert sorted(c.switches) == sorted(s.name for s in topo.switches if s.role != 'core')
    assert c.switches['a1_3'].ports == (2, 3)
    with pytest.raises(ValueError, match='not a pod switch'):
        c.assign('c1_1', flow(1))
    with pytest.raises(ValueError, match='max_moves'):
        FlowClassifier(topo, max_moves=0)
    with pytest.raises(ValueError, match='not between two hosts'):
        c.assign('e0_0', FlowKey('10.0.0.2', '10.9.0.2', 6, 5201))
    # two-level ports at e0_0 go by destination host ID: 2 -> port 2, 3 -> port 3
    a, b = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201), FlowKey('10.0.0.3', '10.2.0.3', 6, 5201)
    assert [c.assign('e0_0', a), c.assign('e0_0', b)] == [2, 3]
    c.update('e0_0', {a: 4 * M, b: 4 * M})
    assert c.rebalance() == []
    assert c.state() == {'e0_0': {'ports': {'2': 4 * M, '3': 4 * M}, 'flows': [
        {'flow': str(a), 'port': 2, 'two_level_port': 2, 'rate_bps': 4 * M, 'ack_stream': False},
        {'flow': str(b), 'port': 3, 'two_level_port': 3, 'rate_bps': 4 * M, 'ack_stream': False}]}}


def test_a_round_first_restores_two_level_ports_until_the_model_is_not_below_two_level():
    topo = FatTree(4)
    c = FlowClassifier(topo)
    a, b = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201), FlowKey('10.0.0.3', '10.2.0.3', 6, 5201)
    c.assign('e0_0', a)
    c.assign('e0_0', b)
    c.update('e0_0', {a: 4 * M, b: 4 * M})
    c.switches['e0_0'].port_of[b] = 2  # both on one uplink: half of two-level's share
    assert (c.share([a, b]), c.share([a, b], two_level=True)) == (50.0, 100.0)
    # b's entry on a0_3, the switch its home port leads to, goes in first
    assert c.rebalance() == [Move('a0_3', b, None, 2), Move('e0_0', b, 2, 3)]
    assert c.share([a, b]) == 100.0


def test_a_move_that_would_lower_the_model_is_refused_for_the_next_flow():
    topo = FatTree(4)
    c = FlowClassifier(topo)
    pairs = [('h3_1_2', 'h2_1_3'), ('h2_0_2', 'h1_0_3'), ('h3_0_3', 'h2_0_3'), ('h3_0_2', 'h1_1_3')]
    flows = [FlowKey(topo.node(s).ip, topo.node(d).ip, 6, 5201) for s, d in pairs]
    for f, (src, _) in zip(flows, pairs):
        c.assign(topo.host_attachment(src)[0], f)
    rates = max_min_rates([c.path(f) for f in flows])
    for name in ('e3_1', 'e2_0', 'e3_0'):
        c.update(name, {f: r * M for f, r in zip(flows, rates) if f in c.switches[name].port_of})
    # all on their two-level ports; e3_0 carries two half-rate flows on port 3
    assert rates == [1.0, 0.5, 0.5, 0.5] and c.share(flows) == c.share(flows, two_level=True) == 62.5
    # the heuristic's first pick (equal rates: highest key) is h3_0_3's flow, whose
    # port-2 path shares a3_2 -> c1_2 -> a2_2 with h3_1_2's flow: 50%. Refused:
    # h3_0_2's flow moves instead, 75%, its entry on a3_2 placed first.
    assert c.rebalance() == [Move('a3_2', flows[3], None, 3), Move('e3_0', flows[3], 3, 2)]
    assert c.share(flows) == 75.0


def test_a_move_that_leaves_the_model_equal_is_refused():
    # both flows go to h1_0_2, so its host link halves them wherever they
    # cross the core: moving either gains nothing and would reorder it
    topo = FatTree(4)
    c = FlowClassifier(topo)
    a, b = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201), FlowKey('10.0.0.3', '10.1.0.2', 6, 5201)
    assert [c.assign('e0_0', a), c.assign('e0_0', b)] == [2, 2]
    c.update('e0_0', {a: 4 * M, b: 1 * M})
    assert c.share([a, b]) == c.share([a, b], two_level=True) == 50.0
    # the heuristic alone would move a (4 < D = 5), then b
    assert c.switches['e0_0'].rebalance(max_moves=1) == [Move('e0_0', a, 2, 3)]
    c.switches['e0_0'].port_of[a] = 2
    assert c.rebalance() == []
    assert c.switches['e0_0'].port_of == {a: 2, b: 2}


def test_flows_at_or_below_tolerance_are_never_moved():
    # ACK streams and noise: moving them would reorder them for nothing
    b = PortBalancer('e0_0', [2, 3])
    b.port_of = {flow(1): 2, flow(2): 2, flow(3): 2, flow(4): 3}
    b.rate = {flow(1): 6 * M, flow(2): 0.2 * M, flow(3): 0.5 * M, flow(4): 5.8 * M}
    # D = 0.9 > tolerance, and the 0.2 and 0.5 flows would fit, but are too small
    b.tolerance = 0.5 * M
    assert b.rebalance(max_moves=3) == []
    b.tolerance = 0.0
    assert b.rebalance(max_moves=3) == [Move('e0_0', flow(3), 2, 3)]


def test_a_refused_move_tries_the_next_largest_flow():
    b = PortBalancer('e0_0', [2, 3])
    b.port_of = {flow(1): 2, flow(2): 2, flow(3): 2}
    b.rate = {flow(1): 4 * M, flow(2): 3 * M, flow(3): 2 * M}
    refused = {flow(1)}
    assert b.rebalance(max_moves=1, accept=lambda move: not refused & {f for f, p in b.port_of.items() if p == 3}) \
        == [Move('e0_0', flow(2), 2, 3)]
    assert b.port_of == {flow(1): 2, flow(2): 3, flow(3): 2}
    assert b.rebalance(max_moves=3, accept=lambda move: False) == []
    assert b.port_of == {flow(1): 2, flow(2): 3, flow(3): 2}


def test_failures_move_flows_off_avoided_ports_and_recovery_brings_them_home():
    topo = FatTree(4)
    c = FlowClassifier(topo)
    # two-level ports at a0_2 by destination host ID: 2 -> port 2, 3 -> port 3
    a = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201)
    b = FlowKey('10.0.1.3', '10.2.0.3', 6, 5201)
    d = FlowKey('10.0.1.2', '10.3.0.2', 6, 5201)
    assert [c.assign('a0_2', x) for x in (a, b, d)] == [2, 3, 2]
    c.update('a0_2', {a: 3 * M, b: 1 * M, d: 1 * M})
    # a0_2's own link to c1_1 (port 2) dies: a and d move to port 3
    moves = c.set_failures(avoidance(topo, {link_key('a0_2', 'c1_1')}))
    assert moves == [Move('a0_2', a, 2, 3), Move('a0_2', d, 2, 3)]
    assert c.balancer('a0_2').loads() == {2: 0.0, 3: 5 * M}
    # no rebalancing or return onto the dead port, new flows avoid it
    assert c.rebalance() == []
    new = FlowKey('10.0.0.3', '10.1.0.2', 6, 1)
    assert c.assign('a0_2', new) == 3
    # recovery moves nothing by itself; the next round finds all four flows on
    # one core link (model 50%, two-level 75%) and sends flows home, in flow
    # order, until the model is at two-level's: d stays on port 3
    assert c.set_failures(avoidance(topo, frozenset())) == []
    flows = [a, new, d, b]
    assert (c.share(flows), c.share(flows, two_level=True)) == (pytest.approx(50.0), 75.0)
    assert c.rebalance() == [Move('a0_2', a, 3, 2), Move('a0_2', new, 3, 2)]
    assert c.share(flows) == 75.0


def test_remote_failure_avoids_the_core_that_lost_the_destination():
    topo = FatTree(4)
    c = FlowClassifier(topo)
    to_pod1 = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201)
    to_pod2 = FlowKey('10.0.0.3', '10.2.0.3', 6, 5201)
    assert [c.assign('a0_2', x) for x in (to_pod1, to_pod2)] == [2, 3]
    # c1_2 (behind a0_2's port 3) lost its link to pod 1: a0_2 must avoid it
    # for 10.1/16 only; to_pod2 keeps port 3
    avoid = avoidance(topo, {link_key('a1_2', 'c1_2')})
    assert c.set_failures(avoid) == []
    late = FlowKey('10.0.1.3', '10.1.1.3', 6, 5201)
    c.update('a0_2', {to_pod1: 3 * M, to_pod2: 0.0})
    assert c.assign('a0_2', late) == 2  # its two-level port 3 is avoided for pod 1
    c.update('a0_2', {to_pod1: 3 * M, to_pod2: 0.0, late: 1 * M})
    assert c.rebalance() == []  # port 2's flows both go to pod 1
    assert c.set_failures(avoidance(topo, frozenset())) == []
    assert c.rebalance() == [Move('a0_2', late, 2, 3)]  # home again: no longer sharing a0_2 -> c1_1


def test_a_flow_with_no_allowed_port_goes_to_the_two_level_tables():
    topo = FatTree(4)
    c = FlowClassifier(topo)
    x = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201)
    assert c.assign('a0_2', x) == 2
    dead = {link_key('a0_2', 'c1_1'), link_key('a0_2', 'c1_2')}
    assert c.set_failures(avoidance(topo, dead)) == [Move('a0_2', x, 2, None)]
    assert c.assign('a0_2', FlowKey('10.0.0.3', '10.1.0.3', 6, 1)) is None
    assert c.balancer('a0_2').port_of == {}


# h0_0_2 sends to h1_0_2, whose ACKs go back; beside them at e1_0, h1_0_2 and
# h1_0_3 send to hosts with IDs 3 and 2 (two-level ports 3 and 2)
DATA = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201)
ACKS = FlowKey('10.1.0.2', '10.0.0.2', 6, 40000)
BESIDE = FlowKey('10.1.0.3', '10.2.0.2', 6, 5201)
SAME_HOST = FlowKey('10.1.0.2', '10.3.0.3', 6, 5201)


def test_ack_streams_are_the_tcp_flows_whose_frames_average_no_payload():
    assert ACK_FRAME_BYTES == 94  # Ethernet 14, IPv4 20, TCP 20 + 40 of options

    def reverse(dport, proto=6):
        return FlowKey('10.1.0.2', '10.0.0.2', proto, dport)
    counters = {DATA: (1514 * 1000 + 74 + 66, 1002, 4.0),  # segments after the handshake
                ACKS: (74 + 66 * 500, 501, 4.0),  # SYN-ACK, then one ACK per two segments
                reverse(1): (94 * 10, 10, 1.0),  # header-only frames full of options
                reverse(2): (94 * 10 + 1, 10, 1.0),  # and one byte of payload: data
                reverse(53, proto=17): (60 * 10, 10, 1.0),  # UDP has no ACKs
                reverse(3): (0, 0, 0.2)}  # nothing counted yet
    assert ack_streams(counters) == {ACKS, reverse(1)}


def measured_beside_its_data(acks):
    """A classifier after one reading: DATA at 1 Mbit/s; at e1_0 its ACK
    stream, read at 0.3 Mbit/s (above the 0.2 Mbit/s tolerance of 2 Mbit/s
    links), on port 2 with BESIDE at 1 Mbit/s, SAME_HOST at 0.9 on port 3.
    ``acks``: what e1_0's counters told of them."""
    c = FlowClassifier(FatTree(4), tolerance=0.2 * M)
    assert c.assign('e0_0', DATA) == 2
    assert [c.assign('e1_0', f) for f in (ACKS, BESIDE, SAME_HOST)] == [2, 2, 3]
    c.update('e0_0', {DATA: 1 * M})
    c.update('e1_0', {ACKS: 0.3 * M, BESIDE: 1 * M, SAME_HOST: 0.9 * M}, acks)
    return c


def test_an_ack_stream_is_never_moved_loaded_or_modelled():
    c = measured_beside_its_data(acks={ACKS})
    assert c.modelled_flows() == [DATA, SAME_HOST, BESIDE]
    assert c.balancer('e1_0').loads() == {2: 1 * M, 3: 0.9 * M}  # within tolerance
    assert c.rebalance() == [] and c.balancer('e1_0').port_of[ACKS] == 2
    assert c.state()['e1_0']['flows'][0] == {'flow': str(ACKS), 'port': 2, 'two_level_port': 2,
                                             'rate_bps': 0.3 * M, 'ack_stream': True}
    # a failure still moves it off a dead port, and it stays an ACK stream
    # (and e0_0's port 2 leads to a0_2, whose cores reached e1_0 only by a1_2)
    assert c.set_failures(avoidance(FatTree(4), {link_key('e1_0', 'a1_2')})) == [
        Move('e0_0', DATA, 2, 3), Move('e1_0', ACKS, 2, 3), Move('e1_0', BESIDE, 2, 3)]
    assert c.balancer('e1_0').acks == {ACKS} and c.modelled_flows() == [DATA, SAME_HOST, BESIDE]


def test_the_same_readings_without_the_ack_stream_known_would_move_it():
    # Counted as a long flow of its own, the ACK stream halves BESIDE's share
    # of e1_0 -> a1_2 in the model, and moving it onto SAME_HOST's port (whose
    # host link it shares anyway) "raises" the model: 62.5% -> 75%.
    c = measured_beside_its_data(acks=frozenset())
    assert c.modelled_flows() == [DATA, ACKS, SAME_HOST, BESIDE]
    assert c.share(c.modelled_flows()) == 62.5
    assert c.rebalance() == [Move('a1_3', ACKS, None, 3), Move('e1_0', ACKS, 2, 3)]
    assert c.share(c.modelled_flows()) == 75.0


def test_until_measured_neither_half_of_a_tcp_connection_is_modelled():
    c = FlowClassifier(FatTree(4))
    c.assign('e0_0', DATA)
    assert c.modelled_flows() == [DATA]  # nothing says it is not data yet
    c.assign('e1_0', ACKS)  # its opposite direction: one of the two is the ACKs
    c.assign('e1_0', BESIDE)
    udp = FlowKey('10.1.0.2', '10.0.0.2', 17, 5353)  # UDP has no ACK stream
    c.assign('e1_0', udp)
    assert c.modelled_flows() == [udp, BESIDE]
