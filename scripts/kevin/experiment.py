"""Kevin experiments.

  python -m scripts.kevin.experiment emulation [--n 8 --k-s 2 --k-d 1] [--bw 10]
          [--duration 20] [--elephants 3 | --pairs 000:100 ...] [--mice 8]
          [--schemes none bfs greedy distda] [--reps 1]
      Emulated fabric (Mininet + the Ryu apps), one fresh fabric per scheme:
      a skewed workload of a few elephant ToR pairs (long iperf3 TCP flows
      between the ToRs' first hosts) plus background mice (ping streams of
      1000-byte packets at 5/s between random ToR pairs' second hosts, far
      below the DA threshold). Reported per scheme: the ToRs on each
      elephant's path read from the TTL that ping sees before the elephants
      start and after they end (DA links are never torn down proactively, so
      they are still in place), the same probed once a second during the
      run, the time from elephant start until its DA links were in its
      source's table (controller REST /kevin/state), iperf3 throughput over
      the whole run and its second half, the mice's RTT and loss, the CPU
      (machine busy %, ovs-vswitchd, load average) during the run and, for
      DistDA, its PortRequest/Approve/Decline/Release counts.
      Default elephants (--elephants N): N pairs of maximal static path
      length with distinct sources and distinct destinations whose static
      greedy paths all cross one directed ToR link: the hot spot DA links are
      meant to relieve (a k_d = 1 fabric can give each its own link).

  python -m scripts.kevin.experiment model [--n 64 256] [--loads ...] [--seeds 5]
      Pure model at scale: average ToR-to-ToR path length versus load for
      static de Bruijn, Kevin with BFS-DA-links and Greedy-DA-links (k_s=2,
      k_d=6), and a static expander of the same degree (k_s + k_d = 8,
      random regular graph, shortest-path routing).

Workload of the model comparison (the seed does not give the successor's):
at load L, round(L * n * k_d) distinct ordered ToR pairs are drawn uniformly
(L = 1 asks for as many pairs as there are DA transmit ports), each with a
Pareto(1.2) demand; one scheduling round runs on that demand matrix and every
pair's path is measured (unweighted mean, and mean weighted by demand). The
expander's path lengths over the same pairs are its shortest paths.

Results go to results/kevin/ as JSON, CSV and a PNG plot
(model_path_length.*, emulation.*).
"""
import argparse
from collections import defaultdict
import csv
import json
import os
import random
import re
import statistics
import sys
import time
import urllib.request

import networkx as nx

from controller.kevin.distda import DistDaAgent
from controller.kevin.routing import KevinRouting
from controller.kevin.scheduler import DaScheduler
from scripts.cli import _positive
from topologies.kevin import Kevin, KevinParameterError, address_str, host_name

DEFAULT_OUT = os.path.join('results', 'kevin')


def model_point(kevin, load, seed, expander_hops):
    rng = random.Random(seed)
    pairs = [(s, t) for s in kevin.addresses for t in kevin.addresses if s != t]
    chosen = rng.sample(pairs, min(len(pairs), round(load * kevin.n * kevin.k_d)))
    demand = {pair: rng.paretovariate(1.2) for pair in chosen}
    static = KevinRouting(kevin)
    index = kevin.index

    def summary(hops_of):
        hops = [hops_of(s, t) for s, t in chosen]
        weights = [demand[p] for p in chosen]
        return {'mean_hops': statistics.fmean(hops),
                'weighted_hops': sum(h * w for h, w in zip(hops, weights)) / sum(weights),
                'max_hops': max(hops)}

    row = {'static_de_bruijn': summary(static.hops),
           'expander': summary(lambda s, t: expander_hops[index(s)][index(t)])}
    for algorithm in ('bfs', 'greedy'):
        scheduler = DaScheduler(kevin, algorithm)
        plan = scheduler.schedule(demand, 0)
        scheduler.activate(0)
        row['kevin_' + algorithm] = dict(summary(scheduler.routing.hops), da_links=len(plan.added))
    row['pairs'] = len(chosen)
    return row


