"""The rate sweep's verdict per rate and its result."""
from scripts.emulator.benchmarks.rate_sweep_report import highest_faithful_rate, markdown, rate_row


def run(scheme, pattern, mbps, ok=True, idle=30.0, busy=80.0):
    fidelity = {'ok': ok, 'idle_pct_median': idle, 'daemon_busy_pct_median': busy}
    if not ok:
        fidelity['limited_by'] = ['non-blocking reference 80.0% < 90% of line rate', 'machine idle 2.0% < 10%']
    return {'scheme': scheme, 'pattern': pattern, 'aggregate_mbps': mbps, 'fidelity': fidelity}


def test_a_rate_holds_only_when_every_run_kept_its_verdict():
    runs = [run('nonblocking', 'random', 300.0), run('twolevel', 'random', 200.0),
            run('nonblocking', 'stride-4', 296.0, ok=False, idle=2.0, busy=99.0)]
    row = rate_row(20, runs, 320.0)
    assert (row['runs'], row['runs_limited'], row['holds']) == (3, 1, False)
    assert row['nonblocking_pct_of_line'] == {'random': 93.8, 'stride-4': 92.5}
    assert (row['nonblocking_pct_of_line_min'], row['idle_pct_median_min'], row['daemon_busy_pct_median_max']) \
        == (92.5, 2.0, 99.0)
    assert row['limited_by'] == ['machine idle', 'non-blocking reference']


def test_the_result_is_the_highest_rate_that_holds():
    rows = [{'bw_mbps': bw, 'holds': holds} for bw, holds in ((2, False), (5, True), (10, True), (20, False))]
    assert highest_faithful_rate(rows) == 10
    assert highest_faithful_rate([{'bw_mbps': 2, 'holds': False}]) is None


def test_the_table_names_the_result():
    row = rate_row(20, [run('nonblocking', 'random', 300.0)], 320.0)
    text = markdown({'rates': [row], 'highest_faithful_mbps': 20})
    assert '| 20 | 1 | 0 | 93.8 | 30.0 | 80.0 | yes | - |' in text
    assert text.endswith('holds everywhere: 20 Mbit/s.')
