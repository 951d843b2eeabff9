"""The fat-tree's routing schemes as pure strategies (no Ryu): what each
puts in table 0 and how it answers new flows, counters, rounds and link
failures -- with the per-flow entries to install or remove, as data. The
Ryu side (controller.fattree.scheme_mixin_app) sends them and feeds the calls;
names and parameters are in controller.fattree.scheme_parameters.

The decisions themselves live in controller.fattree.classifier and
controller.fattree.scheduler; the entries in controller.fattree.scheme_table0_rules.
"""
from dataclasses import dataclass, replace

from controller.fattree.classifier import FlowClassifier, RateMeter, ack_streams
from controller.fattree.failover import avoidance, tables_with_failures
from controller.fattree.scheduler import FlowScheduler, reported_flows
from controller.fattree.scheme_table0_rules import (
    bypass_rule, ecmp_rules_and_groups, flow_rule, new_flow_rules)
from controller.openflow.rules import FlowRule

POD_ROLES = ('edge', 'aggregation')


@dataclass(frozen=True)
class EntryChange:
    """A per-flow entry to install on a switch, or (``remove``) to delete
    strictly."""
    switch: str
    rule: FlowRule
    remove: bool = False


def read_counters(meters, switch, counters, now):
    """(bit/s of every flow, its ACK streams) from one switch's per-flow
    counters {FlowKey: (bytes, packets, entry age in s)}."""
    rates = meters.setdefault(switch, RateMeter()).update(
        now, {flow: (count, age) for flow, (count, _, age) in counters.items()})
    return rates, ack_streams(counters)


class TwoLevelScheme:
    """No per-flow state: the two-level tables alone. The base of the others.

    ``log`` is a logging.Logger (the app's); ``clock`` gives monotonic
    seconds."""
    name = 'twolevel'
    polled_roles = ()  # switches whose per-flow counters are read
    resends_first_packet = False  # new_flow's packet goes back through table 0

    def __init__(self, topo, conf, log, clock):
        self.topo, self.conf, self.log = topo, conf, log
        self.capacity_bps = conf['link_mbps'] * 1e6

    def is_pod_switch(self, switch):
        return self.topo.node(switch).role in POD_ROLES

    def rules(self, switch):
        return []

    def groups(self, switch):
        return []

    def new_flow(self, switch, flow):
        """The first packet of an unknown upward flow reached the controller."""
        return []

    def counters(self, switch, counters, now):
        """Per-flow {FlowKey: (bytes, packets, age)} of one polled switch."""
        return []

    def tick(self):
        """One rebalancing/scheduling round, before the next poll."""
        return []

    def links_changed(self, failed, tables):
        """The set of failed links (frozensets of two switch names) changed;
        ``tables`` are every switch's two-level tables under it."""
        return []

    def state(self):
        return {}


class EcmpScheme(TwoLevelScheme):
    """Select groups per first-level prefix over the up-ports still usable
    for it, recomputed from the routing tables on every failure change
    (scheme_rules); the app pushes the difference."""
    name = 'ecmp'

    def __init__(self, topo, conf, log, clock):
        super().__init__(topo, conf, log, clock)
        self.compiled = self._compile(tables_with_failures(topo, frozenset()))

    def _compile(self, tables):
        return {name: ecmp_rules_and_groups(self.topo, table)
                for name, table in tables.items() if self.is_pod_switch(name)}

    def rules(self, switch):
        return self.compiled[switch][0] if self.is_pod_switch(switch) else []

    def groups(self, switch):
        return self.compiled[switch][1] if self.is_pod_switch(switch) else []

    def links_changed(self, failed, tables):
        self.compiled = self._compile(tables)
        return []


class LetFlowScheme(EcmpScheme):
    """ECMP's rules and groups, each group a flowlet group: a new flowlet
    (its 5-tuple's flowlet-table entry silent for the flowlet timeout) takes
    a uniformly random live bucket, its later packets keep it (LetFlow,
    section 3). OpenFlow has no such group: only the simulator runs it
    (scheme_parameters.SIMULATOR_ONLY)."""
    name = 'letflow'

    def _compile(self, tables):
        timeout_us = self.conf['flowlet_timeout_us']
        return {name: (rules, [replace(g, kind='flowlet', flowlet_timeout_us=timeout_us) for g in groups])
                for name, (rules, groups) in super()._compile(tables).items()}


