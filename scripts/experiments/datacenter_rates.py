"""Table 2 at datacenter rates on the simulated backends: finished
bisection runs (``dcfabric bisection --backend sim`` or ``--backend
flow``, one directory per seed or several seeds in one) gathered into one
results file, beside a doubled-duration
rerun that shows whether the simulated time was long enough, the paper's
Table 2 and the same experiment at 10 Mbit/s.

    python -m scripts.experiments.datacenter_rates \\
        --table k4-1gbps RUN [RUN ...] --stability k4-1gbps RUN_AT_D RUN_AT_2D[,RUN_AT_2D ...] \\
        [--rto-check k4-1gbps RUN_LINUX_RTO RUN_TABLE_RTO] \\
        [--table k8-10gbps ... --stability k8-10gbps ...] \\
        --slow results/bisection/20261206-035811 --out results/sim/table2-1gbps.json

Every figure is read from the runs' results.json: per pattern and scheme
the mean and range over the seeds of the aggregate rate as a percentage of
the hosts' line rate and of the non-blocking reference for the same flows
and seed (the reference's own figure is of the line rate). The stability
check compares, cell by cell, a seed's run at duration D with its run at
2D (the same omit); the largest difference is in percentage points. A
minimum-RTO check compares, the same way, runs with Linux's 200 ms and with
the table's.

``markdown(data)`` is the table docs/simulator.md renders (scripts/docs.py).
Pure: reads files, writes one; no simulation.
"""
import argparse
import statistics

from scripts.experiments.bisection_report import PAPER, PAPER_SCHEMES
from scripts.experiments.patterns import label
from scripts.results import write_result_file
from scripts.runner.records import load_results

# what the runs of one table (and its stability pair) must share
SAME_SETTINGS = ('backend', 'k', 'bw', 'queue', 'duration', 'omit', 'min_rto_ms', 'control_delay_ms', 'period_s')
BACKENDS = ('sim', 'flow')
# Hedera (Al-Fares et al., NSDI'10): the same group's central scheduler on a
# flow-level simulation of an 8,192-host (k=32) fat-tree, beside that size's table
HEDERA = {'k': 32, 'pct_of_optimal': 96.0,
          'source': "Hedera (Al-Fares et al., NSDI'10): global first fit on a simulated 8,192-host fat-tree, "
                    '96% of optimal bisection bandwidth'}
REFERENCE = 'nonblocking'
# the schemes' columns in Table 2's order whichever run holds them (others after, as first met)
SCHEME_ORDER = ('nonblocking', 'twolevel', 'ecmp', 'classifier', 'scheduler')
DIGITS = 4  # kept in the file; the table shows one (rounding once, as the runs' own tables)


class RatesError(ValueError):
    """The runs given do not make one table: another backend, settings that
    differ, a seed twice, a scheme without its reference."""


def load(run_dir):
    """(run_dir, its results.json) of a finished run."""
    try:
        return run_dir, load_results(run_dir)
    except ValueError as err:  # RecordError names the file and what is wrong
        raise RatesError('%s is not a finished bisection run: %s' % (run_dir, err)) from None


def _settings(config):
    return dict({key: config.get(key) for key in SAME_SETTINGS}, sender_queue=config.get('sender_queue'))


def per_seed(saved_runs):
    """{(pattern, scheme): {seed: (% of line rate, % of reference or None)}}
    over the runs of ``saved_runs`` [(run_dir, results.json)], a scheme's
    reference the same pattern and seed's in any of them; RatesError unless
    they are simulated runs with the same settings and no seed twice."""
    measured, seen, first = {}, {}, None
    for run_dir, saved in saved_runs:
        config = saved['config']
        if config['backend'] not in BACKENDS:
            raise RatesError('%s ran on the %s: this table is a simulated backend\'s (%s)'
                             % (run_dir, config['backend'], ', '.join(BACKENDS)))
        if first is None:
            first = (run_dir, _settings(config))
        elif _settings(config) != first[1]:
            differing = sorted(k for k, v in _settings(config).items() if v != first[1][k])
            raise RatesError('%s and %s differ in %s' % (first[0], run_dir, ', '.join(differing)))
        seeds = config['seeds']
        for r in saved['runs']:
            key, seed = (r['pattern'], r['scheme']), seeds[r['rep']]
            if (key, seed) in seen:
                raise RatesError('seed %d of %s %s is in both %s and %s'
                                 % (seed, r['pattern'], r['scheme'], seen[(key, seed)], run_dir))
            seen[(key, seed)] = run_dir
            measured[(key, seed)] = (r['aggregate_mbps'], config['hosts'] * config['bw'])
    cells = {}
    for ((pattern, scheme), seed), (mbps, line) in measured.items():
        ref = measured.get(((pattern, REFERENCE), seed), (None,))[0]
        of_reference = None if scheme == REFERENCE or not ref else 100.0 * mbps / ref
        cells.setdefault((pattern, scheme), {})[seed] = (100.0 * mbps / line, of_reference)
    return cells


