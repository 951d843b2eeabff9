"""The lowest BFD interval with no false detection on a k=4 fat-tree, idle
and under full load on shaped links (``deciding_windows``; unshaped full
load is measured and reported beside them).

For each interval and each kind of links (unshaped, or shaped to --bw
Mbit/s as ``dcfabric run --bw`` shapes them), a k=4 fat-tree starts with BFD
at that interval (multiplier 3) and, once ready:

  idle   --seconds with no traffic;
  load   --seconds with every host sending one iperf3 TCP flow, as fast as
         it can, along a random permutation (the bisection experiment's
         ``random`` pattern, --seed): unshaped, that is as much as the one
         ovs-vswitchd thread forwards, the harsher case for BFD;

counting false detections in each: the changes of BFD's forwarding state
OVS counted (``flap_count`` in ``bfd_status``, every switch interface; a
false detection and its recovery are two) and the liveness
changes the controller received (``port_live_changes_total`` in /metrics),
with ovs-vswitchd's and the machine's CPU and the bridges ovs-vswitchd
serves (other fabrics' too). Then --detections silent failures of a0_2-c1_1,
each SETTLE_S after the last recovery, timed until the controller holds the
link failed (scripts.emulator.benchmarks.startup).

    python -m scripts.fattree.bfd_floor [--intervals 100 70 50 30 20] [--seconds 30]
        [--links unshaped shaped] [--bw 10] [--detections 3] [--seed 1] [--out results/fattree]

Rows are merged into --out/bfd_floor.json by (interval, links), so that
intervals can be measured in separate runs; bfd_floor.csv and the printed
table are made from all of them.
"""
import argparse
import csv
import json
import os
import statistics
import time
import urllib.request

from scripts.fattree.bfd_floor_report import links_label, lowest_holding, markdown, merged, windows_held
from scripts.emulator.bfd import policy as bfd_policy, sessions as bfd_sessions
from scripts.argtypes import positive
from topologies.fattree import FatTree

K = 4
FAILED_LINK = ('a0_2', 'c1_1')
TRANSFER_ATTEMPTS = 3
# A BFD session that has just come back up still runs at 1 s intervals
# (RFC 5880: at least 1 s while not up) until its poll sequence lowers them:
# failing the link again within that time takes up to 3 s to detect, not
# 3 intervals. Each timed failure waits this long after the previous recovery.
SETTLE_S = 5


def live_changes(rest_port):
    """The controller's port_live_changes_total, summed over every port."""
    from prometheus_client.parser import text_string_to_metric_families
    with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % rest_port, timeout=10) as reply:
        text = reply.read().decode()
    return int(sum(sample.value for family in text_string_to_metric_families(text)
                   if family.name == 'port_live_changes' for sample in family.samples
                   if sample.name == 'port_live_changes_total'))


def window(fabric, topo, name, seconds, pairs, progress):
    """False detections and CPU over one window: ``pairs`` sending iperf3
    flows for ``seconds``, or nothing (``pairs`` empty)."""
    from scripts.emulator import traffic
    from scripts.emulator.cpu_sample import CpuSample
    flaps, changes = bfd_sessions.flaps(topo), live_changes(fabric.controller.rest_port)
    sample = CpuSample().start()
    row = {}
    if pairs:
        for attempt in range(1, TRANSFER_ATTEMPTS + 1):
            try:
                reports = traffic.iperf3_flows(fabric.net, pairs, seconds)
                row.update(load_flows=len(reports),
                           load_aggregate_mbps=round(sum(map(traffic.received_mbps, reports)), 1))
                break
            except traffic.TransferError as err:
                row['load_transfer_errors'] = attempt
                progress('%s%s' % (err, '; again' if attempt < TRANSFER_ATTEMPTS else ''))
    else:
        time.sleep(seconds)
    cpu = sample.stop()
    row.update({
        name + '_ovs_flaps': bfd_sessions.flaps(topo) - flaps,
        name + '_controller_live_changes': live_changes(fabric.controller.rest_port) - changes,
        name + '_ovs_vswitchd_cpu_pct': cpu['ovs_vswitchd_cpu_pct'],
        name + '_cpu_busy_pct': cpu['cpu_busy_pct'],
        name + '_loadavg_1m': round(cpu['loadavg_1m'], 2),
        name + '_ovs_bridges': cpu['ovs_bridges']})
    progress('%s %d s: %d BFD flaps in OVS, %d liveness changes at the controller, '
             'ovs-vswitchd %.0f%% of a core, machine %.0f%% busy%s'
             % (name, seconds, row[name + '_ovs_flaps'], row[name + '_controller_live_changes'],
                cpu['ovs_vswitchd_cpu_pct'], cpu['cpu_busy_pct'],
                ', %s Mbit/s in %d flows' % (row['load_aggregate_mbps'], row['load_flows'])
                if 'load_flows' in row else ''))
    return row


