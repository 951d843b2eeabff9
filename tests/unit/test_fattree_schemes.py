"""The fat-tree's routing schemes as pure strategies (controller.fattree.scheme_strategies):
what each puts in table 0 and the per-flow entries it decides, exactly."""
import logging

from controller.fattree.classifier import FlowKey
from controller.fattree.failover import link_key, tables_with_failures
from controller.fattree.scheme_parameters import scheme_config
from controller.fattree.scheme_table0_rules import ecmp_rules_and_groups, flow_rule
from controller.fattree.scheme_strategies import SCHEMES, EntryChange
from topologies.fattree import FatTree

TOPO = FatTree(4)
LOG = logging.getLogger('test_fattree_schemes')
# h0_0_2 -> h1_0_2 across pods: TCP to port 5001
FLOW = FlowKey('10.0.0.2', '10.1.0.2', 6, 5001)


def counted(byte_count, frame_bytes, age):
    """A per-flow entry's counters: (bytes, packets, age) of frames of about ``frame_bytes``."""
    return byte_count, round(byte_count / frame_bytes), age


def failure(*links):
    """(failed links, tables under them): what the app tells a scheme."""
    failed = frozenset(links)
    return failed, tables_with_failures(TOPO, failed)


def scheme(name, now=0.0, **params):
    return SCHEMES[name](TOPO, scheme_config(dict(params, scheme=name)), LOG, lambda: now)


def test_table_zero_of_each_scheme():
    assert scheme('twolevel').rules('e0_0') == [] and scheme('twolevel').groups('a0_2') == []
    ecmp = scheme('ecmp')
    tables = tables_with_failures(TOPO, frozenset())
    assert (ecmp.rules('e0_0'), ecmp.groups('e0_0')) == ecmp_rules_and_groups(TOPO, tables['e0_0'])
    # a failure recomputes the select groups from the new tables
    failed, failed_tables = failure(link_key('a0_2', 'c1_1'))
    assert ecmp.links_changed(failed, failed_tables) == []
    assert ecmp.groups('a0_2') == ecmp_rules_and_groups(TOPO, failed_tables['a0_2'])[1] != \
        ecmp_rules_and_groups(TOPO, tables['a0_2'])[1]
    assert ecmp.rules('c1_1') == [] and ecmp.groups('c1_1') == []
    assert [len(scheme(n).rules('a0_2')) for n in ('classifier', 'scheduler')] == [3, 0]
    assert [len(scheme(n).rules('e0_0')) for n in ('classifier', 'scheduler')] == [3, 3]


def test_classifier_starts_a_new_flow_on_its_two_level_port_and_resends_its_packet():
    classifier = scheme('classifier')
    assert classifier.resends_first_packet and not scheme('scheduler').resends_first_packet
    assert classifier.new_flow('e0_0', FLOW) == [EntryChange('e0_0', flow_rule(FLOW, 2))]
    other = FlowKey('10.0.0.2', '10.1.0.2', 6, 5002)
    # nothing measured yet: the two-level port is as good as any
    assert classifier.new_flow('e0_0', other) == [EntryChange('e0_0', flow_rule(other, 2))]


def test_classifier_moves_flows_off_a_failed_up_link():
    classifier = scheme('classifier')
    classifier.new_flow('e0_0', FLOW)
    assert classifier.links_changed(*failure(link_key('e0_0', 'a0_2'))) == [
        EntryChange('e0_0', flow_rule(FLOW, 3))]


