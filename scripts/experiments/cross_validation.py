"""One experiment on both backends, compared cell by cell: the emulated
runs (Mininet, OVS, the hosts' Linux TCP) beside the simulated ones (ns-3
switches running the controller's exported rules) for the same settings
and seeds, so the same flows.

    python -m scripts.experiments.cross_validation EMULATED_RUN SIMULATED_RUN [--out results/cross_validation]

Bisection runs (results.json): Table 2 per pattern and scheme. A cell is
judged only where the emulator was faithful in at least two runs (its
fidelity verdict; limited runs are left out of its means, as in its own
table). It agrees when the simulated mean lies within the emulator's
run-to-run spread: the range of its per-seed percentages. Writes
bisection-<bw>mbps.json.

Workload runs (summary.json and flows.csv): the FCT slowdown per scheme,
load (those both ran) and flow-size bucket. One seed gives no run-to-run
spread, so a cell's spread is its flows': it is judged where the emulator
kept its fidelity verdict for the run and the cell has at least
MIN_JUDGED_FLOWS flows, and agrees when the simulated median lies within
the distribution-free 95% confidence interval of the emulated median (order
statistics of the emulated flows' slowdowns). Beside it, for the flows
that finished on both, the median per-flow ratio (simulated over emulated)
of the FCT and of the ideal FCT: the slowdowns' ratio is the one over the
other. Writes workload-<bw>mbps.json.

docs/simulator.md renders both (scripts/docs.py).
"""
import argparse
import math
import os

from scripts.experiments.bisection_report import summarize
from scripts.experiments.patterns import label
from scripts.results import write_result_file
from scripts.runner.records import load_results

SAME_SETTINGS = ('k', 'bw', 'queue', 'duration', 'omit')
MIN_FAITHFUL_RUNS = 2  # a spread needs two runs
WORKLOAD_SETTINGS = ('k', 'bw', 'queue', 'cdf', 'seconds', 'pattern', 'seeds')
EMULATOR_FIGURES = ('ok', 'daemon_busy_pct_median', 'probe_rtt_ms_median', 'base_rtt_ms')
# the fewest flows whose median has a distribution-free 95% interval: 2 x 0.5^6 < 0.05
MIN_JUDGED_FLOWS = 6


class CrossValidationError(ValueError):
    """The two runs are not one experiment on two backends."""


def _check_backends_and(emulated, simulated, settings):
    """Raise CrossValidationError unless the configs are an emulated and a
    simulated run's with the same ``settings``."""
    if emulated['backend'] != 'emulator' or simulated['backend'] != 'sim':
        raise CrossValidationError('need an emulated run and a simulated run, got backends %s and %s'
                                   % (emulated['backend'], simulated['backend']))
    differing = [key for key in settings if emulated.get(key) != simulated.get(key)]
    if differing:
        raise CrossValidationError('the runs differ in %s' % ', '.join(
            '%s (%s against %s)' % (key, emulated.get(key), simulated.get(key)) for key in differing))


def check_pair(emulated, simulated):
    """Raise CrossValidationError unless ``emulated`` and ``simulated``
    (results.json configs) ran the same experiment on the two backends."""
    _check_backends_and(emulated, simulated, SAME_SETTINGS)
    if emulated['seeds'] != simulated['seeds']:
        raise CrossValidationError('the runs used different seeds: %s against %s'
                                   % (emulated['seeds'], simulated['seeds']))


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
             'emulated `%s`, simulated `%s` (hosts\' send queues %s). Schemes: %% of the non-blocking reference '
             'of the same backend, '
             'pattern and seed (mean over the seeds; the emulator\'s limited runs left out); the reference: '
             '%% of line rate. "agrees": the simulated mean within the emulator\'s per-seed range; judged where '
             'the emulator kept at least %d faithful runs. %d of %d judged cells agree.'
             % (config['k'], config['bw'], config['queue'], config['duration'], config['omit'],
                ' '.join(map(str, config['seeds'])), result['emulated_run'], result['simulated_run'],
                config['simulated_sender_queue'], MIN_FAITHFUL_RUNS, agreeing, judged),
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


