"""AlltoAll connectivity checker (the test program of seed 003 section 5):
every node of a node list periodically sends a block to every other node and
receives the blocks of all of them; every pair whose block does not arrive
in time is reported live and at the end, with when.

Two halves:
  agent   ``python -m scripts.alltoall agent --me IP --peers IP,IP,...`` runs
          in one host (a Mininet namespace). Block k goes to every peer at
          start + k * period (one shared start, so block numbers line up
          across nodes). Once block k's deadline has passed the agent prints
          one JSON line: who it came from, with the TTL it arrived with
          (64 - switch hops) and its one-way latency (namespaces share the
          clock), and who is missing.
  AllToAll  the driver: starts an agent in every node of a running Mininet
          network, prints failed pairs as they are seen, and collects
          per-pair results; see scripts/nbridge_experiment.py.
"""
import argparse
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time

MAGIC = b'NBA2'
HEADER = struct.Struct('!4sIId')   # magic, sender IPv4, block number, send time
IP_RECVTTL = 12                    # Linux <netinet/in.h>; Python's socket module lacks it
IP_TTL = 2
DEFAULT_PORT = 9931


def _ip_int(ip):
    return struct.unpack('!I', socket.inet_aton(ip))[0]


def run_agent(me, peers, start, period, size, port, deadline):
    """Send and receive blocks until SIGTERM, then report the last blocks and exit."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, IP_RECVTTL, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    sock.bind((me, port))
    sock.setblocking(False)
    lag = max(1, int(round(deadline / period)))
    received = {}           # block -> {sender: (ttl, one-way latency in us)}
    sent_upto, reported = -1, -1
    padding = b'\0' * max(0, size - HEADER.size)
    me_int = _ip_int(me)
    stopping_at = None
    while True:
        now = time.time()
        if stop and stopping_at is None:
            stopping_at = now + deadline  # blocks in flight get their deadline
        if stopping_at is None:
            while start + (sent_upto + 1) * period <= now:
                sent_upto += 1
                block = HEADER.pack(MAGIC, me_int, sent_upto, time.time()) + padding
                for peer in peers:
                    try:
                        sock.sendto(block, (peer, port))
                    except OSError:
                        pass  # no neighbour entry yet: the block counts as missing
            judge_upto = sent_upto - lag  # block k is judged once `lag` newer ones went out
        else:
            judge_upto = sent_upto if now >= stopping_at else reported
        while reported < judge_upto:
            reported += 1
            got = received.pop(reported, {})
            print(json.dumps({'dst': me, 'block': reported, 'sent': start + reported * period,
                              'missing': [p for p in peers if p not in got],
                              'ttl': {p: v[0] for p, v in got.items()},
                              'lat_us': {p: v[1] for p, v in got.items()}}), flush=True)
        if stopping_at is not None and now >= stopping_at:
            return
        try:
            data, ancillary, _, _ = sock.recvmsg(size + 64, socket.CMSG_SPACE(4))
        except BlockingIOError:
            time.sleep(min(period / 10, 0.01))
            continue
        if len(data) < HEADER.size:
            continue
        magic, sender, block, sent = HEADER.unpack_from(data)
        if magic != MAGIC or block <= reported:
            continue  # late blocks were already reported missing
        ttl = next((int.from_bytes(d[:4], sys.byteorder) for level, kind, d in ancillary
                    if level == socket.IPPROTO_IP and kind == IP_TTL), None)
        received.setdefault(block, {})[socket.inet_ntoa(struct.pack('!I', sender))] = (
            ttl, round((time.time() - sent) * 1e6, 1))


class AllToAll:
    """AlltoAll among Mininet hosts: ``start()``, then ``pump(seconds)`` as
    often as wanted (prints failures as they are reported), then ``stop()``.
    Results: ``blocks`` = [{'src', 'dst', 'block', 'sent', 'ok', 'ttl', 'lat_us'}]."""

    def __init__(self, net, hosts, period=0.2, size=1000, port=DEFAULT_PORT, deadline=3.0, log=print):
        self.net, self.hosts = net, list(hosts)
        self.period, self.size, self.port, self.deadline = period, size, port, deadline
        self.log = log
        self.by_ip = {net.get(h).IP(): h for h in self.hosts}
        self.start_time = None
        self.stop_time = None
        self.procs = {}
        self.blocks = []
        self.failures = []     # (seconds since start, src, dst, block)
        self._selector = selectors.DefaultSelector()
        self._partial = {}

    def start(self, delay=1.0):
        self.start_time = time.time() + delay  # every agent is up before block 0
        ips = list(self.by_ip)
        src_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for ip, host in self.by_ip.items():
            cmd = [sys.executable, '-m', 'scripts.alltoall', 'agent', '--me', ip,
                   '--peers', ','.join(p for p in ips if p != ip), '--start', repr(self.start_time),
                   '--period', str(self.period), '--size', str(self.size), '--port', str(self.port),
                   '--deadline', str(self.deadline)]
            proc = self.net.get(host).popen(cmd, cwd=src_root, stdout=-1, stderr=None)
            os.set_blocking(proc.stdout.fileno(), False)
            self.procs[host] = proc
            self._selector.register(proc.stdout, selectors.EVENT_READ, host)
        return self

    def pump(self, seconds):
        """Collect reports for ``seconds``, printing failures as they come."""
        end = time.time() + seconds
        while True:
            remaining = end - time.time()
            if remaining <= 0 or not self._selector.get_map():
                return
            for key, _ in self._selector.select(remaining):
                self._read(key)

    def _read(self, key):
        chunk = key.fileobj.read()
        if not chunk:
            self._selector.unregister(key.fileobj)
            return
        text = self._partial.pop(key.data, b'') + chunk
        *lines, rest = text.split(b'\n')
        self._partial[key.data] = rest
        for line in lines:
            self._record(json.loads(line))

    def _record(self, report):
        if self.stop_time is not None and report['sent'] >= self.stop_time - self.period:
            return  # agents stop one by one: blocks after the first stop are not every sender's
        dst = self.by_ip[report['dst']]
        for src_ip in list(report['ttl']) + report['missing']:
            src = self.by_ip[src_ip]
            ok = src_ip in report['ttl']
            self.blocks.append({'src': src, 'dst': dst, 'block': report['block'], 'sent': report['sent'],
                                'ok': ok, 'ttl': report['ttl'].get(src_ip),
                                'lat_us': report['lat_us'].get(src_ip)})
            if not ok:
                at = report['sent'] - self.start_time
                self.failures.append((at, src, dst, report['block']))
                self.log('FAILED t=%7.2fs  %s -> %s  (block %d)' % (at, src, dst, report['block']))

    def stop(self):
        """Stop the agents, collect their last reports, reap them."""
        self.stop_time = time.time()
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.time() + self.deadline + 10
        while self._selector.get_map() and time.time() < deadline:
            self.pump(0.5)
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._selector.close()
        return self

    def summary(self):
        """{(src, dst): [failure times]} for every pair that ever failed."""
        result = {}
        for at, src, dst, _ in self.failures:
            result.setdefault((src, dst), []).append(round(at, 2))
        return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog='scripts.alltoall', description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    agent = sub.add_parser('agent', help='run one node of the AlltoAll (inside its host)')
    agent.add_argument('--me', required=True, help='this node\'s IPv4 address')
    agent.add_argument('--peers', required=True, help='comma-separated IPv4 addresses of the others')
    agent.add_argument('--start', type=float, default=None, help='shared start (epoch seconds)')
    agent.add_argument('--period', type=float, default=0.2, help='seconds between blocks')
    agent.add_argument('--size', type=int, default=1000, help='block size in bytes (one datagram)')
    agent.add_argument('--port', type=int, default=DEFAULT_PORT)
    agent.add_argument('--deadline', type=float, default=3.0, help='seconds a block may take')
    args = parser.parse_args(argv)
    if not HEADER.size <= args.size <= 65000:
        parser.error('--size must be between %d and 65000 bytes' % HEADER.size)
    if args.period <= 0 or args.deadline <= 0:
        parser.error('--period and --deadline must be positive')
    peers = [p for p in args.peers.split(',') if p]
    for ip in [args.me] + peers:
        try:
            socket.inet_aton(ip)
        except OSError:
            parser.error('not an IPv4 address: %r' % ip)
    run_agent(args.me, peers, args.start or time.time(), args.period, args.size, args.port, args.deadline)


if __name__ == '__main__':
    main()
