"""Base Ryu app for every dcfabric fabric: the paper's central entity with
full knowledge of the topology.

A subclass gives the model (``build_topology``) and each switch's rules
(``rules_for``); this base identifies connecting switches by dpid, clears and
installs their whole state proactively (so a reconnecting switch or a
restarted controller ends with the same rules, no duplicates), moves a switch
to a changed state by the ordered diff (``push_switch``), and answers ARP
from the model so that nothing is ever flooded.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib import hub
from ryu.lib.packet import arp, ethernet, packet
from ryu.ofproto import ofproto_v1_3

from controller.openflow.diff import ordered_diff
from controller.ryuapp import ofp
from controller.ryuapp.manager import fabric_params


class FabricApp(app_manager.RyuApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.params = fabric_params()
        self.topo = self.build_topology(self.params)
        self.datapaths = {}  # switch name -> connected datapath
        self.installed = {}  # switch name -> (rules, groups) last sent to it
        self._barriers = {}  # (dpid, xid) -> hub.Event set by that barrier's reply
        self.programmed = set()  # switches that acknowledged their full state (barrier reply)
        self.logger.info('dcfabric: %s, %d switches, %d hosts', self.topo.name,
                         len(self.topo.switches), len(self.topo.hosts))

    def build_topology(self, params):
        raise NotImplementedError

    def rules_for(self, switch):
        """The FlowRules of one switch (plain data, controller.openflow.rules)."""
        raise NotImplementedError

    def groups_for(self, switch):
        """The Groups of one switch (plain data, controller.openflow.rules); none by default."""
        return []

    def send_diff(self, datapath, ops):
        """Send an ordered diff (controller.openflow.diff) and a barrier;
        returns a hub.Event set when the barrier's reply confirms it all."""
        messages = ofp.diff_messages(datapath, ops)
        barrier = messages[-1]
        datapath.set_xid(barrier)  # before sending: the reply may come at once
        self._barriers[(datapath.id, barrier.xid)] = confirmed = hub.Event()
        for message in messages:
            datapath.send_msg(message)
        return confirmed

    def install_switch(self, datapath, name):
        """Replace everything on the switch with its computed state."""
        datapath.send_msg(ofp.delete_all_flows(datapath))
        datapath.send_msg(ofp.delete_all_groups(datapath))
        rules, groups = self.rules_for(name), self.groups_for(name)
        self.installed[name] = (rules, groups)
        self.programmed.discard(name)
        confirmed = self.send_diff(datapath, ordered_diff((), rules, (), groups))
        hub.spawn(self._programmed_when, name, datapath, confirmed)
        self.logger.info('installed %d rules on %s (dpid %#x)', len(rules), name, datapath.id)

    def _programmed_when(self, name, datapath, confirmed):
        confirmed.wait()
        if self.datapaths.get(name) is datapath:
            self.programmed.add(name)

    def push_switch(self, name):
        """Move a connected switch from what it holds to its current state
        by difference only, so traffic on unchanged entries never blinks.
        Returns (the ops sent, hub.Event set once the switch confirmed
        them), or None when the switch is not connected (it gets its whole
        state when it connects)."""
        datapath = self.datapaths.get(name)
        if datapath is None:
            return None
        rules, groups = self.rules_for(name), self.groups_for(name)
        old_rules, old_groups = self.installed[name]
        ops = ordered_diff(old_rules, rules, old_groups, groups)
        self.installed[name] = (rules, groups)
        return ops, self.send_diff(datapath, ops)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def _switch_features(self, ev):
        datapath = ev.msg.datapath
        node = self.topo.by_dpid(datapath.id)
        if node is None:
            self.logger.warning('unknown dpid %#x is not in %s: left alone', datapath.id, self.topo.name)
            return
        self.datapaths[node.name] = datapath
        self.install_switch(datapath, node.name)

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def _switch_gone(self, ev):
        node = self.topo.by_dpid(ev.datapath.id) if ev.datapath.id is not None else None
        if node is not None and self.datapaths.get(node.name) is ev.datapath:
            del self.datapaths[node.name]
            self.programmed.discard(node.name)
            self.logger.info('%s disconnected', node.name)
        self._barriers = {key: event for key, event in self._barriers.items()
                          if key[0] != ev.datapath.id}

    @set_ev_cls(ofp_event.EventOFPBarrierReply, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def _barrier_reply(self, ev):
        confirmed = self._barriers.pop((ev.msg.datapath.id, ev.msg.xid), None)
        if confirmed is not None:
            confirmed.set()

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def _packet_in(self, ev):
        msg = ev.msg
        pkt = packet.Packet(msg.data)
        request = pkt.get_protocol(arp.arp)
        if request is None:
            return
        if request.opcode != arp.ARP_REQUEST:
            return
        target = self.topo.by_ip(request.dst_ip)
        if target is None:
            self.logger.info('ARP for %s: not in %s, no answer', request.dst_ip, self.topo.name)
            return
        reply = packet.Packet()
        reply.add_protocol(ethernet.ethernet(ethertype=ethernet.ether.ETH_TYPE_ARP,
                                             dst=request.src_mac, src=target.mac))
        reply.add_protocol(arp.arp(opcode=arp.ARP_REPLY, src_mac=target.mac, src_ip=target.ip,
                                   dst_mac=request.src_mac, dst_ip=request.src_ip))
        reply.serialize()
        msg.datapath.send_msg(ofp.packet_out(msg.datapath, msg.match['in_port'], reply.data))
