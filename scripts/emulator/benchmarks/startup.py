"""Measure the fat-tree as a user gets it (BFD on, interval by budget, the
switches on as many Open vSwitch instances as `dcfabric run` gives them):
build+start, ready, start -> all pairs reachable, teardown, controller CPU
during start, silent-failure detection, rules per switch, and the same
topology in bare Mininet (no controller, Mininet's own start and stop) for
comparison; plus the controller's table computation alone for larger k.

    python -m scripts.emulator.benchmarks.startup [--k 4 8 16] [--sample 1000] [--model-k 16 48]
        [--no-bare | --bare-max-k K] [--out results/fattree]

Above ``--sample-above`` (k=8) the reachability check pings ``--sample``
random ordered pairs (seed recorded). Writes results/fattree/startup.json
and startup.csv (replacing the rows of the k measured, keeping the others),
and model_timing.json.
"""
import argparse
import csv
import json
import os
import time
import urllib.request

from mininet.log import setLogLevel
from mininet.net import Mininet

from controller.fattree import APP, READY_PATH
from controller.fattree.failover import FailureRouting, link_key
from controller.fattree.pipeline import compile_table, rule_counts
from controller.fattree.twolevel import all_tables
from scripts.emulator import faults, traffic
from scripts.emulator.bfd import policy as bfd_policy
from scripts.emulator.ovs import daemon_policy, ovsdb, vswitchd
from scripts.emulator.fabric import Fabric
from scripts.emulator.machine_checks import check_fits
from scripts.emulator.mininet_classes import NetdevOVSSwitch
from scripts.emulator.progress import progress
from scripts.argtypes import fattree_k
from topologies.fattree import FatTree
from topologies.mininet_topo import ModelTopo

CLOCK_TICKS = os.sysconf('SC_CLK_TCK')


def installed_rule_count(switch, sites):
    out = sites.run(sites.server_of(switch), 'ovs-ofctl', '-O', 'OpenFlow13', '--no-stats', 'dump-flows',
                    switch).stdout
    return sum(1 for line in out.splitlines() if 'priority=' in line)


def cpu_seconds(pid):
    with open('/proc/%d/stat' % pid) as stat:
        fields = stat.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


def rss_mb(pids):
    total = 0
    for pid in pids:
        try:
            with open('/proc/%d/status' % pid) as status:
                total += next(int(l.split()[1]) for l in status if l.startswith('VmRSS:'))
        except (OSError, StopIteration):
            pass
    return round(total / 1024.0, 1)


def ovs_vswitchd_pids(fabric):
    """The fabric's ovs-vswitchd: its private instances', or the machine's."""
    if fabric.ovs:
        return [instance.pid('ovs-vswitchd') for instance in fabric.ovs.instances]
    return [vswitchd.daemon_pid()]


def link_is_up(rest_port, a, b):
    url = 'http://127.0.0.1:%d/fattree/state/links' % rest_port
    with urllib.request.urlopen(url, timeout=10) as reply:
        rows = json.load(reply)
    return next(r['up'] for r in rows if {r['a'], r['b']} == {a, b})


RULES_SETTLE_S = 30  # after a recovery, for every switch's rules to be as computed


def silent_failure_detection(topo, rest_port, a, b, sites, poll_s, timeout=60):
    """Seconds from black-holing link a-b until the controller holds it failed,
    and from undoing it until the controller holds it up again (None if not
    within ``timeout``), asking the
    controller every ``poll_s`` (at k=16 its links section is 2,048 rows:
    asked every 20 ms, the answers alone kept its event loop busy)."""
    def wait_for(up):
        started = time.time()
        while link_is_up(rest_port, a, b) != up:
            if time.time() - started > timeout:
                raise TimeoutError('link %s-%s not %s after %ds' % (a, b, 'up' if up else 'down', timeout))
            time.sleep(poll_s)
        return time.time() - started
    faults.fail_link(topo, a, b, silent=True, sites=sites)
    try:
        detected = wait_for(False)
    finally:
        faults.recover_link(topo, a, b, sites=sites)
    try:
        return detected, wait_for(True)
    except TimeoutError:
        return detected, None


def bare_mininet(topo):
    """Build, start and stop the topology in plain Mininet, as Mininet does it."""
    setLogLevel('warning')
    ovsdb.wait_applied(1200)  # what an earlier fabric left ovs-vswitchd to do is not Mininet's time
    started = time.time()
    net = Mininet(topo=ModelTopo(topo), switch=NetdevOVSSwitch, controller=None, build=False,
                  autoSetMacs=False, autoStaticArp=False)
    try:
        net.build()
        net.start()
        up = time.time() - started
    finally:
        stopping = time.time()
        net.stop()
    return {'up_s': round(up, 2), 'teardown_s': round(time.time() - stopping, 2)}


