"""The dynamic schemes as the simulator's controller (scripts/sim/controller_loop.py):
the line protocol answered with the app's own strategies, bad messages
named on both sides, and small k=4 runs at 1 Gbit/s where the scheduler
and the classifier take two flows that two-level routing puts on one
uplink onto distinct ones (the switches' own per-flow counters say so)."""
import pytest

from controller.fattree.classifier import FlowKey
from controller.fattree.scheme_table0_rules import COOKIE_FLOW, flow_rule
from scripts.sim import bisection_backend, controller_loop
from scripts.sim.controller_loop import ControllerLoop, ProtocolError, flow_of_record, serve
from scripts.sim.scenario import SimFlow, SimSettings
from scripts.sim.rules_export import rule_line
from topologies.addressing import ip_to_int
from topologies.fattree import FatTree

TOPO = FatTree(4)
FLOW = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201)


def entry(switch, packets, count, age, flow, port):
    return 'entry %s %d %d %r %s' % (switch, packets, count, age, rule_line(flow_rule(flow, port)))


def test_a_per_flow_record_reads_back_as_its_flow():
    assert flow_of_record(rule_line(flow_rule(FLOW, 2))) == FLOW
    assert flow_of_record(rule_line(flow_rule(FlowKey('10.0.1.3', '10.3.0.2', 17, 53), None))) \
        == FlowKey('10.0.1.3', '10.3.0.2', 17, 53)
    with pytest.raises(ProtocolError, match='not a per-flow entry'):
        flow_of_record('flow 0 400 0x0 eth_type=0x800 actions goto=1')


def test_scenario_names_the_period_delay_cookie_and_polled_switches():
    loop = ControllerLoop(TOPO, 'scheduler', {'link_mbps': 1000, 'period': 0.5}, control_delay_s=0.002)
    lines = loop.scenario_lines()
    assert lines[0] == 'controller 0.5 0.002 %#x' % COOKIE_FLOW
    assert [l.split()[1] for l in lines[1:]] == [s.name for s in TOPO.switches if s.role == 'edge']
    classifier = ControllerLoop(TOPO, 'classifier', {'link_mbps': 1000})
    assert len(classifier.scenario_lines()) == 1 + 16  # edges and aggregations
    with pytest.raises(ValueError, match='no controller in the loop'):
        ControllerLoop(TOPO, 'ecmp', {})
    with pytest.raises(ValueError, match='must not be negative'):
        ControllerLoop(TOPO, 'scheduler', {}, control_delay_s=-1)


def test_round_trip_packet_in_then_polls_in_simulated_time():
    """A classifier packet-in is answered with the flow's entry and a
    packet-out; the scheduler's polls feed its counters at the simulator's
    times, and a flow past the threshold gets its placement's entries."""
    classifier = ControllerLoop(TOPO, 'classifier', {'link_mbps': 1000})
    asked = ['packet_in 0.0001 e0_0 6 %d %d 40000 5201' % (ip_to_int(FLOW.src), ip_to_int(FLOW.dst)),
             'end', 'done']
    answers = []
    serve(iter(asked), answers.append, classifier.handlers())
    (answer,) = answers
    assert answer[-2:] == ['packet_out', 'end']
    assert answer[0].startswith('add e0_0 flow 0 500 %#x' % COOKIE_FLOW) and 'output=' in answer[0]
    assert classifier.now == 0.0001

    scheduler = ControllerLoop(TOPO, 'scheduler', {'link_mbps': 1000})
    big = 125_000_000  # bytes in the entry's second: 1 Gbit/s, past the 10% threshold
    asked = ['poll 1', 'end',
             'poll 2', entry('e0_0', 80_000, big, 1.5, FLOW, None), 'end', 'done']
    answers = []
    serve(iter(asked), answers.append, scheduler.handlers())
    assert answers[0] == ['end']
    assert scheduler.now == 2.0
    placed = [line.split()[1] for line in answers[1] if line.startswith('add')]
    assert 'e0_0' in placed and len(placed) == 2  # the source pod's edge and aggregation
    assert scheduler.strategy.scheduler.last_seen[FLOW] == 2.0  # its clock is the simulator's


@pytest.mark.parametrize('asked, problem', [
    (['poll 1'], 'stopped in the middle'),
    (['poll 1', 'end'], 'ended without "done"'),
    (['hello', 'end'], 'unexpected message'),
    (['poll x', 'end'], 'bad time'),
    (['poll 1', 'entry c0_0 1 1 1 flow 0 500 0x0 actions', 'end'], 'of a polled switch'),
    (['poll 1', 'entry e0_0 1 x 1 flow', 'end'], 'bad counters'),
    (['packet_in 1 e0_0 6 1 2 3', 'end'], 'expected "packet_in'),
    (['packet_in 1 e0_0 1 1 2 3 4', 'end'], 'bad packet_in'),
])
def test_a_bad_message_from_the_simulator_is_named(asked, problem):
    loop = ControllerLoop(TOPO, 'scheduler', {'link_mbps': 1000})
    with pytest.raises(ProtocolError, match=problem):
        serve(iter(asked), lambda lines: None, loop.handlers())


# Both from edge e0_0 to host ID 2 of another pod: two-level routing sends
# both up port 2 of e0_0 (fig. 3's suffix table), at half the rate each.
COLLIDING = [SimFlow('h0_0_2', 'h1_0_2', 0.0, 0.25, src_port=40001),
             SimFlow('h0_0_3', 'h2_0_2', 0.0002, 0.25, src_port=40002)]
# Hosts tuned for microsecond RTTs (5 ms minimum RTO): with Linux's 200 ms one loss
# would stall a flow past this 0.1 s window.
SETTINGS = SimSettings(link_mbps=1000, stop_s=0.25, measure_from_s=0.15, min_rto_ms=5.0)


def per_flow_entries(result, switch):
    """{flow record's destination: (output port, packets)} of the per-flow
    entries a packet hit on ``switch``."""
    hits = {}
    for line, packets, _ in result['switches'][switch]['rules_hit']:
        if '%#x' % COOKIE_FLOW in line and 'output=' in line:
            hits[line.split('ipv4_dst=')[1].split()[0]] = (line.split('output=')[1], packets)
    return hits


@pytest.mark.parametrize('scheme', ['scheduler', 'classifier'])
def test_colliding_flows_end_on_distinct_uplinks(scheme):
    quiet = lambda line: None
    twolevel = bisection_backend.simulate(TOPO, 'twolevel', COLLIDING, SETTINGS, progress=quiet)
    assert sum(f['goodput_mbps'] for f in twolevel['flows']) < 1000
    result = bisection_backend.simulate(TOPO, scheme, COLLIDING, SETTINGS, progress=quiet,
                                        scheme_params={'period': 0.05})
    assert result['controller']['polls'] == 4  # 0.05 .. 0.2 s
    assert result['controller']['packet_ins'] >= 4  # each TCP connection's two directions at its edges
    assert all(f['goodput_mbps'] > 900 for f in result['flows']), result['flows']
    edge = per_flow_entries(result, 'e0_0')
    assert set(edge) == {'0xa010002', '0xa020002'}
    assert edge['0xa010002'][0] != edge['0xa020002'][0]


def test_a_bad_reply_stops_the_simulator_with_it_named(monkeypatch):
    monkeypatch.setattr(controller_loop.ControllerLoop, 'packet_in', lambda self, words: ['add e0_0 nonsense', 'end'])
    with pytest.raises(RuntimeError, match="bad controller reply 'add e0_0 nonsense'"):
        bisection_backend.simulate(TOPO, 'scheduler', COLLIDING[:1], SETTINGS, progress=lambda line: None)
