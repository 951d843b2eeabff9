"""The non-blocking reference of the bisection experiment: every host of a
k-ary fat-tree on one switch, at the same host link rate. Its throughput for
a traffic pattern is 100% of ideal bisection bandwidth (Al-Fares et al.,
section 4): the fabric under test is measured against it.

Hosts keep the fat-tree hosts' addresses and order (host i here is host i
of FatTree(k)), so one traffic pattern runs unchanged on both. Names are
distinct from the fat-tree's (switch ``nbsw``, hosts ``nbh0``..) so that its
interfaces never collide with a fat-tree emulation running beside it.
Switch port p (model) holds host p.
"""
from topologies.fattree import FatTree
from topologies.model import Node, Topology

ROLE_CODE = 4  # dpid role code, after the fat-tree's edge 1, aggregation 2, core 3
SWITCH = 'nbsw'


def host_name(index):
    return 'nbh%d' % index


class NonBlocking(Topology):

    def __init__(self, k):
        fattree = FatTree(k)
        super().__init__('non-blocking(%d hosts of fattree k=%d)' % (len(fattree.hosts), k))
        self.k = k
        self.add_node(Node(SWITCH, 'switch', '10.255.255.1', (), ROLE_CODE << 32 | 1))
        for index, host in enumerate(fattree.hosts):
            self.add_node(Node(host_name(index), 'host', host.ip, host.coords))
            self.add_link(SWITCH, index, host_name(index), 0)
