"""The bisection experiment's results: the summary per pattern and scheme
(pure arithmetic over the runs), several finished runs merged into one,
the printed table, CSV/JSON/Markdown files and the plot."""
import csv
import json
import os
import statistics

from controller.fattree.twolevel import all_tables
from scripts.emulator.fidelity import run_faithful, verdict_cell
from scripts.experiments.fair_share import two_level_fair_share
from scripts.experiments.patterns import label, seeded
from scripts.runner.records import RESULTS_SCHEMA
from topologies.fattree import FatTree

# The paper's Table 2 (k=4, percent of ideal bisection bandwidth): Two-Level
# Table, Flow Classification, Flow Scheduling, for the rows the issue quotes.
PAPER = {'random': (75.0, 76.3, 93.5), 'stride-1': (100.0, 100.0, 100.0),
         'stride-2': (100.0, 100.0, 99.5), 'stride-4': (100.0, 100.0, 100.0),
         'stride-8': (100.0, 100.0, 99.9), 'sameid-outgoing': (38.5, 75.4, 87.4)}
PAPER_SCHEMES = ('twolevel', 'classifier', 'scheduler')


# what runs must share to be summarized together (seeds and patterns are united)
SAME_SETTINGS = ('k', 'bw', 'queue', 'duration', 'omit', 'schemes')
# and what simulated runs must share beside them, carried into the merged configuration
SIM_SETTINGS = ('min_rto_ms', 'control_delay_ms', 'period_s', 'flowlet_timeout_us')


def merge(saved_runs):
    """One configuration and run list from several finished runs
    [(run_dir, their results.json)] with the same SAME_SETTINGS: seeds
    and patterns united in the order given, each run's repetition index
    shifted onto the united seed list, the directories recorded as
    'summarized_from'. ValueError names a setting that differs or a
    seed run in two of them."""
    first_dir, first = saved_runs[0]
    same = SAME_SETTINGS + (tuple(key for key in SIM_SETTINGS if key in first['config']) + ('sender_queue',)
                            if first['config']['backend'] == 'sim' else ())

    def settings(config):
        return {key: config.get(key) for key in same}

    config = dict(settings(first['config']), hosts=first['config'].get('hosts'))
    config.update(experiment=first['config']['experiment'], seeds=[], patterns=[], summarized_from=[],
                  backend=first['config']['backend'])
    runs, seen = [], {}
    for run_dir, saved in saved_runs:
        if saved['config']['backend'] != first['config']['backend']:
            raise ValueError('%s ran on the %s, %s on the %s: runs of one backend are summarized together'
                             % (run_dir, saved['config']['backend'], first_dir, first['config']['backend']))
        for key, value in settings(saved['config']).items():
            if value != config[key]:
                raise ValueError('%s ran with %s %r, %s with %r: only runs with the same %s are summarized '
                                 'together' % (run_dir, key, value, first_dir, config[key],
                                               ', '.join(settings(first['config']))))
        seeds = saved['config']['seeds']
        for seed in seeds:
            if seed in seen:
                raise ValueError('seed %d was run in both %s and %s: summarize one of them (for repeats of '
                                 'a seed see scripts.fattree.classifier_difference)' % (seed, seen[seed], run_dir))
            seen[seed] = run_dir
        offset = len(config['seeds'])
        config['seeds'] += seeds
        config['patterns'] += [p for p in saved['config']['patterns'] if p not in config['patterns']]
        config['summarized_from'].append({'run': run_dir, 'seeds': seeds, 'started': saved['config'].get('started')})
        runs += [dict(r, rep=r['rep'] + offset) for r in saved['runs']]
    return config, runs