def _stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {'mean': round(statistics.mean(values), DIGITS), 'min': round(min(values), DIGITS),
            'max': round(max(values), DIGITS)}


def _order(saved_runs, key):
    out = []
    for _, saved in saved_runs:
        out += [v for v in saved['config'][key] if v not in out]
    return out


def _walls(saved_runs):
    walls = [r['ran_on']['wall_s'] for _, saved in saved_runs for r in saved['runs']]
    return {'runs': len(walls), 'total_s': round(sum(walls), 1),
            'per_run_min_s': min(walls) if walls else None, 'per_run_max_s': max(walls) if walls else None,
            'per_directory_s': {run_dir: round(sum(r['ran_on']['wall_s'] for r in saved['runs']), 1)
                                for run_dir, saved in saved_runs}}


def table(name, saved_runs):
    """One table's figures from its runs [(run_dir, results.json)]."""
    cells = per_seed(saved_runs)
    config = saved_runs[0][1]['config']
    patterns = _order(saved_runs, 'patterns')
    met = _order(saved_runs, 'schemes')
    schemes = sorted(met, key=lambda s: (SCHEME_ORDER.index(s) if s in SCHEME_ORDER else len(SCHEME_ORDER),
                                         met.index(s)))
    seeds = sorted({seed for by_seed in cells.values() for seed in by_seed})
    rows = []
    for pattern in patterns:
        for scheme in schemes:
            by_seed = cells.get((pattern, scheme))
            if not by_seed:
                continue
            rows.append({'pattern': pattern, 'scheme': scheme, 'seeds': sorted(by_seed),
                         'pct_of_line': _stats(v[0] for v in by_seed.values()),
                         'pct_of_reference': _stats(v[1] for v in by_seed.values())})
    return {'name': name, 'runs': [run_dir for run_dir, _ in saved_runs], 'backend': config['backend'],
            'k': config['k'], 'bw_mbps': config['bw'],
            'hosts': config['hosts'], 'queue_packets': config['queue'], 'duration_s': config['duration'],
            'omit_s': config['omit'], 'min_rto_ms': config.get('min_rto_ms'),
            'control_delay_ms': config.get('control_delay_ms'), 'period_s': config.get('period_s'),
            'sender_queue': config.get('sender_queue'),
            'seeds': seeds, 'patterns': patterns, 'schemes': schemes, 'machine': config.get('machine'),
            'wall': _walls(saved_runs), 'cells': rows}


def _names(saved_runs):
    return ', '.join(run_dir for run_dir, _ in saved_runs)


def paired(first, second, setting):
    """Cell by cell, runs of the same seeds (``first`` and ``second``, each
    [(run_dir, results.json)]) that differ in ``setting`` alone: each cell's
    figures in both and their difference in percentage points, the largest
    named. RatesError where another setting differs or no cell is in both."""
    a, b = first[0][1]['config'], second[0][1]['config']
    for key in SAME_SETTINGS:
        if key != setting and a.get(key) != b.get(key):
            raise RatesError('%s and %s differ in %s' % (first[0][0], second[0][0], key))
    at_a, at_b = per_seed(first), per_seed(second)
    rows = []
    for (pattern, scheme), by_seed in at_a.items():
        for seed, (line_a, ref_a) in sorted(by_seed.items()):
            if seed not in at_b.get((pattern, scheme), {}):
                continue
            line_b, ref_b = at_b[(pattern, scheme)][seed]
            rows.append({'pattern': pattern, 'scheme': scheme, 'seed': seed,
                         'pct_of_line': [round(line_a, DIGITS), round(line_b, DIGITS)],
                         'pct_of_line_diff': round(line_b - line_a, DIGITS),
                         # a cell whose reference ran at one setting only: its line rate alone compares
                         'pct_of_reference': None if None in (ref_a, ref_b) else [round(ref_a, DIGITS),
                                                                                  round(ref_b, DIGITS)],
                         'pct_of_reference_diff': None if None in (ref_a, ref_b) else round(ref_b - ref_a, DIGITS)})
    if not rows:
        raise RatesError('%s and %s have no seed, pattern and scheme in common' % (_names(first), _names(second)))

    def largest(metric):
        top = max((r for r in rows if r[metric] is not None), key=lambda r: abs(r[metric]), default=None)
        return top and {'points': abs(top[metric]), 'pattern': top['pattern'], 'scheme': top['scheme'],
                        'seed': top['seed']}
    return {'runs': [[d for d, _ in first], [d for d, _ in second]], setting: [a.get(setting), b.get(setting)],
            'wall': _walls(first + second), 'cells': rows,
            'largest_pct_of_line_diff': largest('pct_of_line_diff'),
            'largest_pct_of_reference_diff': largest('pct_of_reference_diff'),
            'largest_pct_of_reference_diff_by_scheme': {
                scheme: max(abs(r['pct_of_reference_diff']) for r in rows if r['scheme'] == scheme)
                for scheme in dict.fromkeys(r['scheme'] for r in rows if r['pct_of_reference_diff'] is not None)}}


