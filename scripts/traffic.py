"""Traffic between a running fabric's Mininet hosts: reachability with fping,
path length from the TTL ping sees, throughput with iperf3 (-J)."""
import json
import random
import re
import time

def all_pairs(hosts):
    return [(src, dst) for src in hosts for dst in hosts if src != dst]


def sample_pairs(hosts, count, seed):
    """``count`` distinct ordered host pairs drawn with ``seed`` (all pairs if fewer)."""
    pairs = all_pairs(hosts)
    return pairs if count >= len(pairs) else random.Random(seed).sample(pairs, count)


def reachability(net, hosts, timeout_ms=1000, retries=2, parallel=16, pairs=None):
    """{(src, dst): reached?} for every ordered pair of ``hosts`` (or the
    given ``pairs``). Each source pings its targets with one fping (retrying
    each target ``retries`` times); ``parallel`` sources run at once so that
    a large fabric's first upcall burst does not swamp the userspace datapath."""
    targets = {}
    for src, dst in (all_pairs(hosts) if pairs is None else pairs):
        targets.setdefault(src, []).append(dst)
    sources = list(targets)
    result = {}
    for start in range(0, len(sources), parallel):
        procs = {}
        for src in sources[start:start + parallel]:
            ips = [net.get(dst).IP() for dst in targets[src]]
            procs[src] = net.get(src).popen(['fping', '-a', '-r', str(retries), '-t', str(timeout_ms),
                                             '-i', '2'] + ips)
        for src, proc in procs.items():
            out, _ = proc.communicate()
            alive = set(out.decode().split())
            for dst in targets[src]:
                result[(src, dst)] = net.get(dst).IP() in alive
    return result


def wait_all_pairs(net, hosts, deadline_s=60, progress=print, pairs=None):
    """Seconds until one round of pings between all ordered pairs of
    ``hosts`` (or the given ``pairs``) all succeed; raises on deadline."""
    start = time.time()
    rounds = 0
    expected = len(all_pairs(hosts) if pairs is None else pairs)
    while True:
        rounds += 1
        results = reachability(net, hosts, pairs=pairs)
        failed = [pair for pair, ok in results.items() if not ok]
        if not failed and len(results) == expected:
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
