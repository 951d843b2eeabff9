"""scripts.experiments.datacenter_rates: simulated bisection runs gathered into
Table 2 at a datacenter rate, its doubled-duration check and its Markdown."""
import json

import pytest

from scripts.experiments import datacenter_rates as rates
from scripts.runner.records import RESULTS_SCHEMA

CONFIG = {'experiment': 'bisection', 'backend': 'sim', 'sender_queue': 'drop-tail', 'k': 4, 'bw': 1000.0, 'queue': 50, 'duration': 0.1, 'omit': 0.05, 'hosts': 16,
          'min_rto_ms': 10.0, 'control_delay_ms': 1.0, 'period_s': 0.01, 'patterns': ['random', 'stride-4'],
          'schemes': ['nonblocking', 'twolevel', 'scheduler'],
          'machine': {'cpu_count': 2, 'processor': 'Test CPU'}}


def write_run(path, seeds, aggregates, **config):
    """A finished run's results.json: ``aggregates`` {(pattern, scheme, seed): Mbit/s}."""
    config = dict(CONFIG, seeds=seeds, **config)
    runs = [{'scheme': s, 'pattern': p, 'rep': seeds.index(seed), 'seed': seed, 'aggregate_mbps': mbps,
             'flows': [], 'simulation': {'events': 1, 'simulated_s': 0.15}, 'ran_on': {'wall_s': 10.0 + seed}}
            for (p, s, seed), mbps in aggregates.items() if seed in seeds]
    path.mkdir()
    (path / 'results.json').write_text(json.dumps({'schema': RESULTS_SCHEMA, 'config': config, 'runs': runs}))
    return str(path)


def aggregates(scale=1.0):
    """Every pattern and scheme for seeds 1 and 2: the reference at 80% and
    90% of the line (16 Gbit/s), two-level at 50% and 75% of it."""
    out = {}
    for pattern in CONFIG['patterns']:
        for seed, ref in ((1, 12800.0), (2, 14400.0)):
            out[(pattern, 'nonblocking', seed)] = ref
            out[(pattern, 'twolevel', seed)] = ref * (0.5 if seed == 1 else 0.75) * scale
            out[(pattern, 'scheduler', seed)] = ref * scale
    return out


def cell(entry, pattern, scheme):
    return next(c for c in entry['cells'] if (c['pattern'], c['scheme']) == (pattern, scheme))


def test_mean_and_range_over_seeds_of_line_rate_and_reference(tmp_path):
    one = write_run(tmp_path / 'a', [1], aggregates())
    two = write_run(tmp_path / 'b', [2], aggregates())
    entry = rates.table('t', [rates.load(one), rates.load(two)])
    ref = cell(entry, 'random', 'nonblocking')
    assert ref['pct_of_line'] == {'mean': 85.0, 'min': 80.0, 'max': 90.0}
    assert ref['pct_of_reference'] is None  # the reference is not a share of itself
    two_level = cell(entry, 'stride-4', 'twolevel')
    assert two_level['pct_of_reference'] == {'mean': 62.5, 'min': 50.0, 'max': 75.0}
    assert two_level['pct_of_line'] == {'mean': 53.75, 'min': 40.0, 'max': 67.5}
    assert entry['seeds'] == [1, 2] and entry['runs'] == [one, two]
    assert entry['wall']['total_s'] == 6 * 11.0 + 6 * 12.0 and entry['wall']['per_run_max_s'] == 12.0
    assert (entry['duration_s'], entry['omit_s'], entry['min_rto_ms'], entry['period_s']) == (0.1, 0.05, 10.0, 0.01)


@pytest.mark.parametrize('other, message', [
    ({'min_rto_ms': 200.0}, 'differ in min_rto_ms'), ({'period_s': None}, 'differ in period_s'),
    ({'backend': 'emulator'}, "ran on the emulator"), ({'backend': 'flow'}, 'differ in backend')])
def test_runs_of_other_settings_or_backend_make_no_table(tmp_path, other, message):
    one = write_run(tmp_path / 'a', [1], aggregates())
    two = write_run(tmp_path / 'b', [2], aggregates(), **other)
    runs = [rates.load(two)] if other.get('backend') == 'emulator' else [rates.load(one), rates.load(two)]
    with pytest.raises(rates.RatesError, match=message):
        rates.table('t', runs)


def test_a_flow_model_table_says_so_and_a_k32_one_has_hederas_figure_beside_it(tmp_path):
    flow = {'backend': 'flow', 'queue': 50, 'min_rto_ms': None, 'control_delay_ms': None}
    k16 = [write_run(tmp_path / 'k16a', [1], aggregates(), k=16, **flow),
           write_run(tmp_path / 'k16b', [1], aggregates(), k=16, duration=0.2, **flow)]
    data = rates.build([('k16', [k16[0]])], {'k16': ([k16[0]], [k16[1]])}, None)
    text = rates.markdown(data)
    assert 'the flow-level model' in text and 'minimum RTO' not in text and 'Hedera' not in text
    k32 = [write_run(tmp_path / 'k32a', [1], aggregates(), k=32, **flow),
           write_run(tmp_path / 'k32b', [1], aggregates(), k=32, duration=0.2, **flow)]
    data = rates.build([('k32', [k32[0]])], {'k32': ([k32[0]], [k32[1]])}, None)
    assert "Hedera (Al-Fares et al., NSDI'10)" in rates.markdown(data) and '96%' in rates.markdown(data)


