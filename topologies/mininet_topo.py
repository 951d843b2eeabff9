"""Mininet Topo classes generated from dcfabric topology models.

Switch ports are the model's OpenFlow ports (model port + 1), so Mininet's
interface ``sw-ethN`` is OpenFlow port N; hosts keep their model port
(``h-eth0``). Also usable from Mininet's own command line (``topos``):

    PYTHONPATH=$PWD mn --custom topologies/mininet_topo.py --topo fattree,4 \
        --switch ovs,datapath=user,protocols=OpenFlow13 \
        --controller remote,ip=127.0.0.1,port=6653

with ``--topo`` one of fattree,K · kevin,N,K_S,K_D[,HOSTS] ·
nbridge,SHAPE[,Q[,HOSTS]] (SHAPE like 4x3: K_{N-1} x ... x K_0) · nonblocking,K.
"""
from mininet.topo import Topo

from topologies.fattree import FatTree
from topologies.kevin import Kevin
from topologies.model import ofport
from topologies.nbridge import NBridge
from topologies.nonblocking import NonBlocking

IFNAMSIZ = 15


def interface_name(model, node, port):
    """Mininet's interface for a model port: ``name-ethN`` with N the
    OpenFlow port for a switch, the model port for a host."""
    return '%s-eth%d' % (node, ModelTopo.mininet_port(model, node, port))


class ModelTopo(Topo):
    """A Topo whose nodes, addresses, dpids and ports all come from a model."""

    def build(self, model, link_opts=None):
        self.model = model
        for node in model.nodes.values():
            self.check_interface_names(model, node)
            if node.is_host:
                self.addHost(node.name, ip=node.ip + '/8', mac=node.mac)
            else:
                self.addSwitch(node.name, dpid='%016x' % node.dpid, protocols='OpenFlow13')
        for link in model.links:
            self.addLink(link.node_a, link.node_b,
                         port1=self.mininet_port(model, link.node_a, link.port_a),
                         port2=self.mininet_port(model, link.node_b, link.port_b),
                         **(link_opts or {}))

    @staticmethod
    def mininet_port(model, name, port):
        return port if model.nodes[name].is_host else ofport(port)

    @staticmethod
    def check_interface_names(model, node):
        longest = max((len(interface_name(model, node.name, p)) for p in model.ports(node.name)),
                      default=0)
        if longest > IFNAMSIZ:
            raise ValueError('%s: interface names of %s exceed %d characters; this fabric '
                             'is too large for Mininet' % (model.name, node.name, IFNAMSIZ))


class FatTreeTopo(ModelTopo):
    """k-ary fat-tree (``--topo fattree,K``)."""

    def build(self, k=4, link_opts=None):
        super().build(FatTree(k), link_opts)


class KevinTopo(ModelTopo):
    """Kevin: de Bruijn ToRs with static and DA spines (``--topo kevin,N,K_S,K_D[,HOSTS]``)."""

    def build(self, n=8, k_s=2, k_d=1, hosts=1, link_opts=None):
        super().build(Kevin(n, k_s, k_d, hosts_per_tor=hosts), link_opts)


def parse_shape(text):
    """An N-Bridge shape from the command line: '4x3' -> (4, 3), 6 -> (6,)."""
    try:
        return tuple(int(part) for part in str(text).split('x'))
    except ValueError:
        raise ValueError('N-Bridge shape must be leaf counts joined by x, K_{N-1}x...xK_0 '
                         '(e.g. 4x3), got %r' % (text,)) from None


class NBridgeTopo(ModelTopo):
    """K-ary N-Bridge (``--topo nbridge,SHAPE[,Q[,HOSTS]]``, SHAPE like 4x3)."""

    def build(self, shape='4x3', q=1, hosts=1, link_opts=None):
        super().build(NBridge(parse_shape(shape), q, hosts), link_opts)


class NonBlockingTopo(ModelTopo):
    """The bisection experiment's non-blocking reference: the hosts of a
    k-ary fat-tree on one switch (``--topo nonblocking,K``)."""

    def build(self, k=4, link_opts=None):
        super().build(NonBlocking(k), link_opts)


# What `mn --custom` reads: --topo NAME,ARGS.
topos = {'fattree': FatTreeTopo, 'kevin': KevinTopo, 'nbridge': NBridgeTopo,
         'nonblocking': NonBlockingTopo}
