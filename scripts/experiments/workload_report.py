"""The workload experiment's pure parts: the flows of a run (sizes from a
CDF, Poisson arrivals per host, peers by pattern), the ideal FCT each flow
is measured against, and the summary, files and plots of finished runs.

Each backend gives every flow its ideal FCT, what it takes alone on an idle
fabric of that backend (the emulator: scripts/emulator/shaping.py; the
simulator: scripts/sim/workload_backend.py).
"""
import csv
import json
import math
import os

import numpy as np

from scripts.workloads.arrivals import host_flows
from scripts.workloads.flow_sizes import check_load
from scripts.emulator.shaping import goodput_bps
from scripts.experiments.patterns import peer_chooser
from scripts.runner.records import FLOW_COLUMNS, RESULTS_SCHEMA

# (label, smallest size, size it stays below), bytes
BUCKETS = (('<100KB', 0, 100e3), ('100KB-10MB', 100e3, 10e6), ('>10MB', 10e6, math.inf))
DRAIN_CAP_S = 300


def draw_flows(topo, cdf, load, link_mbps, seconds, pattern, seed):
    """The flows of one (load, seed): [{'id', 'start_s', 'src', 'dst', 'size'}]
    in start order, ``src`` sending ``size`` bytes to ``dst`` (fat-tree host
    names); every scheme runs the same ones."""
    check_load(load)
    rng = np.random.default_rng([seed, int(round(load * 1000))])
    hosts = [h.name for h in topo.hosts]
    flows = host_flows(cdf, load, link_mbps * 1e6, seconds, len(hosts), peer_chooser(pattern, topo, seed), rng)
    return [{'id': i, 'start_s': round(f.start_s, 6), 'src': hosts[f.src_host], 'dst': hosts[f.dst_host],
             'size': f.bytes} for i, f in enumerate(flows)]


def default_drain_s(flows, link_mbps):
    """Time after the last arrival for the flows to end: twice what the
    largest flow drawn takes alone, plus 10 s, at most DRAIN_CAP_S."""
    largest = max((f['size'] for f in flows), default=0)
    return min(DRAIN_CAP_S, math.ceil(2 * largest * 8 / goodput_bps(link_mbps)) + 10)


def flow_rows(scheme, seed, load, flows, results, ideal_of):
    """flows.csv's rows of one run. ``results``: the generator's line per
    flow id; ``ideal_of(flow)``: its ideal FCT (s). A flow that never
    finished has no fct_s or slowdown."""
    rows = []
    for flow in flows:
        result = results.get(flow['id'], {})
        ideal = ideal_of(flow)
        fct = result.get('fct_s')
        start = result.get('start_s')
        rows.append({'scheme': scheme, 'seed': seed, 'load': load, 'src': flow['src'], 'dst': flow['dst'],
                     'size_bytes': flow['size'], 'start_s': flow['start_s'] if start is None else start,
                     'fct_s': fct, 'ideal_fct_s': round(ideal, 6),
                     'slowdown': None if fct is None else round(fct / ideal, 4)})
    return rows


def bucket_of(size):
    return next(label for label, low, high in BUCKETS if low <= size < high)


def slowdown_stats(values):
    """{flows, mean, p50, p99} of slowdowns (None without any)."""
    if not values:
        return {'flows': 0, 'mean': None, 'p50': None, 'p99': None}
    values = np.array(values, dtype=float)
    return {'flows': len(values), 'mean': round(float(values.mean()), 3),
            'p50': round(float(np.percentile(values, 50)), 3), 'p99': round(float(np.percentile(values, 99)), 3)}


def summarize(rows, runs):
    """{'schemes': {scheme: {load: {bucket or 'all': {flows, mean, p50, p99}}}}
    of the finished flows' slowdowns (every seed together), beside each
    run's counts and fidelity object (``runs``)."""
    schemes = {}
    for row in rows:
        if row['slowdown'] is None:
            continue
        cell = schemes.setdefault(row['scheme'], {}).setdefault('%g' % row['load'], {})
        for key in (bucket_of(row['size_bytes']), 'all'):
            cell.setdefault(key, []).append(row['slowdown'])
    return {'buckets': [label for label, _, _ in BUCKETS],
            'schemes': {scheme: {load: {key: slowdown_stats(values) for key, values in cells.items()}
                                 for load, cells in loads.items()} for scheme, loads in schemes.items()},
            'runs': runs}