def measure(k, ofp_port, rest_port, sample, sample_above, seed):
    topo = FatTree(k)
    check_fits(topo)
    tables = all_tables(topo)
    hosts = [h.name for h in topo.hosts]
    sampled = k > sample_above
    pairs = traffic.sample_pairs(hosts, sample, seed) if sampled else traffic.all_pairs(hosts)
    daemons = daemon_policy.choose_for(topo)
    interval = bfd_policy.default_interval(len(topo.switch_links()), daemons.count)
    fabric = Fabric(topo, APP, {'k': k}, ofp_port=ofp_port, rest_port=rest_port, bfd_ms=interval,
                    ready_path=READY_PATH, ovs_instances=daemons)
    progress('k=%d: waiting for ovs-vswitchd to finish earlier work' % k)
    ovsdb.wait_applied(1200)
    began = time.time()
    try:
        fabric.start()
        row = {'k': k, 'switches': len(topo.switches), 'hosts': len(hosts), 'ovs_instances': daemons.count,
               'bfd_interval_ms': interval, 'bfd_detection_ms': bfd_policy.detection_ms(interval) if interval else None,
               'bfd_packets_per_s': round(bfd_policy.bfd_packets_per_s(len(topo.switch_links()), interval))
               if interval else 0,
               'up_s': round(fabric.started_at - began, 2),
               'ready_s': round(fabric.ready_at - began, 2),
               'controller_cpu_s_to_ready': round(cpu_seconds(fabric.controller.process.pid), 2),
               'pairs_checked': len(pairs), 'pairs_sampled': sampled, 'pair_seed': seed if sampled else None}
        progress('k=%d: ready in %.1f s; pinging %d pairs' % (k, row['ready_s'], len(pairs)))
        traffic.wait_all_pairs(fabric.net, hosts, deadline_s=300, progress=progress, pairs=pairs)
        row['start_to_all_pairs_s'] = round(time.time() - fabric.started_at, 2)
        row['ovs_vswitchd_rss_mb'] = rss_mb(ovs_vswitchd_pids(fabric))
        if fabric.ovs:  # the machine's daemon has worked for others before this fabric
            row['ovs_vswitchd_cpu_s'] = round(sum(map(cpu_seconds, ovs_vswitchd_pids(fabric))), 2)
        row['node_shells_rss_mb'] = rss_mb([n.pid for n in fabric.net.hosts + fabric.net.switches])
        a, b = 'a0_%d' % (k // 2), 'c1_1'
        if interval:  # without BFD a silent failure is not seen at all
            progress('k=%d: silent failure of %s-%s' % (k, a, b))
            try:
                detected, recovered = silent_failure_detection(topo, rest_port, a, b, fabric.sites,
                                                               poll_s=bfd_policy.detection_ms(interval) / 20000.0)
                row['silent_failure_detected_s'] = round(detected, 3)
                row['silent_failure_recovered_s'] = recovered and round(recovered, 3)
                if recovered is None:
                    row['silent_failure_error'] = 'the controller did not hold %s-%s up again within 60 s' % (a, b)
            except TimeoutError as error:  # a result too: the rest of the row is still measured
                row['silent_failure_error'] = str(error)
            if 'silent_failure_error' in row:
                progress('k=%d: %s' % (k, row['silent_failure_error']))
        roles = {switch.role: set() for switch in topo.switches}
        counts = {switch.name: rule_counts(topo, tables[switch.name]) for switch in topo.switches}
        for switch in topo.switches:
            roles[switch.role].add(counts[switch.name])
        # the recovery's differences may still be on their way when the controller
        # already holds the link up (k=16: 16 switches to update): wait for them
        deadline = time.time() + RULES_SETTLE_S
        differing = [s.name for s in topo.switches]
        while differing:
            installed = {name: installed_rule_count(name, fabric.sites) for name in differing}
            differing = [name for name in differing if installed[name] != sum(counts[name])]
            if not differing or time.time() > deadline:
                break
            time.sleep(0.5)
        for name in differing:  # recorded: the rest of the row is still measured
            row.setdefault('rules_not_as_computed', []).append(
                '%s: %d installed, %d computed %d s after the recovery'
                % (name, installed[name], sum(counts[name]), RULES_SETTLE_S))
        row['rules'] = {role: [{'prefix': p, 'suffix': s, 'housekeeping': h, 'total': p + s + h}
                               for p, s, h in sorted(counts)] for role, counts in roles.items()}
    finally:
        stopping = time.time()
        fabric.stop()
    row['teardown_s'] = round(time.time() - stopping, 2)
    # the machine's ovs-vswitchd drops the bridges after teardown returns: a next fabric waits for that
    ovsdb.wait_applied(1200)
    row['ovs_vswitchd_settled_s'] = round(time.time() - stopping, 2)
    return row


def model_timing(k):
    """Seconds the controller spends computing and compiling every switch's
    tables with no failure, and recomputing (incrementally, as it does) and
    compiling the changed ones after one upper-core link fails."""
    topo = FatTree(k)
    started = time.time()
    routing = FailureRouting(topo)
    for table in routing.tables.values():
        compile_table(table)
    clean = time.time() - started
    started = time.time()
    failed = frozenset([link_key('a0_%d' % (k // 2), 'c1_1')])
    for table in routing.update(failed).values():
        compile_table(table)
    return {'k': k, 'switches': len(topo.switches), 'compute_all_s': round(clean, 3),
            'recompute_one_failure_s': round(time.time() - started, 3)}


CSV_COLUMNS = ['k', 'switches', 'hosts', 'ovs_instances', 'bfd_interval_ms', 'bfd_detection_ms', 'bfd_packets_per_s',
               'up_s', 'ready_s', 'start_to_all_pairs_s', 'pairs_checked', 'pair_seed', 'teardown_s',
               'ovs_vswitchd_settled_s',
               'controller_cpu_s_to_ready', 'silent_failure_detected_s', 'silent_failure_recovered_s',
               'ovs_vswitchd_rss_mb', 'ovs_vswitchd_cpu_s', 'node_shells_rss_mb', 'bare_up_s', 'bare_teardown_s',
               'up_vs_bare', 'teardown_vs_bare']


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=fattree_k, nargs='*', default=[4, 8, 16],
                        help='fabrics to build (none: model timing only, no root or OVS needed)')
    parser.add_argument('--model-k', type=fattree_k, nargs='*', default=[4, 8, 16, 48])
    parser.add_argument('--sample', type=int, default=1000, help='pairs pinged above --sample-above')
    parser.add_argument('--sample-above', type=int, default=8)
    parser.add_argument('--seed', type=int, default=1, help='seed of the pair sample')
    parser.add_argument('--no-bare', action='store_true', help='skip the bare-Mininet comparison')
    parser.add_argument('--bare-max-k', type=int, default=None,
                        help='compare with bare Mininet only up to this k (its own start and stop take long)')
    parser.add_argument('--out', default='results/fattree')
    parser.add_argument('--ofp-port', type=int, default=6653)
    parser.add_argument('--rest-port', type=int, default=8080)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    timing = []
    for k in args.model_k:
        progress('model k=%d: computing every table' % k)
        timing.append(model_timing(k))
    if timing:
        with open(os.path.join(args.out, 'model_timing.json'), 'w') as f:
            json.dump(timing, f, indent=2)
    # rows of other k measured earlier are kept, so one k can be measured per command
    path = os.path.join(args.out, 'startup.json')
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [row for row in json.load(f) if row['k'] not in args.k]
    for k in args.k:
        row = measure(k, args.ofp_port, args.rest_port, args.sample, args.sample_above, args.seed)
        if not args.no_bare and (args.bare_max_k is None or k <= args.bare_max_k):
            progress('k=%d: bare Mininet build, start and stop' % k)
            bare = bare_mininet(FatTree(k))
            row.update(bare_up_s=bare['up_s'], bare_teardown_s=bare['teardown_s'],
                       up_vs_bare=round(row['up_s'] / bare['up_s'], 2),
                       teardown_vs_bare=round(row['teardown_s'] / bare['teardown_s'], 2))
        rows = sorted(rows + [row], key=lambda r: r['k'])
        with open(path, 'w') as f:
            json.dump(rows, f, indent=2)
    if rows:
        with open(os.path.join(args.out, 'startup.csv'), 'w', newline='') as f:
            writer = csv.DictWriter(f, CSV_COLUMNS, extrasaction='ignore')
            writer.writeheader()
            writer.writerows(rows)
    for row in rows:
        print(' '.join('%s=%s' % (c, row.get(c)) for c in CSV_COLUMNS))
    for t in timing:
        print('model k=%(k)d (%(switches)d switches): all tables %(compute_all_s).2f s, '
              'after one failure %(recompute_one_failure_s).2f s' % t)
    print('written to %s: %s' % (args.out, ', '.join(
        (['startup.json', 'startup.csv'] if rows else []) + (['model_timing.json'] if timing else []))))


if __name__ == '__main__':
    main()
