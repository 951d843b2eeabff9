"""The fat-tree's routing schemes on the Ryu side, chosen at controller start
with the ``scheme`` parameter (names and parameters: controller.fattree.scheme_params):

    python -m controller.ryuapp.manager controller.fattree.app --params \\
        '{"k": 4, "scheme": "scheduler", "link_mbps": 10}'

``SchemeMixin`` gives the app the scheme, the counter-polling loop (per-flow
counters for the dynamic schemes, port counters for link loads in all) and
the REST state view (controller.ryuapp.rest). The decisions themselves are
pure (controller.fattree.classifier, controller.fattree.scheduler); this module
only turns them into flow-mods and counters back into calls.
"""
import time

from ryu.app.wsgi import WSGIApplication
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.lib import hub
from ryu.lib.packet import ipv4, packet, tcp, udp
from ryu.ofproto import ofproto_v1_3 as ofproto

from controller.ryuapp import ofp
from controller.fattree.failover import avoidance
from controller.ryuapp.rest import VIEW_KEY, FatTreeRest, StateView
from controller.fattree.classifier import FlowClassifier, FlowKey, RateMeter
from controller.fattree.scheduler import FlowScheduler, reported_flows
from controller.fattree.scheme_rules import (
    COOKIE_FLOW, bypass_rule, ecmp_group, ecmp_rule, flow_of_match, flow_rule, new_flow_rules)
from controller.fattree.scheme_params import SchemeParameterError, scheme_config
from topologies.model import model_port

POD_ROLES = ('edge', 'aggregation')


class TwoLevelScheme:
    """No per-flow state: the two-level tables alone. The base of the others."""
    name = 'twolevel'
    polled_roles = ()  # switches whose per-flow counters are read

    def __init__(self, app, conf):
        self.app, self.topo, self.conf = app, app.topo, conf
        self.capacity_bps = conf['link_mbps'] * 1e6

    def is_pod_switch(self, switch):
        return self.topo.node(switch).role in POD_ROLES

    def rules(self, switch):
        return []

    def groups(self, switch):
        return []

    def new_flow(self, switch, flow, msg):
        """The first packet of an unknown upward flow reached the controller."""

    def counters(self, switch, counters, now):
        """Per-flow {FlowKey: (bytes, age)} of one polled switch."""

    def tick(self):
        """One rebalancing/scheduling round, before the next poll."""

    def links_changed(self, failed):
        """The set of failed links (frozensets of two switch names) changed."""

    def state(self):
        return {}


class EcmpScheme(TwoLevelScheme):
    name = 'ecmp'

    def rules(self, switch):
        return [bypass_rule(self.topo, switch), ecmp_rule()] if self.is_pod_switch(switch) else []

    def groups(self, switch):
        return [ecmp_group(self.topo, switch)] if self.is_pod_switch(switch) else []


class ClassifierScheme(TwoLevelScheme):
    """Every pod switch sends a new flow's first packet to the controller,
    which keeps the flow on the least-loaded upward port and returns the
    packet through the new entry (nothing of the flow overtakes it)."""
    name = 'classifier'
    polled_roles = POD_ROLES

    def __init__(self, app, conf):
        super().__init__(app, conf)
        self.classifier = FlowClassifier(self.topo, conf['max_moves'],
                                         conf['tolerance'] * self.capacity_bps)
        self.meters = {}

    def rules(self, switch):
        return [bypass_rule(self.topo, switch)] + new_flow_rules(to_table=False) \
            if self.is_pod_switch(switch) else []

    def new_flow(self, switch, flow, msg):
        port = self.classifier.assign(switch, flow)
        self.app.install_flow(switch, flow_rule(flow, port))
        msg.datapath.send_msg(ofp.packet_out_table(msg.datapath, msg.data))

    def counters(self, switch, counters, now):
        rates = self.meters.setdefault(switch, RateMeter()).update(now, counters)
        self.classifier.update(switch, rates)

    def _apply(self, moves):
        for move in moves:
            self.app.logger.info('classifier: %s %s port %s -> %s', move.switch, move.flow,
                                 move.old_port, move.new_port)
            self.app.install_flow(move.switch, flow_rule(move.flow, move.new_port))

    def tick(self):
        self._apply(self.classifier.rebalance())

    def links_changed(self, failed):
        self._apply(self.classifier.set_failures(avoidance(self.topo, failed)))

    def state(self):
        return {'switches': self.classifier.state()}


