"""Which BFD interval the floor benchmark calls holding, and how separate
runs' rows combine."""
from scripts.fattree.bfd_floor_report import lowest_holding, merged


def row(interval, links='unshaped', idle=0, load=0, controller=0, mbps=None):
    return {'interval_ms': interval, 'links': links, 'idle_ovs_flaps': idle, 'load_ovs_flaps': load,
            'idle_controller_live_changes': 0, 'load_controller_live_changes': controller,
            'load_aggregate_mbps': mbps}


def test_the_lowest_interval_whose_every_row_and_every_larger_one_held():
    rows = [row(100), row(100, 'shaped'), row(50), row(50, 'shaped'), row(30, 'shaped', load=4), row(20)]
    assert lowest_holding(rows) == 50  # 20 held, but by luck below 30, which flapped


def test_a_flap_idle_or_under_shaped_load_or_at_the_controller_fails_an_interval():
    assert lowest_holding([row(100), row(50), row(50, 'shaped', idle=1)]) == 100
    assert lowest_holding([row(100), row(50, idle=1)]) == 100
    assert lowest_holding([row(100, 'shaped'), row(50, 'shaped', controller=2)]) == 100
    assert lowest_holding([row(100, 'shaped', load=1), row(50, 'shaped')]) is None


def test_flaps_under_unshaped_full_load_are_reported_not_decided_on():
    assert lowest_holding([row(100, load=6, controller=6), row(70, load=2), row(70, 'shaped')]) == 70


def test_a_new_run_replaces_only_its_own_interval_and_links():
    old = [row(100, mbps=1.0), row(100, 'shaped', mbps=2.0), row(50, mbps=3.0)]
    rows = merged(old, [row(100, mbps=9.0), row(70, mbps=7.0)])
    assert [(r['interval_ms'], r['links'], r['load_aggregate_mbps']) for r in rows] == [
        (100, 'shaped', 2.0), (100, 'unshaped', 9.0), (70, 'unshaped', 7.0), (50, 'unshaped', 3.0)]
