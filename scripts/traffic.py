"""Traffic between a running fabric's Mininet hosts: reachability with fping,
path length from the TTL ping sees, throughput with iperf3 (-J)."""
import json
import re
import time

def reachability(net, hosts, timeout_ms=1000, retries=2, parallel=16):
    """{(src, dst): reached?} for every ordered pair. Each source pings all
    others with one fping (retrying each target ``retries`` times);
    ``parallel`` sources run at once so that a large fabric's first ARP and
    upcall burst does not swamp the controller and the userspace datapath."""
    by_ip = {net.get(h).IP(): h for h in hosts}
    result = {}
    for start in range(0, len(hosts), parallel):
        procs = {}
        for src in hosts[start:start + parallel]:
            targets = [ip for ip, h in by_ip.items() if h != src]
            procs[src] = net.get(src).popen(['fping', '-a', '-r', str(retries), '-t', str(timeout_ms),
                                             '-i', '2'] + targets)
        for src, proc in procs.items():
            out, _ = proc.communicate()
            alive = set(out.decode().split())
            for ip, dst in by_ip.items():
                if dst != src:
                    result[(src, dst)] = ip in alive
    return result


def wait_all_pairs(net, hosts, deadline_s=60, progress=print):
    """Seconds until one round of all-pairs pings all succeed; raises on deadline."""
    start = time.time()
    rounds = 0
    while True:
        rounds += 1
        results = reachability(net, hosts)
        failed = [pair for pair, ok in results.items() if not ok]
        if not failed and len(results) == len(hosts) * (len(hosts) - 1):
            return time.time() - start
        progress('  round %d: %d of %d pairs unreachable' % (rounds, len(failed), len(results)))
        if time.time() - start > deadline_s:
            raise TimeoutError('%d pairs still unreachable after %ds, e.g. %s'
                               % (len(failed), deadline_s, failed[:5]))


def ping_ttl(net, src, dst):
    """TTL of one echo reply from dst as src sees it (64 minus switch hops of the reply path)."""
    out = net.get(src).cmd('ping -c1 -W2 %s' % net.get(dst).IP())
    match = re.search(r'ttl=(\d+)', out)
    if not match:
        raise RuntimeError('%s cannot ping %s:\n%s' % (src, dst, out))
    return int(match.group(1))


def iperf3(net, client, server, seconds=5, port=5201, udp_rate=None, extra=()):
    """One iperf3 transfer client -> server; returns the parsed JSON report."""
    server_proc = net.get(server).popen(['iperf3', '-s', '-1', '-p', str(port)])
    try:
        time.sleep(0.5)
        cmd = ['iperf3', '-c', net.get(server).IP(), '-p', str(port), '-t', str(seconds), '-J']
        if udp_rate:
            cmd += ['-u', '-b', udp_rate]
        cmd += list(extra)
        client_proc = net.get(client).popen(cmd)
        out, _ = client_proc.communicate(timeout=seconds + 30)
        report = json.loads(out.decode())
        if 'error' in report:
            raise RuntimeError('iperf3 %s -> %s: %s' % (client, server, report['error']))
        return report
    finally:
        if server_proc.poll() is None:
            server_proc.kill()
        server_proc.wait()


def received_mbps(report):
    end = report['end']
    summary = end.get('sum_received') or end['sum']
    return summary['bits_per_second'] / 1e6
