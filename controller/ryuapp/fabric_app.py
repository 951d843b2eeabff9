"""Base Ryu app for every dcfabric fabric: the paper's central entity with
full knowledge of the topology.

A subclass gives the model (``build_topology``) and each switch's rules
(``rules_for``); this base identifies connecting switches by dpid, clears and
installs their whole state proactively (so a reconnecting switch or a
restarted controller ends with the same rules, no duplicates), moves a switch
to a changed state by the ordered diff (``push_switch``), and answers ARP
from the model so that nothing is ever flooded.

Every batch of table changes ends with a barrier, and a switch's state
counts only once the barrier is answered with no OpenFlow error against it
(``self.confirmations``, controller.openflow.confirmations); an error is
logged with the message it rejects. ``update_switches`` moves several
switches to their computed state downstream first, stage by stage, each
stage confirmed by its barriers before the next (controller.openflow.staging),
and ``stage_settle_ms`` later: Open vSwitch answers a barrier once its
OpenFlow tables hold the batch, but brings the datapath flows it has cached
(megaflows translated from the old tables) up to date afterwards, in its
revalidator threads. Sent at once, the next stage could steer packets onto a
switch whose cache still holds the old way, which drops them.
Every port's carrier and liveness go to
one tracker (``self.ports``, controller.openflow.port_states) that routing,
the live view and the metrics all read; ``port_changed`` tells subclasses.
"""
import time

from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib import hub
from ryu.lib.packet import arp, ethernet, packet
from ryu.ofproto import ofproto_v1_3

from controller.openflow.confirmations import Confirmations
from controller.openflow.diff import ordered_diff
from controller.openflow.port_states import PortStates
from controller.openflow.staging import update_stages
from controller.ryuapp import ofp
from controller.ryuapp.manager import fabric_params
from topologies.model import model_port


