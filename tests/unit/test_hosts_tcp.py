"""Every host chooses the fabric's TCP congestion control; the machine's
list of allowed ones is widened only while they choose, and put back on
every ending; a host that cannot choose stops the fabric naming it."""
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