def test_scheduler_places_a_large_flow_and_moves_it_off_a_failed_link():
    scheduler = scheme('scheduler')
    assert scheduler.new_flow('e0_0', FLOW) == [EntryChange('e0_0', flow_rule(FLOW, None))]
    rate_bps = 2e6  # past the default threshold, 10% of 10 Mbit/s
    assert scheduler.counters('e0_0', {FLOW: counted(rate_bps / 8, 1514, 1.0)}, 1.0) == [
        EntryChange('e0_0', flow_rule(FLOW, 2)), EntryChange('a0_2', flow_rule(FLOW, 2))]  # via c1_1
    assert scheduler.counters('e0_0', {FLOW: counted(2 * rate_bps / 8, 1514, 2.0)}, 2.0) == []  # placed already
    # e0_0 - a0_2 fails: via c2_1 now, and a0_2's entry goes
    assert scheduler.links_changed(*failure(link_key('e0_0', 'a0_2'))) == [
        EntryChange('e0_0', flow_rule(FLOW, 3)), EntryChange('a0_3', flow_rule(FLOW, 2)),
        EntryChange('a0_2', flow_rule(FLOW, 2), remove=True)]
    assert scheduler.state()['placements'][0]['via'] == 'c2_1'


# FLOW's ACK stream: h1_0_2 -> h0_0_2, to the data's source port
ACKS = FlowKey('10.1.0.2', '10.0.0.2', 6, 40000)


def classifier_after_one_reading(acks_frame_bytes):
    """A classifier on 2 Mbit/s links (tolerance 0.2 Mbit/s) after one
    reading of FLOW (1 Mbit/s) and of e1_0, where FLOW's ACK stream, read
    at 0.3 Mbit/s in frames of ``acks_frame_bytes``, shares port 2 with
    h1_0_3's 1 Mbit/s flow and h1_0_2's 0.9 Mbit/s flow has port 3."""
    classifier = scheme('classifier', link_mbps=2)
    beside, same_host = FlowKey('10.1.0.3', '10.2.0.2', 6, 5201), FlowKey('10.1.0.2', '10.3.0.3', 6, 5201)
    for switch, flow in (('e0_0', FLOW), ('e1_0', ACKS), ('e1_0', beside), ('e1_0', same_host)):
        classifier.new_flow(switch, flow)
    classifier.counters('e0_0', {FLOW: counted(125000, 1514, 1.0)}, 1.0)
    classifier.counters('e1_0', {ACKS: counted(37500, acks_frame_bytes, 1.0), beside: counted(125000, 1514, 1.0),
                                 same_host: counted(112500, 1514, 1.0)}, 1.0)
    return classifier


def test_the_classifier_never_moves_a_flow_its_counters_show_to_be_acks():
    # ACKs of 66 bytes: an ACK stream, left where it is
    assert classifier_after_one_reading(66).tick() == []
    # the same bytes in data-sized frames: moved to port 3, the old way for every flow
    assert classifier_after_one_reading(1514).tick() == [
        EntryChange('a1_3', flow_rule(ACKS, 3)), EntryChange('e1_0', flow_rule(ACKS, 3))]


def scheduler_after_one_reading(acks_frame_bytes):
    """The entries a scheduler decides on reading e1_0, where FLOW's ACK
    stream is read at 2 Mbit/s (past the threshold, 10% of 10 Mbit/s) in
    frames of ``acks_frame_bytes``, and its state after."""
    scheduler = scheme('scheduler')
    assert scheduler.new_flow('e1_0', ACKS) == [EntryChange('e1_0', flow_rule(ACKS, None))]
    return scheduler.counters('e1_0', {ACKS: counted(250000, acks_frame_bytes, 1.0)}, 1.0), scheduler.state()


def test_the_scheduler_never_reserves_a_path_for_a_flow_its_counters_show_to_be_acks():
    changes, state = scheduler_after_one_reading(66)
    assert changes == [] and state['placements'] == [] and state['reserved_links'] == {}
    assert state['edge_flows'] == {'e1_0': [{'flow': str(ACKS), 'rate_bps': 2e6, 'large': True,
                                             'ack_stream': True}]}
    # the same bytes in data-sized frames: reserved and installed, the old way for every flow
    changes, state = scheduler_after_one_reading(1514)
    assert changes == [EntryChange('e1_0', flow_rule(ACKS, 2)), EntryChange('a1_2', flow_rule(ACKS, 2))]
    assert [p['via'] for p in state['placements']] == ['c1_1']