def stability(short, long):
    """``paired`` for runs at duration D and the same seeds' runs at 2D
    (each [(run_dir, results.json)]). RatesError unless the second ran
    twice as long with the same omit."""
    a = short[0][1]['config']
    for run_dir, saved in long:
        b = saved['config']
        if b['duration'] != 2 * a['duration'] or b['omit'] != a['omit']:
            raise RatesError('%s (duration %g, omit %g) is not %s (duration %g, omit %g) at twice the duration'
                             % (run_dir, b['duration'], b['omit'], short[0][0], a['duration'], a['omit']))
    check = paired(short, long, 'duration')
    check['durations_s'] = check.pop('duration')
    check['omit_s'] = a['omit']
    check['wall'] = _walls(long)  # what the check added: the runs at D are the table's
    return check


def min_rto_check(linux, chosen):
    """``paired`` for the same seeds' runs with Linux's minimum RTO and
    with the one the table uses (the rest alike)."""
    check = paired(linux, chosen, 'min_rto_ms')
    if check['min_rto_ms'][0] == check['min_rto_ms'][1]:
        raise RatesError('%s and %s ran with the same minimum RTO' % (_names(linux), _names(chosen)))
    return check


def build(tables, stabilities, slow, rto_checks=None):
    """The results file: ``tables`` [(name, [run_dir, ...])], ``stabilities``
    {name: ([run_dir at D, ...], [run_dir at 2D, ...])}, ``slow`` the same
    experiment's run at 10 Mbit/s (or None), ``rto_checks`` {name: ([runs
    with Linux's minimum RTO], [runs with the table's])}. Every table needs
    its stability check."""
    rto_checks = rto_checks or {}
    missing = [name for name, _ in tables if name not in stabilities]
    unknown = sorted((set(stabilities) | set(rto_checks)) - {name for name, _ in tables})
    if missing or unknown:
        raise RatesError('; '.join(['no doubled-duration check for %s' % ', '.join(missing)] * bool(missing)
                                   + ['checks of no table: %s' % ', '.join(unknown)] * bool(unknown)))
    out = {'tables': [], 'paper': {'schemes': list(PAPER_SCHEMES),
                                   'pct_of_ideal': {p: list(v) for p, v in PAPER.items()},
                                   'source': 'Al-Fares et al. Table 2 (scripts/experiments/bisection_report.py PAPER)'}}
    for name, run_dirs in tables:
        entry = table(name, [load(d) for d in run_dirs])
        entry['stability'] = stability(*([load(d) for d in dirs] for dirs in stabilities[name]))
        if name in rto_checks:
            entry['min_rto_check'] = min_rto_check(*([load(d) for d in dirs] for dirs in rto_checks[name]))
        out['tables'].append(entry)
    if slow:
        out['slow'] = table('slow', [load(slow)])
        for entry in out['tables']:
            if entry['k'] == out['slow']['k']:
                entry['against_slow'] = against(entry, out['slow'])
    return out


def against(entry, slow):
    """Cell by cell, a table's means minus the slower run's (the same k,
    patterns and seeds), in percentage points, the largest named."""
    theirs = _lookup(slow)
    rows = []
    for c in entry['cells']:
        other = theirs.get((c['pattern'], c['scheme']))
        metric = _metric_of(c['scheme'])
        if other is None or c[metric] is None or other[metric] is None:
            continue
        rows.append({'pattern': c['pattern'], 'scheme': c['scheme'], 'metric': metric,
                     'points': round(c[metric]['mean'] - other[metric]['mean'], DIGITS)})
    top = max(rows, key=lambda r: abs(r['points']), default=None)
    return {'cells': rows, 'largest': top}


# --- Markdown ------------------------------------------------------------------------------------

