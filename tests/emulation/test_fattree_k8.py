"""A k=8 fat-tree as a user gets it (BFD on at the budget interval): every
pair reachable once the fabric reports ready, and a silent failure detected
by BFD, routed around and repaired."""
import json
import time
import urllib.request

import pytest

from controller.fattree import APP, READY_PATH
from scripts.emulator import faults, traffic
from scripts.emulator.bfd import policy as bfd_policy
from scripts.emulator.fabric import Fabric
from tests.conftest import free_port
from topologies.fattree import FatTree
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

PREFIX = 'k8'


def links_section(rest_port):
    with urllib.request.urlopen('http://127.0.0.1:%d/fattree/state/links' % rest_port, timeout=10) as reply:
        return json.load(reply)


def wait_link(rest_port, a, b, up, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if next(r['up'] for r in links_section(rest_port) if {r['a'], r['b']} == {a, b}) == up:
            return
        time.sleep(0.05)
    raise AssertionError('controller never saw %s-%s %s' % (a, b, 'up' if up else 'down'))


def test_k8_with_bfd_is_reachable_when_ready_and_repairs_a_silent_failure(require_ovs):
    model = FatTree(8)
    topo = renamed(model, PREFIX)
    hosts = [h.name for h in topo.hosts]
    rest_port = free_port()
    interval = bfd_policy.interval_for(len(model.switch_links()))
    with Fabric(topo, APP, {'k': 8}, ofp_port=free_port(), rest_port=rest_port, bfd_ms=interval,
                ready_path=READY_PATH) as fabric:
        ready = fabric.controller.readiness()
        assert ready['ready'] and ready['programmed'] == 80 and ready['failed_links'] == 0
        # right after ready, one round: no retry round needed
        results = traffic.reachability(fabric.net, hosts)
        assert len(results) == 128 * 127 and all(results.values()), \
            [pair for pair, ok in results.items() if not ok][:5]
        # silent failure of an upper-core link: BFD sees it, the broadcast routes around it
        a, b = 'a0_4', 'c1_1'
        faults.fail_link(topo, PREFIX + a, PREFIX + b, silent=True)
        try:
            wait_link(rest_port, a, b, up=False, timeout=10 * bfd_policy.detection_ms(interval) / 1000)
            sample = traffic.sample_pairs(hosts, 2000, seed=8)
            results = traffic.reachability(fabric.net, hosts, pairs=sample)
            assert all(results.values()), [pair for pair, ok in results.items() if not ok][:5]
        finally:
            faults.recover_link(topo, PREFIX + a, PREFIX + b)
        wait_link(rest_port, a, b, up=True, timeout=30)
        assert fabric.controller.readiness()['failed_links'] == 0
