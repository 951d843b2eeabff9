"""AlltoAll connectivity checker (the test program of seed 003 section 5):
every node of a node list periodically sends a block to every other node and
receives the blocks of all of them; every pair whose block does not arrive
in time is reported live and at the end, with when.

Two halves:
  agent   ``python -m scripts.nbridge.alltoall agent --me IP --nodes IP,IP,...`` runs
          in one host (a Mininet namespace). Block k goes to every other node
          during [start + k * period, start + (k+1) * period) (one shared
          start, so block numbers line up across nodes), paced as the
          classic shift schedule: at step s the node of rank r sends to rank
          r + s, so every node receives from one sender at a time instead of
          from all at once. Once block k's deadline has passed the agent prints
          one JSON line: who it came from, with the TTL it arrived with
          (64 - switch hops), when it was sent and its one-way latency
          (namespaces share the clock), and who is missing.
  AllToAll  the driver: starts an agent in every node of a running Mininet
          network, prints failed pairs as they are seen, and collects
          per-pair results; see scripts/nbridge/leaf_fault.py.
"""
import argparse
import json
import os
import select
import selectors
import signal
import socket
import struct
import sys
import time

from scripts import REPO_ROOT
from topologies.addressing import ip_to_int

MAGIC = b'NBA2'
HEADER = struct.Struct('!4sIId')   # magic, sender IPv4, block number, send time
IP_RECVTTL = 12                    # Linux <netinet/in.h>; Python's socket module lacks it
IP_TTL = 2
DEFAULT_PORT = 9931


