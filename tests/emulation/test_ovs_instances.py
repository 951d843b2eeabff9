"""A fat-tree spread over private Open vSwitch instances (scripts/emulator/ovs/instances.py):
every pair reachable once ready, a silent failure injected by a command that
finds the instances by itself (as `dcfabric fail` does), and a teardown that
leaves no daemon, namespace, relay or veth behind."""
import os
import subprocess

import pytest

from controller.fattree import APP, READY_PATH
from scripts.emulator import faults, run_record, traffic
from scripts.emulator.ovs import instances as ovs_instances
from scripts.emulator.fabric import Fabric
from tests.conftest import free_port
from tests.emulation.test_fattree_k8 import wait_link
from topologies.fattree import FatTree
from topologies.mininet_topo import interface_name
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

PREFIX = 'oi'
BFD_MS = 100


def test_fabric_on_two_instances_routes_detects_and_leaves_nothing(require_ovs):
    topo = renamed(FatTree(4), PREFIX)
    hosts = [h.name for h in topo.hosts]
    rest_port = free_port()
    with Fabric(topo, APP, {'k': 4}, ofp_port=free_port(), rest_port=rest_port, bfd_ms=BFD_MS,
                ready_path=READY_PATH, ovs_instances=2) as fabric:
        assert fabric.controller.readiness()['programmed'] == 20
        # each daemon holds its share of the bridges, and only that
        sites = ovs_instances.InstanceSites.running()
        bridges = {i.index: sorted(s for s, where in sites.placement.items() if where.index == i.index)
                   for i in sites.servers()}
        assert sorted(bridges) == [0, 1] and len(bridges[0]) == len(bridges[1]) == 10
        assert sorted(bridges[0] + bridges[1]) == sorted(s.name for s in topo.switches)
        results = traffic.reachability(fabric.net, hosts)
        assert len(results) == 240 and all(results.values()), [p for p, ok in results.items() if not ok][:5]
        # a link between the two daemons, failed silently: only BFD can see it
        a, b = next((link.node_a, link.node_b) for link in topo.switch_links()
                    if sites.server_of(link.node_a).index != sites.server_of(link.node_b).index)
        assert not subprocess.run(['ip', 'link', 'show', interface_name(topo, a, 1)],
                                  capture_output=True, timeout=120).returncode == 0  # not in this namespace
        faults.fail_link(topo, a, b, silent=True, sites=sites)
        try:
            wait_link(rest_port, a[len(PREFIX):], b[len(PREFIX):], up=False, timeout=3)
            results = traffic.reachability(fabric.net, hosts)
            assert all(results.values()), [p for p, ok in results.items() if not ok][:5]
        finally:
            faults.recover_link(topo, a, b, sites=sites)
        wait_link(rest_port, a[len(PREFIX):], b[len(PREFIX):], up=True, timeout=30)
    assert ovs_instances.InstanceSites.running() is None and not ovs_instances.left_over()
    # no instance's run directory is left (run records have a directory of their own there)
    left = set(os.listdir(ovs_instances.RUN_ROOT)) if os.path.exists(ovs_instances.RUN_ROOT) else set()
    assert left - {os.path.basename(run_record.RUNS_DIR)} == set()
    assert subprocess.run(['pgrep', '-f', 'UNIX-LISTEN:' + ovs_instances.RUN_ROOT],
                          capture_output=True, timeout=120).returncode == 1
    assert interface_name(topo, PREFIX + 'e0_0', 1) not in subprocess.run(['ip', '-br', 'link'], capture_output=True,
                                                      text=True, timeout=120).stdout


def test_veths_into_named_namespaces_are_made_past_a_low_open_file_limit(require_ovs):
    """iproute2 keeps a file open per ``netns NAME`` of a batch: one batch of
    k=16's switch ends failed with 'Invalid "netns" value' where the limit
    was lower than their count. In batches it holds at a limit of 256."""
    import resource
    from scripts.emulator.mininet_classes import ip_batch
    netns = 'dcftestfd'
    lines = ['link add name fdt%da netns %s type veth peer name fdt%db netns %s' % (i, netns, i, netns)
             for i in range(600)]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    subprocess.run(['ip', 'netns', 'add', netns], check=True, timeout=30)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        try:
            ip_batch(lines, 'creating veths')
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        made = subprocess.run(['ip', '-n', netns, '-br', 'link'], capture_output=True, text=True, timeout=30).stdout
        assert sum(1 for line in made.splitlines() if line.startswith('fdt')) == 1200
    finally:
        subprocess.run(['ip', 'netns', 'delete', netns], timeout=30)
