"""A request/response flow generator for the hosts of a fabric: one
persistent server and one persistent client per host, many flows a second
without a process per flow (HKUST TrafficGenerator's design, in asyncio).

Each flow is a TCP connection of its own (so every flow has its own
5-tuple for ECMP, the classifier and the scheduler to see): the client
connects to a server, asks for SIZE bytes (an 8-byte request), and the
server sends them. The flow completion time (FCT) is measured at the
client, from the start of connect() to the last byte of the response.

    python -m scripts.emulator.flowgen serve --port 5301
    python -m scripts.emulator.flowgen client --epoch T --until T2 < schedule.json

The client reads its schedule from stdin: a JSON list of [flow id, start
(seconds after the wall-clock time --epoch), server IP, port, size]. It
writes one JSON line per flow as it ends: {"id", "start_s" (actual, after
--epoch), "fct_s", "bytes"}, with "error" instead of "fct_s" if the
connection failed; at --until every flow still going is written with
"unfinished": true and the bytes it got, and the client exits.

``run_flows`` (in the experiment's process) starts them in a running
Mininet network and collects the lines.
"""
import argparse
import asyncio
import json
import os
import resource
import socket
import struct
import subprocess
import sys
import threading
import time

from scripts.emulator.errors import SetupError

REQUEST = struct.Struct('!Q')
CHUNK = 64 * 1024
_ZEROS = bytes(CHUNK)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_PORT = 5301


def _more_descriptors():
    """Every flow in progress holds a socket: take the hard limit of open files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _serve_one(reader, writer):
    try:
        (size,) = REQUEST.unpack(await reader.readexactly(REQUEST.size))
        view = memoryview(_ZEROS)
        while size > 0:
            chunk = min(size, CHUNK)
            writer.write(view[:chunk])
            size -= chunk
            await writer.drain()
        await reader.read(1)  # the client closes once it has every byte
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(port):
    _more_descriptors()
    server = await asyncio.start_server(_serve_one, '0.0.0.0', port, backlog=1024, reuse_address=True)
    print(json.dumps({'listening': port}), flush=True)
    async with server:
        await server.serve_forever()


async def _one_flow(loop, flow_id, ip, port, size, epoch_offset, got):
    """Connect, ask for ``size`` bytes, read them, and write this flow's
    line. ``got`` holds the bytes received so far, for a flow cut off at
    the deadline (cancelled: no line of its own)."""
    print(json.dumps(await _timed_flow(loop, flow_id, ip, port, size, epoch_offset, got)), flush=True)


async def _timed_flow(loop, flow_id, ip, port, size, epoch_offset, got):
    started = loop.time()
    got[flow_id] = (started, 0)
    writer = None
    try:
        reader, writer = await asyncio.open_connection(ip, port)
        writer.get_extra_info('socket').setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        writer.write(REQUEST.pack(size))
        received = 0
        while received < size:
            data = await reader.read(CHUNK)
            if not data:
                raise ConnectionError('the server closed after %d of %d bytes' % (received, size))
            received += len(data)
            got[flow_id] = (started, received)
        fct = loop.time() - started
        return {'id': flow_id, 'start_s': round(started + epoch_offset, 6), 'fct_s': round(fct, 6),
                'bytes': received}
    except (OSError, ConnectionError) as error:
        return {'id': flow_id, 'start_s': round(started + epoch_offset, 6), 'error': str(error),
                'bytes': got[flow_id][1]}
    finally:
        got.pop(flow_id, None)
        if writer is not None:
            writer.close()


async def client(schedule, epoch, until):
    """Run ``schedule`` ([id, start_s, ip, port, size], ...) against wall-clock
    ``epoch``; at wall-clock ``until`` report what is left and stop."""
    _more_descriptors()
    loop = asyncio.get_running_loop()
    epoch_offset = time.time() - loop.time() - epoch  # loop time -> seconds after epoch
    got, tasks = {}, {}

    def start(flow_id, ip, port, size):
        tasks[flow_id] = loop.create_task(_one_flow(loop, flow_id, ip, port, size, epoch_offset, got))

    for flow_id, start_s, ip, port, size in schedule:
        loop.call_at(start_s - epoch_offset, start, flow_id, ip, port, size)
    deadline = until - epoch - epoch_offset
    last_start = max((s[1] for s in schedule), default=0) - epoch_offset
    while loop.time() < deadline:
        await asyncio.sleep(0.05)
        if loop.time() > last_start and len(tasks) == len(schedule) \
                and all(task.done() for task in tasks.values()):
            return
    for flow_id, start_s, ip, port, size in schedule:
        task = tasks.get(flow_id)
        if task is None or not task.done():
            started, received = got.get(flow_id, (None, 0))
            if task is not None:
                task.cancel()
            print(json.dumps({'id': flow_id, 'unfinished': True, 'bytes': received,
                              'start_s': None if started is None else round(started + epoch_offset, 6)}),
                  flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='mode', required=True)
    p = sub.add_parser('serve')
    p.add_argument('--port', type=int, default=DEFAULT_PORT)
    p = sub.add_parser('client')
    p.add_argument('--epoch', type=float, required=True, help='wall-clock time the schedule counts from')
    p.add_argument('--until', type=float, required=True, help='wall-clock time to stop at')
    args = parser.parse_args(argv)
    if args.mode == 'serve':
        asyncio.run(serve(args.port))
    else:
        asyncio.run(client(json.load(sys.stdin), args.epoch, args.until))


# --- in the experiment's process --------------------------------------------------------------

def command(*args):
    return [sys.executable, '-m', 'scripts.emulator.flowgen'] + [str(a) for a in args]


class FlowgenError(SetupError):
    """A server or client of the generator did not start or said something it should not."""


def _start_servers(net, hosts, port, timeout_s=30):
    servers = {}
    try:
        for host in hosts:
            servers[host] = net.get(host).popen(command('serve', '--port', port), cwd=ROOT,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for host, proc in servers.items():
            line = _readline(proc, timeout_s)
            if not line.startswith('{"listening"'):
                raise FlowgenError('flow server on %s did not start: %s' % (
                    host, line or proc.stderr.read().decode(errors='replace')[-500:]))
    except BaseException:
        _end(servers.values())
        raise
    return servers


def _readline(proc, timeout_s):
    """One line of ``proc``'s stdout, '' if none came within ``timeout_s``."""
    lines = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return lines[0].decode(errors='replace') if lines else ''


