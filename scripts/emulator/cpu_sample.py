"""CPU evidence beside a measurement: machine busy % (and its niced part),
ovs-vswitchd's share, load average and the number of OVS bridges, so that a
result can show whether the emulator, not the network, was the limit."""
import os
import subprocess
import time


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
    out = subprocess.run(['ovs-vsctl', '--timeout=5', 'list-br'], capture_output=True, text=True, timeout=60)
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
