"""What `dcfabric run --k K` does by default: which pairs it pings, and
what it says about an idle fabric that saturates the machine (pure)."""
from scripts.cli import ALL_PAIRS_UP_TO, PAIRS_SAMPLE, idle_cost, pairs_to_ping
from topologies.fattree import FatTree


def hosts(k):
    return [h.name for h in FatTree(k).hosts]


def test_all_pairs_up_to_k8_and_a_sample_said_so_above():
    pairs, what = pairs_to_ping(hosts(8), None, 1)
    assert len(pairs) == 16256 <= ALL_PAIRS_UP_TO and what == 'all 16256 host pairs'
    pairs, what = pairs_to_ping(hosts(16), None, 1)
    assert len(pairs) == PAIRS_SAMPLE == len(set(pairs))
    assert what == '1000 sampled host pairs (seed 1) of 1,047,552: all would take long (--pairs-sample N to choose)'


def test_a_sample_asked_for_is_taken_at_any_k():
    pairs, what = pairs_to_ping(hosts(4), 20, 7)
    assert len(pairs) == 20 and what == '20 sampled host pairs (seed 7)'


def test_an_idle_fabric_that_saturates_the_machine_says_what_takes_it():
    busy = idle_cost({'idle_pct_median': 0.0, 'daemon_busy_pct_median': 99.0}, 4, 5120, 2050, 2048)
    assert busy.startswith('idle fabric: machine idle 0.0%, busiest ovs-vswitchd 99.0% of a core - ')
    assert '4 ovs-vswitchd poll 5,120 switch ports (and send 1,998 BFD packets/s)' in busy
    assert idle_cost({'idle_pct_median': 60.0, 'daemon_busy_pct_median': 20.0}, 1, 48, None, 32) == \
        'idle fabric: machine idle 60.0%, busiest ovs-vswitchd 20.0% of a core'
