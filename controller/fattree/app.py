"""Ryu app: the fat-tree's central routing entity (Al-Fares et al. 3.5, 3.8).

Start it with ``dcfabric controller --k K`` (or
``python -m controller.ryuapp.manager controller.fattree.app --params '{"k": K}'``).

It tracks every switch port's carrier and liveness (OFPPS_LIVE: carrier and,
where enabled, BFD) from port-status messages; a switch-to-switch link is
failed while either end is not live. On every change it recomputes all
tables from the failure set (controller.fattree.failover) and pushes only the
differences; the switches' fast-failover groups have already repaired what
they could see locally.
"""
import time

from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.ofproto import ofproto_v1_3 as ofproto

from controller.ryuapp import ofp
from controller.ryuapp.fabric_app import FabricApp
from controller.ryuapp.web import FabricViewMixin
from controller.fattree.failover import link_key, tables_with_failures
from controller.fattree.pipeline import compile_table
from controller.fattree.schemes_app import SchemeMixin
from topologies.fattree import FatTree
from topologies.model import model_port


class FatTreeApp(SchemeMixin, FabricViewMixin, FabricApp):

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ports = {}  # (switch, model port) -> {'carrier': bool, 'live': bool}
        self.failed = frozenset()
        self.compiled = self.compile_all(self.failed)
        self.link_listeners = []  # callables(failed_links) told of every change
        self.link_listeners.append(self.scheme.links_changed)
        self.state_view.register('links', self.link_state)

    def build_topology(self, params):
        return FatTree(params.get('k', 4))

    def compile_all(self, failed):
        return {name: compile_table(table)
                for name, table in tables_with_failures(self.topo, failed).items()}

    def rules_for(self, switch):
        return self.compiled[switch][0] + self.scheme.rules(switch)

    def groups_for(self, switch):
        return self.compiled[switch][1] + self.scheme.groups(switch)

    def install_switch(self, datapath, name):
        super().install_switch(datapath, name)
        datapath.send_msg(ofp.port_desc_request(datapath))

    def _port_state(self, switch, desc):
        port = model_port(desc.port_no)
        if self.topo.peer(switch, port) is None:
            return
        self.ports[(switch, port)] = {
            'carrier': not desc.state & ofproto.OFPPS_LINK_DOWN,
            'live': bool(desc.state & ofproto.OFPPS_LIVE) and not desc.state & ofproto.OFPPS_LINK_DOWN}

    def _port_is_up(self, switch, port):
        return self.ports.get((switch, port), {'live': True})['live']

    def failed_links(self):
        failed = set()
        for link in self.topo.switch_links():
            if not (self._port_is_up(link.node_a, link.port_a) and self._port_is_up(link.node_b, link.port_b)):
                failed.add(link_key(link.node_a, link.node_b))
        return frozenset(failed)

    def apply_failures(self):
        failed = self.failed_links()
        if failed == self.failed:
            return
        started = time.monotonic()
        old, new = self.compiled, self.compile_all(failed)
        self.failed, self.compiled = failed, new
        changed = [name for name in new if new[name] != old[name]]
        self.logger.info('failed links now %s; updating %s',
                         sorted('-'.join(sorted(l)) for l in failed) or 'none', ' '.join(changed) or 'nothing')
        for name in changed:
            datapath = self.datapaths.get(name)
            if datapath is not None:
                self.update_switch(datapath, old[name], new[name])
        self.observe_broadcast(failed, changed, time.monotonic() - started)
        for listener in self.link_listeners:
            listener(failed)

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def _port_status(self, ev):
        node = self.topo.by_dpid(ev.msg.datapath.id)
        if node is None:
            return
        self._port_state(node.name, ev.msg.desc)
        self.apply_failures()

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def _port_desc(self, ev):
        node = self.topo.by_dpid(ev.msg.datapath.id)
        if node is None:
            return
        for desc in ev.msg.body:
            if desc.port_no <= ofproto.OFPP_MAX:
                self._port_state(node.name, desc)
        self.apply_failures()

    def link_state(self):
        """Every switch-to-switch link with both ends' carrier and liveness."""
        rows = []
        for link in self.topo.switch_links():
            ends = [self.ports.get((link.node_a, link.port_a)), self.ports.get((link.node_b, link.port_b))]
            rows.append({'a': link.node_a, 'port_a': link.port_a, 'b': link.node_b, 'port_b': link.port_b,
                         'a_state': ends[0], 'b_state': ends[1],
                         'up': link_key(link.node_a, link.node_b) not in self.failed})
        return rows
