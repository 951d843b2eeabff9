"""scripts/experiments/cross_validation.py: the emulated and simulated runs of
one bisection experiment compared cell by cell (synthetic runs)."""
import pytest

from scripts.experiments.cross_validation import CrossValidationError, compare, markdown, tally

CONFIG = {'k': 4, 'bw': 10.0, 'queue': 50, 'duration': 10, 'omit': 3, 'seeds': [1, 2, 3], 'hosts': 16,
          'patterns': ['stride-4'], 'schemes': ['nonblocking', 'twolevel']}


def runs(reference, twolevel, faithful=(True, True, True)):
    """One reference and one two-level run per seed, aggregate Mbit/s as given."""
    made = []
    for rep, (ref, two, ok) in enumerate(zip(reference, twolevel, faithful)):
        made.append({'scheme': 'nonblocking', 'pattern': 'stride-4', 'rep': rep, 'aggregate_mbps': ref,
                     'fidelity': {'ok': True}})
        made.append({'scheme': 'twolevel', 'pattern': 'stride-4', 'rep': rep, 'aggregate_mbps': two,
                     'fidelity': {'ok': ok}})
    return made


def emulated(**changes):
    return dict(CONFIG, backend='emulator', **changes)


def simulated(**changes):
    return dict(CONFIG, backend='sim', **changes)


def test_a_simulated_mean_inside_the_emulators_per_seed_range_agrees():
    rows = compare(emulated(), runs([150, 150, 150], [135, 150, 142.5]),
                   simulated(), runs([150, 150, 150], [144, 144, 144]))
    reference, twolevel = rows
    assert reference['metric'] == 'pct_of_line_rate' and reference['agrees'] is None
    assert (twolevel['emulated_pct'], twolevel['emulated_min_pct'], twolevel['emulated_max_pct']) == (95.0, 90.0, 100.0)
    assert twolevel['simulated_pct'] == 96.0 and twolevel['difference_points'] == 1.0
    assert twolevel['agrees'] is True
    assert tally(rows) == (1, 1)


def test_a_simulated_mean_outside_the_range_disagrees_and_is_shown():
    rows = compare(emulated(), runs([150, 150, 150], [135, 150, 142.5]),
                   simulated(), runs([150, 150, 150], [75, 75, 75]))
    assert rows[1]['agrees'] is False and rows[1]['difference_points'] == -45.0
    result = {'config': dict(CONFIG, simulated_sender_queue='fq'), 'emulated_run': 'e', 'simulated_run': 's',
              'rows': rows}
    text = markdown(result)
    assert "simulated `s` (hosts' send queues fq)" in text and '0 of 1 judged cells agree' in text
    assert '| Stride(4) | twolevel | 95.0 (90.0-100.0), 3/3 | 50.0 | -45.0 | 100.0 | **no** |' in text


def test_a_cell_with_fewer_than_two_faithful_emulated_runs_is_not_judged():
    rows = compare(emulated(), runs([150, 150, 150], [135, 150, 142.5], faithful=(True, False, False)),
                   simulated(), runs([150, 150, 150], [75, 75, 75]))
    assert rows[1]['emulated_faithful_runs'] == 1 and rows[1]['agrees'] is None
    assert tally(rows) == (0, 0)


@pytest.mark.parametrize('emu, sim, named', [
    (emulated(bw=20.0), simulated(), 'bw (20.0 against 10.0)'),
    (emulated(), simulated(seeds=[4, 5, 6]), 'different seeds'),
    (emulated(), emulated(), 'backends emulator and emulator'),
])
def test_runs_of_different_experiments_are_refused_by_name(emu, sim, named):
    with pytest.raises(CrossValidationError, match=named.replace('(', r'\(').replace(')', r'\)')):
        compare(emu, runs([150] * 3, [150] * 3), sim, runs([150] * 3, [150] * 3))


def test_a_directory_that_is_no_finished_run_is_named(tmp_path, capsys):
    from scripts.experiments.cross_validation import main
    with pytest.raises(SystemExit):
        main([str(tmp_path / 'missing'), str(tmp_path), '--out', str(tmp_path / 'out')])
    assert 'cannot compare %s' % (tmp_path / 'missing') in capsys.readouterr().err


# --- the workload experiment: FCT slowdowns per scheme, load and size bucket ---

from scripts.experiments import workload_report  # noqa: E402
from scripts.experiments.cross_validation import (  # noqa: E402
    compare_workload, median_interval, small_flow_paths, workload_markdown)

WORKLOAD = {'k': 4, 'bw': 20.0, 'queue': 50, 'cdf': 'web-search', 'seconds': 15.0, 'pattern': 'all-to-all',
            'seeds': [37], 'schemes': ['nonblocking', 'twolevel'], 'loads': [0.3, 0.7]}


