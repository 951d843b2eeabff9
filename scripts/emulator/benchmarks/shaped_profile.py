"""Where ovs-vswitchd's time goes on shaped links: perf samples the daemon
while the non-blocking reference (k=4: 16 hosts on one switch) carries a
permutation of iperf3 TCP flows at each link rate, and the share of its
samples under a few kernel and userspace functions is written out.

    dcfabric measure shaped-profile [--rates 2 20 100] [--seconds 8] [--out results/emulator]

Needs perf (Debian's linux-perf). Writes OUT/shaped_profile.json and
prints the table. A share is of all the daemon's samples, "children"
included: the hosts' TCP receive path (tcp_v4_rcv) shows up inside the
daemon's sendmmsg because a veth delivers to its peer in the sender's
softirq.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

from scripts.results import write_result
from scripts.argtypes import positive

K = 4
# what each column counts: a function in the daemon's call graph
FUNCTIONS = (
    ('kernel (system calls)', 'do_syscall_64'),
    ('sendmmsg', '__sys_sendmmsg'),
    ('recvmmsg', 'do_recvmmsg'),
    ("hosts' TCP receive", 'tcp_v4_rcv'),
    ('HTB dequeue', 'htb_dequeue'),
    ('poll and wait', 'do_sys_poll'),
)


def shares(report_text):
    """{column: % of the daemon's samples} from `perf report --children --stdio -g none` (pure)."""
    found = {}
    for line in report_text.splitlines():
        match = re.match(r'\s*([\d.]+)%\s+([\d.]+)%\s+\S+\s+\S+\s+\[[k.]\]\s+(\S+)', line)
        if match:
            found.setdefault(match.group(3), float(match.group(1)))
    return {column: found.get(symbol, 0.0) for column, symbol in FUNCTIONS}


def profile(bw, seconds, progress):
    from scripts.emulator import traffic
    from scripts.emulator.cpu_sample import CpuSample
    from scripts.emulator.fabric import Fabric
    from scripts.emulator.ovs.vswitchd import daemon_pid
    from scripts.emulator.ports import free_port
    from topologies.nonblocking import NonBlocking
    model = NonBlocking(K)
    hosts = [h.name for h in model.hosts]
    pairs = list(zip(hosts, hosts[len(hosts) // 2:] + hosts[:len(hosts) // 2]))
    with Fabric(model, 'controller.fattree.nonblocking_switch_app', {'k': K}, ofp_port=free_port(),
                rest_port=free_port(), bw=bw) as fabric:
        traffic.wait_all_pairs(fabric.net, hosts)
        rates = []
        flows = threading.Thread(target=lambda: rates.extend(
            traffic.received_mbps(r) for r in traffic.iperf3_flows(fabric.net, pairs, seconds + 4, 2)))
        flows.start()
        threading.Event().wait(3)
        progress('%g Mbit/s: perf on ovs-vswitchd for %d s' % (bw, seconds))
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, 'perf.data')
            cpu = CpuSample().start()
            subprocess.run(['perf', 'record', '-g', '-p', str(daemon_pid()), '-o', data, '--', 'sleep', str(seconds)],
                           capture_output=True, check=True, timeout=seconds + 60)
            sample = cpu.stop()
            report = subprocess.run(['perf', 'report', '--children', '--stdio', '-g', 'none', '-i', data],
                                    capture_output=True, text=True, check=True, timeout=300).stdout
        flows.join()
    return dict({'bw_mbps': bw, 'flows': len(pairs), 'aggregate_mbps': round(sum(rates), 1),
                 'pct_of_line_rate': round(100.0 * sum(rates) / (len(pairs) * bw), 1),
                 'ovs_vswitchd_cpu_pct': sample['ovs_vswitchd_cpu_pct'], 'cpu_busy_pct': sample['cpu_busy_pct']},
                shares=shares(report))


def markdown(result):
    columns = [column for column, _ in FUNCTIONS]
    lines = ['| link rate (Mbit/s) | carried, % of line rate | ovs-vswitchd % of a core | '
             + ' | '.join('%s %%' % c for c in columns) + ' |', '|---' * (3 + len(columns)) + '|']
    for row in result['rows']:
        lines.append('| %g | %.1f | %.0f | %s |' % (row['bw_mbps'], row['pct_of_line_rate'], row['ovs_vswitchd_cpu_pct'],
                                                   ' | '.join('%.1f' % row['shares'][c] for c in columns)))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='dcfabric measure shaped-profile', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rates', type=positive(float), nargs='+', default=[2, 20, 100], metavar='MBPS')
    parser.add_argument('--seconds', type=positive(int), default=8, help='perf sampling window')
    parser.add_argument('--out', default='results/emulator')
    args = parser.parse_args(argv)
    if shutil.which('perf') is None:
        sys.exit('shaped-profile: needs perf (apt-get install linux-perf)')
    from scripts.emulator.command import run_command
    progress = lambda m: print('... ' + m, file=sys.stderr, flush=True)  # noqa: E731
    result = run_command('shaped-profile', lambda: {'k': K, 'seconds': args.seconds,
                                                    'rows': [profile(bw, args.seconds, progress) for bw in args.rates]})
    write_result(args.out, 'shaped_profile.json', result, markdown)
    return 0


if __name__ == '__main__':
    main()
