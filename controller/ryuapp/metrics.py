"""Prometheus metrics of a running fabric, FAUCET-style: names such as
``port_status``, ``of_port_rx_bytes``, ``of_packet_ins``, ``of_flowmsgs_sent``,
histograms ``*_secs``, labels ``dp_id`` (hex datapath id), ``dp_name`` (the
model's switch name) and ``port`` (OpenFlow port).

The values are read at scrape time from the controller's FabricObservation
(controller.ryuapp.observation), its Confirmations (controller.openflow.
confirmations: switches' confirmed state, OpenFlow errors) and the app's
own state; only the
failure-broadcast recompute time is recorded as it happens (a histogram).
No Ryu here: controller.ryuapp.web serves ``render()`` at /metrics.
"""
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

DP_LABELS = ['dp_id', 'dp_name']
PORT_LABELS = DP_LABELS + ['port']
RECOMPUTE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class FabricCollector:
    """Metric families from an observation, the connected switches, the
    confirmations and the app's extras (``extras()``: {'failed_links',
    'scheduler', 'distda'})."""

    def __init__(self, observation, connected, extras, confirmations):
        self.observation, self.connected, self.extras = observation, connected, extras
        self.confirmations = confirmations

    def _dp(self, switch):
        return [hex(self.observation.topo.node(switch).dpid), switch]

    def _port_family(self, name, doc, values, family=GaugeMetricFamily):
        metric = family(name, doc, labels=PORT_LABELS)
        for (switch, port), value in sorted(values.items()):
            metric.add_metric(self._dp(switch) + [str(port)], value)
        return metric

    def _dp_family(self, name, doc, values, family=GaugeMetricFamily):
        metric = family(name, doc, labels=DP_LABELS)
        for switch, value in sorted(values.items()):
            metric.add_metric(self._dp(switch), value)
        return metric

    def collect(self):
        obs = self.observation
        connected = set(self.connected())
        yield self._dp_family('dp_status', 'switch connected to the controller (1) or not (0)',
                              {s.name: int(s.name in connected) for s in obs.topo.switches})
        ports = obs.port_states()
        yield self._port_family('port_status', 'port carrier up (1) or down (0)',
                                {k: int(s['carrier']) for k, s in ports.items()})
        yield self._port_family('port_live', 'port live (OFPPS_LIVE: carrier and BFD) (1) or not (0)',
                                {k: int(s['live']) for k, s in ports.items()})
        for field in ('rx_bytes', 'tx_bytes', 'rx_packets', 'tx_packets'):
            yield self._port_family('of_port_' + field, 'port %s as the switch counts them' % field,
                                    {k: getattr(c, field) for k, c in obs.counters.items()})
        yield self._port_family('port_live_changes', 'OFPPS_LIVE changes with carrier up (BFD state changes)',
                                obs.live_changes, CounterMetricFamily)
        yield self._dp_family('of_flow_entries', 'flow entries the switch reports', obs.flows)
        yield self._dp_family('of_group_entries', 'groups the switch reports', obs.groups)
        for kind, name in (('flow', 'of_flowmsgs_sent'), ('other', 'of_non_flowmsgs_sent')):
            yield self._dp_family(name, 'OpenFlow %s messages sent to the switch'
                                  % ('flow-mod' if kind == 'flow' else 'non-flow-mod'),
                                  {s: n for (s, k), n in obs.sent.items() if k == kind}, CounterMetricFamily)
        received = CounterMetricFamily('of_msgs_received', 'OpenFlow messages received, by type',
                                       labels=DP_LABELS + ['type'])
        for (switch, msg_type), count in sorted(obs.received.items()):
            received.add_metric(self._dp(switch) + [msg_type], count)
        yield received
        yield self._dp_family('of_packet_ins', 'packet-in messages received', obs.packet_ins,
                              CounterMetricFamily)
        confirmations = self.confirmations
        errors = CounterMetricFamily('of_errors', 'OpenFlow error messages received, by error',
                                     labels=DP_LABELS + ['error'])
        for (switch, name), count in sorted(confirmations.counts.items()):
            errors.add_metric(self._dp(switch) + [name], count)
        yield errors
        yield self._dp_family('dcfabric_switch_confirmed',
                              'switch confirmed its current tables (barrier, no error outstanding) (1) or not (0)',
                              {s.name: int(confirmations.confirmed(s.name)) for s in obs.topo.switches})
        yield GaugeMetricFamily('dcfabric_outstanding_errors',
                                'OpenFlow errors against the switches\' current tables',
                                value=len(confirmations.outstanding_errors()))
        extras = self.extras()
        yield GaugeMetricFamily('dcfabric_failed_links', 'switch-to-switch links with an end not live',
                                value=extras['failed_links'])
        scheduler = extras.get('scheduler')
        if scheduler is not None:
            yield GaugeMetricFamily('dcfabric_scheduler_placed_flows',
                                    'large flows the central scheduler has placed', value=scheduler['placed'])
            yield GaugeMetricFamily('dcfabric_scheduler_reserved_links',
                                    'directed links reserved by placed flows', value=scheduler['reserved'])
            yield GaugeMetricFamily('dcfabric_scheduler_rejected_flows',
                                    'large flows the scheduler found no free path for', value=scheduler['rejected'])
        distda = extras.get('distda')
        if distda is not None:
            messages = CounterMetricFamily('dcfabric_distda_messages', 'DistDA messages by direction and kind',
                                           labels=['direction', 'kind'])
            for direction in ('sent', 'received'):
                for kind, count in sorted(distda[direction].items()):
                    messages.add_metric([direction, kind], count)
            yield messages


class FabricMetrics:
    """One registry per controller: the collector and the recompute histogram."""

    def __init__(self, observation, connected, extras, confirmations):
        self.registry = CollectorRegistry()
        self.registry.register(FabricCollector(observation, connected, extras, confirmations))
        self.recompute = Histogram('dcfabric_recompute_secs',
                                   'failure broadcast: time to recompute the tables (the staged update follows)',
                                   buckets=RECOMPUTE_BUCKETS, registry=self.registry)

    def render(self):
        return generate_latest(self.registry)
