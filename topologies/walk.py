"""Hop-by-hop walk of computed forwarding state over a topology model.

Any fabric's routing logic is exposed as ``forward(switch, in_port, dst_ip) ->
out_port or None``; the walk follows the cabling from the source host and
returns the switch hops, or raises naming where the packet was lost.
"""


class RoutingError(Exception):
    """A packet was dropped, misdelivered or looped."""


def walk(topo, forward, src_host, dst_host, max_hops=64):
    """[(switch, out_port), ...] from src_host to dst_host (model ports)."""
    dst_ip = topo.node(dst_host).ip
    node, in_port = topo.host_attachment(src_host)
    hops, seen = [], set()
    while True:
        if (node, in_port) in seen or len(hops) >= max_hops:
            raise RoutingError('%s -> %s loops: %s' % (src_host, dst_host, hops))
        seen.add((node, in_port))
        out_port = forward(node, in_port, dst_ip)
        if out_port is None:
            raise RoutingError('%s -> %s dropped at %s (hops %s)' % (src_host, dst_host, node, hops))
        hops.append((node, out_port))
        peer = topo.peer(node, out_port)
        if peer is None:
            raise RoutingError('%s -> %s sent to uncabled port %s:%d' % (src_host, dst_host, node, out_port))
        node, in_port = peer
        if topo.nodes[node].is_host:
            if node != dst_host:
                raise RoutingError('%s -> %s delivered to %s' % (src_host, dst_host, node))
            return hops
