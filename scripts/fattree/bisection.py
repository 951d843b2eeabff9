"""Bisection-bandwidth experiment of Al-Fares et al. (section 4, Table 2) on
an emulated k-ary fat-tree with shaped links.

Two networks stay up for the whole experiment: the non-blocking reference
(every host on one switch at the same link rate) and the fat-tree, whose
controller is restarted to change scheme. For each repetition and traffic
pattern (scripts.fattree.patterns) every scheme runs in turn: every host
sends one long-lived iperf3 TCP flow to one host, all at once, and the
receivers' rates are summed. A scheme's score for a pattern is its aggregate rate as a
percentage of the non-blocking reference's for the same flows (and, beside
it, of n hosts x link rate). Throughout each measurement the CPU is sampled
(machine busy %, ovs-vswitchd's share, load average) so that a result can
show the emulator was not the bottleneck.

    dcfabric bisection [--k 4] [--bw 2] [--queue 50] [--duration 15] [--omit 3] [--reps 3]
        [--seed 1] [--patterns random stride-1 ...] [--schemes nonblocking twolevel ...]
        [--out results/bisection]

Writes results.json (configuration, every flow of every run, CPU samples,
summary), runs.csv, summary.csv and bisection.png into a time-stamped
directory under --out, and prints the pattern x scheme table. Ctrl-C stops
the flows and tears the fabric down.
"""
import argparse
import csv
import datetime
import json
import os
import socket
import statistics
import subprocess
import sys
import time

from scripts.fattree.patterns import PAPER_PATTERNS, PatternError, check, label, seeded
from topologies.fattree import FatTree, check_k

SCHEMES = ('nonblocking', 'twolevel', 'ecmp', 'classifier', 'scheduler')
FATTREE_SCHEMES = SCHEMES[1:]
DYNAMIC = ('classifier', 'scheduler')
FLOW_IDLE_S = 5  # per-flow entries' idle timeout; runs are this far apart so each starts clean
IPERF_PORT = 5201
QUEUE_PACKETS = 50
RUN_ATTEMPTS = 3
MININET_PREFIX = 'bx'  # fat-tree node names in Mininet: bxe0_0, bxh0_0_2, ...
# The paper's Table 2 (k=4, percent of ideal bisection bandwidth): Two-Level
# Table, Flow Classification, Flow Scheduling, for the rows the issue quotes.
PAPER = {'random': (75.0, 76.3, 93.5), 'stride-1': (100.0, 100.0, 100.0),
         'stride-2': (100.0, 100.0, 99.5), 'stride-4': (100.0, 100.0, 100.0),
         'stride-8': (100.0, 100.0, 99.9), 'sameid-outgoing': (38.5, 75.4, 87.4)}
PAPER_SCHEMES = ('twolevel', 'classifier', 'scheduler')


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


# -- CPU evidence ---------------------------------------------------------

def _cpu_times():
    """(total, idle + iowait, nice) jiffies of all CPUs."""
    with open('/proc/stat') as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4], fields[1]


def _pid_ticks(name):
    """CPU ticks of the processes called ``name`` -- of just the one whose
    pid file is in $OVS_RUNDIR when a private Open vSwitch runs there."""
    total = 0
    pids = filter(str.isdigit, os.listdir('/proc'))
    pidfile = os.path.join(os.environ.get('OVS_RUNDIR', ''), name + '.pid')
    if os.environ.get('OVS_RUNDIR') and os.path.exists(pidfile):
        with open(pidfile) as f:
            pids = [f.read().strip()]
    for pid in pids:
        try:
            with open('/proc/%s/stat' % pid) as stat:
                parts = stat.read().rsplit(')', 1)
            if parts[0].endswith('(' + name):
                fields = parts[1].split()
                total += int(fields[11]) + int(fields[12])  # utime + stime
        except OSError:
            continue
    return total


def ovs_bridge_count():
    """Bridges in the one ovs-vswitchd, ours and everyone else's: its single
    userspace-datapath thread serves them all."""
    out = subprocess.run(['ovs-vsctl', '--timeout=5', 'list-br'], capture_output=True, text=True)
    return len(out.stdout.split())


