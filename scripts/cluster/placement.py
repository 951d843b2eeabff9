"""Which server runs which node of a fat-tree (pure: no Mininet import).

Whole pods go to one server each (pods split into contiguous, near-equal
blocks) and core switches are dealt round robin, so every link inside a pod
stays on its server and only aggregation-core links can cross servers:
those become tunnels. Cabling is asked of the model (``model.links``)."""
import re

# A host name or IPv4 address as ssh takes it; no user@ or :port (ssh config says those).
SERVER_NAME = re.compile(r'^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$')


class PlacementError(ValueError):
    """Servers that cannot hold the fabric (named in the message)."""


def parse_servers(text):
    """``'s1,s2'`` -> ['s1', 's2'], rejecting empty, malformed or repeated names."""
    servers = [name.strip() for name in text.split(',')]
    for name in servers:
        if not SERVER_NAME.match(name):
            raise PlacementError('bad server name %r in --cluster %r: give host names or IPv4 '
                                 'addresses separated by commas' % (name, text))
    seen = set()
    for name in servers:
        if name in seen:
            raise PlacementError('server %s is named twice in --cluster %r' % (name, text))
        seen.add(name)
    return servers


def place_fattree(model, servers):
    """{node name: server} for every node of FatTree ``model``."""
    if not servers:
        raise PlacementError('no servers to place %s on' % model.name)
    if len(set(servers)) != len(servers):
        raise PlacementError('servers named twice: %s' % ', '.join(
            sorted({s for s in servers if servers.count(s) > 1})))
    if len(servers) > model.k:
        raise PlacementError('%d servers (%s) but %s has only %d pods: each server needs a '
                             'whole pod' % (len(servers), ', '.join(servers), model.name, model.k))
    pod_server = {pod: servers[pod * len(servers) // model.k] for pod in range(model.k)}
    placement = {}
    cores = model.switches_of_role('core')
    for index, core in enumerate(cores):
        placement[core.name] = servers[index % len(servers)]
    for node in model.nodes.values():
        if node.role != 'core':
            placement[node.name] = pod_server[model.pod_of(node.name)]
    return placement


def cross_server_links(model, placement):
    """The model's links whose two ends run on different servers (the tunnels)."""
    return [link for link in model.links if placement[link.node_a] != placement[link.node_b]]


def nodes_by_server(placement):
    """{server: sorted node names}."""
    result = {}
    for node, server in placement.items():
        result.setdefault(server, []).append(node)
    return {server: sorted(nodes) for server, nodes in result.items()}
