"""Ryu app: the fat-tree's central routing entity (Al-Fares et al. 3.5).

Start it with ``dcfabric controller --k K`` (or
``python -m controller.manager controller.fattree_app --params '{"k": K}'``).
"""
from controller.fabric_app import FabricApp
from controller.fattree_rules import compile_table
from controller.twolevel import switch_table
from topologies.fattree import FatTree


class FatTreeApp(FabricApp):

    def build_topology(self, params):
        return FatTree(params.get('k', 4))

    def rules_for(self, switch):
        return compile_table(switch_table(self.topo, switch))