def cmd_model(args):
    os.makedirs(args.out, exist_ok=True)
    results = []
    for n in args.n:
        kevin = Kevin(n, 2, 6)
        for seed in range(args.seeds):
            expander = nx.random_regular_graph(kevin.k, n, seed=seed)
            if not nx.is_connected(expander):
                raise RuntimeError('random %d-regular graph on %d nodes is not connected' % (kevin.k, n))
            expander_hops = dict(nx.all_pairs_shortest_path_length(expander))
            for load in args.loads:
                started = time.time()
                row = model_point(kevin, load, seed, expander_hops)
                row.update(n=n, k_s=2, k_d=6, load=load, seed=seed)
                results.append(row)
                print('n=%d load=%.1f seed=%d: static %.2f  bfs %.2f  greedy %.2f  expander %.2f '
                      '(%.1fs)' % (n, load, seed, row['static_de_bruijn']['mean_hops'],
                                   row['kevin_bfs']['mean_hops'], row['kevin_greedy']['mean_hops'],
                                   row['expander']['mean_hops'], time.time() - started),
                      file=sys.stderr, flush=True)
    schemes = ('static_de_bruijn', 'kevin_bfs', 'kevin_greedy', 'expander')
    table = []
    for n in args.n:
        for load in args.loads:
            rows = [r for r in results if r['n'] == n and r['load'] == load]
            line = {'n': n, 'load': load}
            for scheme in schemes:
                line[scheme] = statistics.fmean(r[scheme]['mean_hops'] for r in rows)
                line[scheme + '_weighted'] = statistics.fmean(r[scheme]['weighted_hops'] for r in rows)
            table.append(line)
    with open(os.path.join(args.out, 'model_path_length.json'), 'w') as out:
        json.dump({'workload': __doc__.split('Workload')[1].split('Results')[0].strip(),
                   'runs': results, 'means': table}, out, indent=1, default=list)
    with open(os.path.join(args.out, 'model_path_length.csv'), 'w', newline='') as out:
        writer = csv.DictWriter(out, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    print('\nmean ToR-to-ToR hops over %d seeds (unweighted / demand-weighted)' % args.seeds)
    print('%5s %5s %17s %17s %17s %17s' % (('n', 'load') + schemes))
    for line in table:
        print('%5d %5.1f ' % (line['n'], line['load']) + ' '.join(
            '%8.2f/%-8.2f' % (line[s], line[s + '_weighted']) for s in schemes))
    plot(table, schemes, args)


def plot(table, schemes, args):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(args.n), figsize=(5 * len(args.n), 4), squeeze=False)
    for ax, n in zip(axes[0], args.n):
        lines = [l for l in table if l['n'] == n]
        for scheme in schemes:
            ax.plot([l['load'] for l in lines], [l[scheme] for l in lines], marker='o', label=scheme)
        ax.set_title('n=%d ToRs, k_s=2, k_d=6 (expander degree 8)' % n)
        ax.set_xlabel('load (active ToR pairs / (n k_d))')
        ax.set_ylabel('mean path length (ToR hops)')
        ax.grid(True)
        ax.legend()
    fig.tight_layout()
    path = os.path.join(args.out, 'model_path_length.png')
    fig.savefig(path)
    print('wrote %s and model_path_length.json/.csv' % path)


# -- emulation -----------------------------------------------------------------

SCHEMES = ('none', 'bfs', 'greedy', 'distda')
IPERF_PORT = 5201
MICE_INTERVAL_S, MICE_BYTES = 0.2, 1000  # 5 pings/s of 1000 B: ~5 kB/s, far below the threshold


