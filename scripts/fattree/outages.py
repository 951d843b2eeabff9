"""Measured outages of the fat-tree's fault tolerance (section 3.8 + local
fast failover): for each failure class x {hard, silent}, a 1,000 packet/s
UDP probe stream in each direction across the failed element times the
repair and counts lost packets; then all-pairs reachability after every
single-link failure.

    python -m scripts.fattree.outages [--k 4] [--bfd-ms MS] [--out results/outages]
    python -m scripts.fattree.outages --report results/outages/outages.json

Prints tables; writes outages.json (with single_link_reachability) and
outages.csv. ``--report`` runs nothing: it prints the README's Markdown
table and summary figures from a run's outages.json.
"""
import argparse
import csv
import json
import os
import sys
import time

from scripts.fattree.outages_report import markdown
from controller.fattree.failover import expand_failures, repair_point
from scripts.emulator import faults, probe, traffic
from scripts.emulator.bfd import policy as bfd_policy, sessions as bfd_sessions
from scripts.argtypes import fattree_k, positive
from scripts.emulator.fabric import Fabric
from scripts.emulator.progress import progress
from topologies.fattree import FatTree

RATE = 1000
PROBE_SECONDS = 5.0
FAIL_AT = 1.0
RECOVER_AT = 3.0

# (class, element, probe source, probe destination): with Algorithm 1 the
# h0_0_2 <-> h2_0_2 paths cross e0_0-a0_2 and a0_2-c1_1 in both directions.
# A control stream on a path no scenario touches (inside pod 1) shows what
# the emulator itself loses meanwhile: one ovs-vswitchd thread forwards
# every bridge's packets and also handles the port changes and flow-mods.
SCENARIOS = [
    ('lower-upper link', ('link', 'e0_0', 'a0_2'), 'h0_0_2', 'h2_0_2'),
    ('upper-core link', ('link', 'a0_2', 'c1_1'), 'h0_0_2', 'h2_0_2'),
    ('upper switch', ('switch', 'a0_2'), 'h0_0_2', 'h2_0_2'),
    ('core switch', ('switch', 'c1_1'), 'h0_0_2', 'h2_0_2'),
]
CONTROL = ('h1_0_2', 'h1_1_2')


def probe_cmd(*args):
    return [sys.executable, '-m', 'scripts.emulator.probe'] + [str(a) for a in args]


def repaired_by(topo, element, src, dst, silent):
    """Where the src->dst stream is repaired, from the model (failover.repair_point)."""
    if element[0] == 'link':
        failed = expand_failures(topo, [element[1:]])
    else:
        failed = expand_failures(topo, failed_switches=[element[1]])
    switch, local = repair_point(topo, failed, src, dst)
    if not local:
        return 'controller'
    return '%s (local%s)' % (switch, ', after BFD' if silent else '')


def run_scenario(fabric, topo, element, a, b, silent):
    """Probes a->b, b->a and the control pair while the element fails at
    FAIL_AT and recovers at RECOVER_AT."""
    net = fabric.net
    streams = {(a, b): 7001, (b, a): 7002, CONTROL: 7003}
    receivers = {(src, dst): net.get(dst).popen(probe_cmd('recv', port, '--seconds', PROBE_SECONDS + 1.5))
                 for (src, dst), port in streams.items()}
    time.sleep(0.5)
    start = time.time()
    senders = [net.get(src).popen(probe_cmd('send', net.get(dst).IP(), port, '--rate', RATE,
                                            '--seconds', PROBE_SECONDS))
               for (src, dst), port in streams.items()]
    try:
        time.sleep(max(0, start + FAIL_AT - time.time()))
        failed_at = time.time()
        faults.fail(topo, element, silent)
        time.sleep(max(0, start + RECOVER_AT - time.time()))
        recovered_at = time.time()
        faults.recover(topo, element)
        for sender in senders:
            sender.wait()
        results = {}
        for (src, dst), receiver in receivers.items():
            out, _ = receiver.communicate()
            received = json.loads(out)
            results['%s->%s' % (src, dst)] = {
                'failure': probe.outage(received, RATE, PROBE_SECONDS, failed_at, recovered_at),
                'recovery': probe.outage(received, RATE, PROBE_SECONDS, recovered_at)}
        return results
    finally:
        for proc in senders + list(receivers.values()):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        faults.recover(topo, element)
        bfd_sessions.wait_up(topo)


