"""A fabric's settings on its servers' ovs-vswitchd: what apply() changes,
undo() puts back exactly, server by server; the daemon's send socket."""
import subprocess

import pytest

from scripts.emulator.faults import FaultError
from scripts.emulator.ovs.vswitchd import DATA_QUEUE_PACKETS, DaemonSettings, send_buffer_bytes, send_socket_inode


class FakeSites:
    """Servers whose daemons answer ovs-appctl's megaflow commands."""

    def __init__(self, servers):
        self.megaflows = {server: True for server in servers}

    def servers(self):
        return list(self.megaflows)

    def run(self, server, *cmd, check=True):
        assert cmd[0] == 'ovs-appctl' and cmd[1].startswith('--timeout='), cmd
        assert cmd[2] in ('upcall/enable-megaflows', 'upcall/disable-megaflows'), cmd
        self.megaflows[server] = cmd[2] == 'upcall/enable-megaflows'
        return subprocess.CompletedProcess(cmd, 0, '', '')


def test_exact_match_turns_megaflows_off_on_every_server_until_undo():
    sites = FakeSites(['s1', 's2'])
    settings = DaemonSettings(sites, exact_match=True)
    settings.apply()
    assert sites.megaflows == {'s1': False, 's2': False}
    settings.undo()
    assert sites.megaflows == {'s1': True, 's2': True}
    sites.megaflows['s1'] = False  # someone else's setting after undo
    settings.undo()  # twice: nothing left to put back
    assert sites.megaflows == {'s1': False, 's2': True}


def test_megaflows_stay_as_they_are_without_exact_match():
    sites = FakeSites(['s1'])
    settings = DaemonSettings(sites, exact_match=False)
    settings.apply()
    sites.megaflows['s1'] = False
    settings.undo()
    assert sites.megaflows == {'s1': False}


PACKET_TABLE = '''sk               RefCnt Type Proto  Iface R Rmem   User   Inode
00000000cad8efe6 2      3    0000   0     0 0      0      297773505
00000000aa000001 3      3    0003   14    1 0      0      297773600
00000000aa000002 2      3    0000   0     0 0      0      100
00000000aa000003 2      2    0000   0     0 0      0      297773700
'''


def test_the_send_socket_is_the_daemons_unbound_raw_one():
    # 297773600 is bound (a port's receive socket), 297773700 a datagram
    # socket, 100 another process's unbound raw socket in the same namespace
    assert send_socket_inode(PACKET_TABLE, {297773505, 297773600, 297773700}) == 297773505
    assert send_socket_inode(PACKET_TABLE, {297773600}) is None  # not sent anything yet
    with pytest.raises(FaultError, match='2 unbound packet sockets'):
        send_socket_inode(PACKET_TABLE, {297773505, 100})


def test_send_buffer_outgrows_every_port_queue_within_the_kernels_limit():
    assert send_buffer_bytes(80) == 80 * DATA_QUEUE_PACKETS * 4096
    assert send_buffer_bytes(100000) == (2 ** 31 - 1) // 2
