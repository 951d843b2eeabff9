"""The k-ary fat-tree (Al-Fares et al.): two-level routing, flow
classification and scheduling, failure broadcast; ``app`` is its Ryu app."""

APP = 'controller.fattree.routing_app'
# The controller's REST state section that says when the fabric is programmed.
READY_PATH = '/fattree/state/ready'