def summarize(runs, config):
    """{(pattern, scheme): {...}} with the percentage of the non-blocking
    reference (same pattern and repetition) and of n x link rate."""
    line_rate = config['hosts'] * config['bw']
    seeds = config['seeds']
    reference = {(r['pattern'], r['rep']): r['aggregate_mbps']
                 for r in runs if r['scheme'] == 'nonblocking'}
    groups = {}
    for r in runs:
        groups.setdefault((r['pattern'], r['scheme']), []).append(r)
    topo = FatTree(config['k'])
    tables = all_tables(topo)
    # (pattern, seed) -> its host pairs as a run recorded them; a record that
    # kept only its aggregate has them drawn again from the seed (minutes at k=48)
    pairs = {}
    for r in runs:
        key = (r['pattern'], seeds[r['rep']])
        if not pairs.get(key):
            pairs[key] = [(f['src'], f['dst']) for f in r.get('flows') or ()]
    model = {}
    for (pattern, seed), recorded in sorted(pairs.items()):
        model.setdefault(pattern, []).append(
            two_level_fair_share(topo, recorded or seeded(pattern, topo, seed), tables))
    model = {pattern: statistics.mean(shares) for pattern, shares in model.items()}
    summary = {}
    for (pattern, scheme), all_runs in groups.items():
        # a run the emulator limited is left out, unless every run was (then the cell is flagged)
        limited = [r for r in all_runs if not run_faithful(r)]
        rs = [r for r in all_runs if run_faithful(r)] or all_runs
        of_ref = [100.0 * r['aggregate_mbps'] / reference[(pattern, r['rep'])]
                  for r in rs if (pattern, r['rep']) in reference]
        of_line = [100.0 * r['aggregate_mbps'] / line_rate for r in rs]
        summary[(pattern, scheme)] = {
            'pattern': pattern, 'scheme': scheme, 'reps': len(rs),
            'seeds': ' '.join(str(seeds[r['rep']]) for r in rs),
            'pct_of_nonblocking': statistics.mean(of_ref) if of_ref else None,
            'pct_of_nonblocking_std': statistics.stdev(of_ref) if len(of_ref) > 1 else 0.0,
            'pct_of_nonblocking_min': min(of_ref) if of_ref else None,
            'pct_of_nonblocking_max': max(of_ref) if of_ref else None,
            'pct_of_line_rate': statistics.mean(of_line),
            'twolevel_fair_share_pct': model[pattern],
            'aggregate_mbps': statistics.mean(r['aggregate_mbps'] for r in rs),
            'cpu_busy_pct_max': max((r.get('cpu_busy_pct') for r in rs if 'cpu_busy_pct' in r), default=None),
            'ovs_vswitchd_cpu_pct_max': max((r.get('ovs_vswitchd_cpu_pct') for r in rs
                                             if 'ovs_vswitchd_cpu_pct' in r), default=None),
            'runs_total': len(all_runs), 'runs_judged': sum(1 for r in all_runs if 'fidelity' in r),
            'runs_limited': len(limited), 'all_limited': len(limited) == len(all_runs)}
    return summary


def backend_cell(summary, pattern, config):
    """The backend's column: the emulator's verdict (``fidelity_cell``);
    a simulated or modelled run has none."""
    return {'sim': 'simulated', 'flow': 'flow model'}.get(config['backend']) or fidelity_cell(summary, pattern)


def fidelity_cell(summary, pattern):
    """The emulator's verdict over every run of ``pattern``, as a table cell."""
    rows = [r for (p, _), r in summary.items() if p == pattern]
    return verdict_cell(sum(r['runs_judged'] for r in rows), sum(r['runs_limited'] for r in rows),
                        sum(r['runs_total'] for r in rows))


def _flag(row):
    return '!' if row['all_limited'] else ''


def _metric(config):
    return 'pct_of_nonblocking' if 'nonblocking' in config['schemes'] else 'pct_of_line_rate'


def seeds_caption(config):
    seeds = config['seeds']
    return '%d repetition(s), seed(s) %s' % (len(seeds), ' '.join(map(str, seeds)))


def format_table(summary, config):
    schemes = list(config['schemes'])
    metric = _metric(config)
    lines = ['%% of ideal bisection bandwidth (%s), mean +- std over %s; '
             '"line": %% of hosts x link rate (the non-blocking switch\'s own figure shows '
             'what the emulator delivers); "2L fair": two-level routing with max-min fair '
             'link sharing (a model); paper (Two-Level / Flow Class. / Flow Sched.) in brackets'
             % ('aggregate / non-blocking switch' if metric == 'pct_of_nonblocking'
                else 'aggregate / (hosts x link rate)', seeds_caption(config)),
             '%-27s' % 'pattern' + ''.join('%16s' % s for s in schemes)
             + '  2L fair   paper                   %s' % config['backend']]
    for pattern in config['patterns']:
        cells = []
        for scheme in schemes:
            row = summary.get((pattern, scheme))
            if row is None:
                cells.append('%16s' % '-')
            elif scheme == 'nonblocking' or metric == 'pct_of_line_rate':
                cells.append('%16s' % ('%5.1f line%s' % (row['pct_of_line_rate'], _flag(row))))
            else:
                cells.append('%16s' % ('%5.1f +- %4.1f%s' % (row[metric], row['pct_of_nonblocking_std'],
                                                            _flag(row))))
        paper = PAPER.get(pattern)
        model = next((r['twolevel_fair_share_pct'] for (p, _), r in summary.items() if p == pattern), None)
        lines.append('%-27s' % label(pattern) + ''.join(cells)
                     + ('%9.1f' % model if model is not None else '%9s' % '-') + '   '
                     + '%-24s' % ('[%s]' % ' / '.join('%.1f' % v for v in paper) if paper else '[-]')
                     + backend_cell(summary, pattern, config))
    if config['backend'] == 'sim':
        lines.append(sim_line(config))
    elif config['backend'] == 'flow':
        lines.append(FLOW_LINE % config['period_s'])
    else:
        lines.append('emulator: "faithful" when every run kept the fidelity verdict (scripts/emulator/fidelity.py); '
                     'limited runs are left out of the means, and a cell of only limited runs is marked !')
    return '\n'.join(lines)