def test_a_schemes_reference_may_be_in_another_run_of_the_same_seed(tmp_path):
    everything = aggregates()
    reference = write_run(tmp_path / 'ref', [1], {k: v for k, v in everything.items() if k[1] == 'nonblocking'},
                          schemes=['nonblocking'])
    schemes = write_run(tmp_path / 'rest', [1], {k: v for k, v in everything.items() if k[1] != 'nonblocking'},
                        schemes=['scheduler', 'twolevel'])
    entry = rates.table('t', [rates.load(reference), rates.load(schemes)])
    assert cell(entry, 'random', 'twolevel')['pct_of_reference'] == {'mean': 50.0, 'min': 50.0, 'max': 50.0}
    assert entry['schemes'] == ['nonblocking', 'twolevel', 'scheduler']  # Table 2's order, not the runs'
    alone = rates.table('t', [rates.load(schemes)])  # no reference run: no share of it
    assert cell(alone, 'random', 'twolevel')['pct_of_reference'] is None


def test_a_seed_in_two_runs_is_refused(tmp_path):
    one = write_run(tmp_path / 'a', [1, 2], aggregates())
    two = write_run(tmp_path / 'b', [2], aggregates())
    with pytest.raises(rates.RatesError, match='seed 2 of random nonblocking is in both'):
        rates.table('t', [rates.load(one), rates.load(two)])


def test_doubled_duration_check_names_the_largest_difference(tmp_path):
    short = write_run(tmp_path / 'd', [1], aggregates())
    changed = aggregates()
    changed[('stride-4', 'twolevel', 1)] *= 0.9  # 50% -> 45% of the reference: 5 points lower
    changed[('random', 'nonblocking', 1)] *= 1.02  # 80% -> 81.6% of line; its schemes' shares fall
    long = write_run(tmp_path / 'd2', [1], changed, duration=0.2)
    check = rates.stability([rates.load(short)], [rates.load(long)])
    assert check['largest_pct_of_reference_diff'] == {'points': 5.0, 'pattern': 'stride-4', 'scheme': 'twolevel',
                                                      'seed': 1}
    assert check['largest_pct_of_line_diff']['points'] == pytest.approx(4.0)  # stride-4 two-level: 40 -> 36
    random_ref = next(c for c in check['cells'] if (c['pattern'], c['scheme']) == ('random', 'nonblocking'))
    assert random_ref['pct_of_line_diff'] == pytest.approx(1.6) and random_ref['pct_of_reference_diff'] is None
    assert check['durations_s'] == [0.1, 0.2]
    assert check['largest_pct_of_reference_diff_by_scheme'] == {'twolevel': 5.0, 'scheduler': pytest.approx(1.96, abs=0.01)}
    # the longer runs split by pattern into two invocations: the same comparison
    random_only = write_run(tmp_path / 'd2a', [1], {k: v for k, v in changed.items() if k[0] == 'random'},
                            duration=0.2, patterns=['random'])
    stride_only = write_run(tmp_path / 'd2b', [1], {k: v for k, v in changed.items() if k[0] == 'stride-4'},
                            duration=0.2, patterns=['stride-4'])
    split = rates.stability([rates.load(short)], [rates.load(random_only), rates.load(stride_only)])
    assert split['cells'] == check['cells'] and split['runs'] == [[short], [random_only, stride_only]]
    # a scheme rerun at 2D without its reference: compared by its share of the line alone
    alone = write_run(tmp_path / 'd2c', [1], {('stride-4', 'twolevel', 1): changed[('stride-4', 'twolevel', 1)]},
                      duration=0.2, patterns=['stride-4'], schemes=['twolevel'])
    (twolevel,) = rates.stability([rates.load(short)], [rates.load(alone)])['cells']
    assert twolevel['pct_of_line_diff'] == pytest.approx(-4.0) and twolevel['pct_of_reference_diff'] is None


@pytest.mark.parametrize('other, message', [
    ({'duration': 0.3}, 'at twice the duration'), ({'duration': 0.2, 'omit': 0.1}, 'at twice the duration'),
    ({'duration': 0.2, 'min_rto_ms': 200.0}, 'differ in min_rto_ms')])
def test_doubled_duration_check_needs_the_same_run_twice_as_long(tmp_path, other, message):
    short = write_run(tmp_path / 'd', [1], aggregates())
    long = write_run(tmp_path / 'd2', [1], aggregates(), **other)
    with pytest.raises(rates.RatesError, match=message):
        rates.stability([rates.load(short)], [rates.load(long)])