class CpuSample:
    """Machine-wide busy % (and the niced part of it) and ovs-vswitchd's CPU
    % (100 = one core) between start() and stop(), plus the 1-minute load
    average and the number of OVS bridges at the end."""

    def start(self):
        self.t0, self.total0, self.idle0, self.nice0 = time.time(), *_cpu_times()
        self.ovs0 = _pid_ticks('ovs-vswitchd')
        return self

    def stop(self):
        total, idle, nice = _cpu_times()
        elapsed = max(time.time() - self.t0, 1e-6)
        jiffies = max(total - self.total0, 1)
        busy = 100.0 * (1 - (idle - self.idle0) / jiffies)
        ovs = 100.0 * (_pid_ticks('ovs-vswitchd') - self.ovs0) / os.sysconf('SC_CLK_TCK') / elapsed
        # Niced work (this experiment's own iperf3 when run with nice, and
        # background jobs) only takes what the rest leaves.
        return {'cpu_busy_pct': round(busy, 1), 'cpu_nice_pct': round(100.0 * (nice - self.nice0) / jiffies, 1),
                'ovs_vswitchd_cpu_pct': round(ovs, 1),
                'loadavg_1m': os.getloadavg()[0], 'cpus': os.cpu_count(),
                'ovs_bridges': ovs_bridge_count()}


# -- one run ----------------------------------------------------------------

def run_flows(net, pairs, duration, omit, server_wait_s=1.0):
    """Start one iperf3 TCP flow per (source, destination) host pair at once;
    returns each flow's receiver rate in Mbit/s (after the first ``omit``
    seconds), in pair order. Every iperf3 is stopped on the way out.
    ``server_wait_s``: time the iperf3 servers get to listen (longer when
    hosts are on other machines, reached by ssh)."""
    procs = []
    try:
        servers = [net.get(dst).popen(['iperf3', '-s', '-1', '-p', str(IPERF_PORT)])
                   for _, dst in pairs]
        procs += servers
        time.sleep(server_wait_s)
        clients = [net.get(src).popen(['iperf3', '-c', net.get(dst).IP(), '-p', str(IPERF_PORT),
                                       '-t', str(duration), '-O', str(omit), '-J'])
                   for src, dst in pairs]
        procs += clients
        rates = []
        for (src, dst), client in zip(pairs, clients):
            try:
                out, _ = client.communicate(timeout=duration + omit + 60)
            except subprocess.TimeoutExpired:
                raise RuntimeError('iperf3 %s -> %s did not finish' % (src, dst)) from None
            report = json.loads(out.decode() or '{}')
            if 'error' in report or 'end' not in report:
                raise RuntimeError('iperf3 %s -> %s: %s' % (src, dst, report.get('error', 'no report')))
            rates.append(report['end']['sum_received']['bits_per_second'] / 1e6)
        return rates
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def limit_queues(net, packets):
    """Give every shaped interface's HTB class a FIFO of ``packets`` instead
    of the device's 1000-packet default: at a few Mbit/s that default holds
    seconds of data, and ACKs of a flow queued behind another flow's data
    distort TCP far more than any routing scheme. Shallow buffers are also
    what datacenter switches have."""
    for node in net.hosts + net.switches:
        for intf in node.intfList():
            if intf.name != 'lo':
                node.cmd('tc qdisc replace dev %s parent 5:1 handle 10: pfifo limit %d'
                         % (intf.name, packets))


