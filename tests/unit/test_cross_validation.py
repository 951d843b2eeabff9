"""scripts/fattree/cross_validation.py: the emulated and simulated runs of
one bisection experiment compared cell by cell (synthetic runs)."""
import pytest

from scripts.fattree.cross_validation import CrossValidationError, compare, markdown, tally

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
    result = {'config': CONFIG, 'emulated_run': 'e', 'simulated_run': 's', 'rows': rows}
    text = markdown(result)
    assert '0 of 1 judged cells agree' in text
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
    from scripts.fattree.cross_validation import main
    with pytest.raises(SystemExit):
        main([str(tmp_path / 'missing'), str(tmp_path), '--out', str(tmp_path / 'out')])
    assert 'cannot compare %s' % (tmp_path / 'missing') in capsys.readouterr().err
