"""Measure a fat-tree on one, two and three container servers of this
machine (scripts/cluster/containers.py): build and start time, time to
all-pairs reachability, aggregate TCP throughput of a random permutation
(unshaped), CPU of each server's ovs-vswitchd during it, tunnel count, and
BFD detection of a silent failure of a tunnel.

    python -m scripts.cluster.measure [--k 4] [--servers 1 2 3] [--out results/cluster]

Run as root, under the emulation lock; prints a table and writes
measure.json and measure.csv.
"""
import argparse
import csv
import json
import os
import time

from scripts import faults, traffic
from scripts.cluster.containers import ContainerServers
from scripts.cluster.net import ClusterFabric
from scripts.fabric import progress
from scripts.fattree import patterns
from topologies.fattree import FatTree, check_k

CLK_TCK = os.sysconf('SC_CLK_TCK')
VSWITCHD_TICKS = 'cut -d" " -f14,15 /proc/$(cat /run/openvswitch/ovs-vswitchd.pid)/stat'


def vswitchd_ticks(fabric):
    """{server: user+system clock ticks of its ovs-vswitchd so far}."""
    return {server: sum(int(t) for t in fabric.sites.run(server, 'sh', '-c', VSWITCHD_TICKS).stdout.split())
            for server in fabric.servers}


def bfd_detection_s(topo, fabric, timeout=30):
    """(seconds to inject a silent failure of the first tunnel, seconds from
    then until BFD is seen down at both ends): both are ssh round trips
    from here, so the second is an upper bound; the link is recovered."""
    link = fabric.tunnels[0]
    ends = [end.name for end in faults.link_interfaces(topo, link.node_a, link.node_b, fabric.sites)]
    start = time.time()
    faults.fail_link(topo, link.node_a, link.node_b, silent=True, sites=fabric.sites)
    injected = time.time()
    try:
        while {faults.bfd_states(topo, fabric.sites)[i] for i in ends} != {'down'}:
            if time.time() - start > timeout:
                raise RuntimeError('BFD did not detect the failure of %s-%s' % (link.node_a, link.node_b))
        return injected - start, time.time() - injected
    finally:
        faults.recover_link(topo, link.node_a, link.node_b, sites=fabric.sites)
        faults.wait_bfd_up(topo, sites=fabric.sites)


def measure(k, count, seconds, seed):
    topo = FatTree(k)
    hosts = [h.name for h in topo.hosts]
    with ContainerServers(count) as servers, servers.in_head():
        started = time.time()
        with ClusterFabric(topo, 'controller.fattree.app', {'k': k}, servers.servers, tunnel='vxlan',
                           bfd_ms=100) as fabric:
            start_s = fabric.started_at - started
            up_s = time.time() - started
            progress('k=%d on %d servers: started in %.1f s (BFD up at %.1f s)' % (k, count, start_s, up_s))
            reach_s = traffic.wait_all_pairs(fabric.net, hosts, deadline_s=300, progress=progress)
            pairs = patterns.seeded('random', topo, seed)
            ticks = vswitchd_ticks(fabric)
            flow_started = time.time()
            reports = traffic.iperf3_flows(fabric.net, pairs, seconds, omit=1, server_wait_s=5.0)
            rates = [traffic.received_mbps(report) for report in reports]
            elapsed = time.time() - flow_started
            cpu = {server: round(100.0 * (now - ticks[server]) / CLK_TCK / elapsed, 1)
                   for server, now in vswitchd_ticks(fabric).items()}
            inject_s, bfd_s = bfd_detection_s(topo, fabric) if fabric.tunnels else (None, None)
            tunnels = len(fabric.tunnel_links())
    return {'k': k, 'servers': count, 'switches': len(topo.switches), 'hosts': len(hosts),
            'tunnels': tunnels, 'build_and_start_s': round(start_s, 2), 'bfd_up_s': round(up_s, 2),
            'all_pairs_s': round(reach_s, 2), 'flows': len(pairs), 'flow_seconds': seconds,
            'aggregate_mbps': round(sum(rates), 1),
            'vswitchd_cpu_pct': list(cpu.values()), 'tunnel_failure_injection_s': inject_s and round(inject_s, 2),
            'bfd_down_seen_within_s': bfd_s and round(bfd_s, 2)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=int, nargs='+', default=[4])
    parser.add_argument('--servers', type=int, nargs='+', default=[1, 2, 3])
    parser.add_argument('--seconds', type=int, default=10, help='iperf3 duration per run')
    parser.add_argument('--seed', default='cluster')
    parser.add_argument('--out', default='results/cluster')
    args = parser.parse_args(argv)
    for k in args.k:
        check_k(k)
    rows = [measure(k, count, args.seconds, args.seed) for k in args.k for count in args.servers]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'measure.json'), 'w') as f:
        json.dump(rows, f, indent=2)
    columns = list(rows[0])
    with open(os.path.join(args.out, 'measure.csv'), 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(['/'.join(map(str, row[c])) if isinstance(row[c], list) else row[c] for c in columns])
    print('%3s %7s %7s %9s %12s %14s %22s %10s %9s' % (
        'k', 'servers', 'tunnels', 'start (s)', 'all-pairs (s)', 'TCP sum Mbit/s', 'ovs-vswitchd CPU %',
        'inject (s)', 'BFD <= (s)'))
    for row in rows:
        print('%3d %7d %7d %9.1f %12.1f %14.1f %22s %10s %9s' % (
            row['k'], row['servers'], row['tunnels'], row['build_and_start_s'], row['all_pairs_s'],
            row['aggregate_mbps'], '/'.join('%.0f' % c for c in row['vswitchd_cpu_pct']),
            row['tunnel_failure_injection_s'], row['bfd_down_seen_within_s']))


if __name__ == '__main__':
    main()