class Fabrics:
    """The non-blocking reference and the fat-tree, both up for the whole
    experiment, so that every scheme of one pattern is measured within a
    few minutes (machine load from other work drifts over longer spans).
    The fat-tree changes scheme by restarting its controller, which clears
    and reinstalls every switch on connect. It runs in Mininet under
    prefixed names (topologies.renamed), so that it can share the machine
    with another fat-tree emulation."""

    def __init__(self, config, progress):
        self.config, self.progress = config, progress
        self.k, self.bw = config['k'], config['bw']
        self.hosts = [h.name for h in FatTree(self.k).hosts]
        self.nonblocking = self.fattree = None
        self.scheme = None  # the fat-tree controller's scheme

    def params(self, scheme):
        return {'k': self.k, 'scheme': scheme, 'link_mbps': self.bw, 'flow_idle': FLOW_IDLE_S}

    def __enter__(self):
        from scripts.fabric import Fabric
        from topologies.nonblocking import NonBlocking, host_name
        from topologies.renamed import renamed
        schemes = self.config['schemes']
        try:
            if 'nonblocking' in schemes:
                self.nonblocking = Fabric(NonBlocking(self.k), 'controller.fattree.nonblocking_app',
                                          {'k': self.k}, ofp_port=free_port(), rest_port=free_port(),
                                          bw=self.bw).__enter__()
                self.nb_hosts = {h: host_name(i) for i, h in enumerate(self.hosts)}
                self._ready(self.nonblocking, self.nb_hosts)
            first = next((s for s in schemes if s != 'nonblocking'), None)
            if first:
                self.fattree = Fabric(renamed(FatTree(self.k), MININET_PREFIX), 'controller.fattree.app',
                                      self.params(first), ofp_port=free_port(), rest_port=free_port(),
                                      bw=self.bw).__enter__()
                self.ft_hosts = {h: MININET_PREFIX + h for h in self.hosts}
                self.scheme = first
                self._ready(self.fattree, self.ft_hosts)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _ready(self, fabric, host_of):
        from scripts import traffic
        limit_queues(fabric.net, self.config['queue'])
        traffic.wait_all_pairs(fabric.net, sorted(host_of.values()), progress=self.progress)

    def __exit__(self, *exc):
        for fabric in (self.fattree, self.nonblocking):
            if fabric is not None:
                fabric.stop()

    def use(self, scheme):
        """(Mininet net, fat-tree host -> Mininet host) running ``scheme``;
        whether the fat-tree's controller was restarted for it."""
        if scheme == 'nonblocking':
            return self.nonblocking.net, self.nb_hosts, False
        if scheme == self.scheme:
            return self.fattree.net, self.ft_hosts, False
        controller = self.fattree.controller
        controller.stop()
        controller.params = self.params(scheme)
        controller.start()
        self.scheme = scheme
        self._wait_installed(controller)
        self._ready(self.fattree, self.ft_hosts)
        return self.fattree.net, self.ft_hosts, True

    def _wait_installed(self, controller, timeout=60):
        """Until every switch is back on the new controller (which replaced
        its rules on connect): its REST view lists the connected switches."""
        import urllib.request
        wanted = len(FatTree(self.k).switches)
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                url = 'http://127.0.0.1:%d/fattree/state/switches' % controller.rest_port
                with urllib.request.urlopen(url, timeout=5) as answer:
                    if len(json.loads(answer.read())) == wanted:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise TimeoutError('fat-tree switches did not all reconnect within %ds' % timeout)


def measure(net, host_of, pairs, config, progress):
    """One run: (per-flow Mbit/s, CPU sample). A run whose iperf3 lost its
    control connection (it happens on a loaded machine) is run again."""
    for attempt in range(1, RUN_ATTEMPTS + 1):
        sample = CpuSample().start()
        try:
            rates = run_flows(net, [(host_of[s], host_of[d]) for s, d in pairs],
                              config['duration'], config['omit'])
            return rates, sample.stop()
        except RuntimeError as err:
            if attempt == RUN_ATTEMPTS:
                raise
            progress('%s; again' % err)
            time.sleep(FLOW_IDLE_S + 2)


