"""The P4 programs compiled by p4c and run in bmv2 simple_switch, with real
packets in Mininet. Skipped when the P4 tools are not on PATH (CI has no P4
toolchain: p4c and bmv2 are not packaged for Debian; see docs/p4.md)."""
import json
import os
import subprocess
import sys
import time

import pytest

from scripts.emulator import traffic
from tests.conftest import require_emulation
from scripts.p4.bmv2_fabric import (
    P4Error, P4Fabric, compile_program, fattree_model, letflow_model, missing_tools, sketch_model)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISSING = missing_tools()
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason='P4 toolchain not on PATH (missing: %s): the one allowed skip, since no '
                          'registry here has p4c or bmv2 (CI has none; see docs/p4.md)' % ' '.join(MISSING))

# Send ``count`` UDP datagrams of ``size`` payload bytes from a fixed source
# port, one every ``interval`` seconds: one 5-tuple, one flow.
SENDER = ('import socket, sys, time\n'
          'dst, count, size, interval = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])\n'
          's = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n'
          's.bind(("", 40000))\n'
          'for _ in range(count):\n'
          '    s.sendto(bytes(size), (dst, 5001))\n'
          '    time.sleep(interval)\n')


def send_udp(host, dst_ip, count, size=100, interval=0.001):
    sender = host.popen([sys.executable, '-c', SENDER, dst_ip, str(count), str(size), str(interval)])
    _, err = sender.communicate()
    assert sender.returncode == 0, err


def needs_root():
    require_emulation()


@pytest.mark.parametrize('program, table', [
    ('two_level', 'TwoLevelIngress.tcam'),
    ('letflow', 'LetFlowIngress.ecmp_member'),
    ('distda_sketch', 'SketchIngress.src_tor'),
])
def test_program_compiles(tmp_path, program, table):
    with open(compile_program(program, str(tmp_path))) as f:
        compiled = json.load(f)
    tables = {t['name'] for p in compiled['pipelines'] for t in p['tables']}
    assert table in tables


@pytest.fixture(scope='module')
def fattree():
    needs_root()
    model, commands = fattree_model(4)
    with P4Fabric(model, 'two_level', commands) as fabric:
        yield fabric


@pytest.mark.emulation
def test_fattree_all_pairs_ping(fattree):
    result = traffic.reachability(fattree.net, [h.name for h in fattree.net.hosts])
    assert len(result) == 16 * 15
    assert sorted(pair for pair, ok in result.items() if not ok) == []


@pytest.mark.emulation
def test_fattree_ttl_counts_switches(fattree):
    # Across pods a packet crosses edge, aggregation, core, aggregation, edge.
    out = fattree.node('p4h0_0_2').cmd('ping -c1 -W2 -t 64 10.3.1.3')
    assert 'ttl=59' in out, out
    out = fattree.node('p4h0_0_2').cmd('ping -c1 -W2 -t 64 10.0.0.3')
    assert 'ttl=63' in out, out


@pytest.mark.emulation
def test_fattree_tcp_across_pods(fattree):
    server, client = fattree.node('p4h3_1_3'), fattree.node('p4h0_0_2')
    iperf = server.popen(['iperf3', '-s', '-1', '-p', '5201'])
    try:
        time.sleep(0.5)
        out = client.cmd('iperf3 -c 10.3.1.3 -p 5201 -t 2 -J')
        result = json.loads(out[out.index('{'):])
        assert result['end']['sum_received']['bytes'] > 0, out
    finally:
        iperf.terminate()
        iperf.wait()


def uplink_tx(fabric, leaf, ports=(3, 4)):
    switch = fabric.node(leaf)
    return [int(switch.cmd('cat /sys/class/net/%s-eth%d/statistics/tx_packets' % (leaf, p)))
            for p in ports]


def burst_per_uplink(fabric, src, dst_ip, count):
    """Packets of one UDP burst leaving p4leaf0 on each uplink, once all
    have left (bmv2 may still hold some when the sender is done)."""
    before = uplink_tx(fabric, 'p4leaf0')
    send_udp(src, dst_ip, count=count, interval=0.002)
    deadline = time.time() + 5
    while True:
        sent = [a - b for a, b in zip(uplink_tx(fabric, 'p4leaf0'), before)]
        if sum(sent) >= count or time.time() > deadline:
            return sent
        time.sleep(0.05)


