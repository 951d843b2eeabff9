"""Measure a fat-tree on this machine's own Open vSwitch (``local``, as
``dcfabric run`` starts it) or on one, two or three container servers of
this machine (scripts/cluster/containers.py), each with its own
ovs-vswitchd: build and start time, time to all-pairs reachability,
aggregate TCP throughput of a random permutation (unshaped, iperf3 -J),
CPU of each ovs-vswitchd during it, the emulator's fidelity verdict over
the flows (scripts/emulator/fidelity.py: at full load it is expected to
find the emulator the limit, which is what this measures), tunnel count,
and BFD detection of a silent failure of a tunnel. ``--ovs-config`` sets Open_vSwitch
other_config on the container servers before their ovs-vswitchd starts
(e.g. userspace-tso-enable=true, read only at start).

    python -m scripts.emulator.benchmarks.cluster --k 4 --servers local 1 2 3 [--tunnel vxlan]
        [--ovs-config KEY=VALUE ...] [--out results/cluster]
    python -m scripts.emulator.benchmarks.cluster --markdown [--out results/cluster]

Run as root, nothing else emulating. Each configuration runs ``--reps``
times (the same permutation; the row holds the medians, measure.json also
the runs). Each command adds its rows to measure.json and measure.csv (replacing rows of the same k, servers,
tunnel and configuration), so one configuration can be measured per
command; ``--markdown`` prints the README's tables from measure.json.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import time

from scripts.argtypes import positive
from scripts.emulator.benchmarks.cluster_report import LOCAL, markdown, throughput_markdown
from controller.fattree import APP, READY_PATH
from scripts.emulator import faults, traffic
from scripts.emulator.bfd import policy as bfd_policy, sessions as bfd_sessions
from scripts.emulator.fidelity import FidelityMonitor, daemon_by_namespace, describe, verdict
from scripts.cluster.containers import ContainerServers, ServerSpec
from scripts.cluster.net import ClusterFabric
from scripts.cluster.sites import TUNNEL_KINDS
from scripts.emulator.fabric import Fabric
from scripts.emulator.ovs import daemon_policy
from scripts.emulator.progress import progress
from scripts.experiments import patterns
from scripts.emulator.ports import free_port
from topologies.fattree import FatTree, check_k

CLK_TCK = os.sysconf('SC_CLK_TCK')
# $OVS_RUNDIR: a private daemon's (scripts/emulator/ovs/instances.py) when its sites run the command
VSWITCHD_PROC = '/proc/$(cat ${OVS_RUNDIR:-/run/openvswitch}/ovs-vswitchd.pid)'
VSWITCHD_TICKS = 'cut -d" " -f14,15 %s/stat' % VSWITCHD_PROC
VSWITCHD_NETNS = 'readlink %s/ns/net' % VSWITCHD_PROC
KEY = ('k', 'servers', 'tunnel', 'ovs_config', 'ovs_instances')
OMIT_S = 1  # iperf3 -O: TCP's slow start left out
SERVER_WAIT_S = 5.0  # the iperf3 servers' time to listen, hosts on container servers reached by ssh


def vswitchd_ticks(fabric):
    """[user+system clock ticks so far of each server's ovs-vswitchd]."""
    return [sum(int(t) for t in fabric.sites.run(server, 'sh', '-c', VSWITCHD_TICKS).stdout.split())
            for server in fabric.sites.servers()]


def unwatched_daemons(fabric, pids):
    """The sites of ``fabric`` whose ovs-vswitchd a FidelityMonitor that
    watched ``pids`` could not judge: not among them, or its network
    namespace not enterable (where its packet sockets' drops are read).
    Each of the fabric's daemons has a network namespace of its own (the
    machine's, a private instance's, a container server's), the same from
    every PID and mount namespace, so that is what identifies it."""
    watched = daemon_by_namespace(pids)
    unwatched = []
    for server in fabric.sites.servers():
        pid = watched.get(fabric.sites.run(server, 'sh', '-c', VSWITCHD_NETNS).stdout.strip())
        if pid is None or subprocess.run(['nsenter', '--net=/proc/%d/ns/net' % pid, 'true'],
                                        stderr=subprocess.DEVNULL, timeout=10).returncode:
            unwatched.append('this machine' if server is None else str(server))
    return unwatched


def judged(fidelity, unwatched):
    """``fidelity`` (a verdict) with the daemons it could not see: a run
    judged without one of them is not called faithful."""
    if not unwatched:
        return dict(fidelity, unwatched_daemons=[])
    return dict(fidelity, unwatched_daemons=unwatched, ok=False,
                limited_by=fidelity.get('limited_by', []) + ['ovs-vswitchd not watched: ' + ', '.join(unwatched)])


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
        while {bfd_sessions.states(topo, fabric.sites)[i] for i in ends} != {'down'}:
            if time.time() - start > timeout:
                raise RuntimeError('BFD did not detect the failure of %s-%s' % (link.node_a, link.node_b))
        return injected - start, time.time() - injected
    finally:
        faults.recover_link(topo, link.node_a, link.node_b, sites=fabric.sites)
        bfd_sessions.wait_up(topo, sites=fabric.sites)


def run_fabric(topo, fabric, began, seconds, seed):
    """The row's measurements on a started ``fabric`` (``began``: before its start)."""
    hosts = [h.name for h in topo.hosts]
    progress('%s up in %.1f s, ready in %.1f s' % (topo.name, fabric.started_at - began,
                                                   fabric.ready_at - began))
    reach_s = traffic.wait_all_pairs(fabric.net, hosts, deadline_s=300, progress=progress)
    pairs = patterns.seeded('random', topo, seed)
    flaps = bfd_sessions.flaps(topo, fabric.sites)
    ticks = vswitchd_ticks(fabric)
    monitor = FidelityMonitor(settle_s=SERVER_WAIT_S + OMIT_S).start()  # the flows' window
    flow_started = time.time()
    try:
        reports = traffic.iperf3_flows(fabric.net, pairs, seconds, omit=OMIT_S, server_wait_s=SERVER_WAIT_S)
    finally:
        figures = monitor.stop()
    elapsed = time.time() - flow_started
    fidelity = judged(verdict(figures), unwatched_daemons(fabric, monitor.pids))
    rates = [traffic.received_mbps(r) for r in reports]
    # down and up again count two: false failures under the load, halved
    false_failures = (bfd_sessions.flaps(topo, fabric.sites) - flaps) // 2
    cpu = [round(100.0 * (now - before) / CLK_TCK / elapsed, 1)
           for before, now in zip(ticks, vswitchd_ticks(fabric))]
    progress('%d flows: TCP sum %.1f Mbit/s, ovs-vswitchd %s%% of a core; emulator %s'
             % (len(pairs), sum(rates), ' / '.join('%.0f' % c for c in cpu), describe(fidelity)))
    tunnels = getattr(fabric, 'tunnels', [])
    inject_s, bfd_s = bfd_detection_s(topo, fabric) if tunnels else (None, None)
    return {'switches': len(topo.switches), 'hosts': len(hosts), 'tunnels': len(tunnels),
            'bfd_interval_ms': fabric.bfd_ms,
            'build_and_start_s': round(fabric.started_at - began, 2),
            'ready_s': round(fabric.ready_at - began, 2), 'all_pairs_s': round(reach_s, 2),
            'flows': len(pairs), 'flow_seconds': seconds,
            'aggregate_mbps': round(sum(rates), 1),
            'flow_mbps_min_median_max': [round(v, 1) for v in (min(rates), statistics.median(rates), max(rates))],
            'vswitchd_cpu_pct': cpu, 'bfd_false_failures_under_load': false_failures,
            'tunnel_failure_injection_s': inject_s and round(inject_s, 2),
            'bfd_down_seen_within_s': bfd_s and round(bfd_s, 2), 'fidelity': fidelity}


def measure(k, servers, seconds, seed, tunnel, ovs_config, ovs_instances=1):
    """One row: ``servers`` is LOCAL (on ``ovs_instances`` Open vSwitch
    daemons: 1 is the machine's own) or a number of container servers."""
    topo = FatTree(k)
    interval = bfd_policy.interval_for(len(topo.switch_links()))  # what `dcfabric run` uses
    row = {'k': k, 'servers': servers, 'tunnel': tunnel if servers not in (LOCAL, 1) else None,
           'ovs_config': ' '.join('%s=%s' % kv for kv in ovs_config),
           'ovs_instances': ovs_instances if servers == LOCAL else 1}
    progress('k=%d on %s' % (k, 'this machine\'s Open vSwitch' if servers == LOCAL
                             else '%d container servers' % servers))
    try:
        row.update(run_configuration(topo, interval, servers, seconds, seed, tunnel, ovs_config, ovs_instances))
    except (TimeoutError, traffic.TransferError) as error:  # the fabric ran, a measurement did not end
        progress('this run failed: %s' % error)
        row['failure'] = str(error)
    return row


def run_configuration(topo, interval, servers, seconds, seed, tunnel, ovs_config, ovs_instances):
    """``run_fabric``'s measurements of one run, the fabric started as ``measure`` says."""
    k = topo.k
    row = {}
    began = time.time()
    if servers == LOCAL:
        with Fabric(topo, APP, {'k': k}, ofp_port=free_port(), rest_port=free_port(), bfd_ms=interval,
                    ready_path=READY_PATH, ovs_instances=ovs_instances) as fabric:
            row.update(run_fabric(topo, fabric, began, seconds, seed))
        return row
    specs = [ServerSpec(other_config=ServerSpec.other_config + tuple(ovs_config))] * servers  # TSO and these
    with ContainerServers(specs) as cluster, cluster.in_head():
        began = time.time()
        with ClusterFabric(topo, APP, {'k': k}, cluster.servers, tunnel=tunnel, bfd_ms=interval,
                           ready_path=READY_PATH) as fabric:
            row.update(run_fabric(topo, fabric, began, seconds, seed))
            row['tunnels'] = len(fabric.tunnel_links())  # as Mininet made them
    return row


def median(values):
    """The median of numbers, or of lists of numbers element by element."""
    if isinstance(values[0], list):
        return [median(list(column)) for column in zip(*values)]
    return round(statistics.median(values), 2)


def combined(runs):
    """One row from the rows of repeated runs of one configuration: what
    differs between the runs that did not fail is their median; every run
    is kept under ``runs``, and a run's failure under ``failed_runs``. Each
    run keeps its fidelity verdict there (a single run's is the row's)."""
    done = [run for run in runs if 'failure' not in run] or runs[:1]
    row = {}
    for key, first in done[0].items():
        if key == 'fidelity' and len(runs) > 1:
            continue
        values = [run[key] for run in done]
        row[key] = first if key in KEY or all(value == first for value in values) else median(values)
    failures = [run['failure'] for run in runs if 'failure' in run]
    if failures:
        row['failed_runs'] = failures
    if len(runs) > 1:
        row['runs'] = [{key: value for key, value in run.items() if key not in KEY} for run in runs]
    return row


def servers_arg(text):
    if text == LOCAL:
        return LOCAL
    count = int(text)
    if count < 1:
        raise argparse.ArgumentTypeError('a number of container servers (1 or more) or %s' % LOCAL)
    return count


def config_arg(text):
    key, sep, value = text.partition('=')
    if not sep or not key:
        raise argparse.ArgumentTypeError('KEY=VALUE, got %r' % text)
    return key, value


def merged(old, new):
    """``old`` rows with those of ``new``'s keys replaced by ``new``'s, in k, servers order."""
    fresh = {tuple(row.get(c, 1) for c in KEY) for row in new}
    rows = [row for row in old if tuple(row.get(c, 1) for c in KEY) not in fresh] + new
    return sorted(rows, key=lambda r: (r['k'], -1 if r['servers'] == LOCAL else r['servers'],
                                       r['tunnel'] or '', r['ovs_config'], r.get('ovs_instances', 1)))


def write(rows, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'measure.json'), 'w') as f:
        json.dump(rows, f, indent=2)
    columns = list(dict.fromkeys(c for row in rows for c in row if c != 'runs'))  # the runs: JSON only
    with open(os.path.join(out, 'measure.csv'), 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            value = [row.get(c) for c in columns]
            writer.writerow(['/'.join(map(str, v)) if isinstance(v, list) else
                             json.dumps(v) if isinstance(v, dict) else v for v in value])


def daemons_of(k, asked):
    """The daemons this machine's fabric of arity ``k`` runs on: ``asked``
    or the policy's choice (unshaped links), printed with its reason."""
    choice = daemon_policy.choose_for(FatTree(k), None, asked)
    progress('k=%d on this machine: %s' % (k, daemon_policy.describe(choice)))
    return choice.count


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=int, nargs='+', default=[4])
    parser.add_argument('--servers', type=servers_arg, nargs='+', default=[LOCAL, 1, 2, 3],
                        help='%s (this machine\'s Open vSwitch) or a number of container servers' % LOCAL)
    parser.add_argument('--tunnel', choices=TUNNEL_KINDS, default='vxlan')
    parser.add_argument('--ovs-config', type=config_arg, nargs='*', default=[], metavar='KEY=VALUE',
                        help='Open_vSwitch other_config of the container servers, set before start')
    parser.add_argument('--ovs-instances', type=positive(int), default=None, metavar='N',
                        help='Open vSwitch daemons for %s (default: the daemon policy\'s for the fabric on '
                             'this machine, as dcfabric run; 1: the machine\'s own; more: private ones)' % LOCAL)
    parser.add_argument('--seconds', type=int, default=10, help='iperf3 duration per run')
    parser.add_argument('--seed', default='cluster', help='seed of the permutation (the same in every run)')
    parser.add_argument('--reps', type=int, default=3,
                        help='runs of each configuration; the row holds their medians and the runs')
    parser.add_argument('--out', default='results/cluster')
    parser.add_argument('--markdown', action='store_true', help='print the README tables from measure.json')
    args = parser.parse_args(argv)
    path = os.path.join(args.out, 'measure.json')
    if args.markdown:
        rows = json.load(open(path))
        print(markdown(rows) + '\n\n' + throughput_markdown(rows))
        return
    for k in args.k:
        check_k(k)
    if args.ovs_config and LOCAL in args.servers:
        parser.error('--ovs-config applies to container servers only: this machine\'s ovs-vswitchd '
                     'is shared and would have to be restarted')
    daemons = {k: daemons_of(k, args.ovs_instances) for k in args.k} if LOCAL in args.servers else {}
    rows = [combined([measure(k, servers, args.seconds, args.seed, args.tunnel, tuple(args.ovs_config),
                              daemons.get(k, 1)) for _ in range(args.reps)])
            for k in args.k for servers in args.servers]
    old = json.load(open(path)) if os.path.exists(path) else []  # read now: other runs may have added rows
    write(merged(old, rows), args.out)
    print(markdown(rows))


if __name__ == '__main__':
    main()
