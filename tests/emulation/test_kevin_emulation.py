"""Kevin in Mininet: the Ryu app with the central Greedy-DA-links scheduler
on DB(2,3) with one DA spine. Static greedy routes first, then an elephant
gets a DA link and its path (read from the TTL) gets shorter."""
import json
import re
import subprocess
import time
import urllib.request

import pytest

from scripts.emulator import traffic
from scripts.emulator.fabric import Fabric
from tests.conftest import free_port
from topologies.kevin import Kevin

pytestmark = pytest.mark.emulation

PARAMS = {'n': 8, 'k_s': 2, 'k_d': 1, 'hosts': 1, 'scheduler': 'greedy', 'period': 1,
          'delta': 1, 'reservation': 30}


def path_tors(net, src, dst):
    """ToRs on the src -> dst path: the reply to a ping from dst travels it."""
    return 64 - traffic.ping_ttl(net, dst, src)


def circuits(bridge):
    """{in ofport: out ofport} of a spine bridge's circuit rules."""
    out = subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', '--no-stats', 'dump-flows', bridge],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return dict(re.search(r'in_port=(\d+) actions=output:(\d+)', l).groups()
                for l in out.splitlines() if 'in_port=' in l)


@pytest.fixture(scope='module')
def db23(require_ovs):
    kevin = Kevin(8, 2, 1)
    with Fabric(kevin, 'controller.kevin.app', PARAMS, ofp_port=free_port(),
                rest_port=free_port()) as fabric:
        traffic.wait_all_pairs(fabric.net, [h.name for h in kevin.hosts], progress=lambda m: None)
        yield kevin, fabric


def test_all_pairs_reachable_on_static_greedy_routes(db23):
    kevin, fabric = db23
    results = traffic.reachability(fabric.net, [h.name for h in kevin.hosts])
    assert all(results.values()), [pair for pair, ok in results.items() if not ok]
    assert path_tors(fabric.net, 'kvh011_0', 'kvh001_0') == 4  # 011 -> 110 -> 100 -> 001
    assert circuits('kvd0') == {}


def test_elephant_gets_a_da_link_and_a_shorter_path(db23):
    kevin, fabric = db23
    report = traffic.iperf3(fabric.net, 'kvh011_0', 'kvh001_0', seconds=4)
    assert traffic.received_mbps(report) > 1
    # The circuit 011 -> 001 is ofport 4 -> 2 (ToR indices 3 and 1) on DA spine kvd0.
    deadline = time.time() + 5
    while circuits('kvd0').get('4') != '2' and time.time() < deadline:
        time.sleep(0.2)
    assert circuits('kvd0').get('4') == '2'
    time.sleep(PARAMS['delta'] + 0.5)
    assert path_tors(fabric.net, 'kvh011_0', 'kvh001_0') == 2  # 011 -> 001 over the DA link
    # the live view (controller.ryuapp.web) draws it over the DA spine's two cables
    with urllib.request.urlopen('http://127.0.0.1:%d/view/state' % fabric.controller.rest_port) as reply:
        da_links = json.load(reply)['da_links']
    assert {'source': 'kvt011', 'spine': 'kvd0', 'destination': 'kvt001',
            'links': ['kvt011-kvd0', 'kvt001-kvd0']} in da_links