def finished_line(run, rows):
    """A finished run's progress line: its flows finished, the median slowdown."""
    slowdowns = sorted(r['slowdown'] for r in rows if r['slowdown'] is not None)
    return '%s, load %g, seed %d: %d of %d flows finished, slowdown median %s' % (
        run['scheme'], run['load'], run['seed'], run['finished'], run['flows'],
        '%.2f' % slowdowns[len(slowdowns) // 2] if slowdowns else '-')


def limited(run):
    """Whether the emulator limited ``run`` (its fidelity verdict); a
    simulated run has no verdict and never is."""
    return 'fidelity' in run and not run['fidelity']['ok']


def run_counts(rows):
    """One run's flows: started, finished, and the ones that did not finish."""
    unfinished = [r for r in rows if r['fct_s'] is None]
    return {'flows': len(rows), 'finished': len(rows) - len(unfinished), 'unfinished': len(unfinished),
            'unfinished_flows': [{k: r[k] for k in ('src', 'dst', 'size_bytes', 'start_s')} for r in unfinished]}


def format_table(summary, config):
    """The summary as a Markdown table; the backend column says where the
    figures come from: the emulator with its verdict over the cell's runs,
    or the simulator."""
    lines = ['| scheme | load | flows | slowdown mean / p50 / p99: all | %s | backend |'
             % ' | '.join(summary['buckets']), '|---|---|---|---|%s---|' % ('---|' * len(summary['buckets']))]
    simulated = config['backend'] == 'sim'
    verdicts = {}
    for run in summary['runs']:
        verdicts.setdefault((run['scheme'], '%g' % run['load']), []).append(not limited(run))

    def cell(stats):
        return '-' if not stats or not stats['flows'] else '%.2f / %.2f / %.2f (%d)' % (
            stats['mean'], stats['p50'], stats['p99'], stats['flows'])
    for scheme, loads in summary['schemes'].items():
        for load, cells in sorted(loads.items(), key=lambda item: float(item[0])):
            ok = verdicts.get((scheme, load), [])
            lines.append('| %s | %s | %d | %s | %s | %s |' % (
                scheme, load, cells['all']['flows'], cell(cells['all']),
                ' | '.join(cell(cells.get(b)) for b in summary['buckets']),
                'sim' if simulated else 'emulator, faithful' if ok and all(ok) else 'emulator, LIMITED' if ok
                else '-'))
    return '\n'.join(lines)


def tcp_setting(config):
    """The hosts' TCP and the switches' ECN marking, as a simulated run's
    progress lines and plots name them."""
    if not config['ecn_threshold_packets']:
        return 'TCP %s' % config['tcp']
    return 'TCP %s, ECN marked from %d queued packets' % (config['tcp'], config['ecn_threshold_packets'])


def write_outputs(out_dir, config, rows, summary):
    """flows.csv, summary.json and the plots in ``out_dir``."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, 'flows.csv'), 'w', newline='') as f:
        writer = csv.DictWriter(f, FLOW_COLUMNS)
        writer.writeheader()
        writer.writerows({k: ('' if v is None else v) for k, v in row.items()} for row in rows)
    with open(os.path.join(out_dir, 'summary.json'), 'w') as f:
        json.dump({'schema': RESULTS_SCHEMA, 'config': config, **summary}, f, indent=1)
    plot(out_dir, config, rows, summary)


def plot(out_dir, config, rows, summary):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    caption = '%s: k=%d, %s, %s, %g Mbit/s links, seeds %s' % (
        config['backend'], config['k'], config['cdf'], config['pattern'], config['bw'],
        ' '.join(map(str, config['seeds']))) + (', ' + tcp_setting(config) if 'tcp' in config else '')
    limited_runs = {(run['scheme'], float(run['load'])) for run in summary['runs'] if limited(run)}
    fig, axes = plt.subplots(1, len(BUCKETS), figsize=(5 * len(BUCKETS), 4), squeeze=False)
    for ax, (bucket, _, _) in zip(axes[0], BUCKETS):
        for scheme, loads in summary['schemes'].items():
            points = sorted((float(load), cells[bucket]) for load, cells in loads.items()
                            if cells.get(bucket, {}).get('flows'))
            if points:
                line, = ax.plot([100 * x for x, _ in points], [s['mean'] for _, s in points], marker='o',
                                label='%s mean' % scheme)
                ax.plot([100 * x for x, _ in points], [s['p99'] for _, s in points], marker='x',
                        linestyle='--', color=line.get_color(), label='%s p99' % scheme)
                marked = [(100 * x, s['mean']) for x, s in points if (scheme, x) in limited_runs]
                if marked:  # a run the emulator limited: its point ringed
                    ax.scatter(*zip(*marked), s=140, facecolors='none', edgecolors='black', zorder=3)
        ax.set_title('flows %s' % bucket)
        ax.set_xlabel('load (% of link rate)')
        ax.set_ylabel('FCT slowdown')
        ax.grid(alpha=0.3)
    if limited_runs:
        axes[0][0].scatter([], [], s=140, facecolors='none', edgecolors='black', label='emulator-limited run')
    axes[0][0].legend(fontsize=7)
    fig.suptitle('FCT slowdown against load: ' + caption, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, 'slowdown_vs_load.png'), dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    for (scheme, load), fcts in sorted(_small_fcts(rows).items()):
        ax.plot(np.sort(fcts) * 1000, np.arange(1, len(fcts) + 1) / len(fcts), label='%s, load %g' % (scheme, load))
    ax.set_xscale('log')
    ax.set_xlabel('FCT of flows < 100 KB (ms)')
    ax.set_ylabel('CDF')
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(caption, fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, 'small_flow_fct_cdf.png'), dpi=110)
    plt.close(fig)


def _small_fcts(rows):
    small = {}
    for row in rows:
        if row['fct_s'] is not None and row['size_bytes'] < BUCKETS[0][2]:
            small.setdefault((row['scheme'], row['load']), []).append(row['fct_s'])
    return small