def machine_line(runs):
    """The machine during the runs, per run: load average, CPU busy and
    ovs-vswitchd's share of a core, each as its range."""
    def span(key, unit=''):
        values = [r[key] for r in runs if r.get(key) is not None]
        return '%.1f-%.1f%s' % (min(values), max(values), unit) if values else 'not recorded'
    return ('The machine during the %d runs (each run\'s sample, `results.json`): load average (1 min) %s, '
            'CPU busy %s, ovs-vswitchd %s of a core.' % (len(runs), span('loadavg_1m'), span('cpu_busy_pct', '%'),
                                                         span('ovs_vswitchd_cpu_pct', '%')))


FLOW_LINE = ('Flow-level model (scripts/flow): max-min fair rates over the paths of the controller\'s own rules, '
             'the dynamic schemes polled every %g s; no TCP, queues or losses.')


def sim_line(config):
    """What a simulated run's hosts and controller were given."""
    settings = ['hosts\' minimum RTO %g ms' % config['min_rto_ms'], 'hosts\' send queues %s' % config['sender_queue']]
    if 'control_delay_ms' in config:
        settings.append('control delay %g ms' % config['control_delay_ms'])
    if 'period_s' in config:
        settings.append('the dynamic schemes polled every %g s' % config['period_s'])
    if 'flowlet_timeout_us' in config:
        settings.append('letflow\'s flowlet timeout %g µs' % config['flowlet_timeout_us'])
    return 'Simulated on ns-3 (docs/simulator.md): %s.' % ', '.join(settings)


def backend_lines(config, runs):
    """The lines under a table's caption that say how far its backend's
    figures hold: the emulator's machine load and fidelity verdict, or the
    simulator's settings."""
    if config['backend'] == 'sim':
        return [sim_line(config)]
    if config['backend'] == 'flow':
        return [FLOW_LINE % config['period_s']]
    return [machine_line(runs),
            'Emulator: "faithful" when every run of the pattern kept the fidelity verdict '
            '(scripts/emulator/fidelity.py); runs it limited are left out of the means, and a cell of only '
            'limited runs is marked !.']


def format_markdown(summary, config, runs):
    """The table as Markdown, for the README to quote: a caption line
    (settings, n and seeds), the machine's load (``machine_line``), then
    pattern x scheme mean +- std over the
    seeds (a cell's n where it differs, no std of one seed), the two-level model, the
    paper's figures and the non-blocking switch's % of line rate."""
    metric = _metric(config)
    schemes = [s for s in config['schemes'] if s != 'nonblocking']
    seeds = config['seeds']
    lines = ['%s: k=%d fat-tree, %g Mbit/s links, %d-packet queues, %g s flows after %g s left out; n = %d seed(s) '
             '(%s), one run each; %% of %s, mean +- std over the seeds. "2L fair": two-level routing with max-min '
             'fair link sharing (a model). Paper: Al-Fares et al. Table 2 (two-level / classifier / scheduler).'
             % (config['backend'], config['k'], config['bw'], config['queue'], config['duration'], config['omit'], len(seeds),
                ' '.join(map(str, seeds)), 'the non-blocking switch\'s aggregate rate for the same flows'
                if metric == 'pct_of_nonblocking' else 'hosts x link rate'),
             *backend_lines(config, runs),
             '',
             '| pattern | ' + ' | '.join(schemes) + ' | 2L fair | paper | non-blocking, %% of line rate | %s |'
             % config['backend'],
             '|---' * (len(schemes) + 5) + '|']
    for pattern in config['patterns']:
        cells = []
        for scheme in schemes:
            row = summary.get((pattern, scheme))
            if row is None or row[metric] is None:
                cells.append('-')
                continue
            cell = '%.1f' % row[metric]
            if metric == 'pct_of_nonblocking' and row['reps'] > 1:
                cell += ' +- %.1f' % row['pct_of_nonblocking_std']
            cell += _flag(row)
            cells.append(cell if row['reps'] == len(seeds) else '%s (n=%d)' % (cell, row['reps']))
        model = next((r['twolevel_fair_share_pct'] for (p, _), r in summary.items() if p == pattern), None)
        paper = PAPER.get(pattern)
        reference = summary.get((pattern, 'nonblocking'))
        cells += ['-' if model is None else '%.1f' % model,
                  ' / '.join('%.1f' % v for v in paper) if paper else '-',
                  '-' if reference is None else '%.1f' % reference['pct_of_line_rate'] + _flag(reference),
                  backend_cell(summary, pattern, config)]
        lines.append('| %s | %s |' % (label(pattern), ' | '.join(cells)))
    return '\n'.join(lines) + '\n'


