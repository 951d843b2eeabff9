"""Ryu app for the non-blocking reference switch (topologies.nonblocking):
ARP answered from the model, one /32 route per host.

    python -m controller.ryuapp.manager controller.fattree.nonblocking_switch_app --params '{"k": 4}'
"""
from controller.ryuapp.fabric_app import FabricApp
from controller.ryuapp.web import FabricViewMixin
from controller.openflow.rules import (
    DEC_TTL, ETH_TYPE_IP, PRIORITY_ROUTE_BASE, TABLE_PREFIX, FlowRule, housekeeping_rules, output)
from topologies.model import ofport
from topologies.nonblocking import SWITCH, NonBlocking


def switch_rules(topo):
    routes = [FlowRule(TABLE_PREFIX, PRIORITY_ROUTE_BASE + 32,
                       (('eth_type', ETH_TYPE_IP), ('ipv4_dst', topo.node(host).ip)),
                       (DEC_TTL, output(ofport(port))))
              for port in topo.ports(SWITCH) for host in [topo.peer(SWITCH, port)[0]]]
    return housekeeping_rules() + routes


class NonBlockingApp(FabricViewMixin, FabricApp):

    def build_topology(self, params):
        return NonBlocking(params.get('k', 4))

    def rules_for(self, switch):
        return switch_rules(self.topo)
