"""BFD's interval grows with the fabric so that its packets stay within budget."""
import pytest

from scripts.emulator.bfd import policy as bfd_policy
from topologies.fattree import FatTree


@pytest.mark.parametrize('k, interval_ms', [(4, 70), (6, 110), (8, 260), (16, 2050)])
def test_fat_tree_intervals_keep_the_budget(k, interval_ms):
    links = len(FatTree(k).switch_links())
    assert links == k ** 3 // 2
    assert bfd_policy.interval_for(links) == interval_ms
    assert bfd_policy.bfd_packets_per_s(links, interval_ms) <= bfd_policy.BUDGET_PPS
    assert bfd_policy.bfd_packets_per_s(links, interval_ms - 10) > bfd_policy.BUDGET_PPS or interval_ms == bfd_policy.FLOOR_MS


def test_no_links_is_an_error():
    with pytest.raises(ValueError, match='needs switch links'):
        bfd_policy.interval_for(0)


def test_bfd_is_off_by_default_above_the_sessions_one_daemon_keeps():
    assert bfd_policy.default_interval(256) == bfd_policy.interval_for(256)  # k=8: 512 sessions
    assert bfd_policy.default_interval(2048) is None  # k=16: 4,096 sessions


def test_the_session_limit_is_per_daemon_and_the_budget_for_the_machine():
    # k=16 over its default 4 daemons: 1,024 sessions each, the whole fabric within budget
    assert bfd_policy.default_interval(2048, daemons=4) == bfd_policy.interval_for(2048) == 2050
    assert bfd_policy.default_interval(2048, daemons=2) is None  # 2,048 sessions each
    assert bfd_policy.default_interval(256, daemons=2) == bfd_policy.interval_for(256)