def write_outputs(out_dir, config, runs, summary):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, 'results.json'), 'w') as f:
        json.dump({'schema': RESULTS_SCHEMA, 'config': config, 'runs': runs, 'summary': list(summary.values()),
                   'paper': PAPER}, f, indent=1)
    seeds = config['seeds']
    with open(os.path.join(out_dir, 'runs.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['backend', 'scheme', 'pattern', 'rep', 'seed', 'src', 'dst', 'mbps', 'aggregate_mbps',
                    'cpu_busy_pct', 'cpu_nice_pct', 'ovs_vswitchd_cpu_pct', 'loadavg_1m', 'ovs_bridges',
                    'fidelity_ok'])
        for r in runs:
            for flow in r['flows']:
                w.writerow([config['backend'], r['scheme'], r['pattern'], r['rep'], seeds[r['rep']], flow['src'],
                            flow['dst'], flow['mbps'], r['aggregate_mbps'],
                            *(r.get(key, '') for key in ('cpu_busy_pct', 'cpu_nice_pct', 'ovs_vswitchd_cpu_pct',
                                                         'loadavg_1m', 'ovs_bridges')),
                            r['fidelity']['ok'] if 'fidelity' in r else ''])
    with open(os.path.join(out_dir, 'summary.csv'), 'w', newline='') as f:
        rows = list(summary.values())
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out_dir, 'summary.md'), 'w') as f:
        f.write(format_markdown(summary, config, runs))
    plot(os.path.join(out_dir, 'bisection.png'), summary, config)


def plot(path, summary, config):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    metric = _metric(config)
    schemes = [s for s in config['schemes'] if s != 'nonblocking']
    patterns = config['patterns']
    width = 0.8 / max(len(schemes), 1)
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(patterns)), 4.5))
    paper_labelled = False
    for i, scheme in enumerate(schemes):
        xs = [p + (i - (len(schemes) - 1) / 2) * width for p in range(len(patterns))]
        rows = [summary.get((p, scheme)) for p in patterns]
        ax.bar(xs, [r[metric] if r and r[metric] is not None else 0 for r in rows], width,
               yerr=[r['pct_of_nonblocking_std'] if r and metric == 'pct_of_nonblocking' else 0
                     for r in rows], capsize=2, label=scheme)
        if scheme in PAPER_SCHEMES:
            column = PAPER_SCHEMES.index(scheme)
            paper = [(x, PAPER[p][column]) for x, p in zip(xs, patterns) if p in PAPER]
            if paper:  # one legend entry for the marks over every scheme's bars
                ax.scatter([x for x, _ in paper], [v for _, v in paper], marker='D', s=25, color='black',
                           zorder=3, label=None if paper_labelled else
                           "paper: Al-Fares et al. Table 2 (on its scheme's bar)")
                paper_labelled = True
    ax.set_xticks(range(len(patterns)))
    ax.set_xticklabels([label(p) for p in patterns], rotation=30, ha='right', fontsize=8)
    ax.set_ylabel('% of ideal bisection bandwidth')
    ax.set_ylim(0, 110)
    ax.set_title('%s: k=%d fat-tree, %g Mbit/s links, %g s flows; %s'
                 % (config['backend'], config['k'], config['bw'], config['duration'], seeds_caption(config)), fontsize=9)
    if ax.get_legend_handles_labels()[0]:  # a reference-only run has no scheme bars to name
        # below the axes: inside, it would hide the marks at 100%
        ax.legend(fontsize=8, ncol=3, loc='upper center', bbox_to_anchor=(0.5, -0.28))
    fig.savefig(path, dpi=120, bbox_inches='tight')
    plt.close(fig)
