"""The README's start-up table is the measurement's JSON, row for row."""
from scripts.emulator.benchmarks.startup_report import markdown

ROW = {'k': 16, 'ovs_instances': 4, 'bfd_interval_ms': 2050, 'up_s': 54.04, 'ready_s': 70.0,
       'start_to_all_pairs_s': 40.26, 'pairs_checked': 1000, 'pairs_sampled': True, 'pair_seed': 1,
       'teardown_s': 10.0, 'ovs_vswitchd_settled_s': 10.2, 'controller_cpu_s_to_ready': 12.0,
       'silent_failure_detected_s': 6.333, 'silent_failure_recovered_s': 4.049, 'bare_up_s': 196.0, 'bare_teardown_s': 257.0,
       'up_vs_bare': 0.28, 'teardown_vs_bare': 0.04,
       'rules': {'edge': [{'prefix': 9, 'suffix': 8, 'housekeeping': 40, 'total': 57}]}}


def test_a_row_as_the_readme_shows_it():
    assert markdown([ROW]).splitlines()[2] == (
        '| 16 | 4 | 2,050 ms | 54.0 | 70.0 | 40.3 (1,000 sampled pairs, seed 1) | 10.0 / 10.2 | 12.0 | 6.33 / 4.05 '
        '| 196.0 / 257.0 | 0.28, 0.04 | edge 9+8+40 |')


def test_missing_measurements_are_marked_not_invented():
    row = dict(ROW, bfd_interval_ms=None, silent_failure_detected_s=None,
               silent_failure_recovered_s=None, pairs_sampled=False,
               pairs_checked=240)
    for key in ('bare_up_s', 'bare_teardown_s', 'up_vs_bare', 'teardown_vs_bare'):
        del row[key]
    line = markdown([row]).splitlines()[2]
    assert '| off |' in line and '(240 pairs)' in line and '| - / - | not measured |' in line
    assert '| 12.0 | - / - |' in line


def test_port_cost_table():
    from scripts.emulator.benchmarks.ovs_port_cost import markdown as port_cost
    assert port_cost([{'ports': 1280, 'bridges': 80, 'add_s': 3.62, 'remove_s': 22.5}]).splitlines()[2] == \
        '| 1,280 (80) | 3.6 | 22.5 |'
