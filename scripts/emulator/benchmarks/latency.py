"""What a switch traversal costs in the emulator: ping RTT by hop count on
a k-ary fat-tree (1, 3 and 5 switches: same edge, same pod, another pod)
and on the non-blocking reference (1 switch), idle and while every host
sends one iperf3 TCP flow of a random permutation.

    dcfabric measure latency [--k 4] [--count 100] [--bw MBPS] [--out results/emulator]

Writes OUT/latency.json and prints the table.
"""
import argparse
import re
import statistics
import sys
import threading

from controller.fattree import APP, READY_PATH
from scripts.results import write_result
from scripts.argtypes import fattree_k, positive
from topologies.fattree import FatTree
from topologies.nonblocking import NonBlocking, host_name

LOAD_SECONDS = 12
NONBLOCKING_APP = 'controller.fattree.nonblocking_switch_app'


def rtts(host, dst, count):
    out = host.cmd('ping -n -i 0.05 -c %d %s' % (count, dst))
    return sorted(float(m) for m in re.findall(r'time=([\d.]+) ms', out))


def summary(values, switches):
    median = statistics.median(values)
    return {'switches': switches, 'pings': len(values), 'rtt_ms_median': round(median, 3),
            'rtt_ms_p99': round(values[int(0.99 * (len(values) - 1))], 3),
            'ms_per_traversal': round(median / (2 * switches), 3)}


def measure_pairs(fabric, pairs, count, loaded, progress):
    """{pair label: summary} idle, or while a permutation of iperf3 flows runs."""
    from scripts.emulator import traffic
    rows = {}
    flows = None
    if loaded:
        hosts = sorted(h.name for h in fabric.net.hosts)
        permutation = list(zip(hosts, hosts[1:] + hosts[:1]))
        flows = threading.Thread(target=traffic.iperf3_flows,
                                 args=(fabric.net, permutation, LOAD_SECONDS, 0, 5301), daemon=True)
        flows.start()
        threading.Event().wait(3)  # the flows up to speed
    for label, (src, dst, switches) in pairs.items():
        progress('%s: %s -> %s (%d switches)%s' % (fabric.model.name, src, dst, switches, ' under load' if loaded else ''))
        rows[label] = summary(rtts(fabric.net.get(src), fabric.net.get(dst).IP(), count), switches)
    if flows:
        flows.join()
    return rows


def run(args, progress):
    from scripts.emulator.fabric import Fabric
    from scripts.emulator.ports import free_port
    topo = FatTree(args.k)
    src = topo.hosts[0].name
    same_edge = next(h.name for h in topo.hosts[1:] if topo.host_attachment(h.name)[0] == topo.host_attachment(src)[0])
    same_pod = next(h.name for h in topo.hosts if topo.pod_of(h.name) == topo.pod_of(src)
                    and topo.host_attachment(h.name)[0] != topo.host_attachment(src)[0])
    other_pod = topo.hosts[-1].name
    fattree_pairs = {'same edge': (src, same_edge, 1), 'same pod': (src, same_pod, 3), 'other pod': (src, other_pod, 5)}
    result = {'k': args.k, 'bw_mbps': args.bw, 'count': args.count, 'load_seconds': LOAD_SECONDS, 'rows': []}
    nonblocking = NonBlocking(args.k)
    for model, app, pairs, ready in (
            (topo, APP, fattree_pairs, READY_PATH),
            (nonblocking, NONBLOCKING_APP, {'non-blocking': (host_name(0), host_name(len(topo.hosts) - 1), 1)}, None)):
        with Fabric(model, app, {'k': args.k}, ofp_port=free_port(), rest_port=free_port(), bw=args.bw,
                    ready_path=ready) as fabric:
            for loaded in (False, True):
                for label, row in measure_pairs(fabric, pairs, args.count, loaded, progress).items():
                    result['rows'].append(dict(row, pair=label, load='permutation' if loaded else 'idle'))
    return result


def markdown(result):
    lines = ['| path | switches | load | RTT median (ms) | RTT p99 (ms) | ms per switch traversal |',
             '|---|---|---|---|---|---|']
    for r in result['rows']:
        lines.append('| %s | %d | %s | %.3f | %.3f | %.3f |' % (r['pair'], r['switches'], r['load'], r['rtt_ms_median'],
                                                              r['rtt_ms_p99'], r['ms_per_traversal']))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='dcfabric measure latency', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--k', type=fattree_k, default=4)
    parser.add_argument('--count', type=positive(int), default=100, help='pings per path (every 50 ms)')
    parser.add_argument('--bw', type=positive(float), help='shape every link (default: unshaped)')
    parser.add_argument('--out', default='results/emulator')
    args = parser.parse_args(argv)
    from scripts.emulator.command import run_command
    result = run_command('latency', lambda: run(args, lambda m: print('... ' + m, file=sys.stderr, flush=True)))
    write_result(args.out, 'latency.json', result, markdown)
    return 0


if __name__ == '__main__':
    main()
