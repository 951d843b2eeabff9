"""Measure fat-tree start-up: time from net.start() to all-pairs
reachability, and OpenFlow rule counts per switch role, for several k.

    python -m scripts.fattree.measure [--k 4 6 8] [--out results/fattree]

Prints a table and writes results/fattree/startup.json and startup.csv.
"""
import argparse
import csv
import json
import os
import subprocess
import time

from controller.fattree.pipeline import rule_counts
from controller.fattree.twolevel import all_tables
from scripts import traffic
from scripts.argtypes import fattree_k
from scripts.fabric import Fabric, progress
from topologies.fattree import FatTree


def installed_rule_count(switch):
    out = subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', '--no-stats', 'dump-flows', switch],
                         capture_output=True, text=True, check=True).stdout
    return sum(1 for line in out.splitlines() if 'priority=' in line)


def measure(k, ofp_port, rest_port):
    topo = FatTree(k)
    tables = all_tables(topo)
    hosts = [h.name for h in topo.hosts]
    build_started = time.time()
    with Fabric(topo, 'controller.fattree.app', {'k': k}, ofp_port=ofp_port,
                rest_port=rest_port) as fabric:
        build_s = fabric.started_at - build_started
        progress('k=%d: started in %.1f s; pinging all %d pairs' % (k, build_s, len(hosts) * (len(hosts) - 1)))
        reach_s = traffic.wait_all_pairs(fabric.net, hosts, deadline_s=300, progress=progress)
        reach_s = time.time() - fabric.started_at
        roles = {}
        for switch in topo.switches:
            prefixes, suffixes, housekeeping = rule_counts(tables[switch.name])
            installed = installed_rule_count(switch.name)
            if installed != prefixes + suffixes + housekeeping:
                raise RuntimeError('%s has %d rules installed, %d computed'
                                   % (switch.name, installed, prefixes + suffixes + housekeeping))
            roles.setdefault(switch.role, set()).add((prefixes, suffixes, housekeeping))
    return {'k': k, 'switches': len(topo.switches), 'hosts': len(hosts),
            'pairs': len(hosts) * (len(hosts) - 1), 'build_and_start_s': round(build_s, 2),
            'start_to_all_pairs_s': round(reach_s, 2),
            'rules': {role: [{'prefix': p, 'suffix': s, 'housekeeping': h, 'total': p + s + h}
                             for p, s, h in sorted(counts)] for role, counts in roles.items()}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=fattree_k, nargs='+', default=[4, 6, 8])
    parser.add_argument('--out', default='results/fattree')
    parser.add_argument('--ofp-port', type=int, default=6653)
    parser.add_argument('--rest-port', type=int, default=8080)
    args = parser.parse_args(argv)
    rows = [measure(k, args.ofp_port, args.rest_port) for k in args.k]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'startup.json'), 'w') as f:
        json.dump(rows, f, indent=2)
    with open(os.path.join(args.out, 'startup.csv'), 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['k', 'switches', 'hosts', 'build_and_start_s', 'start_to_all_pairs_s',
                         'role', 'prefix_rules', 'suffix_rules', 'housekeeping_rules', 'total_rules'])
        for row in rows:
            for role, counts in sorted(row['rules'].items()):
                for c in counts:
                    writer.writerow([row['k'], row['switches'], row['hosts'], row['build_and_start_s'],
                                     row['start_to_all_pairs_s'], role, c['prefix'], c['suffix'],
                                     c['housekeeping'], c['total']])
    print('%3s %8s %6s %9s %14s  %s' % ('k', 'switches', 'hosts', 'start (s)', 'all-pairs (s)',
                                        'rules per switch: prefix+suffix+housekeeping'))
    for row in rows:
        rules = ', '.join('%s %s' % (role, '/'.join('%d+%d+%d' % (c['prefix'], c['suffix'], c['housekeeping'])
                                                     for c in counts))
                          for role, counts in sorted(row['rules'].items()))
        print('%3d %8d %6d %9.1f %14.1f  %s' % (row['k'], row['switches'], row['hosts'],
                                                row['build_and_start_s'], row['start_to_all_pairs_s'], rules))
    print('written: %s/startup.json, startup.csv' % args.out)


if __name__ == '__main__':
    main()
