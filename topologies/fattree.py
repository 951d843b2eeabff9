"""The k-ary fat-tree of Al-Fares et al. (section 3.2) as a plain-data model.

Addressing (paper): pod switches 10.pod.switch.1 with switch in [0, k-1]
(lower/edge switches 0..k/2-1, upper/aggregation switches k/2..k-1), core
switches 10.k.j.i with j, i in [1, k/2], hosts 10.pod.switch.ID with ID in
[2, k/2+1].

Ports (paper, 0-based; OpenFlow port = paper port + 1, see topologies.model):
  edge z of pod x:         port h (h < k/2) -> host ID h+2;
                           port k/2+m       -> aggregation k/2+m of pod x (its port z)
  aggregation z of pod x:  port m (m < k/2) -> edge m of pod x;
                           port k/2+m       -> core (j = z-k/2+1, i = m+1) (its port x)
  core (j, i):             port x           -> aggregation k/2+j-1 of pod x

Datapath ids encode role and position: dpid = role_code << 32 | switch IPv4,
role codes 1 edge, 2 aggregation, 3 core (e.g. 0x10a000101 is 10.0.1.1, an edge).
"""
from topologies.addressing import ip_to_int
from topologies.model import Node, Topology

ROLE_CODES = {'edge': 1, 'aggregation': 2, 'core': 3}
# Height in the tree: a port faces up when its peer sits higher.
LAYERS = {'host': 0, 'edge': 1, 'aggregation': 2, 'core': 3}
K_MIN, K_MAX = 4, 254


def check_k(k):
    """Reject any k the paper's addressing cannot express, naming the problem."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise ValueError('fat-tree k must be an integer, got %r' % (k,))
    if k % 2:
        raise ValueError('fat-tree k must be even, got %d' % k)
    if not K_MIN <= k <= K_MAX:
        raise ValueError('fat-tree k must be between %d and %d (10.pod.switch.ID '
                         'addressing), got %d' % (K_MIN, K_MAX, k))
    return k


def edge_name(pod, z):
    return 'e%d_%d' % (pod, z)


def aggregation_name(pod, z):
    return 'a%d_%d' % (pod, z)


def core_name(j, i):
    return 'c%d_%d' % (j, i)


def host_name(pod, z, host_id):
    return 'h%d_%d_%d' % (pod, z, host_id)


def _switch(name, role, ip, coords):
    return Node(name, role, ip, coords, ROLE_CODES[role] << 32 | ip_to_int(ip))


def fattree_size(k):
    """(switches, hosts, switch ports) of a k-ary fat-tree, known before
    building one: 5k^2/4 switches of k ports each, k^3/4 hosts."""
    check_k(k)
    return 5 * k * k // 4, k ** 3 // 4, 5 * k ** 3 // 4


class FatTree(Topology):
    """k-ary fat-tree: k pods of k/2 edge and k/2 aggregation switches,
    (k/2)^2 core switches, k^3/4 hosts."""

    def __init__(self, k):
        super().__init__('fattree(k=%s)' % (k,))
        self.k = check_k(k)
        half = k // 2
        self.half = half
        for pod in range(k):
            for z in range(half):
                self.add_node(_switch(edge_name(pod, z), 'edge', '10.%d.%d.1' % (pod, z), (pod, z)))
                for host_id in range(2, half + 2):
                    self.add_node(Node(host_name(pod, z, host_id), 'host',
                                       '10.%d.%d.%d' % (pod, z, host_id), (pod, z, host_id)))
            for z in range(half, k):
                self.add_node(_switch(aggregation_name(pod, z), 'aggregation',
                                      '10.%d.%d.1' % (pod, z), (pod, z)))
        for j in range(1, half + 1):
            for i in range(1, half + 1):
                self.add_node(_switch(core_name(j, i), 'core', '10.%d.%d.%d' % (k, j, i), (j, i)))

        for pod in range(k):
            for z in range(half):
                for host_id in range(2, half + 2):
                    self.add_link(edge_name(pod, z), host_id - 2, host_name(pod, z, host_id), 0)
                for m in range(half):
                    self.add_link(edge_name(pod, z), half + m, aggregation_name(pod, half + m), z)
            for z in range(half, k):
                for m in range(half):
                    self.add_link(aggregation_name(pod, z), half + m,
                                  core_name(z - half + 1, m + 1), pod)

    def up_ports(self, name):
        """Ports of a pod switch that face the layer above (the paper's
        k/2..k-1); a core switch has none."""
        layer = LAYERS[self.node(name).role]
        return [p for p in self.ports(name) if LAYERS[self.nodes[self.peer(name, p)[0]].role] > layer]

    def down_ports(self, name):
        """Ports that face the layer below (hosts, lower or pod switches)."""
        layer = LAYERS[self.node(name).role]
        return [p for p in self.ports(name) if LAYERS[self.nodes[self.peer(name, p)[0]].role] < layer]

    def port_to_pod(self, core, pod):
        """The port of a core switch cabled to ``pod`` (to the upper switch
        of the core's row there)."""
        for port in self.down_ports(core):
            if self.pod_of(self.peer(core, port)[0]) == pod:
                return port
        raise ValueError('%s has no port to pod %r in %s' % (core, pod, self.name))

    def switches_of_role(self, role):
        return [n for n in self.switches if n.role == role]

    def pod_of(self, name):
        """Pod of a pod switch or host (None for a core switch)."""
        node = self.node(name)
        return None if node.role == 'core' else node.coords[0]

    def switches_between(self, a, b):
        """Switches a shortest path between hosts ``a`` and ``b`` crosses: 1
        under one edge switch, 3 in one pod, 5 across pods."""
        if self.host_attachment(a)[0] == self.host_attachment(b)[0]:
            return 1
        return 3 if self.pod_of(a) == self.pod_of(b) else 5
