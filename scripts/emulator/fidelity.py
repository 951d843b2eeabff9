"""Whether the emulator, not the emulated network, limited a run: its
headroom measured each second while the run goes on, and a verdict.

Mininet-HiFi's rule (Handigol et al., CoNEXT'12): a result counts only if
the emulator kept up, which they checked by the CPU staying idle enough.
CPU alone misleads here: ovs-vswitchd's poll loop reads busy while far
from saturated (two-level routing on Stride(4) at 2 Mbit/s carried 103% of
the non-blocking reference while its daemon read 97% of a core:
results/rate_sweep). So the verdict asks three things:

* the machine had idle CPU left (median of the seconds, ``MIN_IDLE_PCT``),
* no ovs-vswitchd dropped packets it could not read in time (its packet
  sockets' drop counters, ``ss -0 -m``: what a saturated forwarding thread
  loses, which no emulated queue would have), and the kernel dropped none
  from its full per-core input backlog (/proc/net/softnet_stat: where a
  veth's packet waits for the core that forwards it; the only such loss of
  a kernel bridge, which has no daemon), and
* the non-blocking reference, where the run has one, carried at least
  ``MIN_REFERENCE_PCT`` of its line rate: the same hosts, shaped links and
  queues on one kernel bridge, without the fabric's contention, so anything
  it misses the machine (hosts, kernel, CPU) lost.

The daemons' busy time, queue drops and backlog, and the RTT a probe sees
against the idle RTT are recorded beside the verdict but do not decide it:
queues that fill under TCP are the emulated network's own behaviour.
"""
import json
import os
import re
import statistics
import subprocess
import threading
import time

MIN_IDLE_PCT = 10.0
# TCP goodput over a 1,500-byte MTU tops out near 95.6% of line rate
MIN_REFERENCE_PCT = 90.0
INTERVAL_S = 1.0


def _cpu_times():
    """(total, idle + iowait) jiffies of all CPUs."""
    with open('/proc/stat') as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]


def daemon_pids():
    """Every running ovs-vswitchd: the machine's own and private ones."""
    pids = []
    for entry in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/comm' % entry) as comm:
                if comm.read().strip() == 'ovs-vswitchd':
                    pids.append(int(entry))
        except OSError:
            continue
    return sorted(pids)