def _cell(stats):
    if stats is None:
        return '-'
    if stats['min'] == stats['max']:
        return '%.1f' % stats['mean']
    return '%.1f (%.1f-%.1f)' % (stats['mean'], stats['min'], stats['max'])


def link_rate(mbps):
    """A link rate as the tables write it."""
    return '%g Gbit/s' % (mbps / 1000.0) if mbps >= 1000 else '%g Mbit/s' % mbps


def _metric_of(scheme):
    return 'pct_of_line' if scheme == REFERENCE else 'pct_of_reference'


def _lookup(entry):
    return {(c['pattern'], c['scheme']): c for c in entry['cells']}


def table_markdown(entry, paper, slow=None):
    """One table: pattern x scheme, the paper's figures, the 10 Mbit/s run's
    beside them where given, then its settings, stability and wall time."""
    cells = _lookup(entry)
    schemes = [s for s in entry['schemes'] if s != REFERENCE]
    slow_cells = _lookup(slow) if slow else {}
    header = (['pattern', 'non-blocking, % of line'] + schemes
              + ['paper, k=4 (%s)' % ' / '.join(paper['schemes'])]
              + (['%s (%s)' % (link_rate(slow['bw_mbps']), ' / '.join(schemes))] if slow else []))
    lines = ['| %s |' % ' | '.join(header), '|---' * len(header) + '|']
    for pattern in entry['patterns']:
        row = [label(pattern)] + [_cell(cells.get((pattern, s), {}).get(_metric_of(s)))
                                  for s in [REFERENCE] + schemes]
        figures = paper['pct_of_ideal'].get(pattern)
        row.append(' / '.join('%.1f' % v for v in figures) if figures else '-')
        if slow:
            row.append(' / '.join('-' if (pattern, s) not in slow_cells
                                  else '%.1f' % slow_cells[(pattern, s)]['pct_of_reference']['mean']
                                  for s in schemes))
        lines.append('| %s |' % ' | '.join(row))
    check = entry['stability']
    line_top, ref_top = check['largest_pct_of_line_diff'], check['largest_pct_of_reference_diff']
    machine = entry.get('machine') or {}
    caption = _settings_caption(entry)
    if entry['k'] == HEDERA['k']:
        caption += ' Beside it, %s.' % HEDERA['source']
    stable = (
        'Doubled duration (seed %s, %g s against %g s, `%s` against `%s`): the largest difference in a cell is '
        '%.1f points of the reference (%s, %s) and %.1f points of line rate (%s, %s).'
        % (' '.join(sorted({str(c['seed']) for c in check['cells']})), check['durations_s'][0],
           check['durations_s'][1], '`, `'.join(check['runs'][0]), '`, `'.join(check['runs'][1]),
           ref_top['points'], label(ref_top['pattern']), ref_top['scheme'],
           line_top['points'], label(line_top['pattern']), line_top['scheme']))
    by_scheme = check.get('largest_pct_of_reference_diff_by_scheme', {})
    if by_scheme:
        stable += ' The largest per scheme (points of the reference): %s.' % ', '.join(
            '%s %.1f' % (s, by_scheme[s]) for s in schemes if s in by_scheme)
    cost = ('Wall time: %d runs, %.0f s in all (%.1f-%.1f s a run); the doubled-duration check %d runs, %.0f s; '
            'on %s core(s) shared with other work (%s).'
            % (entry['wall']['runs'], entry['wall']['total_s'], entry['wall']['per_run_min_s'],
               entry['wall']['per_run_max_s'], check['wall']['runs'], check['wall']['total_s'],
               machine.get('cpu_count', '?'), machine.get('processor', 'processor not recorded')))
    slower = []
    if slow and entry.get('against_slow', {}).get('largest'):
        top = entry['against_slow']['largest']
        slower = ['Against %s: the largest difference between a cell\'s means is %+.1f points (%s, %s, of %s).'
                  % (link_rate(slow['bw_mbps']), top['points'], label(top['pattern']), top['scheme'],
                     'line rate' if top['metric'] == 'pct_of_line' else 'the reference')]
    notes = [stable] + ([rto_line(entry['min_rto_check'])] if 'min_rto_check' in entry else []) + slower + [cost]
    return '\n'.join([caption, '', *lines, '', '\n\n'.join(notes)])


