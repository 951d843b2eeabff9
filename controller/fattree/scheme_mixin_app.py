"""The fat-tree's routing schemes on the Ryu side, chosen at controller start
with the ``scheme`` parameter (names and parameters: controller.fattree.scheme_parameters):

    python -m controller.ryuapp.manager controller.fattree.routing_app --params \\
        '{"k": 4, "scheme": "scheduler", "link_mbps": 10}'

``SchemeMixin`` gives the app its scheme (the pure strategy of
controller.fattree.scheme_strategies), sends the per-flow entries the scheme decides,
runs the counter-polling loop (per-flow counters for the dynamic schemes,
port counters for link loads in all) and serves the REST state view
(controller.ryuapp.rest). It only turns decisions into flow-mods and
packets and counters back into calls.
"""
import time

from ryu.app.wsgi import WSGIApplication
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.lib import hub
from ryu.lib.packet import ipv4, packet, tcp, udp

from controller.fattree.classifier import FlowKey, RateMeter
from controller.fattree.scheme_parameters import SchemeParameterError, scheme_config
from controller.fattree.scheme_table0_rules import COOKIE_FLOW, flow_of_match
from controller.fattree.scheme_strategies import SCHEMES
from controller.openflow.diff import ADD_FLOW, DELETE_FLOW
from controller.openflow.rules import TABLE_FLOWS
from controller.ryuapp import ofp
from controller.ryuapp.rest import VIEW_KEY, FatTreeRest, StateView
from topologies.model import model_port


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
        self.scheme = SCHEMES[self.scheme_conf['scheme']](
            self.topo, self.scheme_conf, self.logger, time.monotonic)
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

    def apply_entry_changes(self, changes):
        """Send the per-flow entries a scheme decided (controller.fattree.scheme_strategies.EntryChange),
        one batch per switch confirmed by a barrier."""
        batches = {}
        for change in changes:
            datapath = self.datapaths.get(change.switch)
            if datapath is None:
                continue
            if change.remove:
                item = (ofp.flow_delete_strict(datapath, change.rule), (DELETE_FLOW, change.rule))
            else:
                item = (ofp.flow_add(datapath, change.rule, idle_timeout=self.scheme_conf['flow_idle']),
                        (ADD_FLOW, change.rule))
            batches.setdefault(change.switch, []).append(item)
        for switch, items in batches.items():
            self.send_batch(switch, items)

    def observed_state(self):
        """The live view's overlay (controller.ryuapp.web): the links the
        broadcast avoids and the central scheduler's reservations."""
        state = {'avoided': [sorted(link) for link in self.failed]}
        if self.scheme.name == 'scheduler':
            scheduler = self.scheme.scheduler
            state['reserved'] = [(a, b, str(flow)) for (a, b), flow in sorted(scheduler.reserved.items())]
            state['scheduler'] = {'placed': len(scheduler.placements), 'reserved': len(scheduler.reserved),
                                  'rejected': len(scheduler.rejected)}
        return state

    def scheme_links_changed(self, failed, tables):
        self.apply_entry_changes(self.scheme.links_changed(failed, tables))

    def _poll_loop(self):
        while True:
            hub.sleep(self.scheme_conf['period'])
            try:
                self.apply_entry_changes(self.scheme.tick())
                for name, datapath in list(self.datapaths.items()):
                    if self.topo.node(name).role in self.scheme.polled_roles:
                        datapath.send_msg(ofp.flow_stats_request(datapath, TABLE_FLOWS, COOKIE_FLOW))
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
        if flow is None:
            return
        self.apply_entry_changes(self.scheme.new_flow(switch, flow))
        if self.scheme.resends_first_packet:
            ev.msg.datapath.send_msg(ofp.packet_out_table(ev.msg.datapath, ev.msg.data))

    @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
    def _scheme_flow_stats(self, ev):
        switch = self._switch_name(ev.msg.datapath)
        if switch is None:
            return
        gathered = self._flow_replies.setdefault(switch, {})
        for stat in ev.msg.body:
            if stat.cookie == COOKIE_FLOW:
                gathered[flow_of_match(stat.match)] = (
                    stat.byte_count, stat.packet_count, stat.duration_sec + stat.duration_nsec / 1e9)
        if not ofp.more_replies_follow(ev.msg):
            self.apply_entry_changes(
                self.scheme.counters(switch, self._flow_replies.pop(switch), time.monotonic()))

    @set_ev_cls(ofp_event.EventOFPPortStatsReply, MAIN_DISPATCHER)
    def _scheme_port_stats(self, ev):
        switch = self._switch_name(ev.msg.datapath)
        if switch is None:
            return
        counters = {}
        for stat in ev.msg.body:
            if ofp.is_switch_port(stat.port_no):
                peer = self.topo.peer(switch, model_port(stat.port_no))
                if peer is not None:
                    counters['%s->%s' % (switch, peer[0])] = (
                        stat.tx_bytes, stat.duration_sec + stat.duration_nsec / 1e9)
        rates = self._port_meters.setdefault(switch, RateMeter()).update(time.monotonic(), counters)
        self.link_loads.update(rates)
