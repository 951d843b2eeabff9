"""A fabric's settings on its servers' ovs-vswitchd: what apply() changes,
undo() puts back exactly, server by server."""
import subprocess

from scripts.vswitchd import DaemonSettings


class FakeSites:
    """Servers whose daemons answer ovs-appctl's megaflow commands."""

    def __init__(self, servers):
        self.megaflows = {server: True for server in servers}

    def servers(self):
        return list(self.megaflows)

    def run(self, server, *cmd, check=True):
        assert cmd[:2] == ('ovs-appctl', '--timeout=10'), cmd
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
