"""A k=4 fat-tree on Mininet's cluster edition over two container servers
(scripts/cluster/containers.py: own network, mount, UTS and PID namespace,
own /run, ovsdb-server, ovs-vswitchd and sshd each), the controller in the
head namespace: placement, tunnels, reachability, a failed tunnel seen by
BFD and broadcast by the controller; then bad servers refused by name with
nothing left running. VXLAN tunnels: this kernel has no ip_gre."""
import os
import subprocess
import sys
import time

import pytest

from controller.fattree import READY_PATH
from scripts import REPO_ROOT
from scripts.emulator import faults, traffic
from scripts.emulator.bfd import sessions as bfd_sessions
from scripts.cluster.containers import ContainerServers, ServerSpec
from scripts.cluster.net import ClusterFabric
from topologies.fattree import FatTree

pytestmark = pytest.mark.emulation

FLOW_DUMP = ('for b in $(ovs-vsctl list-br); do echo "== $b"; '
             'ovs-ofctl -O OpenFlow13 --no-stats dump-flows $b | grep priority | sort; '
             'ovs-ofctl -O OpenFlow13 dump-groups $b | grep group_id | sort; done')


@pytest.fixture(scope='module')
def cluster(require_ovs):
    topo = FatTree(4)
    with ContainerServers(2) as servers, servers.in_head():
        # ready_path: as `dcfabric run --cluster` waits for the controller (its REST on the head's address)
        with ClusterFabric(topo, 'controller.fattree.routing_app', {'k': 4}, servers.servers, tunnel='vxlan',
                           bfd_ms=100, ready_path=READY_PATH) as fabric:
            traffic.wait_all_pairs(fabric.net, [h.name for h in topo.hosts], progress=lambda m: None)
            yield topo, servers, fabric


def tables(fabric):
    """{switch: its flow and group lines}, read from each server's own OVS."""
    dump, switch = {}, None
    for server in fabric.servers:
        for line in fabric.sites.run(server, 'sh', '-c', FLOW_DUMP).stdout.splitlines():
            if line.startswith('== '):
                switch = line[3:]
                dump[switch] = []
            else:
                dump[switch].append(line.strip())
    return dump


def test_all_pairs_reach_each_other_across_servers(cluster):
    topo, _, fabric = cluster
    results = traffic.reachability(fabric.net, [h.name for h in topo.hosts], retries=0)
    assert len(results) == 16 * 15
    assert all(results.values()), [pair for pair, ok in results.items() if not ok]
    # h0_0_2 (server 1) -> h3_1_3 (server 2): edge, aggregation, core, aggregation, edge
    assert traffic.ping_ttl(fabric.net, 'h0_0_2', 'h3_1_3') == 59


def test_whole_pods_per_server_and_only_core_links_tunnelled(cluster):
    topo, servers, fabric = cluster
    first, second = servers.servers
    assert fabric.net.get('e0_0').cmd('hostname').strip() == 'dcfcl-s1'
    assert fabric.net.get('h3_1_3').cmd('hostname').strip() == 'dcfcl-s2'
    bridges = {server: fabric.sites.run(server, 'ovs-vsctl', '--timeout=60', 'list-br').stdout.split()
               for server in servers.servers}
    assert sorted(bridges[first] + bridges[second]) == sorted(s.name for s in topo.switches)
    assert {b[1] for b in bridges[first] if b[0] in 'ea'} == {'0', '1'}
    assert {b[1] for b in bridges[second] if b[0] in 'ea'} == {'2', '3'}
    # a tunnel per aggregation-core link between servers: 4 cores x 2 foreign pods
    tunnels = fabric.tunnel_links()
    assert len(tunnels) == len(fabric.tunnels) == 8
    assert {frozenset((l.intf1.node.name, l.intf2.node.name)) for l in tunnels} == {
        frozenset((l.node_a, l.node_b)) for l in fabric.tunnels}
    # the machine's own Open vSwitch has none of these bridges
    assert 'e0_0' not in subprocess.run(['ovs-vsctl', '--timeout=60', 'list-br'], capture_output=True, text=True, timeout=120).stdout