def run_experiment(config, flows_of, record, progress):
    """For each repetition and pattern, every scheme in turn (fat-tree
    schemes in alternating order, saving a controller restart per pattern)."""
    fattree_schemes = [s for s in config['schemes'] if s != 'nonblocking']
    with Fabrics(config, progress) as fabrics:
        previous = None
        for rep in range(config['reps']):
            for index, pattern in enumerate(config['patterns']):
                order = fattree_schemes if index % 2 == 0 else fattree_schemes[::-1]
                if 'nonblocking' in config['schemes']:
                    order = ['nonblocking'] + order
                for scheme in order:
                    net, host_of, restarted = fabrics.use(scheme)
                    if previous == scheme and scheme in DYNAMIC and not restarted:
                        time.sleep(FLOW_IDLE_S + 2)  # the last run's per-flow entries idle out
                    pairs = flows_of[(pattern, rep)]
                    rates, cpu = measure(net, host_of, pairs, config, progress)
                    record({'scheme': scheme, 'pattern': pattern, 'rep': rep,
                            'flows': [{'src': s, 'dst': d, 'mbps': round(r, 3)}
                                      for (s, d), r in zip(pairs, rates)],
                            'aggregate_mbps': round(sum(rates), 3), **cpu})
                    progress('%-12s %-26s rep %d: %7.1f Mbit/s aggregate, CPU busy %.0f%%, '
                             'ovs-vswitchd %.0f%%, %d OVS bridges'
                             % (scheme, label(pattern), rep, sum(rates), cpu['cpu_busy_pct'],
                                cpu['ovs_vswitchd_cpu_pct'], cpu['ovs_bridges']))
                    previous = scheme


# -- summary ----------------------------------------------------------------

def two_level_fair_share(topo, pairs):
    """% of ideal that two-level routing allows the flows ``pairs`` if every
    link were shared max-min fairly (ideal TCP): what the two-level column
    could reach, against which the measured one shows TCP's own losses."""
    from controller.fattree.twolevel import all_tables
    from topologies.walk import walk
    tables = all_tables(topo)
    paths = []
    for src, dst in pairs:
        hops = walk(topo, lambda switch, _, ip: tables[switch].lookup(ip), src, dst)
        paths.append({(src, hops[0][0])} | {(sw, topo.peer(sw, port)[0]) for sw, port in hops})
    capacity = {link: 1.0 for path in paths for link in path}
    rates, active = [0.0] * len(paths), set(range(len(paths)))
    while active:  # water-filling: saturate the most shared link, freeze its flows
        share = {}
        for link, left in capacity.items():
            users = [i for i in active if link in paths[i]]
            if users:
                share[link] = (left / len(users), users)
        bottleneck = min(share, key=lambda link: share[link][0])
        rate, users = share[bottleneck]
        for i in users:
            rates[i] = rate
            active.discard(i)
            for link in paths[i]:
                capacity[link] -= rate
    return 100.0 * sum(rates) / len(paths)



def summarize(runs, config):
    """{(pattern, scheme): {...}} with the percentage of the non-blocking
    reference (same pattern and repetition) and of n x link rate."""
    line_rate = config['hosts'] * config['bw']
    reference = {(r['pattern'], r['rep']): r['aggregate_mbps']
                 for r in runs if r['scheme'] == 'nonblocking'}
    groups = {}
    for r in runs:
        groups.setdefault((r['pattern'], r['scheme']), []).append(r)
    topo = FatTree(config['k'])
    model = {p: statistics.mean(two_level_fair_share(topo, seeded(p, topo, config['seed'] + rep))
                                for rep in range(config['reps']))
             for p in {r['pattern'] for r in runs}}
    summary = {}
    for (pattern, scheme), rs in groups.items():
        of_ref = [100.0 * r['aggregate_mbps'] / reference[(pattern, r['rep'])]
                  for r in rs if (pattern, r['rep']) in reference]
        of_line = [100.0 * r['aggregate_mbps'] / line_rate for r in rs]
        summary[(pattern, scheme)] = {
            'pattern': pattern, 'scheme': scheme, 'reps': len(rs),
            'pct_of_nonblocking': statistics.mean(of_ref) if of_ref else None,
            'pct_of_nonblocking_std': statistics.stdev(of_ref) if len(of_ref) > 1 else 0.0,
            'pct_of_nonblocking_min': min(of_ref) if of_ref else None,
            'pct_of_nonblocking_max': max(of_ref) if of_ref else None,
            'pct_of_line_rate': statistics.mean(of_line),
            'twolevel_fair_share_pct': model[pattern],
            'aggregate_mbps': statistics.mean(r['aggregate_mbps'] for r in rs),
            'cpu_busy_pct_max': max(r['cpu_busy_pct'] for r in rs),
            'ovs_vswitchd_cpu_pct_max': max(r['ovs_vswitchd_cpu_pct'] for r in rs)}
    return summary