def pick_elephants(kevin, count):
    """``count`` or fewer ToR pairs of maximal static greedy path length,
    distinct sources and distinct destinations, whose static paths all cross
    the same directed ToR link (the link that gathers the most such pairs)."""
    routing = KevinRouting(kevin)
    longest = max(routing.hops(s, t) for s in kevin.addresses for t in kevin.addresses)
    through = defaultdict(list)
    for s in kevin.addresses:
        for t in kevin.addresses:
            if s != t and routing.hops(s, t) == longest:
                path = routing.path(s, t)
                for link in zip(path, path[1:]):
                    through[link].append((s, t))

    def disjoint(pairs):
        chosen = []
        for s, t in sorted(pairs):
            if len(chosen) < count and all(s != a and t != b for a, b in chosen):
                chosen.append((s, t))
        return chosen

    return max((disjoint(through[link]) for link in sorted(through)), key=len)


def parse_pairs(kevin, texts):
    pairs = []
    for text in texts:
        source, sep, destination = text.partition(':')
        if not sep:
            raise KevinParameterError('an elephant is SOURCE:DESTINATION ToR addresses, e.g. 011:001; '
                                      'got %r' % text)
        pair = (kevin.parse(source), kevin.parse(destination))
        if pair[0] == pair[1]:
            raise KevinParameterError('elephant %s goes nowhere' % text)
        pairs.append(pair)
    if len(set(pairs)) != len(pairs):
        raise KevinParameterError('elephant pairs repeat: %s' % ' '.join(texts))
    return pairs


def scheme_setup(scheme, args):
    """(controller app, its parameters) of a scheme, checked here (by
    building the pure scheduler or agent) so that a bad value is a clear
    error now rather than a controller that dies during start-up."""
    kevin = Kevin(args.n, args.k_s, args.k_d, hosts_per_tor=args.hosts)
    params = {'n': args.n, 'k_s': args.k_s, 'k_d': args.k_d, 'hosts': args.hosts}
    if scheme == 'none':
        return 'controller.kevin.app', dict(params, scheduler='none')
    timing = {'period': args.period, 'delta': args.delta, 'reservation': args.reservation,
              'threshold': args.threshold}
    if scheme == 'distda':
        if kevin.k_d == 0:
            raise KevinParameterError('%s has no DA spines for DistDA' % kevin.name)
        DistDaAgent(kevin, kevin.addresses[0], args.threshold, args.reservation, args.delta,
                    args.request_timeout)
        return 'controller.kevin.distda_app', dict(params, request_timeout=args.request_timeout, **timing)
    DaScheduler(kevin, scheme, **timing)
    return 'controller.kevin.app', dict(params, scheduler=scheme, **timing)


def controller_state(fabric):
    """The controller's /kevin/state (see controller.kevin.app)."""
    url = 'http://127.0.0.1:%d/kevin/state' % fabric.controller.rest_port
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def tors_on_path(net, source, destination):
    """ToRs that decremented the TTL on the source -> destination path (each
    ToR decrements once, spines never): the reply to a ping from the
    destination's host travels that path. None if the ping got no answer.
    A ping of its own (popen) rather than traffic.ping_ttl (host.cmd): a
    Ctrl-C or SIGTERM during host.cmd leaves the host's shell waiting, and
    Mininet's teardown then fails on it, leaving bridges and veths behind;
    the probes run most of the time, so they must not hold the shell."""
    ping = net.get(host_name(destination, 0)).popen(
        ['ping', '-c1', '-W2', net.get(host_name(source, 0)).IP()])
    try:
        out = ping.communicate(timeout=10)[0].decode()
    finally:
        if ping.poll() is None:
            ping.kill()
            ping.wait()
    match = re.search(r'ttl=(\d+)', out)
    return 64 - int(match.group(1)) if match else None