def _settings_caption(entry):
    """What a table's runs were: the fabric, the backend's model and the schemes' timing."""
    polled = ('the app\'s default 1 s' if entry['period_s'] is None else '%g s' % entry['period_s'])
    common = ('seeds %s (one run each); runs %s. Schemes: %% of the non-blocking reference for the same flows and '
              'seed, mean (range) over the seeds; the reference: %% of line rate.'
              % (' '.join(map(str, entry['seeds'])), ', '.join('`%s`' % r for r in entry['runs'])))
    if entry.get('backend') == 'flow':
        return ('k=%d fat-tree, %s links, the flow-level model (max-min fair rates over the controller\'s rules; '
                'no TCP, queues or losses), %g s flows after %g s left out; %s The dynamic schemes polled every %s.'
                % (entry['k'], link_rate(entry['bw_mbps']), entry['duration_s'], entry['omit_s'], common, polled))
    return ('k=%d fat-tree, %s links, %d-packet queues, %g s flows after %g s left out; %s Hosts\' minimum RTO %g ms, '
            'send queues %s; the dynamic schemes polled every %s, their flow-mods applied %g ms after a poll or '
            'packet-in.'
            % (entry['k'], link_rate(entry['bw_mbps']), entry['queue_packets'], entry['duration_s'], entry['omit_s'],
               common, entry['min_rto_ms'], entry['sender_queue'], polled, entry['control_delay_ms']))


def rto_line(check):
    """What the minimum RTO the table uses changes, from the runs that ran
    with both: the reference's share of line rate per pattern, and how far
    a scheme's share of its reference went."""
    linux, chosen = check['min_rto_ms']
    references = [c for c in check['cells'] if c['scheme'] == REFERENCE]
    shares = [c for c in check['cells'] if c['pct_of_reference'] is not None]
    top = max(shares, key=lambda c: c['pct_of_reference'][0]) if shares else None
    return ('Minimum RTO (seed %s): the non-blocking reference carried %s of line rate with %g ms (`%s`) and %s with '
            '%g ms (`%s`)%s.'
            % (' '.join(sorted({str(c['seed']) for c in check['cells']})),
               ', '.join('%.1f%% (%s)' % (c['pct_of_line'][0], label(c['pattern'])) for c in references),
               linux, '`, `'.join(check['runs'][0]), ', '.join('%.1f%%' % c['pct_of_line'][1] for c in references),
               chosen, '`, `'.join(check['runs'][1]),
               '' if top is None else '; a scheme\'s share of it reached %.1f%% with %g ms (%s, %s)'
               % (top['pct_of_reference'][0], linux, label(top['pattern']), top['scheme'])))


def markdown(data):
    """Every table of the results file, with the paper's source and the
    slower run named once."""
    slow = data.get('slow')
    parts = [table_markdown(entry, data['paper'], slow if slow and slow['k'] == entry['k'] else None)
             for entry in data['tables']]
    note = 'Paper: %s.' % data['paper']['source']
    if slow:
        note += (' %s: the same experiment at %s on the simulator (`%s`, seeds %s, %g s flows after %g s, minimum '
                 'RTO %g ms), schemes\' means as %% of its own reference.'
                 % (link_rate(slow['bw_mbps']), link_rate(slow['bw_mbps']), ', '.join(slow['runs']),
                    ' '.join(map(str, slow['seeds'])), slow['duration_s'], slow['omit_s'], slow['min_rto_ms']))
    return '\n\n'.join(parts + [note])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--table', nargs='+', action='append', required=True, metavar=('NAME', 'RUN'),
                        help='a table\'s name and its runs (directories under results/bisection)')
    parser.add_argument('--stability', nargs=3, action='append', required=True,
                        metavar=('NAME', 'RUNS_AT_D', 'RUNS_AT_2D'),
                        help='a table\'s doubled-duration check: runs (comma-separated) and the same seeds\' at '
                             'twice the duration')
    parser.add_argument('--rto-check', nargs=3, action='append', default=[],
                        metavar=('NAME', 'RUNS_LINUX_RTO', 'RUNS_TABLE_RTO'),
                        help='a table\'s runs (comma-separated) of the same seeds with Linux\'s minimum RTO and '
                             'with its own')
    parser.add_argument('--slow', help='the same experiment at 10 Mbit/s on the simulator, for comparison')
    parser.add_argument('--out', default='results/sim/table2-1gbps.json')
    args = parser.parse_args(argv)
    for spec in args.table:
        if len(spec) < 2:
            parser.error('--table needs a name and at least one run, got %s' % ' '.join(spec))
    try:
        data = build([(spec[0], spec[1:]) for spec in args.table],
                     {name: (d.split(','), d2.split(',')) for name, d, d2 in args.stability}, args.slow,
                     {name: (a.split(','), b.split(',')) for name, a, b in args.rto_check})
    except RatesError as err:
        parser.exit(2, 'error: %s\n' % err)
    write_result_file(args.out, data, markdown)


if __name__ == '__main__':
    main()