def check_workload_pair(emulated, simulated):
    """Raise CrossValidationError unless the workload runs' configs
    (summary.json) drew the same flows on the two backends."""
    _check_backends_and(emulated, simulated, WORKLOAD_SETTINGS)
    if not set(simulated['loads']) & set(emulated['loads']):
        raise CrossValidationError('no load in both runs: %s against %s' % (emulated['loads'], simulated['loads']))


def median_interval(values, confidence=0.95):
    """The distribution-free ``confidence`` interval of the median of
    ``values`` (order statistics: the j-th smallest and largest, j the
    largest rank the binomial(n, 1/2) tail leaves under (1 - confidence)/2);
    None for too few values."""
    ordered = sorted(values)
    n, tail, rank = len(ordered), 0.0, 0
    while rank < n:
        tail += math.comb(n, rank) / 2 ** n  # P(fewer than rank + 1 of n below the median)
        if tail > (1 - confidence) / 2:
            break
        rank += 1
    if rank == 0:
        return None
    return ordered[rank - 1], ordered[n - rank]


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _runs_flows(rows):
    """{(scheme, load as in the summary, seed): [row, ...] in flow order}."""
    runs = {}
    for row in rows:
        runs.setdefault((row['scheme'], '%g' % row['load'], row['seed']), []).append(row)
    return runs


def _same_flow(a, b):
    return (a['src'], a['dst'], a['size_bytes']) == (b['src'], b['dst'], b['size_bytes'])


def _paired(emulated_runs, simulated_runs, scheme, load, seeds):
    """(emulated row, simulated row) of each flow of ``scheme`` at ``load``,
    every seed's (_runs_flows); CrossValidationError if they differ."""
    pairs = []
    for seed in seeds:
        emu_run, sim_run = emulated_runs.get((scheme, load, seed), []), simulated_runs.get((scheme, load, seed), [])
        if len(emu_run) != len(sim_run) or not all(map(_same_flow, emu_run, sim_run)):
            raise CrossValidationError('%s at load %s, seed %s: the runs did not draw the same flows'
                                       % (scheme, load, seed))
        pairs += zip(emu_run, sim_run)
    return pairs


def small_flow_paths(emulated, emulated_rows, simulated, simulated_rows):
    """Per scheme, load and path length (switches crossed), the flows below
    100 KB that finished on both: the median FCT and ideal FCT of each
    backend and the median per-flow difference of the FCTs (emulated minus
    simulated), in ms (pure)."""
    from scripts.experiments.workload_report import BUCKETS
    from topologies.fattree import FatTree
    check_workload_pair(emulated['config'], simulated['config'])
    topo = FatTree(emulated['config']['k'])
    emulated_runs, simulated_runs = _runs_flows(emulated_rows), _runs_flows(simulated_rows)
    paths = []
    for scheme in emulated['config']['schemes']:
        for load in emulated['config']['loads']:
            if load not in simulated['config']['loads']:
                continue
            by_length = {}
            for e, s in _paired(emulated_runs, simulated_runs, scheme, '%g' % load, emulated['config']['seeds']):
                if e['size_bytes'] < BUCKETS[0][2] and e['fct_s'] is not None and s['fct_s'] is not None:
                    switches = 1 if scheme == 'nonblocking' else topo.switches_between(e['src'], e['dst'])
                    by_length.setdefault(switches, []).append((e, s))
            for switches, pairs in sorted(by_length.items()):
                def ms(values):
                    return round(1e3 * _median(values), 1)
                paths.append({'scheme': scheme, 'load': load, 'switches': switches, 'flows': len(pairs),
                              'emulated_fct_p50_ms': ms([e['fct_s'] for e, _ in pairs]),
                              'simulated_fct_p50_ms': ms([s['fct_s'] for _, s in pairs]),
                              'difference_p50_ms': ms([e['fct_s'] - s['fct_s'] for e, s in pairs]),
                              'emulated_ideal_p50_ms': ms([e['ideal_fct_s'] for e, _ in pairs]),
                              'simulated_ideal_p50_ms': ms([s['ideal_fct_s'] for _, s in pairs])})
    return paths