def run_agent(me, nodes, start, period, size, port, deadline):
    """Send and receive blocks until SIGTERM, then report the last blocks and exit."""
    rank = nodes.index(me)
    peers = nodes[rank + 1:] + nodes[:rank]  # the shift schedule's order
    step_s = period / max(1, len(peers))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, IP_RECVTTL, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    sock.bind((me, port))
    sock.setblocking(False)
    if start is None:  # the driver sends the shared start once every agent is bound
        print(json.dumps({'ready': me}), flush=True)
        start = float(sys.stdin.readline())
    received = {}           # block -> {sender: (ttl, one-way latency in us, send time)}
    late = []               # (block, sender) that arrived after being reported missing
    sent_upto, reported, step = -1, -1, 0  # last block fully sent; next peer of block sent_upto + 1
    padding = b'\0' * max(0, size - HEADER.size)
    me_int = ip_to_int(me)
    stopping_at = None
    while True:
        # read everything that arrived before judging anything: after a stall
        # (a starved CPU) the socket holds blocks that were on time
        _drain(sock, size, received, reported, late)
        now = time.time()
        if stop and stopping_at is None:
            stopping_at = now + deadline  # blocks in flight get their deadline
        if stopping_at is None:
            while peers and start + (sent_upto + 1) * period + step * step_s <= now:
                block = HEADER.pack(MAGIC, me_int, sent_upto + 1, time.time()) + padding
                try:
                    sock.sendto(block, (peers[step], port))
                except OSError:
                    pass  # no neighbour entry yet: the block counts as missing
                step += 1
                if step == len(peers):
                    sent_upto, step = sent_upto + 1, 0
            # block k is judged once its whole period plus the deadline has passed
            judge_upto = min(sent_upto, int((now - start - deadline) // period) - 1)
        else:
            judge_upto = sent_upto if now >= stopping_at else reported
        while reported < judge_upto:
            reported += 1
            got = received.pop(reported, {})
            print(json.dumps({'dst': me, 'block': reported, 'sent': start + reported * period,
                              'missing': [p for p in peers if p not in got],
                              'ttl': {p: v[0] for p, v in got.items()},
                              'lat_us': {p: v[1] for p, v in got.items()},
                              'sent_at': {p: v[2] for p, v in got.items()},
                              'late': late[:]}), flush=True)
            late.clear()
        if stopping_at is not None and now >= stopping_at:
            return
        # sleep until a block arrives or the next send (or the final report) is due
        due = stopping_at if stopping_at is not None else start + (sent_upto + 1) * period + step * step_s
        select.select([sock], [], [], max(0.0, due - time.time()))


def _drain(sock, size, received, reported, late):
    """Record every block waiting in the socket: sender, TTL, latency, send time."""
    while True:
        try:
            data, ancillary, _, _ = sock.recvmsg(size + 64, socket.CMSG_SPACE(4))
        except BlockingIOError:
            return
        if len(data) < HEADER.size:
            continue
        magic, sender, block, sent = HEADER.unpack_from(data)
        if magic != MAGIC:
            continue
        if block <= reported:
            late.append((block, socket.inet_ntoa(struct.pack('!I', sender))))
            continue  # already reported missing: a late block counts as lost
        ttl = next((int.from_bytes(d[:4], sys.byteorder) for level, kind, d in ancillary
                    if level == socket.IPPROTO_IP and kind == IP_TTL), None)
        received.setdefault(block, {})[socket.inet_ntoa(struct.pack('!I', sender))] = (
            ttl, round((time.time() - sent) * 1e6, 1), sent)


class AllToAll:
    """AlltoAll among Mininet hosts: ``start()``, then ``pump(seconds)`` as
    often as wanted (prints every lost block as it is reported), then
    ``stop()``; ``summary()`` lists every pair that lost blocks, and when.
    Results: ``blocks`` = [{'src', 'dst', 'block', 'sent', 'ok', 'ttl', 'lat_us'}]
    ('sent': when the sender sent it, or the block's start if it never arrived)."""

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
        self.late = []         # (block, src, dst) of failed blocks that arrived after their deadline
        self._selector = selectors.DefaultSelector()
        self._partial = {}
        self._ready = set()

    def start(self, timeout=60):
        """Start an agent in every node; once all have bound their sockets
        (so no block meets a closed port), give them one shared start."""
        ips = list(self.by_ip)
        for ip, host in self.by_ip.items():
            cmd = [sys.executable, '-m', 'scripts.nbridge.alltoall', 'agent', '--me', ip, '--nodes', ','.join(ips),
                   '--period', str(self.period), '--size', str(self.size), '--port', str(self.port),
                   '--deadline', str(self.deadline)]
            proc = self.net.get(host).popen(cmd, cwd=REPO_ROOT, stdin=-1, stdout=-1, stderr=None)
            os.set_blocking(proc.stdout.fileno(), False)
            self.procs[host] = proc
            self._selector.register(proc.stdout, selectors.EVENT_READ, host)
        deadline = time.time() + timeout
        while len(self._ready) < len(self.procs):
            if time.time() > deadline or not self._selector.get_map():
                raise RuntimeError('AlltoAll agents not ready after %ds: %s'
                                   % (timeout, sorted(set(self.procs) - self._ready)))
            self.pump(0.2)
        self.start_time = time.time() + 0.5
        for proc in self.procs.values():
            proc.stdin.write(b'%r\n' % self.start_time)
            proc.stdin.close()
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
        if 'ready' in report:
            self._ready.add(self.by_ip[report['ready']])
            return
        if self.stop_time is not None and report['sent'] >= self.stop_time - self.deadline:
            return  # a starved agent may not have sent its last blocks when stopped
        dst = self.by_ip[report['dst']]
        self.late += [(block, self.by_ip[src], dst) for block, src in report['late']]
        for src_ip in list(report['ttl']) + report['missing']:
            src = self.by_ip[src_ip]
            ok = src_ip in report['ttl']
            # a block's sends are spread over its period: place each by its own send time
            sent = report['sent_at'].get(src_ip, report['sent'])
            self.blocks.append({'src': src, 'dst': dst, 'block': report['block'], 'sent': sent,
                                'ok': ok, 'ttl': report['ttl'].get(src_ip),
                                'lat_us': report['lat_us'].get(src_ip)})
            if not ok:
                at = report['sent'] - self.start_time
                self.failures.append((at, src, dst, report['block']))
                self.log('LOST t=%7.2fs  %s -> %s  (block %d)' % (at, src, dst, report['block']))

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
        """{(src, dst): [seconds since start of each lost block]} for every pair that lost any."""
        result = {}
        for at, src, dst, _ in self.failures:
            result.setdefault((src, dst), []).append(round(at, 2))
        return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog='scripts.nbridge.alltoall', description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    agent = sub.add_parser('agent', help='run one node of the AlltoAll (inside its host)')
    agent.add_argument('--me', required=True, help='this node\'s IPv4 address')
    agent.add_argument('--nodes', required=True, help='comma-separated IPv4 addresses of all nodes, '
                       'this one included, in the same order for every agent')
    agent.add_argument('--start', type=float, default=None,
                       help='shared start (epoch seconds); default: print a ready line, read it from stdin')
    agent.add_argument('--period', type=float, default=0.2, help='seconds between blocks')
    agent.add_argument('--size', type=int, default=1000, help='block size in bytes (one datagram)')
    agent.add_argument('--port', type=int, default=DEFAULT_PORT)
    agent.add_argument('--deadline', type=float, default=3.0, help='seconds a block may take')
    args = parser.parse_args(argv)
    if not HEADER.size <= args.size <= 65000:
        parser.error('--size must be between %d and 65000 bytes' % HEADER.size)
    if args.period <= 0 or args.deadline <= 0:
        parser.error('--period and --deadline must be positive')
    nodes = [p for p in args.nodes.split(',') if p]
    for ip in [args.me] + nodes:
        try:
            socket.inet_aton(ip)
        except OSError:
            parser.error('not an IPv4 address: %r' % ip)
    if args.me not in nodes:
        parser.error('--me %s is not in --nodes' % args.me)
    run_agent(args.me, nodes, args.start, args.period, args.size, args.port, args.deadline)


if __name__ == '__main__':
    main()