def da_ready_s(kevin, state, elephant, started):
    """(ToRs on the elephant's path as the controller routes it at the end,
    seconds from elephant start until the last DA link on that path was in
    its source's table, or None when the path uses no DA link)."""
    routing = KevinRouting(kevin)
    usable = {}
    for link in state['da_links']['usable']:
        source, destination = kevin.parse(link['source']), kevin.parse(link['destination'])
        routing.add_da_link(link['spine'], source, destination)
        usable[(source, destination)] = link['spine']
    path = routing.path(*elephant)
    ready = []
    for hop in zip(path, path[1:]):
        if hop in usable:
            key = (usable[hop], address_str(hop[0]), address_str(hop[1]))
            entry = [e for e in state['da_links']['history']
                     if (e['spine'], e['source'], e['destination']) == key][-1]
            ready.append(entry['usable_at'] - started)
    return len(path), (max(ready) if ready else None)


def ping_summary(output):
    sent = re.search(r'(\d+) packets transmitted, (\d+) received', output)
    rtt = re.search(r'= [\d.]+/([\d.]+)/([\d.]+)/', output)
    if not sent:
        raise RuntimeError('no ping summary in %r' % output)
    transmitted, received = map(int, sent.groups())
    return {'sent': transmitted, 'received': received,
            'rtt_avg_ms': float(rtt.group(1)) if rtt else None,
            'rtt_max_ms': float(rtt.group(2)) if rtt else None}


def run_scheme(scheme, rep, args, kevin, elephants, mice):
    """One fresh fabric with ``scheme``; the measurements of one run."""
    from scripts import traffic
    from scripts.fattree.bisection import CpuSample, free_port, limit_queues
    from scripts.fabric import Fabric, progress
    app, params = scheme_setup(scheme, args)
    mice_host = min(1, args.hosts - 1)
    run = {'scheme': scheme, 'rep': rep, 'app': app, 'params': params,
           'loadavg_before': os.getloadavg()[0]}
    with Fabric(kevin, app, params, ofp_port=free_port(), rest_port=free_port(), bw=args.bw) as fabric:
        net = fabric.net
        limit_queues(net, args.queue)
        traffic.wait_all_pairs(net, [h.name for h in kevin.hosts], progress=progress)
        run['tors_before'] = [tors_on_path(net, s, t) for s, t in elephants]
        progress('%s: elephants cross %s ToRs; %d elephants and %d mice for %ds'
                 % (scheme, run['tors_before'], len(elephants), len(mice), args.duration))
        procs = []
        try:
            for i, (_, t) in enumerate(elephants):
                procs.append(net.get(host_name(t, 0)).popen(
                    ['iperf3', '-s', '-1', '-p', str(IPERF_PORT + i)]))
            time.sleep(1)  # servers listening
            cpu = CpuSample().start()
            started = time.monotonic()
            mice_procs = [net.get(host_name(s, mice_host)).popen(
                ['ping', '-q', '-i', str(MICE_INTERVAL_S), '-s', str(MICE_BYTES),
                 '-w', str(args.duration), net.get(host_name(t, mice_host)).IP()]) for s, t in mice]
            procs += mice_procs
            clients = [net.get(host_name(s, 0)).popen(
                ['iperf3', '-c', net.get(host_name(t, 0)).IP(), '-p', str(IPERF_PORT + i),
                 '-t', str(args.duration), '-J']) for i, (s, t) in enumerate(elephants)]
            procs += clients
            run['probes'] = []
            # iperf3 can outlive -t when its peer stalls; communicate() below then times out
            while any(c.poll() is None for c in clients) and \
                    time.monotonic() - started < args.duration + 30:
                at = time.monotonic() - started
                tors = [tors_on_path(net, s, t) for s, t in elephants]
                run['probes'].append({'t': round(at, 2), 'tors': tors})
                progress('%s t=%4.1fs: elephant paths %s ToRs' % (scheme, at, tors))
                time.sleep(max(0.0, at + 1 - (time.monotonic() - started)))
            reports = [json.loads(c.communicate(timeout=30)[0].decode() or '{}') for c in clients]
            mice_out = [m.communicate(timeout=args.duration + 10)[0].decode() for m in mice_procs]
            run['cpu'] = cpu.stop()
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        for (s, t), report in zip(elephants, reports):
            if 'error' in report or 'end' not in report:
                raise RuntimeError('%s: iperf3 %s -> %s: %s' % (scheme, address_str(s), address_str(t),
                                                                report.get('error', 'no report')))
        time.sleep(0.5)
        run['tors_after'] = [tors_on_path(net, s, t) for s, t in elephants]
        state = controller_state(fabric)
    run['da_links'] = state['da_links']
    run['distda'] = state.get('distda')
    if run['distda']:
        del run['distda']['per_tor']  # kept in the controller; totals are what is compared
    second_half = args.duration / 2
    run['elephants'] = []
    for i, ((s, t), report) in enumerate(zip(elephants, reports)):
        model_tors, ready = da_ready_s(kevin, state, (s, t), started)
        late = [x['sum']['bits_per_second'] for x in report['intervals']
                if x['sum']['start'] >= second_half - 1e-6]
        run['elephants'].append({
            'source': address_str(s), 'destination': address_str(t),
            'tors_before': run['tors_before'][i], 'tors_after': run['tors_after'][i],
            'model_tors_after': model_tors, 'da_ready_s': ready,
            'mbps': traffic.received_mbps(report),
            'mbps_second_half': statistics.fmean(late) / 1e6 if late else None})
    run['mice'] = [dict(ping_summary(out), source=address_str(s), destination=address_str(t))
                   for (s, t), out in zip(mice, mice_out)]
    return run


