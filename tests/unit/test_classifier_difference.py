"""Classifier minus two-level from finished bisection runs
(scripts.fattree.classifier_difference)."""
import csv
import json

import pytest

from scripts.fattree.classifier_difference import main
from scripts.runner.records import RESULTS_SCHEMA


def write_run(path, seed, rates, moves=None, returning=0):
    """A bisection run directory with one seed: rates {(pattern, scheme): aggregate Mbit/s};
    ``moves`` logged classifier moves per run (None: a run from before they were recorded),
    the first ``returning`` of them of server -> client streams (not to iperf3's port)."""
    path.mkdir()
    config = {'experiment': 'bisection', 'backend': 'emulator', 'k': 4, 'bw': 2, 'queue': 50, 'hosts': 16,
              'seeds': [seed]}
    runs = [{'pattern': p, 'scheme': s, 'rep': 0, 'aggregate_mbps': mbps, 'flows': [], 'cpu_busy_pct': 50.0,
             'ovs_vswitchd_cpu_pct': 40.0} for (p, s), mbps in rates.items()]
    if moves is not None:
        for run in runs:
            if run['scheme'] == 'classifier':
                # each move with the entry placed ahead of it on the next switch
                flows = ['10.1.0.2->10.0.0.2 tcp/%d' % (40000 + i) if i < returning else
                         '10.0.0.2->10.1.0.2 tcp/5201' for i in range(moves)]
                run['controller_decisions'] = [line for f in flows for line in (
                    'classifier: a0_3 %s port None -> 2' % f, 'classifier: e0_0 %s port 2 -> 3' % f)]
    (path / 'results.json').write_text(json.dumps({'schema': RESULTS_SCHEMA, 'config': config, 'runs': runs}))
    return str(path)


def test_differences_per_pattern_over_seeds(tmp_path, capsys):
    one = write_run(tmp_path / 'one', 1, {('stride-4', 'nonblocking'): 30.0, ('stride-4', 'twolevel'): 30.0,
                                          ('stride-4', 'classifier'): 27.0})
    two = write_run(tmp_path / 'two', 2, {('stride-4', 'nonblocking'): 20.0, ('stride-4', 'twolevel'): 18.0,
                                          ('stride-4', 'classifier'): 20.0}, moves=3, returning=2)
    main([one, two, '--out', str(tmp_path / 'out')])
    with open(tmp_path / 'out' / 'difference.csv') as f:
        (row,) = list(csv.DictReader(f))
    # seed 1: 90 - 100 = -10; seed 2: 100 - 90 = +10
    assert row['seeds'] == '1 2'
    assert [float(row[k]) for k in ('twolevel_pct', 'classifier_pct', 'difference_mean_pct',
                                    'difference_min_pct', 'difference_max_pct')] == [95.0, 95.0, 0.0, -10.0, 10.0]
    assert float(row['difference_std_pct']) == pytest.approx(14.142, abs=1e-3)
    assert row['classifier_moves'] == '- 3 (2)'  # seed 1 recorded no moves; seed 2: 2 of 3 moved ACK streams
    saved = json.loads((tmp_path / 'out' / 'difference.json').read_text())
    assert [(r['seed'], r['classifier'], r['classifier_moves'], r['classifier_return_moves'])
            for r in saved['per_seed']] == [(1, 90.0, None, None), (2, 100.0, 3, 2)]
    assert 'Stride(4)' in capsys.readouterr().out


def test_a_run_without_both_schemes_is_an_error(tmp_path, capsys):
    run = write_run(tmp_path / 'one', 1, {('random', 'nonblocking'): 30.0, ('random', 'twolevel'): 20.0})
    with pytest.raises(SystemExit):
        main([run, '--out', str(tmp_path / 'out')])
    assert 'random seed 1 has no classifier run' in capsys.readouterr().err


def test_a_seed_run_twice_is_averaged_and_its_run_to_run_range_reported(tmp_path, capsys):
    first = write_run(tmp_path / 'first', 1, {('random', 'nonblocking'): 30.0, ('random', 'twolevel'): 15.0,
                                              ('random', 'classifier'): 21.0}, moves=4)
    again = write_run(tmp_path / 'again', 1, {('random', 'nonblocking'): 30.0, ('random', 'twolevel'): 18.0,
                                              ('random', 'classifier'): 20.0}, moves=6)
    other = write_run(tmp_path / 'other', 2, {('random', 'nonblocking'): 30.0, ('random', 'twolevel'): 15.0,
                                              ('random', 'classifier'): 15.0}, moves=0)
    main([first, again, other, '--out', str(tmp_path / 'out')])
    with open(tmp_path / 'out' / 'difference.csv') as f:
        (row,) = list(csv.DictReader(f))
    # seed 1: two-level (50 + 60) / 2 = 55, classifier (70 + 66.7) / 2; seed 2: 50 and 50
    assert row['seeds'] == '1 2' and row['classifier_moves'] == '4/6 0'
    assert float(row['difference_max_pct']) == pytest.approx((70 + 200 / 3) / 2 - 55)
    assert float(row['difference_min_pct']) == 0.0
    with open(tmp_path / 'out' / 'repeats.csv') as f:
        (repeat,) = list(csv.DictReader(f))
    assert (repeat['seed'], repeat['twolevel_pct'], float(repeat['twolevel_range_pct'])) == ('1', '50.0 60.0', 10.0)
    table = (tmp_path / 'out' / 'difference.md').read_text()
    assert '| Random | 1 2 | 52.5 |' in table and '| Random, 1 | 50.0 60.0 | 10.0 |' in table