def format_table(summary, config):
    schemes = [s for s in config['schemes']]
    metric = 'pct_of_nonblocking' if 'nonblocking' in schemes else 'pct_of_line_rate'
    lines = ['%% of ideal bisection bandwidth (%s), mean +- std over %d repetition(s); '
             '"line": %% of hosts x link rate (the non-blocking switch\'s own figure shows '
             'what the emulator delivers); "2L fair": two-level routing with max-min fair '
             'link sharing (a model); paper (Two-Level / Flow Class. / Flow Sched.) in brackets'
             % ('aggregate / non-blocking switch' if metric == 'pct_of_nonblocking'
                else 'aggregate / (hosts x link rate)', config['reps']),
             '%-27s' % 'pattern' + ''.join('%16s' % s for s in schemes)
             + '  2L fair   paper']
    for pattern in config['patterns']:
        cells = []
        for scheme in schemes:
            row = summary.get((pattern, scheme))
            if row is None:
                cells.append('%16s' % '-')
            elif scheme == 'nonblocking' or metric == 'pct_of_line_rate':
                cells.append('%16s' % ('%5.1f line' % row['pct_of_line_rate']))
            else:
                cells.append('%16s' % ('%5.1f +- %4.1f' % (row[metric], row['pct_of_nonblocking_std'])))
        paper = PAPER.get(pattern)
        model = next((r['twolevel_fair_share_pct'] for (p, _), r in summary.items() if p == pattern), None)
        lines.append('%-27s' % label(pattern) + ''.join(cells)
                     + ('%9.1f' % model if model is not None else '%9s' % '-') + '   ' + ('[%s]' % ' / '.join('%.1f' % v for v in paper) if paper else '[-]'))
    return '\n'.join(lines)


def write_outputs(out_dir, config, runs, summary):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, 'results.json'), 'w') as f:
        json.dump({'config': config, 'runs': runs, 'summary': list(summary.values()),
                   'paper': PAPER}, f, indent=1)
    with open(os.path.join(out_dir, 'runs.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['scheme', 'pattern', 'rep', 'src', 'dst', 'mbps', 'aggregate_mbps',
                    'cpu_busy_pct', 'cpu_nice_pct', 'ovs_vswitchd_cpu_pct', 'loadavg_1m', 'ovs_bridges'])
        for r in runs:
            for flow in r['flows']:
                w.writerow([r['scheme'], r['pattern'], r['rep'], flow['src'], flow['dst'], flow['mbps'],
                            r['aggregate_mbps'], r['cpu_busy_pct'], r['cpu_nice_pct'], r['ovs_vswitchd_cpu_pct'],
                            r['loadavg_1m'], r['ovs_bridges']])
    with open(os.path.join(out_dir, 'summary.csv'), 'w', newline='') as f:
        rows = list(summary.values())
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(os.path.join(out_dir, 'bisection.png'), summary, config)


def plot(path, summary, config):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    metric = 'pct_of_nonblocking' if 'nonblocking' in config['schemes'] else 'pct_of_line_rate'
    schemes = [s for s in config['schemes'] if s != 'nonblocking']
    patterns = config['patterns']
    width = 0.8 / max(len(schemes), 1)
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(patterns)), 4.5))
    for i, scheme in enumerate(schemes):
        xs = [p + (i - (len(schemes) - 1) / 2) * width for p in range(len(patterns))]
        rows = [summary.get((p, scheme)) for p in patterns]
        ax.bar(xs, [r[metric] if r and r[metric] is not None else 0 for r in rows], width,
               yerr=[r['pct_of_nonblocking_std'] if r and metric == 'pct_of_nonblocking' else 0
                     for r in rows], capsize=2, label=scheme)
        if scheme in PAPER_SCHEMES:
            column = PAPER_SCHEMES.index(scheme)
            paper = [(x, PAPER[p][column]) for x, p in zip(xs, patterns) if p in PAPER]
            ax.scatter([x for x, _ in paper], [v for _, v in paper], marker='_', s=120, color='black',
                       zorder=3, label='paper' if column == 0 else None)
    ax.set_xticks(range(len(patterns)))
    ax.set_xticklabels([label(p) for p in patterns], rotation=30, ha='right', fontsize=8)
    ax.set_ylabel('% of ideal bisection bandwidth')
    ax.set_ylim(0, 110)
    ax.set_title('k=%d fat-tree, %g Mbit/s links, %d s flows, %d rep(s)'
                 % (config['k'], config['bw'], config['duration'], config['reps']))
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# -- command line -----------------------------------------------------------

