"""Plain-data topology model shared by Mininet and the controller.

A fabric (fat-tree, de Bruijn, N-Bridge) is built once as nodes and links with
explicit port numbers on both ends. Mininet's Topo is generated from it and the
Ryu apps read the same object, so port numbers are never left to link order.

Ports in the model are the *paper's* port numbers (0-based for the fat-tree).
OpenFlow port numbers start at 1: ``ofport = port + OFPORT_BASE`` everywhere,
one fixed mapping documented here and in the README.
"""
from dataclasses import dataclass, field

from topologies.addressing import ip_to_int

OFPORT_BASE = 1


def ofport(port):
    """OpenFlow port number of a model (paper) port number."""
    return port + OFPORT_BASE


def model_port(of_port):
    """Model (paper) port number of an OpenFlow port number."""
    return of_port - OFPORT_BASE


def check_int(value, what, minimum, error=ValueError):
    """``value`` if it is an integer (not a bool) of at least ``minimum``;
    otherwise ``error`` naming ``what`` and the bad value."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error('%s must be an integer, got %r' % (what, value))
    if value < minimum:
        raise error('%s must be >= %d, got %d' % (what, minimum, value))
    return value


def mac_from_ip(ip):
    """Locally administered MAC carrying the IPv4 address in its low 32 bits."""
    value = ip_to_int(ip)
    return '02:00:' + ':'.join('%02x' % ((value >> s) & 0xff) for s in (24, 16, 8, 0))


@dataclass(frozen=True)
class Node:
    """A switch or host. ``role`` is fabric specific ('edge', 'aggregation',
    'core', 'host', ...); ``coords`` its position in the fabric's own terms."""
    name: str
    role: str
    ip: str
    coords: tuple = ()
    dpid: int = None

    @property
    def is_host(self):
        return self.dpid is None

    @property
    def mac(self):
        return mac_from_ip(self.ip)


@dataclass(frozen=True)
class Link:
    """An undirected cable: (node_a, port_a) <-> (node_b, port_b)."""
    node_a: str
    port_a: int
    node_b: str
    port_b: int


class UnknownNodeError(KeyError):
    """A name that is not in the topology; the message lists what exists."""

    def __str__(self):
        return self.args[0]


@dataclass
class Topology:
    """Nodes by name and links with explicit ports, plus lookups both consumers need."""
    name: str
    nodes: dict = field(default_factory=dict)
    links: list = field(default_factory=list)

    def __post_init__(self):
        self._peer = {}
        self._ports = {}  # node -> its cabled ports (kept sorted)
        self._by_dpid = {}
        self._by_ip = {}

    def add_node(self, node):
        if node.name in self.nodes:
            raise ValueError('duplicate node name %s' % node.name)
        self.nodes[node.name] = node
        if node.dpid is not None:
            self._by_dpid[node.dpid] = node
        self._by_ip[node.ip] = node
        return node

    def add_link(self, node_a, port_a, node_b, port_b):
        for end in ((node_a, port_a), (node_b, port_b)):
            if end[0] not in self.nodes:
                raise ValueError('link end %s is not a node' % end[0])
            if end in self._peer:
                raise ValueError('port %s:%d already cabled' % end)
        self._peer[(node_a, port_a)] = (node_b, port_b)
        self._peer[(node_b, port_b)] = (node_a, port_a)
        for name, port in ((node_a, port_a), (node_b, port_b)):
            self._ports.setdefault(name, []).append(port)
            self._ports[name].sort()
        link = Link(node_a, port_a, node_b, port_b)
        self.links.append(link)
        return link

    def node(self, name):
        try:
            return self.nodes[name]
        except KeyError:
            raise UnknownNodeError('unknown node %r in %s; nodes are: %s' % (
                name, self.name, ' '.join(sorted(self.nodes)))) from None

    def peer(self, name, port):
        """(node, port) at the far end of a port, or None if not cabled."""
        return self._peer.get((name, port))

    def ports(self, name):
        """Cabled ports of a node, sorted."""
        return list(self._ports.get(name, ()))

    def port_to(self, name, neighbour):
        """The port of ``name`` cabled to ``neighbour`` (first one if several)."""
        for port in self.ports(name):
            if self._peer[(name, port)][0] == neighbour:
                return port
        raise UnknownNodeError('%s has no link to %s' % (name, neighbour))

    def by_dpid(self, dpid):
        return self._by_dpid.get(dpid)

    def by_ip(self, ip):
        return self._by_ip.get(ip)

    @property
    def switches(self):
        return [n for n in self.nodes.values() if not n.is_host]

    @property
    def hosts(self):
        return [n for n in self.nodes.values() if n.is_host]

    def host_attachment(self, host):
        """(switch name, switch port) a host is cabled to."""
        (port,) = self.ports(host)
        return self.peer(host, port)

    def switch_links(self):
        """Links whose both ends are switches."""
        return [l for l in self.links
                if not self.nodes[l.node_a].is_host and not self.nodes[l.node_b].is_host]
