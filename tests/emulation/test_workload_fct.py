"""The workload generator's FCT against size / rate: two hosts of the
non-blocking reference switch (10 Mbit/s links), one flow at a time, each
flow's measured FCT against the ideal the experiment divides by
(scripts/emulator/shaping.py), through the emulator backend's own fabrics
and measurement (bisection_backend.Fabrics, workload_backend.measure)."""
import re

import pytest

from scripts.emulator.bisection_backend import Fabrics
from scripts.emulator.workload_backend import measure
from topologies.fattree import FatTree

pytestmark = pytest.mark.emulation

BW_MBPS = 10.0
ALLOWED_TCP = '/proc/sys/net/ipv4/tcp_allowed_congestion_control'
# (start s, size bytes): one flow at a time, both directions, 10 KB to 2 MB
SPACED = ((0.0, 10_000), (0.4, 100_000), (0.8, 1_000_000), (2.2, 10_000), (2.6, 2_000_000), (4.7, 300_000))


def test_fct_of_lone_flows_is_size_over_rate(require_ovs):
    topo = FatTree(4)
    a, b = topo.hosts[0].name, topo.hosts[-1].name
    flows = [{'id': i, 'start_s': start, 'src': (a, b)[i % 2], 'dst': (b, a)[i % 2], 'size': size}
             for i, (start, size) in enumerate(SPACED)]
    config = {'k': 4, 'bw': BW_MBPS, 'queue': 50, 'schemes': ['nonblocking'], 'seconds': 5.5}
    with open(ALLOWED_TCP) as f:
        allowed = f.read()
    with Fabrics(config, progress=lambda message: None) as fabrics:
        net, host_of = fabrics.use('nonblocking')
        sender = net.get(host_of[a])
        # the hosts run CUBIC, and the machine's list of allowed ones is as it was
        assert sender.cmd('sysctl -n net.ipv4.tcp_congestion_control').strip() == 'cubic'
        with open(ALLOWED_TCP) as f:
            assert f.read() == allowed
        # both of a shaped link's buckets hold 24 ms of its rate (30,000 bytes at 10 Mbit/s)
        htb = sender.cmd('tc -d class show dev %s classid 5:1' % sender.defaultIntf())
        sizes = [int(n) * (1024 if unit == 'Kb' else 1) for n, unit in re.findall(r'burst (\d+)(b|Kb)/', htb)]
        assert len(sizes) == 2 and all(abs(size - 30000) < 400 for size in sizes), htb  # burst, cburst
        results, ideal, figures = measure(net, host_of, topo, flows, 'nonblocking', config, 5, None)
    assert sorted(results) == [f['id'] for f in flows], results
    seen = [(flow['size'], results[flow['id']], round(ideal[flow['id']], 4)) for flow in flows]
    for flow in flows:
        result, ideal_s = results[flow['id']], ideal[flow['id']]
        assert result.get('bytes') == flow['size'] and 'fct_s' in result, seen
        # every flow started on time, alone on the link
        assert abs(result['start_s'] - flow['start_s']) < 0.05, seen
        # size beyond the buckets over goodput dominates from 100 KB on; a flow
        # within the buckets takes its RTTs and slow start's (docs/workload.md)
        low = 0.6 if flow['size'] < 100_000 else 0.85
        assert low * ideal_s < result['fct_s'] < 1.25 * ideal_s + 0.005, seen
    assert figures['base_rtt_ms']['1'] > 0
    print(seen)
