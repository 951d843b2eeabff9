"""The fat-tree app with one invalid rule on one switch
(tests.ovs.test_openflow_errors), sent through the real path: ryu-manager,
the base app's batches, a real OVS; everything else is the real app's."""
from controller.fattree.routing_app import FatTreeApp
from tests.ovs.test_openflow_errors import INVALID_RULE, REJECTED_ON


class InvalidRuleApp(FatTreeApp):

    def rules_for(self, switch):
        return super().rules_for(switch) + ([INVALID_RULE] if switch == REJECTED_ON else [])