def _mean(values):
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def summarise(runs, scheme):
    """One table row: means over repetitions (sums over elephants per run)."""
    runs = [r for r in runs if r['scheme'] == scheme]
    elephants = [e for r in runs for e in r['elephants']]
    mice = [m for r in runs for m in r['mice']]
    sent = sum(m['sent'] for m in mice)
    row = {'scheme': scheme, 'reps': len(runs),
           'tors_before': _mean(e['tors_before'] for e in elephants),
           'tors_after': _mean(e['tors_after'] for e in elephants),
           'da_ready_mean_s': _mean(e['da_ready_s'] for e in elephants),
           'da_ready_max_s': max((e['da_ready_s'] for e in elephants if e['da_ready_s'] is not None),
                                 default=None),
           'elephant_mbps_sum': _mean(sum(e['mbps'] for e in r['elephants']) for r in runs),
           'elephant_mbps_sum_second_half': _mean(
               sum(e['mbps_second_half'] or 0 for e in r['elephants']) for r in runs),
           'elephant_mbps_sum_per_rep': [round(sum(e['mbps'] for e in r['elephants']), 2)
                                         for r in runs],
           'elephant_mbps_min': min(e['mbps'] for e in elephants),
           'mice_rtt_ms': _mean(m['rtt_avg_ms'] for m in mice),
           'mice_loss_pct': 100.0 * (sent - sum(m['received'] for m in mice)) / sent if sent else None,
           'cpu_busy_pct': _mean(r['cpu']['cpu_busy_pct'] for r in runs),
           'ovs_cpu_pct': _mean(r['cpu']['ovs_vswitchd_cpu_pct'] for r in runs),
           'loadavg_1m': _mean(r['cpu']['loadavg_1m'] for r in runs),
           # bridges beyond this fabric's are other people's emulations sharing the CPU
           'ovs_bridges_max': max(r['cpu'].get('ovs_bridges', 0) for r in runs)}
    if scheme == 'distda':
        for way in ('sent', 'received'):
            for kind, count in runs[0]['distda'][way].items():
                row['%s_%s' % (kind, way)] = _mean(r['distda'][way][kind] for r in runs)
        row['distda_detection_to_approve_s'] = _mean(
            x['detection_to_approve_s'] for r in runs for x in r['distda']['setups'])
    return row


def _fmt(value, spec='%.1f'):
    return '-' if value is None else spec % value


