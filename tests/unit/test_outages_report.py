"""The outage script's report: the README's table and summary figures come
from a run's outages.json, grouped by how each outage was repaired."""
from scripts.fattree.outages_report import markdown, summary


def outage(mode, repaired_by, restored_ms, control_lost=0):
    return {'class': 'upper switch', 'element': 'a0_2', 'mode': mode, 'direction': 'h0_0_2->h2_0_2',
            'repaired_by': repaired_by, 'lost': 10, 'restored_ms': restored_ms, 'lost_on_recovery': 0,
            'control_lost': control_lost, 'control_restored_ms': 0.0}


RESULT = {'k': 4, 'bfd_ms': 50, 'loadavg_1m': [1.5, 1.7], 'outages': [
    outage('hard', 'e0_0 (local)', 26.1), outage('hard', 'a0_2 (local)', 18.8),
    outage('hard', 'controller', 43.2, control_lost=3), outage('silent', 'e0_0 (local, after BFD)', 171.0),
    outage('silent', 'controller', 160.5)],
    'single_link_reachability': [{'link': ['e0_0', 'a0_2'], 'pairs': 240, 'unreachable': []},
                                 {'link': ['a0_2', 'c1_1'], 'pairs': 240, 'unreachable': [['h0_0_2', 'h1_0_2']]}]}


def test_summary_separates_local_and_controller_repairs_of_hard_failures():
    figures = summary(RESULT)
    assert (figures['hard_local'], figures['hard_local_ms']) == (2, '18.8-26.1')
    assert (figures['hard_controller'], figures['hard_controller_ms']) == (1, '43.2')
    assert figures['silent_ms'] == '160.5-171'
    assert figures['bfd_detection_ms'] == 150
    assert figures['control_lost_max'] == 3
    assert (figures['single_links'], figures['single_links_with_unreachable'], figures['pairs']) == (2, 1, 240)


def test_markdown_has_a_row_per_outage_in_the_run_order():
    rows = [line for line in markdown(RESULT).splitlines() if line.startswith('| upper switch')]
    assert len(rows) == 5
    assert rows[2] == '| upper switch | a0_2 | hard | h0_0_2->h2_0_2 | controller | 10 | 43.2 | 0 | 3 |'