class ClassifierScheme(TwoLevelScheme):
    """Every pod switch sends a new flow's first packet to the controller,
    which keeps the flow on the least-loaded upward port and returns the
    packet through the new entry (nothing of the flow overtakes it); the
    counters tell the classifier which flows are ACK streams."""
    name = 'classifier'
    polled_roles = POD_ROLES
    resends_first_packet = True

    def __init__(self, topo, conf, log, clock):
        super().__init__(topo, conf, log, clock)
        self.classifier = FlowClassifier(self.topo, conf['max_moves'],
                                         conf['tolerance'] * self.capacity_bps)
        self.meters = {}

    def rules(self, switch):
        return [bypass_rule(self.topo, switch)] + new_flow_rules(to_table=False) \
            if self.is_pod_switch(switch) else []

    def new_flow(self, switch, flow):
        return [EntryChange(switch, flow_rule(flow, self.classifier.assign(switch, flow)))]

    def counters(self, switch, counters, now):
        self.classifier.update(switch, *read_counters(self.meters, switch, counters, now))
        return []

    def _entries(self, moves):
        changes = []
        for move in moves:
            self.log.info('classifier: %s %s port %s -> %s', move.switch, move.flow,
                          move.old_port, move.new_port)
            changes.append(EntryChange(move.switch, flow_rule(move.flow, move.new_port)))
        return changes

    def tick(self):
        return self._entries(self.classifier.rebalance())

    def links_changed(self, failed, tables):
        return self._entries(self.classifier.set_failures(avoidance(self.topo, failed)))

    def state(self):
        return {'switches': self.classifier.state()}


class SchedulerScheme(TwoLevelScheme):
    """Edge switches give every new upward flow a counted entry that leaves
    it on the two-level path (a copy of its first packet tells the
    controller, forwarding does not wait); data streams past the threshold
    are reported to the central scheduler, whose placements overwrite the
    entries on the source pod's switches. ACK streams are never reported."""
    name = 'scheduler'
    polled_roles = ('edge',)

    def __init__(self, topo, conf, log, clock):
        super().__init__(topo, conf, log, clock)
        self.scheduler = FlowScheduler(self.topo, conf['gc_timeout'], clock,
                                       rearrange=conf['rearrange'])
        self.threshold_bps = conf['threshold'] * self.capacity_bps
        self.meters = {}
        self.rates = {}  # edge -> {flow: bit/s} as last measured
        self.acks = {}  # edge -> the ACK streams among them
        self.failed = frozenset()

    def rules(self, switch):
        if self.topo.node(switch).role != 'edge':
            return []
        return [bypass_rule(self.topo, switch)] + new_flow_rules(to_table=True)

    def _placed_port(self, switch, flow):
        placement = self.scheduler.placements.get(flow)
        return dict(placement.ports).get(switch) if placement else None

    def new_flow(self, switch, flow):
        return [EntryChange(switch, flow_rule(flow, self._placed_port(switch, flow)))]

    def _install(self, placement, old_ports=None):
        """A placement's entries; entries a moved flow no longer uses go."""
        self.log.info('scheduler: %s via %s', placement.flow, placement.via)
        changes = [EntryChange(switch, flow_rule(placement.flow, port))
                   for switch, port in placement.ports]
        return changes + self._unused(placement.flow, old_ports or {}, dict(placement.ports))

    @staticmethod
    def _unused(flow, old_ports, new_ports):
        return [EntryChange(switch, flow_rule(flow, port), remove=True)
                for switch, port in old_ports.items() if switch not in new_ports]

    def counters(self, switch, counters, now):
        rates, acks = read_counters(self.meters, switch, counters, now)
        self.rates[switch], self.acks[switch] = rates, acks
        changes = []
        for flow in reported_flows(rates, self.threshold_bps, self.scheduler.placements, acks):
            for placement in self.scheduler.notify(flow):
                old = self.scheduler.previous.get(placement.flow)
                changes += self._install(placement, dict(old.ports) if old else None)
        return changes

    def tick(self):
        for placement in self.scheduler.collect():
            # Its entries stay until idle: a flow that has ended sends
            # nothing, one that shrank keeps its path (no reordering).
            self.log.info('scheduler: %s released', placement.flow)
        return []

    def links_changed(self, failed, tables):
        changes = []
        for link in self.failed - failed:
            self.scheduler.link_up(*sorted(link))
        for link in failed - self.failed:
            before = dict(self.scheduler.placements)
            for change in self.scheduler.link_down(*sorted(link)):
                old_ports = dict(before[change.flow].ports)
                if change.placement is not None:
                    changes += self._install(change.placement, old_ports)
                else:  # back to the two-level path, which avoids the failure
                    self.log.info('scheduler: %s released (link down)', change.flow)
                    edge = before[change.flow].ports[0][0]
                    changes.append(EntryChange(edge, flow_rule(change.flow, None)))
                    changes += self._unused(change.flow, old_ports, {edge: None})
        self.failed = failed
        return changes

    def state(self):
        flows = {switch: [{'flow': str(f), 'rate_bps': r, 'large': r > self.threshold_bps,
                           'ack_stream': f in self.acks[switch]}
                          for f, r in sorted(rates.items())]
                 for switch, rates in sorted(self.rates.items()) if rates}
        return dict(self.scheduler.state(), threshold_bps=self.threshold_bps, edge_flows=flows)


SCHEMES = {cls.name: cls for cls in (TwoLevelScheme, EcmpScheme, ClassifierScheme, SchedulerScheme,
                                     LetFlowScheme)}
# The schemes with per-flow state: they read switches' counters and answer new flows.
DYNAMIC_SCHEMES = tuple(name for name, cls in SCHEMES.items() if cls.polled_roles)