def workload_run(backend, slowdowns, fct_s=1.0, ideal_fct_s=0.1, faithful=True, loads=(0.3,)):
    """(summary.json, rows) of a run whose twolevel and reference flows of
    10 KB have ``slowdowns`` (None: unfinished) at each of ``loads``."""
    rows, runs = [], []
    for load in loads:
        for scheme in WORKLOAD['schemes']:
            flows = [{'id': i, 'src': 'h0_0_2', 'dst': 'h1_0_%d' % (2 + i % 2), 'size': 10_000, 'start_s': i * 0.1}
                     for i in range(len(slowdowns))]
            results = {i: {'fct_s': None if s is None else fct_s * s} for i, s in enumerate(slowdowns)}
            run_rows = workload_report.flow_rows(scheme, 37, load, flows, results, lambda f: fct_s)
            for row, s in zip(run_rows, slowdowns):  # the slowdowns as given, the ideal as given
                row.update(slowdown=s, ideal_fct_s=ideal_fct_s, fct_s=None if s is None else ideal_fct_s * s)
            rows += run_rows
            run = dict(workload_report.run_counts(run_rows), scheme=scheme, seed=37, load=load)
            if backend == 'emulator':
                run['fidelity'] = {'ok': faithful or scheme == 'nonblocking'}
            runs.append(run)
    summary = workload_report.summarize(rows, runs)
    config = dict(WORKLOAD, backend=backend, loads=list(loads))
    return dict(summary, config=config), rows


def test_the_median_interval_is_the_binomial_order_statistics():
    assert median_interval(range(1, 6)) is None  # five flows: no 95% interval
    assert median_interval(range(1, 7)) == (1, 6)
    assert median_interval(range(1, 11)) == (2, 9)
    assert median_interval(range(100, 0, -1)) == (40, 61)


def test_a_simulated_median_inside_the_emulated_interval_agrees_and_ratios_are_per_flow():
    emulated = workload_run('emulator', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], ideal_fct_s=0.1, loads=(0.3, 0.7))
    simulated = workload_run('sim', [4, 4, 4, 4, 4, 4, 4, 4, 4, None], ideal_fct_s=0.2)
    rows = compare_workload(*emulated, *simulated)
    assert {r['load'] for r in rows} == {0.3}  # the loads both ran
    row = next(r for r in rows if (r['scheme'], r['bucket']) == ('twolevel', '<100KB'))
    assert row['emulated_p50_interval'] == [2, 9] and row['simulated']['p50'] == 4 and row['agrees'] is True
    assert row['paired_flows'] == 9  # the flow unfinished on the simulator is left out of the ratios
    # 0.8 s against the emulated 0.1-0.9 s: 0.8 / 0.5 the median ratio
    assert row['ideal_ratio_p50'] == 2.0 and row['fct_ratio_p50'] == 1.6
    assert {r['bucket'] for r in rows} == {'<100KB', 'all'}


def test_outside_the_interval_disagrees_and_a_limited_run_is_not_judged():
    emulated = workload_run('emulator', [1, 1, 1, 1, 1, 1, 1, 1.1, 1.2, 1.3], faithful=False)
    simulated = workload_run('sim', [3] * 10)
    rows = compare_workload(*emulated, *simulated)
    reference, twolevel = (next(r for r in rows if (r['scheme'], r['bucket']) == (s, 'all'))
                           for s in ('nonblocking', 'twolevel'))
    assert reference['agrees'] is False and reference['emulator_faithful']
    assert twolevel['agrees'] is None and not twolevel['emulator_faithful']
    result = {'config': dict(WORKLOAD, loads=[0.3]), 'emulated_run': 'e', 'simulated_run': 's', 'rows': rows,
              'small_flow_paths': small_flow_paths(*emulated, *simulated)}
    text = workload_markdown(result)
    assert '0 of 2 judged cells agree' in text
    assert ('| nonblocking | 0.3 | all | 1.06 / 1.00 / 1.29 (10) | 1.00-1.20 | 3.00 / 3.00 / 3.00 (10) | 3.00 | '
            '1.00 | **no** |') in text
    assert '| twolevel | 0.3 | all | 1.06 / 1.00 / 1.29 (10) LIMITED |' in text
    # the small flows by path length: h0_0_2 to h1_0_* crosses five switches of the fat-tree, the reference's one
    assert '| nonblocking | 0.3 | 1 | 10 | 100.0 | 300.0 | -200.0 | 100.0 | 100.0 |' in text
    assert '| twolevel | 0.3 | 5 | 10 | 100.0 | 300.0 | -200.0 | 100.0 | 100.0 |' in text


def test_workload_runs_of_different_flows_are_refused():
    emulated = workload_run('emulator', [1] * 10)
    with pytest.raises(CrossValidationError, match='seeds'):
        compare_workload(*emulated, workload_run('sim', [1] * 10)[0] | {'config': dict(WORKLOAD, backend='sim',
                                                                                       seeds=[38])}, [])
    summary, rows = workload_run('sim', [1] * 10)
    rows[3]['size_bytes'] = 20_000
    with pytest.raises(CrossValidationError, match='did not draw the same flows'):
        compare_workload(*emulated, summary, rows)
