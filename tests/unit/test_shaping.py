"""A shaped link's HTB buckets: deep enough to catch up after the machine
runs a dequeue late, by the link's rate, never below Mininet's 15 KB."""
from scripts.emulator import shaping


def test_both_buckets_hold_24_ms_of_the_rate_and_at_least_15_kb():
    assert shaping.burst_bytes(20) == 60000
    assert shaping.burst_bytes(100) == 300000
    assert shaping.burst_bytes(2) == 15000
    assert shaping.htb_buckets(20) == ' burst 60000 cburst 60000 quantum 60000'


def test_mininets_own_buckets_on_request(monkeypatch):
    monkeypatch.setattr(shaping, 'HTB_BURST_S', None)
    assert shaping.burst_bytes(20) == 0
    assert shaping.htb_buckets(20) == ' burst 15000 quantum 60000'


def test_a_host_sends_one_frame_per_packet_on_a_shaped_link_only():
    assert shaping.host_interface_commands('h1-eth0', 'tx off', shaped=True) == [
        'ethtool -K h1-eth0 tx off >/dev/null 2>&1', 'ip link set dev h1-eth0 gso_max_segs 1 2>&1']
    assert shaping.host_interface_commands('h1-eth0', 'tx off', shaped=False) == [
        'ethtool -K h1-eth0 tx off >/dev/null 2>&1']
