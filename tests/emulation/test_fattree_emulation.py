"""Controller + Mininet k=4 fat-tree on userspace OVS: reachability, TCP
between pods, and state that survives reconnects and controller restarts.
One fabric is shared by every test of this module."""
import os
import re
import subprocess
import time

import pytest

from scripts.emulator import traffic
from scripts.emulator.ovs import vswitchd
from scripts.emulator.fabric import Fabric
from scripts.emulator.host_cpu_group import HOSTS_CPU_SHARES
from tests.conftest import free_port
from topologies.fattree import FatTree

pytestmark = pytest.mark.emulation


def cpu_cgroup(pid):
    """The cpu cgroup process ``pid`` is in ("/": none of its own)."""
    with open('/proc/%d/cgroup' % pid) as cgroups:
        return next(line.strip().split(':')[2] for line in cgroups if line.split(':')[1] == 'cpu')


def wait_exec(process, program, timeout=5):
    """Wait until ``process`` runs ``program`` (past mnexec, which joins the group)."""
    deadline = time.time() + timeout
    while open('/proc/%d/cmdline' % process.pid, 'rb').read().split(b'\0')[0] != program:
        assert time.time() < deadline, 'still not %s after %ss' % (program, timeout)
        time.sleep(0.05)


@pytest.fixture(scope='module')
def k4(require_ovs):
    topo = FatTree(4)
    with Fabric(topo, 'controller.fattree.routing_app', {'k': 4}, ofp_port=free_port(),
                rest_port=free_port()) as fabric:
        traffic.wait_all_pairs(fabric.net, [h.name for h in topo.hosts], progress=lambda m: None)
        group = '/' + fabric.host_group.name
        # a host process that Mininet's stop would not end (a session of its own)
        sleeper = fabric.net.get('h0_0_2').popen(['sleep', '600'])
        yield topo, fabric, group, sleeper
    assert sleeper.wait(timeout=5) == -9  # killed when its group was removed
    assert not os.path.exists('/sys/fs/cgroup/cpu' + group)


def test_every_host_process_is_in_the_hosts_cpu_group(k4):
    topo, fabric, group, sleeper = k4
    assert [cpu_cgroup(fabric.net.get(h.name).pid) for h in topo.hosts] == [group] * len(topo.hosts)
    wait_exec(sleeper, b'sleep')
    assert cpu_cgroup(sleeper.pid) == group
    with open('/sys/fs/cgroup/cpu%s/cpu.shares' % group) as shares:
        assert int(shares.read()) == HOSTS_CPU_SHARES
    daemon = vswitchd.daemon_pid()
    assert cpu_cgroup(daemon) == '/'  # switches and controller beside the hosts, not in their group
    assert cpu_cgroup(fabric.controller.process.pid) == '/'


def flows(switch):
    out = subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', '--no-stats', 'dump-flows', switch],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return sorted(line.strip() for line in out.splitlines() if 'priority' in line)


def flow_ages(switch):
    """Seconds since each flow of the switch was installed (one dump: the
    controller may wipe the switch between two)."""
    out = subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', 'dump-flows', switch],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return [float(age) for age in re.findall(r'duration=([\d.]+)s', out)]


def wait_reinstalled(switch, since, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        ages = flow_ages(switch)
        if ages and max(ages) < time.time() - since:
            return
        time.sleep(0.2)
    raise AssertionError('%s was not reinstalled within %ds' % (switch, timeout))


def test_all_pairs_ping_without_loss(k4):
    topo, fabric, _, _ = k4
    results = traffic.reachability(fabric.net, [h.name for h in topo.hosts], retries=0)
    assert len(results) == 16 * 15
    assert all(results.values()), [pair for pair, ok in results.items() if not ok]


def test_path_length_visible_in_ttl(k4):
    _, fabric, _, _ = k4
    assert traffic.ping_ttl(fabric.net, 'h0_0_2', 'h0_0_3') == 63
    assert traffic.ping_ttl(fabric.net, 'h0_0_2', 'h0_1_2') == 61
    assert traffic.ping_ttl(fabric.net, 'h0_0_2', 'h2_1_3') == 59


def test_tcp_between_pods(k4):
    _, fabric, _, _ = k4
    report = traffic.iperf3(fabric.net, 'h0_0_2', 'h3_1_3', seconds=3)
    assert traffic.received_mbps(report) > 5


def test_reconnecting_switch_gets_the_same_rules(k4):
    _, fabric, _, _ = k4
    before = flows('a1_2')
    assert len(before) == 5 + 3 + 2
    since = time.time()
    subprocess.run(['ovs-vsctl', '--timeout=60', 'del-controller', 'a1_2'], check=True, timeout=120)
    time.sleep(0.5)
    subprocess.run(['ovs-vsctl', '--timeout=60', 'set-controller', 'a1_2', 'tcp:127.0.0.1:%d' % fabric.ofp_port],
                   check=True, timeout=120)
    wait_reinstalled('a1_2', since)
    assert flows('a1_2') == before


def test_restarted_controller_reinstalls_the_same_state(k4):
    topo, fabric, _, _ = k4
    before = {s.name: flows(s.name) for s in topo.switches}
    since = time.time()
    fabric.controller.stop()
    fabric.controller.start()
    for switch in topo.switches:
        wait_reinstalled(switch.name, since, timeout=30)
    assert {s.name: flows(s.name) for s in topo.switches} == before
    results = traffic.reachability(fabric.net, ['h0_0_2', 'h1_1_3', 'h3_0_2'])
    assert all(results.values())


def test_unknown_switch_is_left_alone(k4):
    _, fabric, _, _ = k4
    bridge = 'tstranger'
    subprocess.run(['ovs-vsctl', '--timeout=60', '--', '--if-exists', 'del-br', bridge, '--', 'add-br', bridge,
                    '--', 'set', 'bridge', bridge, 'datapath_type=netdev', 'protocols=OpenFlow13',
                    'fail_mode=secure', 'other-config:datapath-id=00000000000000ff',
                    '--', 'set-controller', bridge, 'tcp:127.0.0.1:%d' % fabric.ofp_port], check=True, timeout=120)
    try:
        deadline = time.time() + 15
        while 'unknown dpid 0xff' not in fabric.controller.log_tail(200):
            assert time.time() < deadline, 'controller never saw the stranger'
            time.sleep(0.2)
        assert flows(bridge) == []
    finally:
        subprocess.run(['ovs-vsctl', '--timeout=60', '--if-exists', 'del-br', bridge], check=True, timeout=120)
