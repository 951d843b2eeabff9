"""Base Ryu app for every dcfabric fabric: the paper's central entity with
full knowledge of the topology.

A subclass gives the model (``build_topology``) and each switch's rules
(``rules_for``); this base identifies connecting switches by dpid, clears and
installs their whole state proactively (so a reconnecting switch or a
restarted controller ends with the same rules, no duplicates), and answers
ARP from the model so that nothing is ever flooded.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import arp, ethernet, packet
from ryu.ofproto import ofproto_v1_3

from controller.ryuapp import ofp
from controller.ryuapp.manager import fabric_params


class FabricApp(app_manager.RyuApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.params = fabric_params()
        self.topo = self.build_topology(self.params)
        self.datapaths = {}  # switch name -> connected datapath
        self.programmed = set()  # switches that acknowledged their full state (barrier reply)
        self._install_barriers = {}  # switch name -> xid of the barrier closing its install
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

    def install_switch(self, datapath, name):
        """Replace everything on the switch with its computed state."""
        datapath.send_msg(ofp.delete_all_flows(datapath))
        datapath.send_msg(ofp.delete_all_groups(datapath))
        for group in self.groups_for(name):
            datapath.send_msg(ofp.group_add(datapath, group))
        rules = self.rules_for(name)
        for rule in rules:
            datapath.send_msg(ofp.flow_add(datapath, rule))
        self.programmed.discard(name)
        barrier = ofp.barrier(datapath)
        datapath.send_msg(barrier)
        self._install_barriers[name] = barrier.xid
        self.logger.info('installed %d rules on %s (dpid %#x)', len(rules), name, datapath.id)

    def update_switch(self, datapath, old, new):
        """Move a switch from state ``old`` to ``new`` ((rules, groups) each)
        by difference only, so traffic on unchanged entries never blinks:
        new groups first, then added or changed rules, then removed rules,
        then groups nothing uses any more."""
        old_rules, old_groups = old
        new_rules, new_groups = new
        old_by_id = {g.group_id: g for g in old_groups}
        new_by_id = {g.group_id: g for g in new_groups}
        for group_id, group in new_by_id.items():
            if group_id not in old_by_id:
                datapath.send_msg(ofp.group_add(datapath, group))
            elif old_by_id[group_id] != group:
                datapath.send_msg(ofp.group_modify(datapath, group))
        for rule in set(new_rules) - set(old_rules):
            datapath.send_msg(ofp.flow_add(datapath, rule))
        kept = {(r.table, r.priority, r.match) for r in new_rules}
        for rule in old_rules:
            if (rule.table, rule.priority, rule.match) not in kept:
                datapath.send_msg(ofp.flow_delete_strict(datapath, rule))
        for group_id in set(old_by_id) - set(new_by_id):
            datapath.send_msg(ofp.group_delete(datapath, group_id))
        datapath.send_msg(ofp.barrier(datapath))

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def _switch_features(self, ev):
        datapath = ev.msg.datapath
        node = self.topo.by_dpid(datapath.id)
        if node is None:
            self.logger.warning('unknown dpid %#x is not in %s: left alone', datapath.id, self.topo.name)
            return
        self.datapaths[node.name] = datapath
        self.install_switch(datapath, node.name)

    @set_ev_cls(ofp_event.EventOFPBarrierReply, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def _barrier_reply(self, ev):
        node = self.topo.by_dpid(ev.msg.datapath.id)
        if node is not None and self._install_barriers.get(node.name) == ev.msg.xid:
            del self._install_barriers[node.name]
            self.programmed.add(node.name)

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def _switch_gone(self, ev):
        node = self.topo.by_dpid(ev.datapath.id) if ev.datapath.id is not None else None
        if node is not None and self.datapaths.get(node.name) is ev.datapath:
            del self.datapaths[node.name]
            self.programmed.discard(node.name)
            self.logger.info('%s disconnected', node.name)

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
