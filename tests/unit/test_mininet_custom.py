"""`mn --custom topologies/mininet_topo.py --topo NAME,ARGS` for every
topology: the file is read the way mn reads it (exec into a fresh namespace,
then its ``topos`` dict) and the topology is built from the --topo string by
Mininet's own buildTopo; nodes, dpids and cabled ports must be the model's."""
import os

import pytest
from mininet.util import buildTopo

from topologies.fattree import FatTree
from topologies.kevin import Kevin
from topologies.model import ofport
from topologies.nbridge import NBridge
from topologies.nonblocking import NonBlocking

CUSTOM_FILE = os.path.join(os.path.dirname(__file__), '..', '..', 'topologies', 'mininet_topo.py')


def mn_topos():
    customs = {}
    with open(CUSTOM_FILE) as source:
        exec(compile(source.read(), CUSTOM_FILE, 'exec'), customs, customs)  # as mn's --custom does
    return customs['topos']


def mininet_port(model, name, port):
    return port if model.nodes[name].is_host else ofport(port)


@pytest.mark.parametrize('topo_arg, model', [
    ('fattree,4', FatTree(4)),
    ('kevin,8,2,1', Kevin(8, 2, 1)),
    ('kevin,9,3,2,2', Kevin(9, 3, 2, hosts_per_tor=2)),
    ('nbridge,4x3,1,1', NBridge((4, 3), 1, 1)),
    ('nbridge,3x2x2,2', NBridge((3, 2, 2), 2, 1)),
    ('nonblocking,4', NonBlocking(4)),
], ids=lambda value: value if isinstance(value, str) else '')
def test_mn_custom_builds_the_model(topo_arg, model):
    topo = buildTopo(mn_topos(), topo_arg)
    assert sorted(topo.switches()) == sorted(s.name for s in model.switches)
    assert sorted(topo.hosts()) == sorted(h.name for h in model.hosts)
    assert {s: int(topo.nodeInfo(s)['dpid'], 16) for s in topo.switches()} == \
        {s.name: s.dpid for s in model.switches}
    cabled = {frozenset([(info['node1'], info['port1']), (info['node2'], info['port2'])])
              for _, _, info in topo.links(withInfo=True)}
    assert len(cabled) == len(topo.links()) == len(model.links)
    assert cabled == {frozenset([(l.node_a, mininet_port(model, l.node_a, l.port_a)),
                                 (l.node_b, mininet_port(model, l.node_b, l.port_b))]) for l in model.links}


def test_topo_names_mn_offers():
    assert sorted(mn_topos()) == ['fattree', 'kevin', 'nbridge', 'nonblocking']


@pytest.mark.parametrize('topo_arg, message', [
    ('nbridge,4y3', 'N-Bridge shape must be leaf counts joined by x'),
    ('kevin,6,2,1', 'Kevin n must be a power of k_s=2'),
    ('fattree,5', 'fat-tree k must be even, got 5'),
    ('nonblocking,4.5', 'fat-tree k must be an integer, got 4.5'),
])
def test_bad_topo_arguments_name_the_problem(topo_arg, message):
    with pytest.raises(ValueError, match=message):
        buildTopo(mn_topos(), topo_arg)
