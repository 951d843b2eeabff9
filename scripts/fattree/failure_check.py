"""Model check: does the fat-tree controller route every host pair that still
has a physical path, under a set of failed links or switches?

For each failure set it computes the tables the controller would install
(controller.fattree.failover.tables_with_failures) and, per destination host,
the switches from which *every* port those tables may choose (the suffix's
port, its fast-failover alternatives, ECMP's hash) delivers: a least fixpoint
over the cabling, so a loop never counts as delivering. A (source,
destination) pair whose hosts are still physically connected but whose source
edge switch is not in that set is unrouted. The same check over the paper's
broadcast alone (no per-destination detours) shows what the detours repair,
over every choice and over each suffix's own port only (a plain walk of the
two-level lookup).

    python -m scripts.fattree.failure_check [--out results/failure_check] [--quick]

Exhaustive: every single and double link failure and every single switch
failure at k=4 and k=6. Sampled at k=8 (seeded): triple link failures and
single and double switch failures. Writes failure_check.json.
"""
import argparse
import itertools
import json
import os
import random
import time

from controller.fattree.failover import (
    broadcast_tables, detours, expand_failures, hop_distances, link_key,
    live_neighbours, PortChoices, tables_with_failures)
from topologies.fattree import FatTree


def delivering_switches(topo, choices, failed, host):
    """Switches from which every port the tables (as PortChoices) may choose
    reaches ``host``."""
    ip = topo.node(host).ip
    order = sorted(hop_distances(live_neighbours(topo, failed), topo.host_attachment(host)[0]).items(),
                   key=lambda item: item[1])
    good, grown = set(), True
    while grown:
        grown = False
        for switch, _ in order:
            if switch in good:
                continue
            ports = choices[switch](ip)
            if ports and all(_leads(topo, failed, switch, port, host, good) for port in ports):
                good.add(switch)
                grown = True
    return good


def _leads(topo, failed, switch, port, host, good):
    peer = topo.peer(switch, port)
    if peer is None:
        return False
    return peer[0] == host or (peer[0] in good and link_key(switch, peer[0]) not in failed)


def own_port_only(table):
    """The choice of a table without fast failover or hashing: each
    suffix's own port (what a walk of the two-level lookup follows)."""
    def choose(ip):
        port = table.lookup(ip)
        return () if port is None else (port,)
    return choose


def unrouted_pairs(topo, tables, failed, dead_switches=(), choice=PortChoices):
    """(connected pairs, [unrouted (src, dst)]) over every ordered host pair
    whose hosts hang off live switches; ``choice(table)`` gives a table's
    ports for a destination (by default every one it may use)."""
    neighbours = live_neighbours(topo, failed)
    hosts = [h.name for h in topo.hosts if topo.host_attachment(h.name)[0] not in dead_switches]
    choices = {name: choice(table) for name, table in tables.items()}
    connected, unrouted = 0, []
    for dst in hosts:
        reach = hop_distances(neighbours, topo.host_attachment(dst)[0])
        good = delivering_switches(topo, choices, failed, dst)
        for src in hosts:
            edge = topo.host_attachment(src)[0]
            if src == dst or edge not in reach:
                continue
            connected += 1
            if edge not in good:
                unrouted.append((src, dst))
    return connected, unrouted


def link_sets(topo, size):
    links = sorted(tuple(sorted((l.node_a, l.node_b))) for l in topo.switch_links())
    return [(combo, ()) for combo in itertools.combinations(links, size)]


def switch_sets(topo, size):
    names = sorted(s.name for s in topo.switches)
    return [((), combo) for combo in itertools.combinations(names, size)]


def check(topo, failure_sets):
    """Totals over failure sets of (failed links, failed switches)."""
    row = {'failure_sets': len(failure_sets), 'connected_pairs': 0, 'unrouted': 0,
           'unrouted_broadcast_only': 0, 'unrouted_broadcast_only_own_port': 0, 'sets_with_detours': 0, 'detour_entries': 0,
           'max_detour_entries': 0, 'unrouted_examples': []}
    started = time.time()
    for links, switches in failure_sets:
        failed = expand_failures(topo, links, switches)
        connected, unrouted = unrouted_pairs(topo, tables_with_failures(topo, failed), failed, switches)
        paper = broadcast_tables(topo, failed)
        _, unrouted_paper = unrouted_pairs(topo, paper, failed, switches)
        if unrouted_paper:  # never more than over every choice
            row['unrouted_broadcast_only_own_port'] += len(
                unrouted_pairs(topo, paper, failed, switches, own_port_only)[1])
        entries = sum(len(e) for e in detours(topo, failed, paper).values())
        row['connected_pairs'] += connected
        row['unrouted'] += len(unrouted)
        row['unrouted_broadcast_only'] += len(unrouted_paper)
        row['sets_with_detours'] += bool(entries)
        row['detour_entries'] += entries
        row['max_detour_entries'] = max(row['max_detour_entries'], entries)
        if unrouted and len(row['unrouted_examples']) < 5:
            row['unrouted_examples'].append({'links': links, 'switches': switches, 'pairs': unrouted[:5]})
    row['seconds'] = round(time.time() - started, 1)
    return row


def plan(quick, seed):
    """[(k, kind, sampled, failure sets)] of the full check (or a quick one)."""
    rng = random.Random(seed)
    runs = []
    for k in (4,) if quick else (4, 6):
        topo = FatTree(k)
        runs += [(k, 'single link', False, link_sets(topo, 1)),
                 (k, 'double link', False, link_sets(topo, 2)),
                 (k, 'single switch', False, switch_sets(topo, 1))]
    if not quick:
        topo = FatTree(8)
        runs += [(8, 'triple link', True, rng.sample(link_sets(topo, 3), 300)),
                 (8, 'single switch', False, switch_sets(topo, 1)),
                 (8, 'double switch', True, rng.sample(switch_sets(topo, 2), 100))]
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='results/failure_check')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--quick', action='store_true', help='k=4 only')
    args = parser.parse_args(argv)
    rows = []
    line = '%-3s %-14s %-8s %8s %16s %9s %15s %9s %13s %8s'
    print(line % ('k', 'failures', 'sets', 'count', 'connected pairs', 'unrouted',
                  'broadcast only', 'own port', 'detour sets', 'seconds'))
    for k, kind, sampled, sets in plan(args.quick, args.seed):
        row = dict(k=k, kind=kind, sampled=sampled, **check(FatTree(k), sets))
        rows.append(row)
        print(line % (k, kind, 'sample' if sampled else 'all', row['failure_sets'], row['connected_pairs'],
                      row['unrouted'], row['unrouted_broadcast_only'],
                      row['unrouted_broadcast_only_own_port'], row['sets_with_detours'],
                      row['seconds']), flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, 'failure_check.json')
    with open(path, 'w') as f:
        json.dump({'seed': args.seed, 'rows': rows}, f, indent=2)
    print('written: %s' % path)


if __name__ == '__main__':
    main()