def test_tunnel_failure_seen_by_bfd_and_broadcast_to_both_servers(cluster):
    topo, _, fabric = cluster
    link = next(l for l in fabric.tunnels if l.node_a == 'a0_2')  # a0_2 (server 1) - c1_2 (server 2)
    ends = faults.link_interfaces(topo, link.node_a, link.node_b, fabric.sites)
    assert {end.server for end in ends} == set(fabric.servers)
    before = tables(fabric)
    start = time.time()
    faults.fail_link(topo, link.node_a, link.node_b, silent=True, sites=fabric.sites)
    try:
        while True:
            states = bfd_sessions.states(topo, fabric.sites)
            if {states[end.name] for end in ends} == {'down'}:
                break
            assert time.time() - start < 10, 'BFD did not see the silent tunnel failure: %s' % [
                (end.name, states[end.name]) for end in ends]
        deadline = time.time() + 20
        while True:
            changed = {s for s, lines in tables(fabric).items() if lines != before[s]}
            # pods 1-3 learn that c1_2 lost pod 0: switches on both servers are rewritten
            if {'a1_2', 'a2_2', 'a3_2'} <= changed:
                break
            assert time.time() < deadline, 'failure not broadcast; changed: %s' % sorted(changed)
            time.sleep(0.5)
        results = traffic.reachability(fabric.net, [h.name for h in topo.hosts], retries=2)
        assert all(results.values()), [p for p, ok in results.items() if not ok]
    finally:
        faults.recover_link(topo, link.node_a, link.node_b, sites=fabric.sites)
    bfd_sessions.wait_up(topo, sites=fabric.sites)
    deadline = time.time() + 30
    while tables(fabric) != before:
        assert time.time() < deadline, 'tables not restored after the tunnel recovered'
        time.sleep(0.5)


BROKEN = {1: ('sshd', 'ssh is refused'), 2: ('ovs', 'Open vSwitch is not running'),
          3: ('sudo', 'passwordless sudo is needed')}


@pytest.fixture(scope='module')
def broken_servers(require_ovs):
    specs = [ServerSpec()] + [ServerSpec(**{what: False}) for what, _ in BROKEN.values()]
    with ContainerServers(specs) as servers:
        yield servers


def run_in_head(servers, *args):
    return subprocess.run(servers.on_head([sys.executable, '-m', 'scripts.cli', *args], REPO_ROOT),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize('index', sorted(BROKEN) + ['unreachable'])
def test_bad_server_is_named_and_nothing_is_left_running(broken_servers, index):
    good = broken_servers.servers[0]
    if index == 'unreachable':
        bad, meaning = broken_servers.servers[-1].rsplit('.', 1)[0] + '.99', 'server is unreachable'
    else:
        bad, meaning = broken_servers.servers[index], BROKEN[index][1]
    result = run_in_head(broken_servers, 'run', '--cluster', '%s,%s' % (good, bad), '--tunnel', 'vxlan')
    assert result.returncode == 1
    assert 'dcfabric: server %s: %s' % (bad, meaning) in result.stderr
    on_good = subprocess.run(broken_servers.on_server(0, ['sh', '-c', 'ovs-vsctl list-br; ps -e -o args']),
                             capture_output=True, text=True, timeout=120).stdout
    assert 'mininet:' not in on_good and 'e0_0' not in on_good
    # only the harness's unshare and its sleeping child: no controller, no node shell, no ssh
    assert processes_in_head(broken_servers) == sorted([broken_servers.head.process.pid,
                                                        broken_servers.head.init_pid])


def processes_in_head(servers):
    """Pids of the processes in the head's network namespace."""
    head_net = os.readlink('/proc/%d/ns/net' % servers.head.init_pid)
    pids = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            if os.readlink('/proc/%s/ns/net' % pid) == head_net:
                pids.append(int(pid))
        except OSError:  # it exited meanwhile
            pass
    return pids


def test_gre_is_refused_where_the_kernel_has_no_ip_gre(broken_servers):
    good = broken_servers.servers[0]
    probe = subprocess.run(broken_servers.on_server(0, ['ip', 'link', 'add', 'g0', 'type', 'gretap', 'local',
                                                        good, 'remote', good]), capture_output=True, timeout=120)
    if probe.returncode == 0:
        pytest.skip('this kernel has ip_gre: GRE tunnels work here')  # not so on these machines
    result = run_in_head(broken_servers, 'run', '--cluster', good, '--tunnel', 'gre')
    assert result.returncode == 1
    assert 'server %s: the kernel cannot make gre tunnels (no ip_gre module; try --tunnel vxlan)' % good \
        in result.stderr


def running(pid):
    """Whether ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        with open('/proc/%d/stat' % pid) as stat:
            return stat.read().rsplit(')', 1)[1].split()[0] not in 'ZX'
    except FileNotFoundError:
        return False


def test_the_harness_leaves_nothing_behind():
    with ContainerServers(1) as servers:
        pids = [servers.head.process.pid, servers.containers[0].init_pid]
        keydir = servers.keydir
    time.sleep(0.5)
    assert not any(running(pid) for pid in pids)
    assert not os.path.exists(keydir)