def test_min_rto_check_compares_the_same_seeds_with_another_rto_only(tmp_path):
    timeouts = aggregates()
    timeouts[('random', 'nonblocking', 1)] = 7200.0  # 45% of line; the schemes' shares of it rise
    linux = write_run(tmp_path / 'linux', [1], timeouts, min_rto_ms=200.0)
    chosen = write_run(tmp_path / 'chosen', [1], aggregates())
    check = rates.min_rto_check([rates.load(linux)], [rates.load(chosen)])
    assert check['min_rto_ms'] == [200.0, 10.0]
    line = rates.rto_line(check)
    assert 'carried 45.0% (Random), 80.0% (Stride(4)) of line rate with 200 ms' in line
    assert 'and 80.0%, 80.0% with 10 ms' in line
    assert "a scheme's share of it reached 177.8% with 200 ms (Random, scheduler)" in line
    with pytest.raises(rates.RatesError, match='same minimum RTO'):
        rates.min_rto_check([rates.load(chosen)], [rates.load(chosen)])
    other = write_run(tmp_path / 'other', [1], aggregates(), min_rto_ms=200.0, period_s=0.02)
    with pytest.raises(rates.RatesError, match='differ in period_s'):
        rates.min_rto_check([rates.load(other)], [rates.load(chosen)])


def test_every_table_needs_its_check_and_the_file_renders(tmp_path):
    one = write_run(tmp_path / 'a', [1], aggregates())
    two = write_run(tmp_path / 'b', [2], aggregates())
    long = write_run(tmp_path / 'c', [1], aggregates(scale=0.98), duration=0.2)
    slow_rates = {key: mbps / 100 * (1.0 if key[1] == 'nonblocking' else 0.9) for key, mbps in aggregates().items()}
    slow = write_run(tmp_path / 's', [1, 2], slow_rates, bw=10.0, duration=10, omit=3, min_rto_ms=200.0, period_s=None)
    with pytest.raises(rates.RatesError, match='no doubled-duration check for t'):
        rates.build([('t', [one, two])], {}, None)
    with pytest.raises(rates.RatesError, match='checks of no table: u'):
        rates.build([('t', [one, two])], {'t': ([one], [long]), 'u': ([one], [long])}, None)
    linux = write_run(tmp_path / 'linux', [1], aggregates(), min_rto_ms=200.0)
    data = rates.build([('t', [one, two])], {'t': ([one], [long])}, slow, {'t': ([linux], [one])})
    text = rates.markdown(json.loads(json.dumps(data)))  # as read back from the file
    rows = {line.split(' | ')[0]: line for line in text.splitlines() if line.startswith('| ')}
    assert rows['| Stride(4)'].split(' | ')[1:4] == ['85.0 (80.0-90.0)', '62.5 (50.0-75.0)', '100.0']
    assert '100.0 / 100.0 / 100.0' in rows['| Stride(4)']  # the paper's figures
    assert rows['| Random'].endswith('| 56.2 / 90.0 |')  # the 10 Mbit/s run's means
    assert 'seeds 1 2' in text and 'minimum RTO 10 ms' in text and 'polled every 0.01 s' in text
    assert 'the largest difference in a cell is 2.0 points of the reference (Random, scheduler)' in text
    assert 'The largest per scheme (points of the reference): twolevel 1.0, scheduler 2.0.' in text
    assert 'Minimum RTO (seed 1): the non-blocking reference carried 80.0% (Random)' in text
    # against 10 Mbit/s, where the schemes carried 0.9 times as much of the same reference: scheduler 100 - 90
    assert data['tables'][0]['against_slow']['largest'] == {'pattern': 'random', 'scheme': 'scheduler',
                                                            'metric': 'pct_of_reference', 'points': 10.0}
    assert 'the largest difference between a cell\'s means is +10.0 points (Random, scheduler, of the reference)' \
        in text
    assert 'None' not in text and '12 runs, 138 s' in text
    assert 'the doubled-duration check 6 runs, 66 s' in text  # the runs at 2D only


def test_command_writes_the_file(tmp_path, capsys):
    one = write_run(tmp_path / 'a', [1], aggregates())
    long = write_run(tmp_path / 'c', [1], aggregates(), duration=0.2)
    out = tmp_path / 'out' / 'table.json'
    rates.main(['--table', 'k4', one, '--stability', 'k4', one, long, '--out', str(out)])
    data = json.loads(out.read_text())
    assert data['tables'][0]['stability']['largest_pct_of_reference_diff']['points'] == 0.0
    assert 'written to' in capsys.readouterr().out
    with pytest.raises(SystemExit):
        rates.main(['--table', 'k4', one, '--stability', 'k4', long, one, '--out', str(out)])
    halves = [write_run(tmp_path / pattern, [1], {k: v for k, v in aggregates().items() if k[0] == pattern},
                        duration=0.2, patterns=[pattern]) for pattern in CONFIG['patterns']]
    rates.main(['--table', 'k4', one, '--stability', 'k4', one, ','.join(halves), '--out', str(out)])
    assert json.loads(out.read_text())['tables'][0]['stability']['runs'] == [[one], halves]