class SchedulerScheme(TwoLevelScheme):
    """Edge switches give every new upward flow a counted entry that leaves
    it on the two-level path (a copy of its first packet tells the
    controller, forwarding does not wait); flows past the threshold are
    reported to the central scheduler, whose placements overwrite the
    entries on the source pod's switches."""
    name = 'scheduler'
    polled_roles = ('edge',)

    def __init__(self, app, conf):
        super().__init__(app, conf)
        self.scheduler = FlowScheduler(self.topo, conf['gc_timeout'], time.monotonic,
                                       rearrange=conf['rearrange'])
        self.threshold_bps = conf['threshold'] * self.capacity_bps
        self.meters = {}
        self.rates = {}  # edge -> {flow: bit/s} as last measured
        self.failed = frozenset()

    def rules(self, switch):
        if self.topo.node(switch).role != 'edge':
            return []
        return [bypass_rule(self.topo, switch)] + new_flow_rules(to_table=True)

    def _placed_port(self, switch, flow):
        placement = self.scheduler.placements.get(flow)
        return dict(placement.ports).get(switch) if placement else None

    def new_flow(self, switch, flow, msg):
        self.app.install_flow(switch, flow_rule(flow, self._placed_port(switch, flow)))

    def _install(self, placement, old_ports=None):
        """Install a placement; entries a moved flow no longer uses go."""
        self.app.logger.info('scheduler: %s via %s', placement.flow, placement.via)
        for switch, port in placement.ports:
            self.app.install_flow(switch, flow_rule(placement.flow, port))
        self._remove_unused(placement.flow, old_ports or {}, dict(placement.ports))

    def _remove_unused(self, flow, old_ports, new_ports):
        for switch, port in old_ports.items():
            if switch not in new_ports:
                self.app.remove_flow(switch, flow_rule(flow, port))

    def counters(self, switch, counters, now):
        rates = self.meters.setdefault(switch, RateMeter()).update(now, counters)
        self.rates[switch] = rates
        for flow in reported_flows(rates, self.threshold_bps, self.scheduler.placements):
            before = dict(self.scheduler.placements)
            for placement in self.scheduler.notify(flow):
                old = before.get(placement.flow)
                self._install(placement, dict(old.ports) if old else None)

    def tick(self):
        for placement in self.scheduler.collect():
            # Its entries stay until idle: a flow that has ended sends
            # nothing, one that shrank keeps its path (no reordering).
            self.app.logger.info('scheduler: %s released', placement.flow)

    def links_changed(self, failed):
        for link in self.failed - failed:
            self.scheduler.link_up(*sorted(link))
        for link in failed - self.failed:
            before = dict(self.scheduler.placements)
            for change in self.scheduler.link_down(*sorted(link)):
                old_ports = dict(before[change.flow].ports)
                if change.placement is not None:
                    self._install(change.placement, old_ports)
                else:  # back to the two-level path, which avoids the failure
                    self.app.logger.info('scheduler: %s released (link down)', change.flow)
                    edge = before[change.flow].ports[0][0]
                    self.app.install_flow(edge, flow_rule(change.flow, None))
                    self._remove_unused(change.flow, old_ports, {edge: None})
        self.failed = failed

    def state(self):
        flows = {switch: [{'flow': str(f), 'rate_bps': r, 'large': r > self.threshold_bps}
                          for f, r in sorted(rates.items())]
                 for switch, rates in sorted(self.rates.items()) if rates}
        return dict(self.scheduler.state(), threshold_bps=self.threshold_bps, edge_flows=flows)


SCHEMES = {cls.name: cls for cls in (TwoLevelScheme, EcmpScheme, ClassifierScheme, SchedulerScheme)}


def packet_flow(data):
    """The FlowKey of a TCP/UDP-over-IPv4 packet, else None."""
    pkt = packet.Packet(data)
    ip = pkt.get_protocol(ipv4.ipv4)
    l4 = pkt.get_protocol(tcp.tcp) or pkt.get_protocol(udp.udp)
    if ip is None or l4 is None:
        return None
    return FlowKey(ip.src, ip.dst, ip.proto, l4.dst_port)