def measure(interval, bw, seconds, detections, seed, progress):
    from controller.fattree import APP, READY_PATH
    from scripts.emulator.fabric import Fabric
    from scripts.emulator.benchmarks.startup import silent_failure_detection
    from scripts.experiments.patterns import seeded
    from scripts.emulator.ports import free_port
    topo = FatTree(K)
    links = len(topo.switch_links())
    pairs = seeded('random', topo, seed)
    row = {'k': K, 'interval_ms': interval, 'mult': bfd_policy.MULT, 'links': links_label(bw), 'bw_mbps': bw,
           'bfd_packets_per_s': round(bfd_policy.bfd_packets_per_s(links, interval)),
           'within_budget': bfd_policy.bfd_packets_per_s(links, interval) <= bfd_policy.BUDGET_PPS,
           'seconds': seconds, 'seed': seed}
    progress('BFD every %d ms, %s links' % (interval, row['links']))
    params = {'k': K, 'link_mbps': bw} if bw else {'k': K}
    with Fabric(topo, APP, params, ofp_port=free_port(), rest_port=free_port(), bw=bw, bfd_ms=interval,
                ready_path=READY_PATH) as fabric:
        row.update(window(fabric, topo, 'idle', seconds, [], progress))
        row.update(window(fabric, topo, 'load', seconds, pairs, progress))
        detected = []
        for _ in range(detections):
            bfd_sessions.wait_up(topo)
            time.sleep(SETTLE_S)
            detected_s, _ = silent_failure_detection(topo, fabric.controller.rest_port, *FAILED_LINK, fabric.sites,
                                                     poll_s=bfd_policy.detection_ms(interval) / 20000.0)
            detected.append(round(detected_s * 1000, 1))
        progress('silent failure of %s-%s detected after %s ms' % (FAILED_LINK + (detected,)))
    row.update(detection_ms=detected, detection_settle_s=SETTLE_S, detection_ms_median=statistics.median(detected) if detected else None,
               detection_ms_max=max(detected) if detected else None, held=windows_held(row))
    return row


CSV_COLUMNS = ['interval_ms', 'links', 'bfd_packets_per_s', 'within_budget', 'seconds',
               'idle_ovs_flaps', 'idle_controller_live_changes', 'idle_ovs_vswitchd_cpu_pct',
               'idle_cpu_busy_pct', 'load_flows', 'load_aggregate_mbps', 'load_transfer_errors',
               'load_ovs_flaps', 'load_controller_live_changes', 'load_ovs_vswitchd_cpu_pct',
               'load_cpu_busy_pct', 'load_loadavg_1m', 'load_ovs_bridges', 'detection_ms_median', 'detection_ms_max', 'held']


def write(out, rows):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'bfd_floor.json'), 'w') as f:
        json.dump({'k': K, 'mult': bfd_policy.MULT, 'budget_pps': bfd_policy.BUDGET_PPS, 'failed_link': list(FAILED_LINK),
                   'lowest_holding_ms': lowest_holding(rows), 'rows': rows}, f, indent=2)
    with open(os.path.join(out, 'bfd_floor.csv'), 'w', newline='') as f:
        writer = csv.DictWriter(f, CSV_COLUMNS, extrasaction='ignore')
        writer.writeheader()
        writer.writerows(rows)


def read(out):
    try:
        with open(os.path.join(out, 'bfd_floor.json')) as f:
            return json.load(f)['rows']
    except FileNotFoundError:
        return []


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--intervals', type=positive(int), nargs='+', default=[100, 70, 50, 30, 20],
                        help='BFD intervals in ms')
    parser.add_argument('--seconds', type=positive(int), default=30, help='length of the idle and the load window')
    parser.add_argument('--links', nargs='+', choices=['unshaped', 'shaped'], default=['unshaped', 'shaped'])
    parser.add_argument('--bw', type=positive(float), default=10.0, help='rate of shaped links, Mbit/s')
    parser.add_argument('--detections', type=int, default=3, help='silent failures timed per interval')
    parser.add_argument('--seed', type=int, default=1, help='seed of the random permutation')
    parser.add_argument('--out', default='results/fattree')
    parser.add_argument('--report', action='store_true',
                        help='no run: print the Markdown table of what --out/bfd_floor.json holds')
    args = parser.parse_args(argv)
    rows = read(args.out)
    if args.report:
        print(markdown(rows))
        return
    from scripts.emulator.progress import progress
    for interval in args.intervals:
        for kind in args.links:
            row = measure(interval, args.bw if kind == 'shaped' else None, args.seconds, args.detections,
                          args.seed, progress)
            rows = merged(rows, [row])
            write(args.out, rows)  # what was measured survives an interruption
    print(markdown(rows))
    print('written: %s/bfd_floor.json, bfd_floor.csv' % args.out)


if __name__ == '__main__':
    main()
