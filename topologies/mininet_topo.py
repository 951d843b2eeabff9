"""Mininet Topo classes generated from dcfabric topology models.

Switch ports are the model's OpenFlow ports (model port + 1), so Mininet's
interface ``sw-ethN`` is OpenFlow port N; hosts keep their model port
(``h-eth0``). Also usable from Mininet's own command line:

    PYTHONPATH=$PWD mn --custom topologies/mininet_topo.py --topo fattree,4 \
        --switch ovs,datapath=user,protocols=OpenFlow13 \
        --controller remote,ip=127.0.0.1,port=6653
"""
from mininet.topo import Topo

from topologies.fattree import FatTree
from topologies.model import ofport

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
        super().build(FatTree(int(k)), link_opts)


topos = {'fattree': FatTreeTopo}