def print_emulation_table(rows):
    print('\n%-7s %11s %10s %11s %17s %9s %13s %9s %5s %8s' % (
        'scheme', 'ToRs before', 'ToRs after', 'DA ready s', 'elephant Mbit/s', 'min flow',
        'mice RTT/loss', 'CPU busy', 'load', 'bridges'))
    print('%-7s %11s %10s %11s %17s %9s %13s %9s %5s %8s' % (
        '', '(mean)', '(mean)', '(mean/max)', 'sum: all/2nd half', 'Mbit/s', 'ms / %', '%', '1m',
        '(max)'))
    for row in rows:
        print('%-7s %11s %10s %11s %17s %9s %13s %9s %5s %8s' % (
            row['scheme'], _fmt(row['tors_before'], '%.2f'), _fmt(row['tors_after'], '%.2f'),
            '%s/%s' % (_fmt(row['da_ready_mean_s']), _fmt(row['da_ready_max_s'])),
            '%s/%s' % (_fmt(row['elephant_mbps_sum']), _fmt(row['elephant_mbps_sum_second_half'])),
            _fmt(row['elephant_mbps_min']),
            '%s/%s' % (_fmt(row['mice_rtt_ms']), _fmt(row['mice_loss_pct'])),
            _fmt(row['cpu_busy_pct'], '%.0f'), _fmt(row['loadavg_1m'], '%.1f'),
            row['ovs_bridges_max']))
    for row in rows:
        if row['scheme'] == 'distda':
            print('DistDA messages sent/received: %s; elephant detection to PortApprove %s s' % (
                ', '.join('%s %s/%s' % (kind, _fmt(row[kind + '_sent'], '%g'),
                                        _fmt(row[kind + '_received'], '%g'))
                          for kind in ('PortRequest', 'PortApprove', 'PortDecline', 'PortRelease')),
                _fmt(row['distda_detection_to_approve_s'], '%.2f')))