def _end(procs):
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def run_flows(net, flows, seconds, drain_s, port=DEFAULT_PORT, lead_s=2.0, progress=None, every_s=5.0):
    """Run ``flows`` ({'id', 'start_s', 'src', 'dst', 'size'}: ``src`` the
    Mininet host that sends the data, ``dst`` the one that asks for it and
    times it) in ``net``: arrivals over ``seconds``, then at most
    ``drain_s`` more for the flows to end. {flow id: the client's line};
    ``progress(text)`` every ``every_s`` seconds."""
    by_client = {}
    for flow in flows:
        by_client.setdefault(flow['dst'], []).append(
            [flow['id'], flow['start_s'], net.get(flow['src']).IP(), port, flow['size']])
    servers = _start_servers(net, sorted({flow['src'] for flow in flows}), port)
    clients, results, lock = {}, {}, threading.Lock()
    try:
        epoch = time.time() + lead_s
        until = epoch + seconds + drain_s
        for host, schedule in by_client.items():
            proc = net.get(host).popen(command('client', '--epoch', '%.6f' % epoch, '--until', '%.6f' % until),
                                       cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE)
            proc.stdin.write(json.dumps(schedule).encode())
            proc.stdin.close()
            clients[host] = proc
        readers = [threading.Thread(target=_collect, args=(proc, results, lock), daemon=True)
                   for proc in clients.values()]
        for reader in readers:
            reader.start()
        next_report = time.time() + every_s
        while any(reader.is_alive() for reader in readers):
            if time.time() > until + 30:
                raise FlowgenError('flow clients still running 30 s after their deadline')
            time.sleep(0.2)
            if progress and time.time() >= next_report:
                next_report += every_s
                with lock:
                    done = sum(1 for r in results.values() if 'fct_s' in r)
                elapsed = time.time() - epoch
                due = sum(1 for flow in flows if flow['start_s'] <= elapsed)
                progress('  %5.1f s: %d of %d flows started, %d finished, %d running%s'
                         % (elapsed, due, len(flows), done, due - len(results),
                            ' (draining)' if elapsed > seconds else ''))
        failed = {host: proc.stderr.read().decode(errors='replace')[-500:] for host, proc in clients.items()
                  if proc.wait() != 0}
        if failed:
            raise FlowgenError('flow clients failed: %s' % failed)
    finally:
        _end(clients.values())
        _end(servers.values())
    return results


def _collect(proc, results, lock):
    for line in proc.stdout:
        record = json.loads(line)
        with lock:
            results[record['id']] = record


if __name__ == '__main__':
    main()