def single_link_reachability(fabric, topo):
    hosts = [h.name for h in topo.hosts]
    rows = []
    for n, link in enumerate(topo.switch_links(), 1):
        faults.fail_link(topo, link.node_a, link.node_b)
        try:
            time.sleep(1.0)
            results = traffic.reachability(fabric.net, hosts, retries=2)
        finally:
            faults.recover_link(topo, link.node_a, link.node_b)
            bfd_sessions.wait_up(topo)
            traffic.wait_all_pairs(fabric.net, hosts, deadline_s=20, progress=progress)
        failed = [list(p) for p, ok in results.items() if not ok]
        rows.append({'link': [link.node_a, link.node_b], 'pairs': len(results), 'unreachable': failed})
        progress('link %d/%d %s-%s: %d of %d pairs unreachable' % (
            n, len(topo.switch_links()), link.node_a, link.node_b, len(failed), len(results)))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=fattree_k, default=4)
    parser.add_argument('--bfd-ms', type=positive(int),
                        help='BFD interval (default: the one dcfabric run gives this k, scripts/emulator/bfd/policy.py)')
    parser.add_argument('--out', default='results/outages')
    parser.add_argument('--ofp-port', type=int, default=6653)
    parser.add_argument('--rest-port', type=int, default=8080)
    parser.add_argument('--skip-reachability', action='store_true')
    parser.add_argument('--report', metavar='OUTAGES_JSON',
                        help='no run: print the Markdown table and summary figures of a finished run')
    args = parser.parse_args(argv)
    if args.report:
        with open(args.report) as f:
            print(markdown(json.load(f)))
        return
    topo = FatTree(args.k)
    bfd_ms = args.bfd_ms or bfd_policy.interval_for(len(topo.switch_links()))
    rows = []
    loadavg_before = os.getloadavg()[0]
    with Fabric(topo, 'controller.fattree.routing_app', {'k': args.k}, ofp_port=args.ofp_port,
                rest_port=args.rest_port, bfd_ms=bfd_ms) as fabric:
        traffic.wait_all_pairs(fabric.net, [h.name for h in topo.hosts], progress=progress)
        for name, element, a, b in SCENARIOS:
            for silent in (False, True):
                mode = 'silent' if silent else 'hard'
                traffic.wait_all_pairs(fabric.net, [h.name for h in topo.hosts], deadline_s=20,
                                       progress=progress)
                progress('%s %s failure of %s' % (mode, name, ' '.join(element[1:])))
                results = run_scenario(fabric, topo, element, a, b, silent)
                control = results.pop('%s->%s' % CONTROL)
                for direction, result in results.items():
                    src, dst = direction.split('->')
                    rows.append({'class': name, 'element': '-'.join(element[1:]), 'mode': mode,
                                 'direction': direction,
                                 'repaired_by': repaired_by(topo, element, src, dst, silent),
                                 'lost': result['failure']['lost'],
                                 'restored_ms': result['failure']['restored_ms'],
                                 'lost_on_recovery': result['recovery']['lost'],
                                 'control_lost': control['failure']['lost'],
                                 'control_restored_ms': control['failure']['restored_ms']})
        reach = [] if args.skip_reachability else single_link_reachability(fabric, topo)
    result = {'k': args.k, 'bfd_ms': bfd_ms, 'rate_pps': RATE,
              'loadavg_1m': [round(loadavg_before, 2), round(os.getloadavg()[0], 2)],
              'outages': rows, 'single_link_reachability': reach}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'outages.json'), 'w') as f:
        json.dump(result, f, indent=2)
    with open(os.path.join(args.out, 'outages.csv'), 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(markdown(result))
    print('control stream: %s->%s, a path no failure touches, probed at the same time: what the '
          'emulator itself lost while the failure was handled' % CONTROL)
    print('written: %s/outages.json, outages.csv' % args.out)


if __name__ == '__main__':
    main()
