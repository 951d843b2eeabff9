"""Ryu app for the non-blocking reference switch (topologies.nonblocking):
ARP answered from the model, one /32 route per host.

    python -m controller.ryuapp.manager controller.fattree.nonblocking_switch_app --params '{"k": 4}'
"""
from controller.ryuapp.fabric_app import FabricApp
from controller.ryuapp.web import FabricViewMixin
from controller.fattree.pipeline import nonblocking_rules
from topologies.nonblocking import NonBlocking


class NonBlockingApp(FabricViewMixin, FabricApp):

    def build_topology(self, params):
        return NonBlocking(params.get('k', 4))

    def rules_for(self, switch):
        return nonblocking_rules(self.topo)