def _pid_ticks(pid):
    try:
        with open('/proc/%d/stat' % pid) as stat:
            fields = stat.read().rsplit(')', 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except OSError:
        return None


def daemon_by_namespace(pids):
    """{network namespace (as /proc/PID/ns/net reads): one of the daemons
    ``pids`` in it}: the machine's own in this one, private ones in theirs."""
    one_of = {}
    for pid in pids:
        try:
            one_of.setdefault(os.readlink('/proc/%d/ns/net' % pid), pid)
        except OSError:
            continue
    return one_of


def daemon_namespaces(pids):
    """One ovs-vswitchd of each network namespace the daemons ``pids`` run in."""
    return sorted(daemon_by_namespace(pids).values())


def kernel_backlog_drops():
    """Packets the kernel dropped so far because a core's input backlog was
    full (second column of /proc/net/softnet_stat, summed over cores)."""
    with open('/proc/net/softnet_stat') as stat:
        return sum(int(line.split()[1], 16) for line in stat)


def _in_namespace_of(pid, cmd):
    return subprocess.run(['nsenter', '--net=/proc/%d/ns/net' % pid] + cmd, capture_output=True, text=True,
                          timeout=10).stdout


def qdisc_totals(pids):
    """(drops, backlog packets) summed over the qdiscs of the daemons'
    namespaces: the switch ends of every shaped link."""
    drops = backlog = 0
    for pid in daemon_namespaces(pids):
        for qdisc in json.loads(_in_namespace_of(pid, ['tc', '-s', '-j', 'qdisc', 'show']) or '[]'):
            drops += qdisc.get('drops', 0)
            backlog += qdisc.get('qlen', 0)
    return drops, backlog


def daemon_socket_drops(pids):
    """Packets the ovs-vswitchd daemons' packet sockets dropped so far
    (their receive queues were full: the daemon did not read them in time)."""
    return sum(int(m) for pid in daemon_namespaces(pids)
               for m in re.findall(r'"ovs-vswitchd".*?skmem:\(.*?,d(\d+)\)',
                                   _in_namespace_of(pid, ['ss', '-0', '-m', '-n', '-p'])))


class FidelityMonitor:
    """Samples the machine each second between ``start`` and ``stop``:
    idle CPU %, each ovs-vswitchd's busy % (100 = one core), and qdisc
    drops and backlog; the first ``settle_s`` seconds are left out. With
    ``probe`` (a Mininet host, a destination IP) a
    ping at 5/s runs beside the load, and ``idle_rtt_ms`` is that pair's
    RTT measured before the load starts."""

    def __init__(self, probe=None, idle_rtt_ms=None, settle_s=0):
        self.probe, self.idle_rtt_ms = probe, idle_rtt_ms
        self.settle_s = settle_s  # first seconds left out (TCP's slow start, as iperf3 -O)
        self.samples = []
        self._stop = threading.Event()
        self._thread = self._ping = None

    def start(self):
        self.pids = daemon_pids()
        self.drops_before = daemon_socket_drops(self.pids)
        self.backlog_drops_before = kernel_backlog_drops()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if self.probe:
            host, dst = self.probe
            self._ping = host.popen(['ping', '-n', '-i', '0.2', dst], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
        return self

    def _run(self):
        clock = os.sysconf('SC_CLK_TCK')
        total0, idle0 = _cpu_times()
        ticks0 = {pid: _pid_ticks(pid) for pid in self.pids}
        drops0, _ = qdisc_totals(self.pids)
        t0 = time.monotonic()
        while not self._stop.wait(INTERVAL_S):
            total, idle = _cpu_times()
            ticks = {pid: _pid_ticks(pid) for pid in self.pids}
            drops, backlog = qdisc_totals(self.pids)
            now = time.monotonic()
            elapsed = max(now - t0, 1e-6)
            self.samples.append({
                'idle_pct': round(100.0 * (idle - idle0) / max(total - total0, 1), 1),
                'daemon_busy_pct': [round(100.0 * (ticks[p] - ticks0[p]) / clock / elapsed, 1)
                                    for p in self.pids if ticks[p] is not None and ticks0[p] is not None],
                'qdisc_drops': drops - drops0, 'qdisc_backlog': backlog})
            total0, idle0, ticks0, drops0, t0 = total, idle, ticks, drops, now

    def stop(self):
        self._stop.set()
        self._thread.join(10)
        rtts = []
        if self._ping:
            self._ping.terminate()
            out, _ = self._ping.communicate(timeout=10)
            rtts = [float(m) for m in re.findall(r'time=([\d.]+) ms', out)]
        settled = int(self.settle_s / INTERVAL_S)
        return figures(self.samples[settled:], rtts[int(self.settle_s * 5):], self.idle_rtt_ms,
                       daemon_socket_drops(self.pids) - self.drops_before,
                       kernel_backlog_drops() - self.backlog_drops_before)


def idle_rtt_ms(host, dst, count=10):
    """The median RTT of ``count`` pings from ``host`` to ``dst`` (no load)."""
    out = host.cmd('ping -n -i 0.2 -c %d %s' % (count, dst))
    rtts = [float(m) for m in re.findall(r'time=([\d.]+) ms', out)]
    return round(statistics.median(rtts), 3) if rtts else None


def figures(samples, rtts=(), idle_rtt=None, socket_drops=None, backlog_drops=None):
    """What a run's samples say, summarized (pure)."""
    idle = [s['idle_pct'] for s in samples]
    busiest = [max(s['daemon_busy_pct'] or [0.0]) for s in samples]
    return {
        'seconds': len(samples),
        'idle_pct_median': round(statistics.median(idle), 1) if idle else None,
        'idle_pct_min': min(idle) if idle else None,
        'daemon_busy_pct_median': round(statistics.median(busiest), 1) if busiest else None,
        'daemon_busy_pct_max': max(busiest) if busiest else None,
        'qdisc_drops': sum(s['qdisc_drops'] for s in samples),
        'qdisc_backlog_max': max((s['qdisc_backlog'] for s in samples), default=0),
        'probe_rtt_ms_median': round(statistics.median(rtts), 3) if rtts else None,
        'probe_rtt_ms_p99': round(sorted(rtts)[int(0.99 * (len(rtts) - 1))], 3) if rtts else None,
        'idle_rtt_ms': idle_rtt,
        'daemon_socket_drops': socket_drops,
        'kernel_backlog_drops': backlog_drops,
    }


def verdict(figures_of_run, reference_pct=None):
    """The run's ``fidelity`` object: its figures, ``ok`` and, when not ok,
    the reasons (pure: a recorded run can be judged again). ``reference_pct``: the non-blocking reference's
    share of its line rate in the same pattern and seed (None: no
    reference ran)."""
    reasons = []
    idle = figures_of_run.get('idle_pct_median')
    drops = figures_of_run.get('daemon_socket_drops')  # None: not measured (runs recorded before it was)
    if idle is None:
        reasons.append('no second was sampled')
    elif idle < MIN_IDLE_PCT:
        reasons.append('machine idle %.1f%% < %.0f%%' % (idle, MIN_IDLE_PCT))
    if drops:
        reasons.append('ovs-vswitchd dropped %d packets it did not read in time' % drops)
    backlog_drops = figures_of_run.get('kernel_backlog_drops')  # None: not measured
    if backlog_drops:
        reasons.append('the kernel dropped %d packets from a full input backlog' % backlog_drops)
    if reference_pct is not None and reference_pct < MIN_REFERENCE_PCT:
        reasons.append('non-blocking reference %.1f%% < %.0f%% of line rate' % (reference_pct, MIN_REFERENCE_PCT))
    result = dict(figures_of_run, ok=not reasons, reference_pct_of_line=reference_pct)
    if reasons:
        result['limited_by'] = reasons
    return result


def judged_again(fidelity, reference_pct):
    """A recorded verdict judged again with the reference's share of line
    rate, known after the run (pure)."""
    figures_of_run = {k: v for k, v in fidelity.items() if k not in ('ok', 'limited_by', 'reference_pct_of_line')}
    return verdict(figures_of_run, reference_pct)


def describe(fidelity):
    """A run's verdict in a line: 'faithful' or the reasons it was not."""
    return 'faithful' if fidelity['ok'] else 'EMULATOR-LIMITED (%s)' % '; '.join(fidelity['limited_by'])


def run_faithful(run):
    """Whether a run's fidelity verdict holds. A run without one (a
    simulated run, or an emulated run its monitor did not sample: its
    table cell says 'not judged') is not left out."""
    return run.get('fidelity', {}).get('ok', True)


def verdict_cell(judged, limited, total):
    """The emulator's verdict over ``total`` runs, ``judged`` of them with a
    verdict and ``limited`` of those limited, as a table cell (pure)."""
    if not judged:
        return 'not judged'
    return 'faithful' if not limited else 'LIMITED %d/%d runs' % (limited, total)


def reason_kind(reason):
    """A verdict's reason without its run's figures: 'machine idle',
    'ovs-vswitchd dropped', ..."""
    return re.match(r'[^\d:]*', reason).group().strip()


def runs_verdict_cell(runs):
    """``verdict_cell`` over a list of runs, each with its ``fidelity``
    (runs without one were not sampled, or failed), and what
    limited the limited ones."""
    limited = [r for r in runs if not run_faithful(r)]
    cell = verdict_cell(sum(1 for r in runs if 'fidelity' in r), len(limited), len(runs))
    if not limited:
        return cell
    return cell + ': ' + '; '.join(sorted({reason_kind(reason) for r in limited
                                           for reason in r['fidelity']['limited_by']}))
