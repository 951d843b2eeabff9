"""A topology model under other node names: same addresses, dpids and ports.

The controller knows switches by dpid, so a fabric can run in Mininet under
prefixed names (its interfaces then never collide with another emulation of
the same topology on the machine) while the controller keeps the model's
own names.
"""
from dataclasses import replace

from topologies.model import Topology


def renamed(topo, prefix):
    """A copy of ``topo`` whose every node name is ``prefix`` + name."""
    copy = Topology('%s as %s*' % (topo.name, prefix))
    for node in topo.nodes.values():
        copy.add_node(replace(node, name=prefix + node.name))
    for link in topo.links:
        copy.add_link(prefix + link.node_a, link.port_a, prefix + link.node_b, link.port_b)
    return copy
