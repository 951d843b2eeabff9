"""A two-tier leaf-spine fabric as a plain-data model (LetFlow's Fig. 1
shape; the P4 LetFlow fabric runs on it).

Names and addresses: leaf i is ``leaf{i}`` (10.0.i.1), its hosts
``h{i}_{ID}`` (10.0.i.ID, ID from 2) on a /24 per leaf, spine j is
``spine{j}`` (10.1.j.1).

Ports (model, 0-based; OpenFlow port = model port + 1):
  leaf i:   port h (h < hosts_per_leaf) -> host ID h+2;
            port hosts_per_leaf + j     -> spine j (its port i)
  spine j:  port i                      -> leaf i
"""
from topologies.model import Node, Topology, check_int

ROLE_CODES = {'leaf': 1, 'spine': 2}  # dpid = role code << 32 | index


def leaf_name(i):
    return 'leaf%d' % i


def spine_name(j):
    return 'spine%d' % j


class LeafSpine(Topology):

    def __init__(self, leaves=2, spines=2, hosts_per_leaf=2):
        super().__init__('leafspine(%d,%d)' % (leaves, spines))
        self.leaves = check_int(leaves, 'leaf-spine leaves', 1)
        self.spines = check_int(spines, 'leaf-spine spines', 1)
        self.hosts_per_leaf = check_int(hosts_per_leaf, 'leaf-spine hosts per leaf', 1)
        if leaves > 254 or spines > 254 or hosts_per_leaf > 253:
            raise ValueError('leaf-spine addressing (10.0.leaf.host, 10.1.spine.1) holds at most 254 '
                             'leaves and spines and 253 hosts per leaf, got %d, %d, %d'
                             % (leaves, spines, hosts_per_leaf))
        for i in range(leaves):
            self.add_node(Node(leaf_name(i), 'leaf', '10.0.%d.1' % i, (i,), ROLE_CODES['leaf'] << 32 | i))
            for h in range(hosts_per_leaf):
                self.add_node(Node('h%d_%d' % (i, h + 2), 'host', '10.0.%d.%d' % (i, h + 2), (i, h)))
                self.add_link(leaf_name(i), h, 'h%d_%d' % (i, h + 2), 0)
        for j in range(spines):
            self.add_node(Node(spine_name(j), 'spine', '10.1.%d.1' % j, (j,), ROLE_CODES['spine'] << 32 | j))
            for i in range(leaves):
                self.add_link(leaf_name(i), hosts_per_leaf + j, spine_name(j), i)

    def subnet(self, leaf):
        """The /24 of a leaf's hosts."""
        (i,) = self.node(leaf).coords
        return '10.0.%d.0/24' % i

    def host_ports(self, leaf):
        """{host IP: the leaf's port to it}."""
        return {self.node(self.peer(leaf, p)[0]).ip: p for p in self.ports(leaf)
                if self.node(self.peer(leaf, p)[0]).is_host}

    def uplinks(self, leaf):
        """The leaf's ports to the spines, in spine order."""
        return [self.port_to(leaf, spine_name(j)) for j in range(self.spines)]

    def leaf_names(self):
        return [leaf_name(i) for i in range(self.leaves)]