def compare_workload(emulated, emulated_rows, simulated, simulated_rows):
    """Rows, one per (scheme, load, bucket or 'all') both runs hold, in the
    emulated run's scheme order (pure). ``emulated`` and ``simulated`` are
    the runs' summary.json, ``*_rows`` their flows.csv rows
    (workload_report.flow_rows). CrossValidationError if a run's flows are
    not the other's."""
    from scripts.experiments.workload_report import bucket_of, limited
    check_workload_pair(emulated['config'], simulated['config'])
    loads = ['%g' % load for load in emulated['config']['loads'] if load in simulated['config']['loads']]
    limited_runs = {(run['scheme'], '%g' % run['load']) for run in emulated['runs'] if limited(run)}
    emulated_runs, simulated_runs = _runs_flows(emulated_rows), _runs_flows(simulated_rows)
    result = []
    for scheme in emulated['config']['schemes']:
        for load in loads:
            emu_cells = emulated['schemes'].get(scheme, {}).get(load)
            sim_cells = simulated['schemes'].get(scheme, {}).get(load)
            if emu_cells is None or sim_cells is None:
                continue
            pairs = _paired(emulated_runs, simulated_runs, scheme, load, emulated['config']['seeds'])
            for bucket in emulated['buckets'] + ['all']:
                emu, sim = emu_cells.get(bucket), sim_cells.get(bucket)
                if not emu or not sim:
                    continue
                cell = [(e, s) for e, s in pairs if bucket == 'all' or bucket_of(e['size_bytes']) == bucket]
                interval = median_interval([e['slowdown'] for e, _ in cell if e['slowdown'] is not None])
                both = [(e, s) for e, s in cell if e['fct_s'] is not None and s['fct_s'] is not None]
                faithful = (scheme, load) not in limited_runs
                judged = faithful and emu['flows'] >= MIN_JUDGED_FLOWS and interval is not None
                result.append({
                    'scheme': scheme, 'load': float(load), 'bucket': bucket, 'emulator_faithful': faithful,
                    'emulated': emu, 'simulated': sim,
                    'emulated_p50_interval': None if interval is None else [round(v, 3) for v in interval],
                    'paired_flows': len(both),
                    'fct_ratio_p50': round(_median([s['fct_s'] / e['fct_s'] for e, s in both]), 3) if both else None,
                    'ideal_ratio_p50': (round(_median([s['ideal_fct_s'] / e['ideal_fct_s'] for e, s in both]), 3)
                                        if both else None),
                    'agrees': interval[0] <= sim['p50'] <= interval[1] if judged else None})
    return result


def workload_markdown(result):
    """The workload comparison table of a written result (pure)."""
    config = result['config']
    judged, agreeing = tally(result['rows'])

    def stats(cell):
        return '%.2f / %.2f / %.2f (%d)' % (cell['mean'], cell['p50'], cell['p99'], cell['flows'])
    lines = ['k=%d fat-tree, %g Mbit/s links, %d-packet queues, %s flow sizes, %s, %g s of arrivals, seed(s) %s; '
             'emulated `%s`, simulated `%s`. Cells: FCT slowdown (over each backend\'s own ideal FCT) mean / '
             'median / 99th percentile (flows). "FCT" and "ideal": the median over the flows finished on both of '
             'the simulated over the emulated. "agrees": the simulated median within the distribution-free 95%% '
             'interval of the emulated median (shown); judged where the emulator run was faithful and the cell '
             'holds at least %d flows. %d of %d judged cells agree.'
             % (config['k'], config['bw'], config['queue'], config['cdf'], config['pattern'], config['seconds'],
                ' '.join(map(str, config['seeds'])), result['emulated_run'], result['simulated_run'],
                MIN_JUDGED_FLOWS, agreeing, judged),
             '',
             '| scheme | load | flows | emulated | emulated median, 95% interval | simulated | FCT sim / emu | '
             'ideal sim / emu | agrees |',
             '|---|---|---|---|---|---|---|---|---|']
    for r in result['rows']:
        interval = r['emulated_p50_interval']
        agrees = {True: 'yes', False: '**no**', None: '-'}[r['agrees']]
        lines.append('| %s | %g | %s | %s%s | %s | %s | %s | %s | %s |' % (
            r['scheme'], r['load'], r['bucket'], stats(r['emulated']), '' if r['emulator_faithful'] else ' LIMITED',
            '-' if interval is None else '%.2f-%.2f' % tuple(interval), stats(r['simulated']),
            '-' if r['fct_ratio_p50'] is None else '%.2f' % r['fct_ratio_p50'],
            '-' if r['ideal_ratio_p50'] is None else '%.2f' % r['ideal_ratio_p50'], agrees))
    lines += ['', 'Flows below 100 KB that finished on both, by the switches on their path (the non-blocking '
              'reference: its one switch): median FCT and ideal FCT of each backend, and the median per-flow '
              'difference of the FCTs, in ms.', '',
              '| scheme | load | switches | flows | FCT emulated | FCT simulated | emulated - simulated, per flow | '
              'ideal emulated | ideal simulated |', '|---|---|---|---|---|---|---|---|---|']
    for p in result['small_flow_paths']:
        lines.append('| %s | %g | %d | %d | %.1f | %.1f | %+.1f | %.1f | %.1f |' % (
            p['scheme'], p['load'], p['switches'], p['flows'], p['emulated_fct_p50_ms'], p['simulated_fct_p50_ms'],
            p['difference_p50_ms'], p['emulated_ideal_p50_ms'], p['simulated_ideal_p50_ms']))
    return '\n'.join(lines)


