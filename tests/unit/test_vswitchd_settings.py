"""A fabric's settings on its servers' ovs-vswitchd: what apply() changes,
undo() puts back exactly, server by server."""
import subprocess

import pytest

from scripts.faults import FaultError
from scripts.vswitchd import DAEMON_NICE, DaemonSettings, autogroup_nice


class FakeSites:
    """Two servers whose daemons answer like /proc and ovs-appctl."""

    def __init__(self, nice_of):
        # (server, daemon): autogroup nice, None for no autogroup file
        self.daemons = {(server, daemon): nice for server, nice in nice_of.items()
                        for daemon in ('ovs-vswitchd', 'ovsdb-server')}
        self.megaflows = {server: True for server in nice_of}

    @property
    def nice_of(self):
        """{server: the nice both its daemons have}"""
        nices = {}
        for (server, _), nice in self.daemons.items():
            assert nices.setdefault(server, nice) == nice
        return nices

    def servers(self):
        return list(self.megaflows)

    @staticmethod
    def daemon_of(command):
        daemons = [d for d in ('ovs-vswitchd', 'ovsdb-server') if '/%s.pid' % d in command]
        assert len(daemons) == 1, command
        return daemons[0]

    def run(self, server, *cmd, check=True):
        out = ''
        if cmd[:2] == ('ovs-appctl', '--timeout=10'):
            self.megaflows[server] = cmd[2] == 'upcall/enable-megaflows'
        elif cmd[:2] == ('sh', '-c') and cmd[2].startswith('echo '):
            self.daemons[server, self.daemon_of(cmd[2])] = int(cmd[2].split()[1])
        elif cmd[:2] == ('sh', '-c'):
            nice = self.daemons[server, self.daemon_of(cmd[2])]
            out = '' if nice is None else '/autogroup-7 nice %d\n' % nice
        else:
            raise AssertionError(cmd)
        return subprocess.CompletedProcess(cmd, 0, out, '')


def test_apply_puts_each_daemon_first_and_undo_restores_its_own_value():
    sites = FakeSites({'s1': 0, 's2': 5})
    settings = DaemonSettings(sites, exact_match=True)
    settings.apply()
    assert sites.nice_of == {'s1': DAEMON_NICE, 's2': DAEMON_NICE}
    assert sites.megaflows == {'s1': False, 's2': False}
    settings.undo()
    assert sites.nice_of == {'s1': 0, 's2': 5}
    assert sites.megaflows == {'s1': True, 's2': True}
    settings.undo()  # twice: nothing left to put back
    assert sites.nice_of == {'s1': 0, 's2': 5}


def test_megaflows_stay_as_they_are_without_exact_match():
    sites = FakeSites({'s1': 0})
    settings = DaemonSettings(sites, exact_match=False)
    settings.apply()
    settings.undo()
    assert sites.megaflows == {'s1': True}


def test_a_kernel_without_autogroups_is_left_alone():
    sites = FakeSites({'s1': None})
    settings = DaemonSettings(sites, exact_match=False)
    settings.apply()
    assert sites.nice_of == {'s1': None}
    settings.undo()
    assert sites.nice_of == {'s1': None}


def test_autogroup_line():
    assert autogroup_nice('/autogroup-5 nice -20\n') == -20
    with pytest.raises(FaultError, match='unexpected autogroup line'):
        autogroup_nice('nonsense')
