"""Every host chooses the fabric's TCP congestion control; the machine's
list of allowed ones is widened only while they choose, and put back on
every ending; a host that cannot choose stops the fabric naming it."""
import subprocess

import pytest

from scripts.emulator import mininet_classes
from scripts.emulator.errors import SetupError


class FakeHost:
    def __init__(self, name, answer=''):
        self.name, self.answer, self.sent = name, answer, []

    def sendCmd(self, cmd):
        self.sent.append(cmd)

    def waitOutput(self):
        return self.answer


class FakeNet:
    def __init__(self, hosts):
        self.hosts = hosts


@pytest.fixture
def proc(tmp_path, monkeypatch):
    available, allowed = tmp_path / 'available', tmp_path / 'allowed'
    available.write_text('reno bbr cubic\n')
    allowed.write_text('reno bbr\n')
    monkeypatch.setattr(mininet_classes, '_AVAILABLE_TCP', str(available))
    monkeypatch.setattr(mininet_classes, '_ALLOWED_TCP', str(allowed))
    return allowed


def test_every_host_chooses_cubic_and_the_allowed_list_is_put_back(proc):
    hosts = [FakeHost('h1'), FakeHost('h2')]
    mininet_classes.hosts_tcp(FakeNet(hosts))
    assert [h.sent for h in hosts] == [['sysctl -q -w net.ipv4.tcp_congestion_control=cubic 2>&1']] * 2
    assert proc.read_text() == 'reno bbr'


def test_a_host_that_cannot_choose_is_named_and_the_list_still_put_back(proc):
    hosts = [FakeHost('h1'), FakeHost('h2', 'sysctl: permission denied on key ...')]
    with pytest.raises(SetupError, match=r'1 hosts could not choose cubic TCP, e.g. h2: sysctl: permission denied'):
        mininet_classes.hosts_tcp(FakeNet(hosts))
    assert proc.read_text() == 'reno bbr'


def test_a_congestion_control_the_kernel_lacks_is_refused(proc):
    with pytest.raises(SetupError, match='no vegas TCP congestion control'):
        mininet_classes.hosts_tcp(FakeNet([FakeHost('h1')]), 'vegas')


def test_from_another_network_namespace_the_list_is_set_in_the_machines(proc, monkeypatch):
    """There the file is read-only: the list is written through nsenter, and put back the same way."""
    real_open, commands = open, []

    def read_only_open(path, mode='r', *args, **kwargs):
        if path == str(proc) and 'w' in mode:
            raise PermissionError(13, 'Permission denied', path)
        return real_open(path, mode, *args, **kwargs)

    def run(cmd, **kwargs):
        commands.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, '', '')
    monkeypatch.setattr(mininet_classes, 'open', read_only_open, raising=False)
    monkeypatch.setattr(mininet_classes.subprocess, 'run', run)
    mininet_classes.hosts_tcp(FakeNet([FakeHost('h1')]))
    assert [c[-1] for c in commands] == ['net.ipv4.tcp_allowed_congestion_control=reno bbr cubic',
                                         'net.ipv4.tcp_allowed_congestion_control=reno bbr']
    assert all(c[:2] == ['nsenter', '--net=/proc/2/ns/net'] for c in commands)


def test_a_list_that_cannot_be_set_anywhere_is_named(proc, monkeypatch):
    def read_only_open(path, mode='r', *args, **kwargs):
        if 'w' in mode:
            raise PermissionError(13, 'Permission denied', path)
        return open(path, mode, *args, **kwargs)
    monkeypatch.setattr(mininet_classes, 'open', read_only_open, raising=False)
    monkeypatch.setattr(mininet_classes.subprocess, 'run', lambda cmd, **kwargs: subprocess.CompletedProcess(
        cmd, 1, '', 'nsenter: cannot open /proc/2/ns/net: Permission denied'))
    with pytest.raises(SetupError, match="cannot set the machine's allowed TCP congestion controls to "
                                         "'reno bbr cubic' from this network namespace: nsenter: cannot open"):
        mininet_classes.hosts_tcp(FakeNet([FakeHost('h1')]))


class FakeIntf:
    def __init__(self, name):
        self.name = name


def test_offloads_reach_every_host_and_one_that_could_not_is_named(monkeypatch):
    """On shaped links a host sends one frame per packet; one whose ip refused is a warning, not a failure."""
    said = []
    monkeypatch.setattr(mininet_classes, 'progress', said.append)
    hosts = [FakeHost('h1'), FakeHost('h2', 'Error: unknown command "gso_max_segs"')]
    for host in hosts:
        host.intfList = lambda name=host.name: [FakeIntf(name + '-eth0')]
    mininet_classes.hosts_offloads(FakeNet(hosts), 'tx off', shaped=True)
    assert hosts[0].sent == ['ethtool -K h1-eth0 tx off >/dev/null 2>&1; ip link set dev h1-eth0 gso_max_segs 1 2>&1']
    assert len(said) == 1 and '1 hosts could not send one frame per packet' in said[0] and 'h2' in said[0]