def _bisection(emulated, simulated):
    """(the result's entries, its table function) of two bisection runs' results."""
    rows = compare(emulated['config'], emulated['runs'], simulated['config'], simulated['runs'])
    config = {key: emulated['config'][key] for key in SAME_SETTINGS}
    config['seeds'] = emulated['config']['seeds']
    config['simulated_sender_queue'] = simulated['config']['sender_queue']
    return {'config': config, 'rows': rows}, markdown


def _workload(emulated, simulated):
    """(the result's entries, its table function) of two workload runs' results."""
    emulated_rows, simulated_rows = emulated['rows'], simulated['rows']
    rows = compare_workload(emulated, emulated_rows, simulated, simulated_rows)
    config = {key: emulated['config'][key] for key in WORKLOAD_SETTINGS}
    config['loads'] = [load for load in emulated['config']['loads'] if load in simulated['config']['loads']]
    for key in ('control_delay_ms', 'min_rto_ms', 'link_delay_us'):
        config['simulated_' + key] = simulated['config'].get(key)
    # each run compared: what the emulator's monitor saw (its fidelity figures), the simulated idle RTTs
    idle_rtts = {(run['scheme'], run['load']): run.get('idle_rtt_ms') for run in simulated['runs']}
    runs = [dict({key: run['fidelity'].get(key) for key in EMULATOR_FIGURES}, scheme=run['scheme'], load=run['load'],
                 simulated_idle_rtt_ms=idle_rtts.get((run['scheme'], run['load'])))
            for run in emulated['runs'] if run['load'] in config['loads']]
    return {'config': config, 'rows': rows,
            'small_flow_paths': small_flow_paths(emulated, emulated_rows, simulated, simulated_rows),
            'runs': runs}, workload_markdown


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('emulated', help='an emulated bisection (results.json) or workload (summary.json) run '
                                         'directory')
    parser.add_argument('simulated', help='the simulated run of the same experiment')
    parser.add_argument('--out', default='results/cross_validation')
    args = parser.parse_args(argv)
    try:
        emulated, simulated = load_results(args.emulated), load_results(args.simulated)
        kind = emulated['config']['experiment']
        if simulated['config']['experiment'] != kind:
            raise CrossValidationError('%s is a %s, %s a %s' % (args.emulated, kind, args.simulated,
                                                                simulated['config']['experiment']))
        entries, table = (_workload if kind == 'workload' else _bisection)(emulated, simulated)
    except (ValueError, KeyError) as error:  # CrossValidationError and RecordError are ValueErrors
        parser.error('cannot compare %s with %s: %s' % (args.emulated, args.simulated, error))
    result = dict(entries, emulated_run=os.path.normpath(args.emulated),
                  simulated_run=os.path.normpath(args.simulated))
    write_result_file(os.path.join(args.out, '%s-%gmbps.json' % (kind, result['config']['bw'])), result, table)


if __name__ == '__main__':
    main()