def plot_emulation(rows, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    schemes = [r['scheme'] for r in rows]
    x = range(len(rows))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    panels = ((axes[0], ('tors_before', 'tors_after'), ('before DA', 'after DA'),
               'ToRs on elephant path (from TTL)'),
              (axes[1], ('elephant_mbps_sum', 'elephant_mbps_sum_second_half'),
               ('whole run', 'second half'), 'elephant throughput, sum (Mbit/s)'),
              (axes[2], ('da_ready_mean_s', 'da_ready_max_s'), ('mean', 'max'),
               'elephant start to DA link in table (s)'))
    for ax, keys, labels, title in panels:
        for offset, (key, label) in zip((-0.2, 0.2), zip(keys, labels)):
            ax.bar([i + offset for i in x], [r[key] or 0 for r in rows], width=0.4, label=label)
        ax.set_xticks(list(x))
        ax.set_xticklabels(schemes)
        ax.set_title(title)
        ax.legend()
        ax.grid(True, axis='y')
    fig.tight_layout()
    fig.savefig(path)


def cmd_emulation(args):
    from scripts.fabric import progress
    kevin = Kevin(args.n, args.k_s, args.k_d, hosts_per_tor=args.hosts)
    for scheme in args.schemes:
        scheme_setup(scheme, args)
    elephants = parse_pairs(kevin, args.pairs) if args.pairs else pick_elephants(kevin, args.elephants)
    rng = random.Random(args.seed)
    all_pairs = [(s, t) for s in kevin.addresses for t in kevin.addresses if s != t]
    mice = rng.sample(all_pairs, min(args.mice, len(all_pairs)))
    os.makedirs(args.out, exist_ok=True)
    progress('%s, %d Mbit/s links, elephants %s, %d mice; machine load %.1f (%d CPUs)'
             % (kevin.name, args.bw, ' '.join('%s:%s' % (address_str(s), address_str(t))
                                               for s, t in elephants),
                len(mice), os.getloadavg()[0], os.cpu_count()))
    runs = []
    for rep in range(args.reps):
        for scheme in args.schemes:
            progress('run %d/%d: %s' % (rep * len(args.schemes) + args.schemes.index(scheme) + 1,
                                        args.reps * len(args.schemes), scheme))
            runs.append(run_scheme(scheme, rep, args, kevin, elephants, mice))
    rows = [summarise(runs, scheme) for scheme in args.schemes]
    config = {k: v for k, v in vars(args).items() if k != 'func'}
    config.update(fabric=kevin.name, elephants=['%s:%s' % (address_str(s), address_str(t))
                                                for s, t in elephants],
                  mice=['%s:%s' % (address_str(s), address_str(t)) for s, t in mice],
                  mice_ping_interval_s=MICE_INTERVAL_S, mice_ping_bytes=MICE_BYTES)
    with open(os.path.join(args.out, 'emulation.json'), 'w') as out:
        json.dump({'config': config, 'summary': rows, 'runs': runs}, out, indent=1)
    fields = sorted({key for row in rows for key in row}, key=lambda k: (k != 'scheme', k))
    with open(os.path.join(args.out, 'emulation.csv'), 'w', newline='') as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    print_emulation_table(rows)
    plot_emulation(rows, os.path.join(args.out, 'emulation.png'))
    print('wrote %s/emulation.json, .csv and .png' % args.out)


# -- dcfabric kevin ... (scripts.cli) -------------------------------------------

def fabric_options(p, hosts=1, hosts_help=''):
    p.add_argument('--n', type=int, default=8, help='ToRs, a power of k_s (default 8)')
    p.add_argument('--k-s', type=int, default=2, help='static spines = de Bruijn degree (default 2)')
    p.add_argument('--k-d', type=int, default=1, help='demand-aware spines (default 1)')
    if hosts is not None:
        p.add_argument('--hosts', type=int, default=hosts,
                       help='hosts per ToR (default %d)%s' % (hosts, hosts_help and ': ' + hosts_help))


def timing_options(p):
    p.add_argument('--period', type=float, default=1.0,
                   help='scheduling / DistDA counter polling period rho, s (default 1)')
    p.add_argument('--delta', type=float, default=1.0, help='reconfiguration delay, s (default 1)')
    p.add_argument('--reservation', type=float, default=30.0, help='reservation r, s (default 30)')
    p.add_argument('--threshold', type=float, default=100e3,
                   help='elephant threshold, bytes/s (default 100000)')
    p.add_argument('--request-timeout', type=float, default=1.0,
                   help='DistDA: give up an unanswered PortRequest after this long (default 1 s)')


def cmd_cli(args):
    from mininet.cli import CLI
    from scripts.fabric import Fabric
    app, params = scheme_setup(args.scheduler, args)
    kevin = Kevin(args.n, args.k_s, args.k_d, hosts_per_tor=args.hosts)
    with Fabric(kevin, app, params, ofp_port=args.ofp_port, rest_port=args.rest_port, bw=args.bw,
                log_level='info') as fabric:
        print('%s with %s (%s); controller log %s; state: curl http://127.0.0.1:%d/kevin/state'
              % (kevin.name, app, args.scheduler, fabric.controller.log_path, args.rest_port))
        CLI(fabric.net)


def cmd_tables(args):
    kevin = Kevin(args.n, args.k_s, args.k_d)
    routing = KevinRouting(kevin)
    for text in args.da or ():
        parts = text.split(':')
        spine = parts[2] if len(parts) == 3 else '0'
        if len(parts) not in (2, 3) or not spine.isdigit():
            raise KevinParameterError('a DA link is SRC:DST or SRC:DST:SPINE, e.g. 011:100; got %r'
                                      % text)
        routing.add_da_link(int(spine), kevin.parse(parts[0]), kevin.parse(parts[1]))
    tors = [kevin.parse(args.tor)] if args.tor else kevin.addresses
    for v in tors:
        table = routing.tables[v]
        print(table.format())
        print('  %d routing entries; bound (ports x d) %d x %d = %d\n'
              % (table.size(), len(table.neighbours), kevin.d, table.bound()))
    worst = max(tors, key=lambda v: routing.tables[v].size())
    ports = {p: address_str(w) for p, w in routing.tables[worst].neighbours.items()}
    print('largest table: ToR %s, %d entries <= bound %d (ports -> neighbours: %s)'
          % (address_str(worst), routing.tables[worst].size(), routing.tables[worst].bound(), ports))


def add_cli_arguments(parser):
    """``dcfabric kevin cli|tables``: scripts.cli hands its ``kevin`` parser here."""
    sub = parser.add_subparsers(dest='kevin_command', metavar='{cli,tables}', required=True)
    p = sub.add_parser('cli', help="start a Kevin fabric with its controller and open Mininet's CLI")
    fabric_options(p)
    p.add_argument('--scheduler', choices=('none', 'bfs', 'greedy', 'distda'), default='none',
                   help='DA links: none (static de Bruijn), bfs (Algorithm 2), greedy '
                        '(Algorithm 3), distda (Algorithm 4, controller.kevin.distda_app)')
    timing_options(p)
    p.add_argument('--bw', type=_positive(float), help='shape every link to BW Mbit/s (HTB)')
    p.add_argument('--ofp-port', type=int, default=6653, help='OpenFlow port on 127.0.0.1')
    p.add_argument('--rest-port', type=int, default=8080, help='REST port on 127.0.0.1')
    p.set_defaults(func=cmd_cli)
    p = sub.add_parser('tables', help="every ToR's greedy LPM table (Algorithm 1 + reduce) "
                                      'and its size against the bound')
    fabric_options(p, hosts=None)
    p.add_argument('--tor', help='one ToR by address, e.g. 011')
    p.add_argument('--da', nargs='+', metavar='SRC:DST[:SPINE]',
                   help='add DA links first, e.g. 011:100 (the seed\'s Figure 4)')
    p.set_defaults(func=cmd_tables)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    model = sub.add_parser('model', help='pure-model path length vs load against an expander')
    model.add_argument('--n', type=int, nargs='+', default=[64, 256])
    model.add_argument('--loads', type=float, nargs='+',
                       default=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0])
    model.add_argument('--seeds', type=int, default=3)
    model.add_argument('--out', default=DEFAULT_OUT)
    model.set_defaults(func=cmd_model)
    emu = sub.add_parser('emulation', help='emulated skewed workload: no DA links, BFS, Greedy, '
                                           'DistDA side by side (root, Open vSwitch)')
    fabric_options(emu, hosts=2, hosts_help='elephants use the first, mice the second')
    emu.add_argument('--bw', type=_positive(float), default=10, help='link rate, Mbit/s (default 10)')
    emu.add_argument('--queue', type=_positive(int), default=50,
                     help='packets each shaped link may queue (default 50)')
    emu.add_argument('--duration', type=_positive(int), default=20,
                     help='elephant iperf3 seconds (default 20)')
    emu.add_argument('--elephants', type=_positive(int), default=3,
                     help='number of elephants picked as the module help says (default 3)')
    emu.add_argument('--pairs', nargs='+', metavar='SRC:DST',
                     help='elephant ToR pairs instead, e.g. 011:001 110:010')
    emu.add_argument('--mice', type=int, default=8, help='mouse ping streams (default 8)')
    emu.add_argument('--schemes', nargs='+', choices=SCHEMES, default=list(SCHEMES))
    timing_options(emu)
    emu.add_argument('--reps', type=_positive(int), default=1)
    emu.add_argument('--seed', type=int, default=1, help='seed of the mice pairs')
    emu.add_argument('--out', default=DEFAULT_OUT)
    emu.set_defaults(func=cmd_emulation)
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except KevinParameterError as err:
        parser.error(str(err))
    except KeyboardInterrupt:
        sys.exit('kevin_experiment: interrupted; the fabric and its processes are torn down')


if __name__ == '__main__':
    main()
