"""Requests as the appctl tool sends them, straight to ovs-vswitchd's
control socket (JSON-RPC 1.0, as lib/unixctl.c serves it), many on one
connection: a check that asks OVS thousands of questions (ofproto/trace)
pays a process start for none of them."""
import json
import os
import socket

from scripts.emulator.ovs.vswitchd import daemon_pid


def control_socket_path():
    rundir = os.environ.get('OVS_RUNDIR', '/var/run/openvswitch')
    return os.path.join(rundir, 'ovs-vswitchd.%d.ctl' % daemon_pid())


class Appctl:
    """One connection to the daemon's control socket, which answers a
    connection's requests in order."""

    def __init__(self, path=None, timeout_s=60):
        self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.connection.settimeout(timeout_s)
        self.connection.connect(path or control_socket_path())
        self.decoder = json.JSONDecoder()
        self.buffer = ''
        self.next_id = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.connection.close()

    def run_all(self, commands, batch=200):
        """The text each (method, *params) command answers, in order; an
        error reply raises RuntimeError. Commands go ``batch`` at a time,
        each batch's replies read before the next is sent (the daemon stops
        reading while its replies wait unread)."""
        replies = []
        for start in range(0, len(commands), batch):
            replies += self._run_batch(commands[start:start + batch])
        return replies

    def _run_batch(self, commands):
        first = self.next_id
        self.next_id += len(commands)
        requests = ''.join(json.dumps({'method': method, 'params': list(params), 'id': first + i})
                           for i, (method, *params) in enumerate(commands))
        self.connection.sendall(requests.encode())
        replies = []
        while len(replies) < len(commands):
            reply = self._read()
            if reply.get('error') is not None:
                raise RuntimeError('%s: %s' % (commands[reply['id'] - first], reply['error']))
            replies.append(reply['result'])
        return replies

    def _read(self):
        while True:
            text = self.buffer.lstrip()
            if text:
                try:
                    message, end = self.decoder.raw_decode(text)
                    self.buffer = text[end:]
                    return message
                except ValueError:
                    pass
            chunk = self.connection.recv(1 << 20)
            if not chunk:
                raise RuntimeError('ovs-vswitchd closed its control socket')
            self.buffer += chunk.decode()
