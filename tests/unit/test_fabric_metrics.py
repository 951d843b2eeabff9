"""The Prometheus exposition of an observation (controller.ryuapp.metrics),
parsed back with prometheus_client's own parser."""
from prometheus_client.parser import text_string_to_metric_families

from controller.openflow.confirmations import Confirmations
from controller.openflow.port_states import PortStates
from controller.ryuapp.metrics import FabricMetrics
from controller.ryuapp.observation import FabricObservation, PortCounters
from topologies.fattree import FatTree
from topologies.model import model_port

A0_2 = {'dp_id': hex(FatTree(4).node('a0_2').dpid), 'dp_name': 'a0_2'}


def samples(metrics):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(metrics.render().decode())
            for s in family.samples}


def value(found, name, **labels):
    return found[(name, tuple(sorted(labels.items())))]


def observation():
    topo = FatTree(4)
    return FabricObservation(topo, clock=lambda: 0.0, ports=PortStates(topo))


def report(obs, switch, port, carrier, live):
    before = obs.ports.state(switch, model_port(port))
    obs.ports.update(switch, model_port(port), carrier, live, 0.0)
    obs.port_changed(switch, port, before)


def test_port_table_message_and_app_metrics():
    obs = observation()
    report(obs, 'a0_2', 3, True, True)
    report(obs, 'a0_2', 3, True, False)
    report(obs, 'c1_1', 1, True, True)
    obs.port_stats('a0_2', 3, PortCounters(10, 20, 1, 2), now=1.0)
    obs.table_sizes('a0_2', flows=10, groups=2)
    obs.message_sent('a0_2', True)
    obs.message_received('a0_2', 'OFPPacketIn')
    extras = {'failed_links': 1, 'scheduler': {'placed': 2, 'reserved': 8, 'rejected': 1},
              'distda': {'sent': {'PortRequest': 3, 'PortApprove': 1}, 'received': {'PortRequest': 2}}}
    metrics = FabricMetrics(obs, connected=lambda: ['a0_2'], extras=lambda: extras,
                            confirmations=Confirmations(lambda: 0.0))
    metrics.recompute.observe(0.004)
    found = samples(metrics)
    port = dict(A0_2, port='3')
    assert value(found, 'port_status', **port) == 1 and value(found, 'port_live', **port) == 0
    assert value(found, 'port_live_changes_total', **port) == 1
    assert [value(found, 'of_port_' + f, **port) for f in ('rx_bytes', 'tx_bytes', 'rx_packets', 'tx_packets')] \
        == [10, 20, 1, 2]
    assert value(found, 'dp_status', **A0_2) == 1
    assert value(found, 'dp_status', dp_id=hex(FatTree(4).node('c1_1').dpid), dp_name='c1_1') == 0
    assert value(found, 'of_flow_entries', **A0_2) == 10 and value(found, 'of_group_entries', **A0_2) == 2
    assert value(found, 'of_flowmsgs_sent_total', **A0_2) == 1
    assert value(found, 'of_msgs_received_total', type='OFPPacketIn', **A0_2) == 1
    assert value(found, 'of_packet_ins_total', **A0_2) == 1
    assert value(found, 'dcfabric_failed_links') == 1
    assert (value(found, 'dcfabric_scheduler_placed_flows'), value(found, 'dcfabric_scheduler_reserved_links'),
            value(found, 'dcfabric_scheduler_rejected_flows')) == (2, 8, 1)
    assert value(found, 'dcfabric_distda_messages_total', direction='sent', kind='PortRequest') == 3
    assert value(found, 'dcfabric_distda_messages_total', direction='received', kind='PortRequest') == 2
    assert value(found, 'dcfabric_recompute_secs_count') == 1
    assert value(found, 'dcfabric_recompute_secs_bucket', le='0.005') == 1
    assert value(found, 'dcfabric_recompute_secs_bucket', le='0.0025') == 0


def test_apps_without_scheduler_or_distda_export_neither():
    metrics = FabricMetrics(observation(), connected=lambda: [], extras=lambda: {'failed_links': 0},
                            confirmations=Confirmations(lambda: 0.0))
    names = {name for name, _ in samples(metrics)}
    assert 'dcfabric_failed_links' in names
    assert not any(n.startswith(('dcfabric_scheduler', 'dcfabric_distda')) for n in names)


def test_openflow_errors_and_confirmed_switches():
    confirmations = Confirmations(lambda: 0.0)
    confirmations.sent('a0_2', [(7, 'delete every flow')], 8, whole_state=True)
    confirmations.sent('c1_1', [(3, 'delete every flow')], 4, whole_state=True)
    confirmations.barrier_reply('c1_1', 4)
    confirmations.error('a0_2', 7, 'OFPET_BAD_MATCH(4)/OFPBMC_BAD_WILDCARDS(5)')
    confirmations.barrier_reply('a0_2', 8)
    confirmations.error('a0_2', 99, 'OFPET_BAD_REQUEST(1)/OFPBRC_BAD_TYPE(1)')  # not table state
    metrics = FabricMetrics(observation(), connected=lambda: ['a0_2', 'c1_1'],
                            extras=lambda: {'failed_links': 0}, confirmations=confirmations)
    found = samples(metrics)
    assert value(found, 'of_errors_total', error='OFPET_BAD_MATCH(4)/OFPBMC_BAD_WILDCARDS(5)', **A0_2) == 1
    assert value(found, 'of_errors_total', error='OFPET_BAD_REQUEST(1)/OFPBRC_BAD_TYPE(1)', **A0_2) == 1
    assert value(found, 'dcfabric_outstanding_errors') == 1
    assert value(found, 'dcfabric_switch_confirmed', **A0_2) == 0
    assert value(found, 'dcfabric_switch_confirmed', dp_id=hex(FatTree(4).node('c1_1').dpid), dp_name='c1_1') == 1
