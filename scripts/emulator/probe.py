"""A UDP probe stream with sequence numbers and send times, for timing
outages: ``send`` paces packets at a fixed rate; ``recv`` writes, when it stops, one
JSON list of every received packet's (seq, sent, received).

    python -m scripts.emulator.probe send DST_IP PORT --rate 1000 --seconds 6 [--fresh-ports]
    python -m scripts.emulator.probe recv PORT --seconds 7
"""
import argparse
import json
import socket
import struct
import sys
import time

HEADER = struct.Struct('!Id')


def send(dst, port, rate, seconds, fresh_ports=False):
    """``fresh_ports``: every packet from a new socket (a new source port),
    so each is a new flow that the switches' flow tables decide afresh
    rather than a datapath cache entry translated earlier."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    interval = 1.0 / rate
    start = time.time()
    for seq in range(int(rate * seconds)):
        due = start + seq * interval
        delay = due - time.time()
        if delay > 0:
            time.sleep(delay)
        if fresh_ports:
            sock.close()
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.sendto(HEADER.pack(seq, time.time()), (dst, port))


def recv(port, seconds):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(('0.0.0.0', port))
    sock.settimeout(0.2)
    received = []
    end = time.time() + seconds
    while time.time() < end:
        try:
            data = sock.recv(64)
        except socket.timeout:
            continue
        seq, sent = HEADER.unpack(data[:HEADER.size])
        received.append((seq, sent, time.time()))
    json.dump(received, sys.stdout)


def outage(received, rate, seconds, since, until=None):
    """Loss between ``since`` and ``until`` (send times): packets lost, and
    the time from ``since`` until the first packet delivered after the last
    loss (0 when nothing was lost)."""
    interval = 1.0 / rate
    sent_at = {seq: sent for seq, sent, _ in received}
    if not sent_at:
        return {'lost': None, 'restored_ms': None}
    start = min(sent - seq * interval for seq, sent, _ in received)
    until = until if until is not None else start + seconds
    window = [seq for seq in range(int(rate * seconds)) if since <= start + seq * interval < until]
    lost = [seq for seq in window if seq not in sent_at]
    if not lost:
        return {'lost': 0, 'restored_ms': 0.0}
    after = [seq for seq in window if seq > lost[-1] and seq in sent_at]
    restored = (sent_at[after[0]] - since) * 1000 if after else None
    return {'lost': len(lost), 'restored_ms': None if restored is None else round(restored, 1)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='mode', required=True)
    p = sub.add_parser('send')
    p.add_argument('dst')
    p.add_argument('port', type=int)
    p.add_argument('--rate', type=float, default=1000)
    p.add_argument('--seconds', type=float, default=5)
    p.add_argument('--fresh-ports', action='store_true', help='a new source port for every packet')
    p = sub.add_parser('recv')
    p.add_argument('port', type=int)
    p.add_argument('--seconds', type=float, default=6)
    args = parser.parse_args(argv)
    if args.mode == 'send':
        send(args.dst, args.port, args.rate, args.seconds, args.fresh_ports)
    else:
        recv(args.port, args.seconds)


if __name__ == '__main__':
    main()