def _positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError('not a number: %s' % text) from None
        if value <= 0:
            raise argparse.ArgumentTypeError('must be positive, got %s' % text)
        return value
    return parse


def _k(text):
    try:
        return check_k(int(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_arguments(p):
    p.add_argument('--k', type=_k, default=4, help='fat-tree arity (even; default 4, as the paper)')
    p.add_argument('--bw', type=_positive(float), default=2.0,
                   help='link rate in Mbit/s, host and switch links (default 2: the one '
                        'userspace-datapath thread of ovs-vswitchd must not be the limit)')
    p.add_argument('--queue', type=_positive(int), default=QUEUE_PACKETS,
                   help='packets each shaped link may queue (default %d)' % QUEUE_PACKETS)
    p.add_argument('--duration', type=_positive(int), default=15, help='measured seconds per run')
    p.add_argument('--omit', type=int, default=3,
                   help='seconds of each flow left out of the measurement (TCP start, scheduling)')
    p.add_argument('--reps', type=_positive(int), default=3, help='repetitions (each a new seed)')
    p.add_argument('--seed', type=int, default=1, help='seed of the random patterns')
    p.add_argument('--patterns', nargs='+', default=list(PAPER_PATTERNS),
                   help='patterns (default: the paper\'s ten): random, stride-N, '
                        'staggered-EDGEP-PODP, interpod-incoming, sameid-outgoing')
    p.add_argument('--schemes', nargs='+', default=list(SCHEMES), choices=SCHEMES,
                   help='schemes to run; nonblocking is the 100%% reference')
    p.add_argument('--out', default='results/bisection', help='results directory')
    p.add_argument('--summarize', metavar='RUN_DIR',
                   help='no experiment: redo the table, CSV and plot of a finished run')


def resummarize(out_dir):
    """Summary, table, CSV and plot again from a run's results.json."""
    with open(os.path.join(out_dir, 'results.json')) as f:
        saved = json.load(f)
    summary = summarize(saved['runs'], saved['config'])
    write_outputs(out_dir, saved['config'], saved['runs'], summary)
    print(format_table(summary, saved['config']))


def run_from_args(args, progress=None):
    progress = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    if args.summarize:
        return resummarize(args.summarize)
    if args.omit < 0:
        raise ValueError('--omit must not be negative, got %d' % args.omit)
    topo = FatTree(args.k)
    for pattern in args.patterns:
        check(pattern, topo)
    schemes = [s for s in SCHEMES if s in args.schemes]
    config = {'k': args.k, 'bw': args.bw, 'queue': args.queue, 'duration': args.duration, 'omit': args.omit,
              'reps': args.reps, 'seed': args.seed, 'patterns': args.patterns, 'schemes': schemes,
              'hosts': len(topo.hosts), 'started': datetime.datetime.now().isoformat(timespec='seconds')}
    flows_of = {(p, rep): seeded(p, topo, args.seed + rep)
                for p in args.patterns for rep in range(args.reps)}
    out_dir = os.path.join(args.out, datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    runs = []
    try:
        run_experiment(config, flows_of, runs.append, progress)
    finally:
        if runs:  # what was measured before an interruption is kept
            summary = summarize(runs, config)
            write_outputs(out_dir, config, runs, summary)
            print(format_table(summary, config))
            print('results in %s' % out_dir)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m scripts.fattree.bisection', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    from scripts.fabric import SetupError
    try:
        run_from_args(args)
    except (SetupError, PatternError, ValueError) as err:
        sys.exit('bisection: %s' % err)
    except KeyboardInterrupt:
        sys.exit('bisection: interrupted; everything torn down')


if __name__ == '__main__':
    main()
