"""Traffic between a running fabric's Mininet hosts: reachability with fping,
path length from the TTL ping sees, throughput with iperf3 (-J), and the
queue each shaped link gets.

A tool that fails to run (missing, bad option, output it should not give)
raises ``ToolError`` naming the tool and its message: an fping that cannot
start must not read as "every pair unreachable". Tools run with ``popen``,
never ``host.cmd``: a Ctrl-C or SIGTERM during ``host.cmd`` leaves the
host's shell waiting, and Mininet's teardown then fails on it."""
import json
import random
import re
import subprocess
import time

# What fping -a writes to stderr about targets it could not reach; anything
# else there is fping (or the exec of fping) failing.
_FPING_TARGET_REPORT = re.compile(r'^(ICMP .* for ICMP Echo sent to |\S+ : duplicate for \[)')


class ToolError(RuntimeError):
    """A traffic tool failed to run: the message names it and what it said."""

    def __init__(self, tool, where, message):
        super().__init__('%s failed on %s: %s' % (tool, where, message.strip() or 'no output'))


class TransferError(RuntimeError):
    """A tool ran but its transfer failed: iperf3 reported an error (e.g.
    it lost its control connection on a loaded machine) or a tool did not
    end in time. Worth running again."""


def _output(tool, where, proc, timeout, ok_codes):
    """(stdout, stderr) text of a finished tool; ToolError when its exit
    code is not one of ``ok_codes``, TransferError when it outlives ``timeout``."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise TransferError('%s on %s did not finish within %ds' % (tool, where, timeout)) from None
    out, err = (out or b'').decode(errors='replace'), (err or b'').decode(errors='replace')
    if proc.returncode not in ok_codes:
        raise ToolError(tool, where, 'exit code %d: %s' % (proc.returncode, err or out))
    return out, err


def all_pairs(hosts):
    return [(src, dst) for src in hosts for dst in hosts if src != dst]


def sample_pairs(hosts, count, seed):
    """``count`` distinct ordered host pairs drawn with ``seed`` (all pairs if fewer)."""
    pairs = all_pairs(hosts)
    return pairs if count >= len(pairs) else random.Random(seed).sample(pairs, count)


PROGRESS_EVERY_S = 5


def reachability(net, hosts, timeout_ms=1000, retries=2, parallel=16, pairs=None, progress=None):
    """{(src, dst): reached?} for every ordered pair of ``hosts`` (or the
    given ``pairs``). Each source pings its targets with one fping (retrying
    each target ``retries`` times); ``parallel`` sources run at once so that
    a large fabric's first upcall burst does not swamp the userspace datapath.
    ``progress`` hears how far it got every PROGRESS_EVERY_S seconds."""
    targets = {}
    for src, dst in (all_pairs(hosts) if pairs is None else pairs):
        targets.setdefault(src, []).append(dst)
    sources = list(targets)
    result = {}
    reported = time.monotonic()
    for start in range(0, len(sources), parallel):
        if progress and time.monotonic() - reported > PROGRESS_EVERY_S:
            progress('  pinged from %d of %d sources' % (start, len(sources)))
            reported = time.monotonic()
        procs = {}
        for src in sources[start:start + parallel]:
            ips = [net.get(dst).IP() for dst in targets[src]]
            procs[src] = net.get(src).popen(['fping', '-a', '-r', str(retries), '-t', str(timeout_ms),
                                             '-i', '2'] + ips)
        for src, proc in procs.items():
            # exit 1: some target unreachable, which fping -a reports on stderr
            out, err = _output('fping', src, proc, 60 + len(targets[src]) * timeout_ms * (retries + 1) / 1000,
                               (0, 1))
            failure = [line for line in err.splitlines() if not _FPING_TARGET_REPORT.match(line)]
            if failure:
                raise ToolError('fping', src, '\n'.join(failure))
            alive = set(out.split())
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
        results = reachability(net, hosts, pairs=pairs, progress=progress)
        failed = [pair for pair, ok in results.items() if not ok]
        if not failed and len(results) == expected:
            return time.time() - start
        progress('  round %d: %d of %d pairs unreachable' % (rounds, len(failed), len(results)))
        if time.time() - start > deadline_s:
            raise TimeoutError('%d pairs still unreachable after %ds, e.g. %s'
                               % (len(failed), deadline_s, failed[:5]))


def start_ping(net, src, dst, options=()):
    """A ping from src to dst (``options`` before the address), running."""
    return net.get(src).popen(['ping'] + list(options) + [net.get(dst).IP()])


def ping_output(src, dst, proc, timeout):
    """The output of a ping ``start_ping`` started, with its statistics:
    exit 0 (replies) or 1 (none, or fewer than asked); ToolError otherwise."""
    where = '%s -> %s' % (src, dst)
    out, err = _output('ping', where, proc, timeout, (0, 1))
    if 'packets transmitted' not in out:
        raise ToolError('ping', where, err or out)
    return out


def reply_ttl(net, src, dst):
    """TTL of one echo reply from dst as src sees it (64 minus switch hops
    of the reply path), None when no reply came."""
    out = ping_output(src, dst, start_ping(net, src, dst, ['-c1', '-W2']), 30)
    match = re.search(r'ttl=(\d+)', out)
    return int(match.group(1)) if match else None


def ping_ttl(net, src, dst):
    """``reply_ttl`` for a pair that must be reachable."""
    ttl = reply_ttl(net, src, dst)
    if ttl is None:
        raise RuntimeError('%s cannot ping %s' % (src, dst))
    return ttl


def iperf3_report(client, server, proc, timeout):
    """The JSON report of an iperf3 client process (-J); ToolError when it
    did not give one, TransferError when it reports an error."""
    where = '%s -> %s' % (client, server)
    out, err = _output('iperf3', where, proc, timeout, (0, 1))
    try:
        report = json.loads(out)
    except ValueError:
        raise ToolError('iperf3', where, 'no JSON report: %s' % (err or out)[:500]) from None
    if 'error' in report:
        raise TransferError('iperf3 %s: %s' % (where, report['error']))
    if 'end' not in report:
        raise ToolError('iperf3', where, 'a report without results: %s' % out[:500])
    return report


def iperf3_flows(net, pairs, seconds, omit=0, port=5201, server_wait_s=1.0):
    """One iperf3 TCP flow per (client, server) host pair, all at once, each
    server on ``port`` (one per host). Their JSON reports in pair order;
    every iperf3 is stopped on the way out. ``server_wait_s``: time the
    servers get to listen (longer for hosts on other machines, reached by ssh)."""
    procs = []
    try:
        procs += [net.get(server).popen(['iperf3', '-s', '-1', '-p', str(port)]) for _, server in pairs]
        time.sleep(server_wait_s)
        clients = [net.get(client).popen(['iperf3', '-c', net.get(server).IP(), '-p', str(port),
                                          '-t', str(seconds), '-O', str(omit), '-J'])
                   for client, server in pairs]
        procs += clients
        return [iperf3_report(client, server, proc, seconds + omit + 60)
                for (client, server), proc in zip(pairs, clients)]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def iperf3(net, client, server, seconds=5, port=5201, udp_rate=None, extra=()):
    """One iperf3 transfer client -> server; returns the parsed JSON report."""
    server_proc = net.get(server).popen(['iperf3', '-s', '-1', '-p', str(port)])
    try:
        time.sleep(0.5)
        cmd = ['iperf3', '-c', net.get(server).IP(), '-p', str(port), '-t', str(seconds), '-J']
        if udp_rate:
            cmd += ['-u', '-b', udp_rate]
        cmd += list(extra)
        return iperf3_report(client, server, net.get(client).popen(cmd), seconds + 30)
    finally:
        if server_proc.poll() is None:
            server_proc.kill()
        server_proc.wait()


def received_mbps(report):
    end = report['end']
    summary = end.get('sum_received') or end['sum']
    return summary['bits_per_second'] / 1e6


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
