"""One bisection experiment on both backends, compared cell by cell: the
emulated Table 2 (Mininet, OVS, the hosts' Linux TCP) beside the simulated
one (ns-3 switches running the controller's exported rules) for the same k,
link rate, patterns, schemes and seeds, so the same flows.

    python -m scripts.fattree.cross_validation EMULATED_RUN SIMULATED_RUN [--out results/cross_validation]

A cell is judged only where the emulator was faithful in at least two runs
(its fidelity verdict; limited runs are left out of its means, as in its own
table). It agrees when the simulated mean lies within the emulator's
run-to-run spread: the range of its per-seed percentages. Writes
bisection-<bw>mbps.json; docs/simulator.md renders it (scripts/docs.py).
"""
import argparse
import json
import os

from scripts.fattree.bisection_report import backend, config_seeds, summarize
from scripts.fattree.patterns import label

SAME_SETTINGS = ('k', 'bw', 'queue', 'duration', 'omit')
MIN_FAITHFUL_RUNS = 2  # a spread needs two runs


class CrossValidationError(ValueError):
    """The two runs are not one experiment on two backends."""


def check_pair(emulated, simulated):
    """Raise CrossValidationError unless ``emulated`` and ``simulated``
    (results.json configs) ran the same experiment on the two backends."""
    if backend(emulated) != 'emulator' or backend(simulated) != 'sim':
        raise CrossValidationError('need an emulated run and a simulated run, got backends %s and %s'
                                   % (backend(emulated), backend(simulated)))
    differing = [key for key in SAME_SETTINGS if emulated.get(key) != simulated.get(key)]
    if differing:
        raise CrossValidationError('the runs differ in %s' % ', '.join(
            '%s (%s against %s)' % (key, emulated.get(key), simulated.get(key)) for key in differing))
    if config_seeds(emulated) != config_seeds(simulated):
        raise CrossValidationError('the runs used different seeds: %s against %s'
                                   % (config_seeds(emulated), config_seeds(simulated)))


def compare(emulated_config, emulated_runs, simulated_config, simulated_runs):
    """Rows, one per (pattern, scheme) both runs hold, in the emulated
    run's order (pure)."""
    check_pair(emulated_config, simulated_config)
    emulated = summarize(emulated_runs, emulated_config)
    simulated = summarize(simulated_runs, simulated_config)
    rows = []
    for pattern in emulated_config['patterns']:
        for scheme in emulated_config['schemes']:
            emu, sim = emulated.get((pattern, scheme)), simulated.get((pattern, scheme))
            if emu is None or sim is None:
                continue
            metric = 'pct_of_line_rate' if scheme == 'nonblocking' else 'pct_of_nonblocking'
            faithful_runs = emu['runs_total'] - emu['runs_limited']
            judged = faithful_runs >= MIN_FAITHFUL_RUNS and emu[metric] is not None
            low, high = ((emu['pct_of_nonblocking_min'], emu['pct_of_nonblocking_max'])
                         if metric == 'pct_of_nonblocking' else (None, None))
            row = {'pattern': pattern, 'scheme': scheme, 'metric': metric,
                   'emulated_pct': round(emu[metric], 1), 'emulated_faithful_runs': faithful_runs,
                   'emulated_runs': emu['runs_total'],
                   'emulated_min_pct': low if low is None else round(low, 1),
                   'emulated_max_pct': high if high is None else round(high, 1),
                   'simulated_pct': round(sim[metric], 1),
                   'difference_points': round(sim[metric] - emu[metric], 1),
                   'twolevel_fair_share_pct': round(emu['twolevel_fair_share_pct'], 1)}
            if metric == 'pct_of_nonblocking' and judged:
                row['agrees'] = low <= sim[metric] <= high
            else:  # the reference is each backend's own 100%; a cell without a spread is not judged
                row['agrees'] = None
            rows.append(row)
    return rows


def tally(rows):
    """(cells judged, cells agreeing)."""
    judged = [r for r in rows if r['agrees'] is not None]
    return len(judged), sum(1 for r in judged if r['agrees'])


def markdown(result):
    """The comparison table of a written result (pure)."""
    config = result['config']
    judged, agreeing = tally(result['rows'])
    lines = ['k=%d fat-tree, %g Mbit/s links, %d-packet queues, %d s flows after %d s left out, seeds %s; '
             'emulated `%s`, simulated `%s`. Schemes: %% of the non-blocking reference of the same backend, '
             'pattern and seed (mean over the seeds; the emulator\'s limited runs left out); the reference: '
             '%% of line rate. "agrees": the simulated mean within the emulator\'s per-seed range; judged where '
             'the emulator kept at least %d faithful runs. %d of %d judged cells agree.'
             % (config['k'], config['bw'], config['queue'], config['duration'], config['omit'],
                ' '.join(map(str, config['seeds'])), result['emulated_run'], result['simulated_run'],
                MIN_FAITHFUL_RUNS, agreeing, judged),
             '',
             '| pattern | scheme | emulated (range), faithful runs | simulated | sim - emu | 2L fair | agrees |',
             '|---|---|---|---|---|---|---|']
    for r in result['rows']:
        spread = '' if r['emulated_min_pct'] is None else ' (%.1f-%.1f)' % (r['emulated_min_pct'],
                                                                             r['emulated_max_pct'])
        agrees = {True: 'yes', False: '**no**', None: '-'}[r['agrees']]
        lines.append('| %s | %s | %.1f%s, %d/%d | %.1f | %+.1f | %s | %s |' % (
            label(r['pattern']), r['scheme'] + (' (% of line)' if r['metric'] == 'pct_of_line_rate' else ''),
            r['emulated_pct'], spread, r['emulated_faithful_runs'], r['emulated_runs'], r['simulated_pct'],
            r['difference_points'], '' if r['scheme'] == 'nonblocking' else '%.1f' % r['twolevel_fair_share_pct'],
            agrees))
    return '\n'.join(lines)


def _saved(run_dir):
    with open(os.path.join(run_dir, 'results.json')) as f:
        saved = json.load(f)
    return saved['config'], saved['runs']


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('emulated', help='an emulated bisection run directory (results.json)')
    parser.add_argument('simulated', help='the simulated run of the same experiment')
    parser.add_argument('--out', default='results/cross_validation')
    args = parser.parse_args(argv)
    try:
        emulated_config, emulated_runs = _saved(args.emulated)
        simulated_config, simulated_runs = _saved(args.simulated)
        rows = compare(emulated_config, emulated_runs, simulated_config, simulated_runs)
    except (OSError, ValueError, KeyError) as error:  # CrossValidationError is a ValueError
        parser.error('cannot compare %s with %s: %s' % (args.emulated, args.simulated, error))
    config = {key: emulated_config[key] for key in SAME_SETTINGS}
    config['seeds'] = config_seeds(emulated_config)
    result = {'config': config, 'emulated_run': os.path.normpath(args.emulated),
              'simulated_run': os.path.normpath(args.simulated), 'rows': rows}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, 'bisection-%gmbps.json' % config['bw'])
    with open(path, 'w') as f:
        json.dump(result, f, indent=1)
    print(markdown(result))
    print('written to %s' % path)


if __name__ == '__main__':
    main()
