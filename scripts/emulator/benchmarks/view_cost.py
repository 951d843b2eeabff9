"""What the live view and the metrics cost the controller of a k-ary
fat-tree: controller CPU while idle, start-to-all-pairs time, and the time
to answer /view/state and /metrics, with the counter polls off, on, and on
with a headless browser showing the page.

    python -m scripts.emulator.benchmarks.view_cost [--k 8] [--window 30] [--out results/view_cost]

Prints a table and writes view_cost_kK.json and .csv under --out.
"""
import argparse
import contextlib
import csv
import json
import os
import socket
import time
import urllib.request

from scripts.emulator import traffic
from scripts.browser import headless_chromium
from scripts.emulator.fabric import Fabric
from scripts.emulator.progress import progress
from topologies.fattree import FatTree, check_k
from topologies.renamed import renamed

PREFIX = 'vc'  # Mininet names of its own: no clash with another k-ary fat-tree emulation
# (name, counter poll period in s (0: none), browser on /view)
CONFIGS = [('no counter polls', 0, False), ('polls every 2 s', 2.0, False),
           ('polls every 2 s + browser', 2.0, True)]
FIELDS = ['config', 'k', 'stats_period_s', 'browser', 'start_to_all_pairs_s', 'controller_cpu_s',
          'window_s', 'controller_cpu_percent', 'view_state_ms', 'metrics_ms', 'metrics_bytes']


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open('/proc/%d/stat' % pid) as stat:
        fields = stat.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def fetch_ms(url, repeats=5):
    """Median time to fetch ``url`` and its size."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        with urllib.request.urlopen(url, timeout=30) as reply:
            body = reply.read()
        times.append(1e3 * (time.perf_counter() - started))
    return sorted(times)[len(times) // 2], len(body)


def measure(k, config, window_s):
    name, period, with_browser = config
    topo = renamed(FatTree(k), PREFIX)
    hosts = [h.name for h in topo.hosts]
    with Fabric(topo, 'controller.fattree.routing_app', {'k': k}, ofp_port=free_port(), rest_port=free_port(),
                stats_period=period) as fabric, \
            (headless_chromium() if with_browser else contextlib.nullcontext()) as browser:
        url = 'http://127.0.0.1:%d' % fabric.controller.rest_port
        if browser is not None:
            browser.get(url + '/view')
        progress('%s: started; pinging all %d pairs' % (name, len(hosts) * (len(hosts) - 1)))
        traffic.wait_all_pairs(fabric.net, hosts, deadline_s=300, progress=progress)
        all_pairs_s = time.time() - fabric.started_at
        pid = fabric.controller.process.pid
        progress('%s: all pairs after %.1f s; controller CPU over %d s' % (name, all_pairs_s, window_s))
        before = cpu_seconds(pid)
        time.sleep(window_s)
        cpu_s = cpu_seconds(pid) - before
        if browser is not None:
            drawn = browser.execute_script('return document.querySelectorAll("#fabric .link").length')
            if drawn != len(topo.links):
                raise RuntimeError('the browser drew %d of %d links' % (drawn, len(topo.links)))
        state_ms, _ = fetch_ms(url + '/view/state')
        metrics_ms, metrics_bytes = fetch_ms(url + '/metrics')
    return {'config': name, 'k': k, 'stats_period_s': period, 'browser': with_browser,
            'start_to_all_pairs_s': round(all_pairs_s, 1), 'controller_cpu_s': round(cpu_s, 2),
            'window_s': window_s, 'controller_cpu_percent': round(100 * cpu_s / window_s, 1),
            'view_state_ms': round(state_ms, 1), 'metrics_ms': round(metrics_ms, 1),
            'metrics_bytes': metrics_bytes}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=int, default=8)
    parser.add_argument('--window', type=int, default=30, help='seconds of idle controller CPU measured')
    parser.add_argument('--out', default='results/view_cost')
    args = parser.parse_args(argv)
    check_k(args.k)
    rows = [measure(args.k, config, args.window) for config in CONFIGS]
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, 'view_cost_k%d' % args.k)
    with open(stem + '.json', 'w') as out:
        json.dump(rows, out, indent=1)
    with open(stem + '.csv', 'w', newline='') as out:
        writer = csv.DictWriter(out, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print('%-28s %14s %14s %12s %10s' % ('k=%d' % args.k, 'all-pairs (s)', 'ctrl CPU (%)',
                                         'state (ms)', 'metrics (ms)'))
    for row in rows:
        print('%-28s %14.1f %14.1f %12.1f %10.1f' % (row['config'], row['start_to_all_pairs_s'],
                                                     row['controller_cpu_percent'], row['view_state_ms'],
                                                     row['metrics_ms']))
    print('written: %s.json, %s.csv' % (stem, stem))


if __name__ == '__main__':
    main()
