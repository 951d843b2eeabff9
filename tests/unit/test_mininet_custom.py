"""`mn --custom topologies/mininet_topo.py --topo NAME,ARGS` for every
topology. The file is read the way mn reads it (exec into a fresh
namespace, then its ``topos`` dict), by the interpreter mn itself runs on
(its #! line: Debian's python3, not the project's venv), and each topology
is built from the --topo string by Mininet's own buildTopo; nodes, dpids
and cabled ports must be the model's."""
import json
import os
import shutil
import subprocess

import pytest

from topologies.fattree import FatTree
from topologies.kevin import Kevin
from topologies.model import ofport
from topologies.nbridge import NBridge
from topologies.nonblocking import NonBlocking

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CUSTOM_FILE = os.path.join('topologies', 'mininet_topo.py')
# Run by mn's interpreter: what `mn --custom CUSTOM_FILE --topo ARG` builds, as JSON.
MN_LOADER = '''
import json, sys
from mininet.util import buildTopo
customs = {}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), customs, customs)
built = {"names": sorted(customs["topos"])}
for arg in sys.argv[2:]:
    try:
        topo = buildTopo(customs["topos"], arg)
    except ValueError as err:
        built[arg] = {"error": str(err)}
        continue
    built[arg] = {"switches": {s: int(topo.nodeInfo(s)["dpid"], 16) for s in topo.switches()},
                  "hosts": sorted(topo.hosts()),
                  "links": [[i["node1"], i["port1"], i["node2"], i["port2"]]
                            for _, _, i in topo.links(withInfo=True)]}
print(json.dumps(built))
'''
CASES = [('fattree,4', FatTree(4)), ('kevin,8,2,1', Kevin(8, 2, 1)),
         ('kevin,9,3,2,2', Kevin(9, 3, 2, hosts_per_tor=2)), ('nbridge,4x3,1,1', NBridge((4, 3), 1, 1)),
         ('nbridge,3x2x2,2', NBridge((3, 2, 2), 2, 1)), ('nonblocking,4', NonBlocking(4))]
BAD = [('nbridge,4y3', 'N-Bridge shape must be leaf counts joined by x'),
       ('kevin,6,2,1', 'Kevin n must be a power of k_s=2'),
       ('fattree,5', 'fat-tree k must be even, got 5'),
       ('nonblocking,4.5', 'fat-tree k must be an integer, got 4.5')]


@pytest.fixture(scope='module')
def built_by_mn():
    mn = shutil.which('mn')
    assert mn, 'Mininet (mn) missing: run scripts/setup.sh'
    with open(mn) as program:
        interpreter = program.readline()[2:].split()
    run = subprocess.run(interpreter + ['-c', MN_LOADER, CUSTOM_FILE] + [a for a, _ in CASES + BAD],
                         cwd=REPO, env=dict(os.environ, PYTHONPATH=REPO), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def mininet_port(model, name, port):
    return port if model.nodes[name].is_host else ofport(port)


@pytest.mark.parametrize('topo_arg, model', CASES, ids=[a for a, _ in CASES])
def test_mn_custom_builds_the_model(built_by_mn, topo_arg, model):
    built = built_by_mn[topo_arg]
    assert built['switches'] == {s.name: s.dpid for s in model.switches}
    assert built['hosts'] == sorted(h.name for h in model.hosts)
    cabled = {frozenset([(a, pa), (b, pb)]) for a, pa, b, pb in built['links']}
    assert len(cabled) == len(built['links']) == len(model.links)
    assert cabled == {frozenset([(l.node_a, mininet_port(model, l.node_a, l.port_a)),
                                 (l.node_b, mininet_port(model, l.node_b, l.port_b))]) for l in model.links}


def test_topo_names_mn_offers(built_by_mn):
    assert built_by_mn['names'] == ['fattree', 'kevin', 'nbridge', 'nonblocking']


@pytest.mark.parametrize('topo_arg, message', BAD, ids=[a for a, _ in BAD])
def test_bad_topo_arguments_name_the_problem(built_by_mn, topo_arg, message):
    assert message in built_by_mn[topo_arg]['error']