@pytest.mark.emulation
def test_letflow_keeps_a_flowlet_and_repicks_after_a_gap():
    needs_root()
    # Delta is generous: bmv2 on a loaded 2-core machine can stall for tens
    # of milliseconds, which must not split a burst.
    delta = 0.2
    model, commands = letflow_model(delta_us=int(delta * 1e6))
    with P4Fabric(model, 'letflow', commands) as fabric:
        src = fabric.node('p4h0_2')
        picks = []
        for _ in range(14):
            sent = burst_per_uplink(fabric, src, '10.0.1.2', 40)
            # every packet of a burst (gaps << Delta) leaves on one uplink
            assert sorted(sent) == [0, 40], sent
            picks.append(sent.index(40))
            time.sleep(3 * delta)   # idle > 2 Delta: the flowlet has ended
        # a new flowlet takes a random uplink: 14 picks all on one port
        # have probability 2**-13
        assert set(picks) == {0, 1}, picks
        # the member list at run time: one slot (entry handle 0), spine 1
        fabric.node('p4leaf0').run_cli([
            'table_set_default LetFlowIngress.config set_config %d 1' % (delta * 1e6),
            'table_modify LetFlowIngress.ecmp_member set_uplink 0 => 4'])
        for _ in range(3):
            time.sleep(3 * delta)
            assert burst_per_uplink(fabric, src, '10.0.1.2', 40) == [0, 40]
        assert ', 0% packet loss' in fabric.node('p4h1_2').cmd('ping -c1 -W2 10.0.0.3')


@pytest.mark.emulation
def test_rejected_entry_fails_the_start_and_cleans_up():
    needs_root()
    model, commands = letflow_model(delta_us=1000)
    commands['p4leaf0'] = commands['p4leaf0'] + [
        'table_add LetFlowIngress.routes to_port 10.9.0.0/16 => 999999']
    with pytest.raises(P4Error, match='Parameter is too large'):
        with P4Fabric(model, 'letflow', commands):
            pass
    links = subprocess.run(['ip', '-o', 'link'], capture_output=True, text=True, timeout=120).stdout
    assert 'p4leaf0' not in links
    assert subprocess.run(['pgrep', '-f', '@p4leaf0-eth'], capture_output=True, timeout=120).stdout == b''


@pytest.mark.emulation
def test_sketch_reports_a_heavy_source_once_per_window():
    needs_root()
    window, threshold = 4.0, 200000
    model, commands = sketch_model(window_us=int(window * 1e6), threshold_bytes=threshold)
    with P4Fabric(model, 'distda_sketch', commands) as fabric:
        collector = fabric.node('p4cpu')
        listener = collector.popen([sys.executable, '-m', 'scripts.p4.bmv2_fabric', 'listen-reports',
                                    'p4cpu-eth0', str(2 * window + 1)], cwd=REPO,
                                   stdout=subprocess.PIPE, text=True)
        try:
            assert 'listening' in listener.stdout.readline()
            heavy, light = fabric.node('p4src1'), fabric.node('p4src2')
            started = time.time()
            # 300 datagrams of 1,428 IPv4 bytes: 428 kB, over the threshold
            send_udp(heavy, '10.0.0.2', count=300, size=1400, interval=0.0005)
            send_udp(light, '10.0.0.2', count=20, size=100)
            assert time.time() - started < window, 'first burst spilled into the next window'
            time.sleep(window + 0.5 - (time.time() - started))
            send_udp(heavy, '10.0.0.2', count=300, size=1400, interval=0.0005)
            output = listener.communicate()[0]
        finally:
            listener.kill()
            listener.wait()
    reports = [json.loads(line) for line in output.splitlines() if line]
    assert [r['tor'] for r in reports] == [1, 1], reports
    assert reports[0]['window'] + 1 == reports[1]['window']
    assert all(threshold <= r['bytes'] < threshold + 1500 for r in reports), reports