class SchemeMixin:
    """Mixed into the fat-tree app before FabricApp: the scheme (``self.scheme``),
    per-flow entry installation, counter polling, link loads and the REST
    state view (``self.state_view.register(name, callable)`` adds a section)."""
    _CONTEXTS = {'wsgi': WSGIApplication}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        try:
            self.scheme_conf = scheme_config(self.params)
        except SchemeParameterError as err:
            self.logger.error('dcfabric: %s', err)  # the log is where a launcher looks
            raise
        self.scheme = SCHEMES[self.scheme_conf['scheme']](self, self.scheme_conf)
        self._flow_replies = {}  # switch -> counters gathered from multipart replies
        self._port_meters = {}
        self.link_loads = {}  # 'a->b' -> bit/s sent from a to b
        self.state_view = StateView()
        self.state_view.register('scheme', lambda: dict(self.scheme_conf))
        self.state_view.register('flows', self.scheme.state)
        self.state_view.register('link_loads', lambda: dict(sorted(self.link_loads.items())))
        self.state_view.register('switches', lambda: sorted(self.datapaths))
        kwargs['wsgi'].register(FatTreeRest, {VIEW_KEY: self.state_view})
        self.logger.info('fat-tree routing scheme: %s', self.scheme.name)
        hub.spawn(self._poll_loop)

    def observed_state(self):
        """The live view's overlay (controller.ryuapp.web): the links the
        broadcast avoids and the central scheduler's reservations."""
        state = {'avoided': [sorted(link) for link in self.failed]}
        if isinstance(self.scheme, SchedulerScheme):
            scheduler = self.scheme.scheduler
            state['reserved'] = [(a, b, str(flow)) for (a, b), flow in sorted(scheduler.reserved.items())]
            state['scheduler'] = {'placed': len(scheduler.placements), 'reserved': len(scheduler.reserved),
                                  'rejected': len(scheduler.rejected)}
        return state

    def install_flow(self, switch, rule):
        datapath = self.datapaths.get(switch)
        if datapath is not None:
            datapath.send_msg(ofp.flow_add(datapath, rule, idle_timeout=self.scheme_conf['flow_idle']))

    def remove_flow(self, switch, rule):
        datapath = self.datapaths.get(switch)
        if datapath is not None:
            datapath.send_msg(ofp.flow_delete_strict(datapath, rule))

    def _poll_loop(self):
        while True:
            hub.sleep(self.scheme_conf['period'])
            try:
                self.scheme.tick()
                for name, datapath in list(self.datapaths.items()):
                    if self.topo.node(name).role in self.scheme.polled_roles:
                        datapath.send_msg(ofp.flow_stats_request(datapath, 0, COOKIE_FLOW))
                    datapath.send_msg(ofp.port_stats_request(datapath))
            except Exception:  # one bad round must not end scheduling for good
                self.logger.exception('scheme round failed')

    def _switch_name(self, datapath):
        node = self.topo.by_dpid(datapath.id)
        return None if node is None else node.name

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def _scheme_packet_in(self, ev):
        switch = self._switch_name(ev.msg.datapath)
        flow = packet_flow(ev.msg.data) if switch else None
        if flow is not None:
            self.scheme.new_flow(switch, flow, ev.msg)

    @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
    def _scheme_flow_stats(self, ev):
        switch = self._switch_name(ev.msg.datapath)
        if switch is None:
            return
        gathered = self._flow_replies.setdefault(switch, {})
        for stat in ev.msg.body:
            if stat.cookie == COOKIE_FLOW:
                gathered[flow_of_match(stat.match)] = (
                    stat.byte_count, stat.duration_sec + stat.duration_nsec / 1e9)
        if not ofp.more_replies_follow(ev.msg):
            self.scheme.counters(switch, self._flow_replies.pop(switch), time.monotonic())

    @set_ev_cls(ofp_event.EventOFPPortStatsReply, MAIN_DISPATCHER)
    def _scheme_port_stats(self, ev):
        switch = self._switch_name(ev.msg.datapath)
        if switch is None:
            return
        counters = {}
        for stat in ev.msg.body:
            if stat.port_no <= ofproto.OFPP_MAX:
                peer = self.topo.peer(switch, model_port(stat.port_no))
                if peer is not None:
                    counters['%s->%s' % (switch, peer[0])] = (
                        stat.tx_bytes, stat.duration_sec + stat.duration_nsec / 1e9)
        rates = self._port_meters.setdefault(switch, RateMeter()).update(time.monotonic(), counters)
        self.link_loads.update(rates)
