"""The simulated network's scenario file: the model's cabling, ports and
addresses verbatim, the settings, and bad flows or failures named."""
import pytest

from scripts.sim.scenario import SimFailure, SimFlow, SimSettings, detection_delay_ms, scenario_lines
from topologies.fattree import FatTree
from topologies.nonblocking import NonBlocking


def keyed(lines, key):
    return [line.split()[1:] for line in lines if line.split()[0] == key]


def test_cabling_ports_and_addresses_are_the_models():
    topo = FatTree(4)
    lines = scenario_lines(topo, 'rules.txt', SimSettings(link_mbps=1000), [])
    assert keyed(lines, 'link') == [[l.node_a, str(l.port_a), l.node_b, str(l.port_b)] for l in topo.links]
    assert keyed(lines, 'host') == [[h.name, h.ip] for h in topo.hosts]
    assert [s for (s,) in keyed(lines, 'switch')] == [s.name for s in topo.switches]
    assert keyed(lines, 'pipeline') == [['rules.txt']]


def test_settings_flows_and_failures():
    settings = SimSettings(link_mbps=10, stop_s=4, measure_from_s=1, queue_packets=30, seed=7)
    lines = scenario_lines(FatTree(4), 'r', settings, [SimFlow('h0_0_2', 'h1_0_2', 0.0005, 4, src_port=40000)],
                           [SimFailure(2, 'a0_2', 2), SimFailure(3, 'c1_1')])
    assert {'seed 7', 'link_mbps 10.0', 'queue_packets 30', 'stop_s 4.0', 'measure_from_s 1.0',
            'tcp cubic', 'sender_queue fq'} <= set(lines)  # fq by default
    drop_tail = scenario_lines(FatTree(4), 'r', SimSettings(link_mbps=10, sender_queue='drop-tail'), [])
    assert 'sender_queue drop-tail' in drop_tail
    with pytest.raises(ValueError, match="unknown sender queue 'codel'; the simulated hosts have fq, drop-tail"):
        scenario_lines(FatTree(4), 'r', SimSettings(link_mbps=10, sender_queue='codel'), [])
    assert keyed(lines, 'flow') == [['0', 'h0_0_2', 'h1_0_2', '0.0005', '4.0', '0', '40000']]
    assert keyed(lines, 'fail_link') == [['2.0', 'a0_2', '2']]
    assert keyed(lines, 'fail_switch') == [['3.0', 'c1_1']]


def test_detection_is_bfds_at_the_policys_interval():
    # k=4: 32 switch links, within the packet budget at the 70 ms floor; 3 missed intervals
    assert detection_delay_ms(FatTree(4)) == 210
    assert detection_delay_ms(NonBlocking(4)) == 210  # no switch links: the floor


@pytest.mark.parametrize('flow, problem', [
    (SimFlow('h0_0_2', 'h0_0_2', 0, 1), 'needs two hosts'),
    (SimFlow('h0_0_2', 'e0_0', 0, 1), 'is a switch'),
    (SimFlow('h0_0_2', 'h1_0_2', 1, 1), 'start < stop'),
    (SimFlow('h0_0_2', 'h1_0_2', 0, 1, src_port=70000), 'a port'),
    (SimFlow('h0_0_2', 'h9_0_2', 0, 1), 'unknown node'),
])
def test_bad_flow_is_named(flow, problem):
    with pytest.raises(ValueError, match=problem):
        scenario_lines(FatTree(4), 'r', SimSettings(link_mbps=1), [flow])


@pytest.mark.parametrize('failure, problem', [
    (SimFailure(1, 'h0_0_2', 0), 'is a host'),
    (SimFailure(1, 'e0_0', 9), 'no cabled port 9'),
])
def test_bad_failure_is_named(failure, problem):
    with pytest.raises(ValueError, match=problem):
        scenario_lines(FatTree(4), 'r', SimSettings(link_mbps=1), [], [failure])


@pytest.mark.parametrize('settings, problem', [
    (SimSettings(link_mbps=1, stop_s=1, measure_from_s=1), 'measurement must start'),
    (SimSettings(link_mbps=0), 'must be positive'),
    (SimSettings(link_mbps=1, tcp='reno'), 'unknown TCP'),
    (SimSettings(link_mbps=1, tcp='dctcp'), 'ECN marking threshold'),
])
def test_bad_settings_are_named(settings, problem):
    with pytest.raises(ValueError, match=problem):
        scenario_lines(FatTree(4), 'r', settings, [])