class FabricApp(app_manager.RyuApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
    STAGE_TIMEOUT_S = 10  # a switch that never answers its barrier holds up the next stage this long
    # Between stages, after the barriers (module docstring). At 0, 10 of 12 runs of
    # tests/emulation/test_consistent_updates.py lost a packet after a recovery (k=4,
    # 2 cores; `ovs-appctl upcall/show`: a revalidator pass took 1 ms once started).
    STAGE_SETTLE_MS = 50

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.params = fabric_params()
        self.topo = self.build_topology(self.params)
        self.datapaths = {}  # switch name -> connected datapath
        self.installed = {}  # switch name -> (rules, groups) last sent to it
        self._barriers = {}  # (switch name, xid) -> hub.Event set by that barrier's reply
        self._port_age_requests = {}  # switch name -> xid of the port statistics asked for when it connected
        self.confirmations = Confirmations(time.time)
        # a port whose BFD is not up yet is coming up, not failed, for this long after start-up stalls
        self.ports = PortStates(self.topo, grace_s=self.params.get('bfd_grace_s', 30.0))
        self.updating = False  # a staged update is under way
        self.stage_settle_s = self.params.get('stage_settle_ms', self.STAGE_SETTLE_MS) / 1000.0
        if self.stage_settle_s < 0:
            raise ValueError('stage_settle_ms must not be negative, got %r' % self.params['stage_settle_ms'])
        self._update_due = False  # the computed state changed since the update planned its stages
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

    def send_batch(self, name, items, whole_state=False):
        """Send switch ``name`` the messages ``items`` [(Ryu message or
        ofp.diff_messages' bytes, what it carries)] and a barrier in one
        buffer (ofp.encode_batch), keeping them by xid until the barrier's
        reply (controller.openflow.confirmations). Returns a hub.Event set
        once that reply came, or None when the switch is not connected."""
        datapath = self.datapaths.get(name)
        if datapath is None:
            return None
        buffer, kept, barrier_xid = ofp.encode_batch(datapath, items)
        # kept before sending: the reply may come at once
        self.confirmations.sent(name, kept, barrier_xid, whole_state=whole_state)
        self._barriers[(name, barrier_xid)] = confirmed = hub.Event()
        datapath.send(buffer)
        return confirmed

    def install_switch(self, datapath, name):
        """Replace everything on the switch with its computed state, and
        ask for its ports and how long each has been there."""
        rules, groups = self.rules_for(name), self.groups_for(name)
        self.installed[name] = (rules, groups)
        self.send_batch(name, ofp.whole_state_messages(datapath, ordered_diff((), rules, (), groups)),
                        whole_state=True)
        datapath.send_msg(ofp.port_desc_request(datapath))
        ages = ofp.port_stats_request(datapath)
        datapath.set_xid(ages)
        self._port_age_requests[name] = ages.xid
        datapath.send_msg(ages)
        self.logger.info('installed %d rules on %s (dpid %#x)', len(rules), name, datapath.id)

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
        return ops, self.send_batch(name, ofp.diff_messages(ops))

    def update_switches(self):
        """Bring every connected switch whose computed state differs from
        what it holds to that state, in stages, downstream first; a call
        while an update runs makes it plan again before its next stage."""
        self._update_due = True
        if not self.updating:
            self.updating = True
            hub.spawn(self._update_in_stages)

    def _update_in_stages(self):
        try:
            while self._update_due:
                self._update_due = False
                new = {name: (self.rules_for(name), self.groups_for(name)) for name in self.datapaths}
                new = {name: state for name, state in new.items() if state != self.installed[name]}
                # events go on between switches while the plan is made
                plan = update_stages(self.topo, self.installed, new, between=lambda: hub.sleep(0))
                self.logger.info('updating in %d stages: %s', len(plan), ' | '.join(' '.join(s) for s in plan))
                for index, stage in enumerate(plan):
                    if self._update_due:
                        break  # a newer state: plan what is left again
                    if index:
                        hub.sleep(self.stage_settle_s)  # the previous stage's datapath caches follow its tables
                    self._push_stage(stage)
        except Exception:  # the next change must still find the updater free
            self.logger.exception('staged update failed')
        finally:
            self.updating = False

    def _push_stage(self, stage):
        pushed = [(name, self.push_switch(name)) for name in stage]
        deadline = time.monotonic() + self.STAGE_TIMEOUT_S
        late = [name for name, sent in pushed
                if sent is not None and not sent[1].wait(max(0.0, deadline - time.monotonic()))]
        if late:
            self.logger.warning('no barrier reply from %s within %d s: next stage sent anyway',
                                ' '.join(late), self.STAGE_TIMEOUT_S)

    def port_changed(self, switch, port, before):
        """The tracker took a new state of ``switch``'s OpenFlow port
        ``port``; it was ``before`` ({'carrier', 'live'}, None when first heard of)."""

    def openflow_error(self, record):
        """A switch reported an OpenFlow error (controller.openflow.confirmations.Confirmations.error)."""

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
            self.confirmations.disconnected(node.name)
            self._barriers = {key: event for key, event in self._barriers.items() if key[0] != node.name}
            self.logger.info('%s disconnected', node.name)

    def _switch_of(self, datapath):
        """The model's name of a connected switch, or None (unknown, or replaced by a newer connection)."""
        node = self.topo.by_dpid(datapath.id) if datapath.id is not None else None
        return node.name if node is not None and self.datapaths.get(node.name) is datapath else None

    @set_ev_cls(ofp_event.EventOFPBarrierReply, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def _barrier_reply(self, ev):
        name = self._switch_of(ev.msg.datapath)
        if name is None:
            return
        self.confirmations.barrier_reply(name, ev.msg.xid)
        confirmed = self._barriers.pop((name, ev.msg.xid), None)
        if confirmed is not None:
            confirmed.set()

    @set_ev_cls(ofp_event.EventOFPErrorMsg, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def _error(self, ev):
        msg = ev.msg
        node = self.topo.by_dpid(msg.datapath.id) if msg.datapath.id is not None else None
        name = node.name if node is not None else '%#x' % (msg.datapath.id or 0)
        record = self.confirmations.error(name, msg.xid, ofp.error_name(msg.type, msg.code))
        self.logger.error('%s rejected xid %d with %s: %s', name, msg.xid, record['error'],
                          record['message'] or 'a message not awaiting a barrier (data %s)' % msg.data.hex())
        self.openflow_error(record)

    def _port_reported(self, datapath, desc):
        name = self._switch_of(datapath)
        if name is None or not ofp.is_switch_port(desc.port_no):
            return
        carrier, live = ofp.port_liveness(desc)
        before = self.ports.state(name, model_port(desc.port_no))
        if self.ports.update(name, model_port(desc.port_no), carrier, live, time.time()):
            self.port_changed(name, desc.port_no, before)

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def _port_status(self, ev):
        self._port_reported(ev.msg.datapath, ev.msg.desc)

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def _port_desc(self, ev):
        for desc in ev.msg.body:
            self._port_reported(ev.msg.datapath, desc)

    @set_ev_cls(ofp_event.EventOFPPortStatsReply, MAIN_DISPATCHER)
    def _port_ages(self, ev):
        """How long each port had been in its switch when it connected
        (the one reply install_switch asked for; the live view's polls are
        not start-up news)."""
        name = self._switch_of(ev.msg.datapath)
        if name is None or self._port_age_requests.get(name) != ev.msg.xid:
            return
        if not ev.msg.flags & ev.msg.datapath.ofproto.OFPMPF_REPLY_MORE:
            del self._port_age_requests[name]
        for stat in ev.msg.body:
            if ofp.is_switch_port(stat.port_no):
                port = model_port(stat.port_no)
                if self.ports.port_age(name, port, stat.duration_sec + stat.duration_nsec / 1e9):
                    self.port_changed(name, stat.port_no, self.ports.state(name, port))

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
