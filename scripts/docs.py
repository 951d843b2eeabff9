"""The measured tables of README.md and docs/*.md, rendered from the
results files under results/.

    python -m scripts.docs            # rewrite every page's tables in place, draw the plots they link to
    python -m scripts.docs --check    # exit 1 naming the pages whose tables differ

In a page, a measured table sits between two markers:

    <!-- table: NAME -->
    (rendered: never edit by hand)
    <!-- end table -->

and TABLES maps NAME to a function of the repository root that returns the
Markdown from a committed results file. Everything between the markers is
replaced, so a rerun experiment followed by ``python -m scripts.docs``
updates the docs, and the test suite fails while a page and its results
disagree.

This module imports no ryu, eventlet or mininet, even transitively, so the
docs render on any Python. The report functions it reuses are the pure
ones; for experiment modules that import Mininet at the top (outages,
bfd_floor, bfd_defaults, cluster.measure) their Markdown is reproduced
here, and tests/unit/test_docs_render.py checks that both agree.
"""
import argparse
import functools
import glob
import importlib
import json
import os
import re
import sys

from scripts.emulator.bfd import policy as bfd_policy
from scripts.fattree import fault_campaign_report
from scripts.runner.records import STUDIES_DIR, load_results, load_study

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START = re.compile(r'<!-- table: ([a-z0-9-]+) -->')
END = '<!-- end table -->'
TABLES = {}


class MarkerError(ValueError):
    """A page's markers are malformed: an unknown name, a table never
    closed, an end without a start."""


def table(name):
    def register(function):
        TABLES[name] = function
        return function
    return register


def _load(root, path):
    with open(os.path.join(root, path)) as f:
        return json.load(f)


def _rows(lines):
    return '\n'.join(lines)


# Tables that are their experiment's own Markdown of one results file:
# {name: (results file, module, its function)}; the modules are pure.
EXPERIMENT_TABLES = {
    'flow-controller-rounds': ('results/flow/controller_rounds.json', 'scripts.flow.benchmarks.controller_rounds',
                               'markdown'),
    'flow-controller-rounds-first-fit': ('results/flow/controller_rounds_rearrange0.json',
                                         'scripts.flow.benchmarks.controller_rounds', 'markdown'),
    'flow-classifier-rounds': ('results/flow/controller_rounds_classifier.json',
                               'scripts.flow.benchmarks.controller_rounds', 'markdown'),
    'ovs-port-cost': ('results/fattree/ovs_port_cost.json', 'scripts.emulator.benchmarks.ovs_port_cost', 'markdown'),
    'bfd-defaults': ('results/fattree/bfd_defaults.json', 'scripts.fattree.bfd_defaults_report', 'markdown'),
    'cluster': ('results/cluster/measure.json', 'scripts.emulator.benchmarks.cluster_report', 'markdown'),
    'emulator-throughput': ('results/cluster/measure.json', 'scripts.emulator.benchmarks.cluster_report', 'throughput_markdown'),
    'rate-sweep': ('results/rate_sweep/rate_sweep.json', 'scripts.emulator.benchmarks.rate_sweep_report', 'markdown'),
    'rate-sweep-amd-epyc': ('results/rate_sweep/amd-epyc-2-cores/rate_sweep.json',
                            'scripts.emulator.benchmarks.rate_sweep_report', 'markdown'),
    'rate-sweep-amd-epyc-quiet': ('results/rate_sweep/amd-epyc-2-cores-quiet/rate_sweep.json',
                                  'scripts.emulator.benchmarks.rate_sweep_report', 'markdown'),
    'calibration-machines': ('results/calibration/machines.json', 'scripts.emulator.benchmarks.rate_sweep_report',
                             'machines_markdown'),
    'latency': ('results/emulator/latency.json', 'scripts.emulator.benchmarks.latency', 'markdown'),
    'shaped-profile': ('results/emulator/shaped_profile.json', 'scripts.emulator.benchmarks.shaped_profile', 'markdown'),
    'shaped-link': ('results/emulator/shaped_link.json', 'scripts.emulator.benchmarks.shaped_link', 'markdown'),
    'recompute-benchmark': ('results/fattree/recompute_benchmark.json', 'scripts.fattree.recompute_report',
                            'markdown'),
    'reaction-benchmark': ('results/fattree/recompute_benchmark.json', 'scripts.fattree.recompute_report',
                           'reaction_markdown'),
    'start-up-program': ('results/fattree/recompute_benchmark.json', 'scripts.fattree.recompute_report',
                         'start_up_markdown'),
    'sim-speed': ('results/sim/speed_benchmark.json', 'scripts.sim.benchmarks.speed', 'markdown'),
}
# Tables made from experiment runs by a study's command (the study's manifest,
# results/studies/NAME.json, names the runs and the file): {name: (module, its function)}.
STUDY_TABLES = {
    'cross-validation-10': ('scripts.experiments.cross_validation', 'markdown'),
    'cross-validation-10-fq': ('scripts.experiments.cross_validation', 'markdown'),
    'cross-validation-workload': ('scripts.experiments.cross_validation', 'workload_markdown'),
    'table2-1gbps': ('scripts.experiments.datacenter_rates', 'markdown'),
    'table2-1gbps-fq': ('scripts.experiments.datacenter_rates', 'markdown'),
    'fct-10gbps': ('scripts.experiments.datacenter_fcts', 'markdown'),
    'fct-10gbps-fq': ('scripts.experiments.datacenter_fcts', 'markdown'),
    'flow-vs-sim-k4-1gbps': ('scripts.experiments.model_comparison', 'markdown'),
    'table2-flow-scale': ('scripts.experiments.datacenter_rates', 'markdown'),
}


def _experiment_table(path, module, function, root):
    return getattr(importlib.import_module(module), function)(_load(root, path))


def _study_table(study, module, function, root):
    return _experiment_table(load_study(root, study)['results'], module, function, root)


for _name, (_path, _module, _function) in EXPERIMENT_TABLES.items():
    TABLES[_name] = functools.partial(_experiment_table, _path, _module, _function)
for _name, (_module, _function) in STUDY_TABLES.items():
    TABLES[_name] = functools.partial(_study_table, _name, _module, _function)


def _num(value, form='%.1f'):
    """A figure, '-' when not measured; float noise around zero as 0."""
    if value is None:
        return '-'
    if isinstance(value, float) and abs(value) < 1e-9:
        value = 0.0
    return form % value


# --- fat-tree start-up, model timing, OVS ports --------------------------------------------------

@table('fattree-startup')
def fattree_startup(root):
    from scripts.emulator.benchmarks.startup_report import markdown
    return markdown(_load(root, 'results/fattree/startup.json'))


@table('fattree-startup-notes')
def fattree_startup_notes(root):
    """What the start-up table leaves out: memory, ovs-vswitchd's CPU."""
    lines = ['| k | switches | hosts | ovs-vswitchd memory, all pairs reached (MB) | node shells memory (MB) '
             '| ovs-vswitchd CPU from start to all pairs, private daemons only (s) |', '|---|---|---|---|---|---|']
    for r in _load(root, 'results/fattree/startup.json'):
        lines.append('| %d | {:,} | {:,} | %s | %s | %s |'.format(r['switches'], r['hosts']) % (
            r['k'], _num(r.get('ovs_vswitchd_rss_mb')), _num(r.get('node_shells_rss_mb')),
            _num(r.get('ovs_vswitchd_cpu_s'))))
    return _rows(lines)


@table('fattree-model-timing')
def fattree_model_timing(root):
    lines = ['| k | switches | every switch\'s tables (s) | recompute after one link failure, detour check '
             'included (s) |', '|---|---|---|---|']
    for r in _load(root, 'results/fattree/model_timing.json'):
        lines.append('| %d | {:,} | %.3f | %.3f |'.format(r['switches'])
                     % (r['k'], r['compute_all_s'], r['recompute_one_failure_s']))
    return _rows(lines)


@table('fault-campaign')
def fault_campaign(root):
    """The committed fault campaigns (scripts/fattree/fault_campaign.py), k=4 and k=8."""
    return fault_campaign_report.markdown([_load(root, 'results/fattree/fault_campaign/k%d/campaign.json' % k)
                                           for k in (4, 8)])


# --- BFD -----------------------------------------------------------------------------------------

@table('bfd-floor')
def bfd_floor(root):
    result = _load(root, 'results/fattree/bfd_floor.json')
    from scripts.fattree.bfd_floor_report import markdown
    return markdown(result['rows']).split('\n\n')[0] + (
        '\n\nk=%d, detection after %d missed intervals; the script\'s criterion (no false detection idle, '
        'nor under load on shaped links, at this interval and every larger one) names %s.'
        % (result['k'], result['mult'], '%d ms' % result['lowest_holding_ms']
           if result['lowest_holding_ms'] else 'no interval'))


# --- fault tolerance -----------------------------------------------------------------------------

@table('outages')
def outages(root):
    result = _load(root, 'results/outages/outages.json')
    from scripts.fattree.outages_report import markdown, summary
    rows, figures = result['outages'], summary(result)
    reach = result['single_link_reachability']
    text = ['k=%d, BFD every %d ms (detection %d ms), %s probe packets/s each way%s.' % (
                result['k'], result['bfd_ms'], bfd_policy.detection_ms(result['bfd_ms']),
                '{:,}'.format(result['rate_pps']),
                '; load average %.2f before the run, %.2f after it' % tuple(result['loadavg_1m'])
                if result.get('loadavg_1m') else ''),
            'Hard failures repaired locally (%d): %s ms; hard failures only the controller repairs (%d): %s ms; '
            'silent failures: %s ms.' % (figures['hard_local'], figures['hard_local_ms'], figures['hard_controller'],
                                         figures['hard_controller_ms'], figures['silent_ms'])]
    control_lost = max(r['control_lost'] for r in rows)
    text.append('The control stream lost no packet in any scenario.' if not control_lost else
                'The control stream lost up to %d packets in a scenario.' % control_lost)
    if reach:
        broken = sum(1 for r in reach if r['unreachable'])
        text.append('After each of the %d single switch-link failures all %d host pairs were pinged: %s.' % (
            len(reach), max(r['pairs'] for r in reach),
            'every pair was reachable every time' if not broken else '%d failures left some pair unreachable' % broken))
    return markdown(result).split('\n\n')[0] + '\n\n' + ' '.join(text)


@table('failure-check')
def failure_check(root):
    result = _load(root, 'results/failure_check/failure_check.json')
    lines = ['| k | failure sets | sets | connected (pair, set) combinations | unrouted | broadcast only, '
             'unrouted: every choice / own port | sets with detours (entries, most in one set) | seconds |',
             '|---|---|---|---|---|---|---|---|']
    for r in result['rows']:
        lines.append('| %d | %s %s | {:,} | {:,} | **{:,}** | {:,} / {:,} | %s | %s |'.format(
            r['failure_sets'], r['connected_pairs'], r['unrouted'], r['unrouted_broadcast_only'],
            r['unrouted_broadcast_only_own_port']) % (
            r['k'], 'sampled' if r['sampled'] else 'every', r['kind'],
            '{:,} ({:,}, {:,})'.format(r['sets_with_detours'], r['detour_entries'], r['max_detour_entries'])
            if r['sets_with_detours'] else '0', _num(r['seconds'])))
    return _rows(lines) + '\n\nSampled sets drawn with seed %d.' % result['seed']


# --- schemes and the bisection experiment --------------------------------------------------------

@table('rearrangement')
def rearrangement(root):
    result = _load(root, 'results/rearrangement/rearrangement.json')
    lines = ['| k | pattern | permutations | first fit: flows rejected, mean (max) | with rearrangement: '
             'flows rejected | flows moved per permutation | longest report, controller CPU (s) |',
             '|---|---|---|---|---|---|---|']
    for r in result['summary']:
        lines.append('| %d | %s | %d | %.2f of %d (%d) | %.2f%% | %.2f | %.3f |' % (
            r['k'], _pattern(r['pattern']), r['permutations'], r['first_fit_rejected_mean'],
            r['flows_per_permutation'], r['first_fit_rejected_max'], r['rearranged_rejected_pct'],
            r['moved_mean'], r['longest_report_s']))
    return _rows(lines) + ('\n\nSeed %d; at most %d flows moved for one new flow (`rearrange`).'
                           % (result['seed'], result['rearrange']))


def _pattern(name):
    from scripts.experiments.patterns import label
    return label(name)


# The bisection and workload runs the docs show, each a study whose manifest
# (results/studies/NAME.json) names its run: at 2 Mbit/s (seeds summarized
# together), at the faithful rate of the rate sweep, at 20 Mbit/s on one and
# on two ovs-vswitchd daemons, the simulator's run of every scheme with the
# dynamic ones' controller in simulated time, LetFlow beside ECMP; the
# workload's. Named, not "the newest": a run made since changes the docs
# only when a manifest names it. {table: study}
BISECTION_STUDIES = {'bisection': 'bisection-2mbps', 'bisection-faithful': 'bisection-faithful',
                     'bisection-20-one-daemon': 'bisection-20-one-daemon',
                     'bisection-20-two-daemons': 'bisection-20-two-daemons',
                     'bisection-sim-controller': 'bisection-sim-controller',
                     'bisection-sim-letflow': 'bisection-sim-letflow',
                     'bisection-sim-letflow-fq': 'bisection-sim-letflow-fq'}
WORKLOAD_STUDIES = {'workload-websearch': 'workload-websearch', 'workload-websearch-failed': 'workload-websearch-failed',
                    'workload-datamining': 'workload-datamining'}


def study_results(root, study):
    """(the study's results directory, its results: records.load_results)."""
    results_dir = load_study(root, study)['results']
    return results_dir, load_results(os.path.join(root, results_dir))


def _study_caption(study):
    return '`%s` (`%s`: its runs and the commands that made them)' % (
        study, os.path.join(STUDIES_DIR, study + '.json'))


def _bisection_table(study, root):
    from scripts.experiments.bisection_report import format_markdown, summarize
    run_dir, saved = study_results(root, study)
    config, runs = saved['config'], saved['runs']
    return ('Study %s; every run and flow in its `results.json` (`dcfabric bisection --summarize %s` writes its '
            '`runs.csv`, `summary.csv`, `summary.md` and plot again from it).\n\n' % (_study_caption(study), run_dir)
            + format_markdown(summarize(runs, config), config, runs).strip('\n')
            + '\n\n![bisection bandwidth per pattern and scheme, with the paper\'s Table 2 marked](../%s/bisection.png)'
            % run_dir)


for _name, _study in BISECTION_STUDIES.items():
    TABLES[_name] = functools.partial(_bisection_table, _study)


def _workload_table(study, root):
    from scripts.experiments.workload_report import format_table
    run_dir, summary = study_results(root, study)
    config = summary['config']
    return ('Study %s: k=%d, %s flow sizes, %s, %g Mbit/s links, %d-packet queues, %g s of arrivals, seed(s) %s%s; '
            'every flow in its `flows.csv`.\n\n' % (
                _study_caption(study), config['k'], config['cdf'], config['pattern'], config['bw'], config['queue'],
                config['seconds'], ' '.join(map(str, config['seeds'])),
                ', failed: ' + ', '.join(config['fail']) + (
                    ' at %g s into each run' % config['fail_at_s'] if 'fail_at_s' in config else '')
                if config['fail'] else '')
            + format_table(summary, config)
            + '\n\n![FCT slowdown against load](../%s/slowdown_vs_load.png)' % run_dir
            + '\n![CDF of small flows\' FCT](../%s/small_flow_fct_cdf.png)' % run_dir)


for _name, _study in WORKLOAD_STUDIES.items():
    TABLES[_name] = functools.partial(_workload_table, _study)


@table('bisection-per-seed')
def bisection_per_seed(root):
    _, saved = study_results(root, BISECTION_STUDIES['bisection'])
    config, runs = saved['config'], saved['runs']
    seeds = config['seeds']
    schemes = [s for s in config['schemes'] if s != 'nonblocking']
    reference = {(r['pattern'], r['rep']): r['aggregate_mbps'] for r in runs if r['scheme'] == 'nonblocking'}
    score = {(r['pattern'], r['scheme'], r['rep']): 100.0 * r['aggregate_mbps'] / reference[(r['pattern'], r['rep'])]
             for r in runs if (r['pattern'], r['rep']) in reference}
    lines = ['| pattern | ' + ' | '.join(schemes) + ' |', '|---' * (len(schemes) + 1) + '|']
    for pattern in config['patterns']:
        lines.append('| %s | %s |' % (_pattern(pattern), ' | '.join(
            ' / '.join(_num(score.get((pattern, scheme, rep))) for rep in range(len(seeds)))
            for scheme in schemes)))
    return ('%% of the non-blocking switch for the same flows, seed by seed (%s).\n\n'
            % ' / '.join('seed %d' % s for s in seeds) + _rows(lines))


@table('classifier-placement')
def classifier_placement(root):
    result = _load(root, 'results/classifier_placement/placement.json')
    cells = {}
    for r in result['differences']:
        cells[(r['pattern'], r['arrival'])] = r
    patterns = list(dict.fromkeys(r['pattern'] for r in result['differences']))
    lines = ['| pattern | together | staggered | lowest difference after any round: together / staggered |',
             '|---|---|---|---|']
    for pattern in patterns:
        row = [cells.get((pattern, arrival)) for arrival in ('together', 'staggered')]
        lines.append('| %s | %s | %s |' % (_pattern(pattern), ' | '.join(
            '-' if r is None else '%s +- %s (%s..%s)' % (
                _num(r['difference_mean_pct'], '%+.1f'), _num(r['difference_std_pct']),
                _num(r['difference_min_pct'], '%+.1f'), _num(r['difference_max_pct'], '%+.1f'))
            for r in row), ' / '.join('-' if r is None else _num(r['min_margin_any_round_pct'], '%+.1f')
                                      for r in row)))
    return ('k=%d, seeds %s, %d arrival orders per pattern and seed, %d rounds after the last arrival, '
            'tolerance %g. Classifier minus two-level routing, %% of ideal, after the last round: mean +- std of '
            'the seeds\' means (min..max over every order).\n\n' % (
                result['k'], ' '.join(map(str, result['seeds'])), result['orders'], result['rounds'],
                result['tolerance']) + _rows(lines))


@table('classifier-difference')
def classifier_difference(root):
    from scripts.fattree.classifier_difference import markdown
    result = _load(root, load_study(root, 'classifier-difference')['results'])
    return ('From the runs of study %s.\n\n' % _study_caption('classifier-difference')
            + markdown(result['differences'], result['repeats']).strip('\n'))


# --- Kevin ---------------------------------------------------------------------------------------

@table('kevin-emulation')
def kevin_emulation(root):
    from scripts.kevin.report import markdown_emulation
    result = _load(root, 'results/kevin/emulation.json')
    config, rows = result['config'], result['summary']
    text = ['%s, %s hosts per ToR, every link %g Mbit/s with %d-packet queues; elephants %s for %d s; '
            '%d mouse ping streams; scheduler period %g s, delta %g s, reservation %g s; seeds %s.' % (
                config['fabric'], config['hosts'], config['bw'], config['queue'], ', '.join(config['elephants']),
                config['duration'], len(next(iter(config['mice'].values()), [])), config['period'],
                config['delta'], config['reservation'], ' '.join(map(str, config['seeds'])))]
    for row in rows:
        if row['scheme'] == 'distda':
            text.append('DistDA messages sent / received: %s; elephant detection to PortApprove %s s (mean).' % (
                ', '.join('%s %s / %s' % (kind, _num(row[kind + '_sent'], '%g'), _num(row[kind + '_received'], '%g'))
                          for kind in ('PortRequest', 'PortApprove', 'PortDecline', 'PortRelease')),
                _num(row['distda_detection_to_approve_s'], '%.2f')))
    return (markdown_emulation(rows) + '\n\n' + ' '.join(text)
            + '\n\n![ToRs on the elephant paths, elephant throughput and DA-link readiness per scheme]'
              '(../results/kevin/emulation.png)')


@table('kevin-model')
def kevin_model(root):
    result = _load(root, 'results/kevin/model_path_length.json')
    schemes = [('static_de_bruijn', 'static de Bruijn'), ('kevin_bfs', 'Kevin BFS'),
               ('kevin_greedy', 'Kevin Greedy'), ('expander', 'expander')]
    lines = ['| n | load | ' + ' | '.join(name for _, name in schemes) + ' |', '|---' * (len(schemes) + 2) + '|']
    for r in result['means']:
        lines.append('| %d | %.1f | %s |' % (r['n'], r['load'], ' | '.join(
            '%.2f (%.2f)' % (r[key], r[key + '_weighted']) for key, _ in schemes)))
    return ('Mean ToR-to-ToR hops over the drawn pairs, demand-weighted mean in brackets; seeds %s.\n\n'
            % ' '.join(map(str, result['seeds'])) + _rows(lines)
            + '\n\n![mean path length against load, n = 64 and 256](../results/kevin/model_path_length.png)')


# --- K-ary N-Bridge ------------------------------------------------------------------------------

NBRIDGE_RUNS = ('results/nbridge/3x3.json', 'results/nbridge/4x3.json', 'results/nbridge/33x6.json')


@table('nbridge-leaf-fault')
def nbridge_leaf_fault(root):
    from scripts.nbridge.leaf_fault import markdown
    return markdown([_load(root, path) for path in NBRIDGE_RUNS])


@table('nbridge-detour')
def nbridge_detour(root):
    lines = ['| fabric, target | AlltoAll period (s), block (bytes), phase (s) | crossing pairs\' hops shielded: '
             'model, measured mean | hops settled after a transition, at most (s) | blocks delivered after '
             'their phase | crossing median latency, shielded against normal |', '|---|---|---|---|---|---|']
    for path in NBRIDGE_RUNS:
        r = _load(root, path)
        phases = r['phases']
        crossing = {name: phase['crossing'] for name, phase in phases.items()}
        lines.append('| %s, %s | %g, %d, %g | %s; %.1f | %.2f | %d | %+.0f%% |' % (
            r['fabric'], r['target'], r['period_s'], r['block_bytes'], r['phase_s'],
            ', '.join('%d -> %d' % tuple(p) for p in r['predicted_hops_normal_shielded']),
            crossing['shielded']['mean_hops'], max(c['settled_after_s'] for c in crossing.values()),
            sum(c['arrived_after_end'] + p['other']['arrived_after_end'] for c, p in
                zip(crossing.values(), phases.values())),
            100.0 * (crossing['shielded']['median_latency_us'] / crossing['normal']['median_latency_us'] - 1)))
    return _rows(lines)


# --- LetFlow -------------------------------------------------------------------------------------

@table('letflow-markov-fig7')
def letflow_markov_fig7(root):
    result = _load(root, 'results/letflow/markov/results.json')
    rows = result['fig7_rows']
    lines = ['| Δ (µs) | ' + ' | '.join('%d' % r['delta_us'] for r in rows) + ' |', '|---' * (len(rows) + 1) + '|',
             '| mode of n1 after the steps | ' + ' | '.join('%d' % r['mode_n1'] for r in rows) + ' |',
             '| mode of the stationary law | ' + ' | '.join('%d' % r['stationary_mode_n1'] for r in rows) + ' |',
             '| P(\\|n1 − 80\\| ≤ 5) | ' + ' | '.join('%.3f' % r['mass_within_5_of_80'] for r in rows) + ' |']
    return ('n = 100 flows, C1 = 40, C2 = 10 Gbps, %d-byte packets, one step per packet, {:.0e} steps from '
            '(50, 50); ideal n1 = 80.\n\n'.format(result['steps']) % result['packet_bytes'] + _rows(lines)
            + '\n\n![distribution of n1 for each Δ](../results/letflow/markov/fig7_markov.png)')


@table('letflow-markov-fig8')
def letflow_markov_fig8(root):
    result = _load(root, 'results/letflow/markov/results.json')
    grid_end_us = 50e3  # the Δ grid of scripts.letflow.ns3_experiments.exp_markov: 10 µs to 50 ms
    lines = ['| paths (Gbps) | flows n | mean flow rate (Gbps) | Δmin (µs) | Δmax (µs) |', '|---|---|---|---|---|']
    for r in sorted(result['fig8'], key=lambda r: (r['paths_gbps'] != '40/10', r['flows'])):
        high = r['delta_max_us']
        lines.append('| %s | %d | %.2f | %s | %s |' % (
            r['paths_gbps'], r['flows'], r['mean_flow_rate_gbps'], _num(r['delta_min_us'], '%.0f'),
            '-' if high is None else '%.0f%s' % (high, ' (end of grid)' if high >= grid_end_us * 0.999 else '')))
    return ('Burst b = %g packets, {:.0e} steps from an even split; "balances": at least 80%% of the mass within '
            '5%% of n of the ideal split; Δ over 49 log-spaced points from 10 µs to 50 ms.\n\n'.format(result['steps'])
            % result['burst_fig8'] + _rows(lines)
            + '\n\n![the Δ range that balances, against the mean flow rate](../results/letflow/markov/fig8_delta_range.png)')


@table('letflow-elasticity')
def letflow_elasticity(root):
    result = _load(root, 'results/letflow/elasticity/results.json')
    lines = ['| seed | base RTT (µs) | flows on the 40 Gbps path at the end | on the 10 Gbps path | mean on the '
             '40 Gbps path, second half | last change of path (ms) |', '|---|---|---|---|---|---|']
    for r in result['rows']:
        lines.append('| %d | %.1f | %d | %d | %.2f | %.1f |' % (
            r['seed'], r['base_rtt_us'], r['final_s0_flows'], r['final_s1_flows'], r['mean_s0_flows_second_half'],
            r['last_change_ms']))
    return (_rows(lines) + '\n\n![flows per path over time, one line per run]'
            '(../results/letflow/elasticity/fig5_elasticity.png)')


@table('letflow-load')
def letflow_load(root):
    result = _load(root, 'results/letflow/load/results.json')
    lines = ['| load | scheme | mean FCT (ms) | ± s.e. (ms) | / per-flow ECMP\'s | flows | unfinished | '
             'L0→S1 utilisation | drops at leaves / servers |', '|---|---|---|---|---|---|---|---|---|']
    for r in result['rows']:
        lines.append('| %g%% | %s (%s) | %.2f | %s | %.2f | %d | %d | %.2f | %d / %d |' % (
            100 * r['load'], r['scheme'], r['granularity'], r['mean_fct_ms'],
            '-' if r['se_ms'] is None else '%.2f' % r['se_ms'], r['normalised'], r['flows'], r['unfinished'],
            r['util_L0->S1'], r['drops_leaves'], r['drops_servers']))
    return (_rows(lines) + '\n\nSeeds %s, %s flow sizes.\n\n![mean FCT against load per scheme]'
            '(../results/letflow/load/load_sweep.png)' % (' '.join(map(str, result['seeds'])), result['workload']))


# --- the guides' plots: Table 2 per pattern, FCT against load, reaction against k -----------------
# Each is a caption rendered from its results file (so ``--check`` reads the
# file, not the plot) and the plot ``python -m scripts.docs`` draws from it.

TABLE2_RESULTS = 'results/sim/table2-1gbps-fq.json'
TABLE2_PLOT = 'results/sim/table2-1gbps-fq.png'
FCT_RESULTS = 'results/sim/fct-10gbps.json'
FCT_PLOT = 'results/sim/fct-10gbps-load.png'
REACTION_RESULTS = 'results/fattree/recompute_benchmark.json'
REACTION_PLOT = 'results/fattree/reaction_vs_k.png'
SCHEME_ORDER = ('nonblocking', 'twolevel', 'ecmp', 'classifier', 'scheduler', 'letflow')


def _pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path):
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)


def _table2_cells(data):
    """(the first table of a datacenter-rates file, {(pattern, scheme): % of the reference, mean, min, max})."""
    entry = data['tables'][0]
    cells = {}
    for c in entry['cells']:
        stats = c['pct_of_reference'] or c['pct_of_line']  # the reference's own cell: % of line rate
        cells[(c['pattern'], c['scheme'])] = (stats['mean'], stats['min'], stats['max'])
    return entry, cells


@table('table2-plot')
def table2_plot(root):
    from scripts.experiments.datacenter_rates import link_rate
    entry, cells = _table2_cells(_load(root, TABLE2_RESULTS))
    reference = [cells[(p, 'nonblocking')][0] for p in entry['patterns']]
    return ('Table 2 on the packet simulator: k=%d, %s, hosts\' send queues %s, seeds %s; each bar a scheme\'s '
            'goodput as %% of the non-blocking reference on the same flows (mean, whiskers min-max over the '
            'seeds), the paper\'s figures as black marks; the reference itself carried %s%% of line rate '
            '(`%s`).\n\n![Table 2 as grouped bars per pattern](../%s)'
            % (entry['k'], link_rate(entry['bw_mbps']), entry['sender_queue'], ' '.join(map(str, entry['seeds'])),
               '-'.join(sorted({'%.1f' % min(reference), '%.1f' % max(reference)})), TABLE2_RESULTS, TABLE2_PLOT))


def _draw_table2(root, path):
    from scripts.experiments.datacenter_rates import link_rate
    data = _load(root, TABLE2_RESULTS)
    entry, cells = _table2_cells(data)
    schemes = [s for s in SCHEME_ORDER if s in entry['schemes'] and s != 'nonblocking']
    patterns = entry['patterns']
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 3.8))
    width = 0.8 / len(schemes)
    for i, scheme in enumerate(schemes):
        xs = [j + (i - (len(schemes) - 1) / 2.0) * width for j in range(len(patterns))]
        means = [cells[(p, scheme)][0] for p in patterns]
        low = [m - cells[(p, scheme)][1] for p, m in zip(patterns, means)]
        high = [cells[(p, scheme)][2] - m for p, m in zip(patterns, means)]
        ax.bar(xs, means, width, yerr=[low, high], capsize=2, label=scheme, color='C%d' % i)
        paper = data['paper']
        if scheme in paper['schemes']:
            k = paper['schemes'].index(scheme)
            marks = [(x, paper['pct_of_ideal'][p][k]) for x, p in zip(xs, patterns) if p in paper['pct_of_ideal']]
            ax.scatter([x for x, _ in marks], [y for _, y in marks], marker='_', s=120, color='black', zorder=3,
                       label='paper' if scheme == paper['schemes'][0] else None)
    ax.set_xticks(range(len(patterns)))
    ax.set_xticklabels([_pattern(p) for p in patterns], rotation=20, ha='right', fontsize=8)
    ax.set_ylabel('% of the non-blocking reference')
    ax.set_ylim(0, 110)
    ax.set_title('Table 2, k=%d, %s, simulated; seeds %s' % (entry['k'], link_rate(entry['bw_mbps']),
                                                            ' '.join(map(str, entry['seeds']))), fontsize=9)
    ax.legend(fontsize=7, ncol=len(schemes) + 1, loc='lower left')
    _save(fig, path)


def _fct_panels(data):
    """{(cdf, tcp): {scheme: [(load, small flows' mean slowdown)]}} of the cells with no failed link."""
    panels = {}
    for c in data['cells']:
        if c['fail'] or not c['small']['flows']:
            continue
        panels.setdefault((c['cdf'], c['tcp']), {}).setdefault(c['scheme'], []).append((c['load'], c['small']['mean']))
    return {key: {scheme: sorted(points) for scheme, points in lines.items()} for key, lines in panels.items()}


@table('fct-load-plot')
def fct_load_plot(root):
    data = _load(root, FCT_RESULTS)
    conditions = data['workloads'][0]['conditions']
    panels = _fct_panels(data)
    loads = sorted({load for lines in panels.values() for points in lines.values() for load, _ in points})
    return ('Flow-completion times on the packet simulator: k=%d, %g Gbit/s, %s traffic, seed(s) %s; the small '
            'flows\' mean FCT slowdown (FCT over the flow\'s ideal FCT) against the offered load (%s), one panel '
            'per workload and TCP, one line per scheme, no failed link (`%s`).\n\n'
            '![small flows\' FCT slowdown against load](../%s)'
            % (conditions['k'], conditions['bw'] / 1000.0, conditions['pattern'],
               ' '.join(map(str, conditions['seeds'])), ', '.join('%g' % load for load in loads), FCT_RESULTS,
               FCT_PLOT))


def _draw_fct_load(root, path):
    panels = _fct_panels(_load(root, FCT_RESULTS))
    keys = sorted(panels)
    plt = _pyplot()
    rows = (len(keys) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(8, 3 * rows), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        for scheme in [s for s in SCHEME_ORDER if s in panels[key]]:
            points = panels[key][scheme]
            ax.plot([load for load, _ in points], [value for _, value in points], 'o-', ms=3,
                    color='C%d' % (SCHEME_ORDER.index(scheme) - 1), label=scheme)
        ax.set_title('%s, %s' % key, fontsize=9)
        ax.set_xlabel('offered load')
        ax.set_ylabel('small flows: mean FCT slowdown', fontsize=8)
        ax.set_ylim(bottom=0)
    axes.flat[0].legend(fontsize=7)
    _save(fig, path)


def _reactions(data):
    """{event: [(k, reaction s)]}: the staged update's wall time for each failure kind."""
    lines = {}
    for r in data['results']:
        for event in r['events']:
            lines.setdefault(event['event'], []).append((r['k'], event['failure']['reaction_s']))
    return lines


@table('reaction-plot')
def reaction_plot(root):
    lines = _reactions(_load(root, REACTION_RESULTS))
    worst = max((s, k, event) for event, points in lines.items() for k, s in points)
    return ('The controller\'s reaction to a failure against k: recompute, staged plan and encoded messages, '
            'median wall time of the runs on the benchmark\'s machine, one line per failure kind; the longest, '
            '%.2f s, is a %s at k=%d (`%s`).\n\n![reaction time to a failure against k](../%s)'
            % (worst[0], worst[2], worst[1], REACTION_RESULTS, REACTION_PLOT))


def _draw_reaction(root, path):
    lines = _reactions(_load(root, REACTION_RESULTS))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for event, points in lines.items():
        ax.plot([k for k, _ in points], [max(s, 1e-4) for _, s in points], 'o-', ms=3, label=event)
    ax.set_xscale('log', base=2)
    ax.set_yscale('log')
    ks = sorted({k for points in lines.values() for k, _ in points})
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.set_xlabel('fat-tree k')
    ax.set_ylabel('reaction (s)')
    ax.set_title('controller reaction to a failure (model; no fabric)', fontsize=9)
    ax.legend(fontsize=7)
    _save(fig, path)


# --- plots ---------------------------------------------------------------------------------------
# The plots the tables link to are drawn from the committed results beside
# them, not committed themselves: ``python -m scripts.docs`` draws them
# (matplotlib), ``--check`` reads none.

def _draw_bisection(study, root, path):
    from scripts.experiments.bisection_report import plot, summarize
    _, saved = study_results(root, study)
    plot(path, summarize(saved['runs'], saved['config']), saved['config'])


def _draw_workload(study, root, path):
    from scripts.experiments.workload_report import plot
    run_dir, saved = study_results(root, study)
    plot(os.path.join(root, run_dir), saved['config'], saved['rows'], saved)  # draws both of the run's plots


def _draw_from(results, draw, root, path):
    """``draw`` (a function of the results file's content and the plot's
    path, named 'module:function') applied to ``results``."""
    module, function = draw.split(':')
    getattr(importlib.import_module(module), function)(_load(root, results), path)


def _draw_kevin_emulation(root, path):
    from scripts.kevin.report import plot_emulation
    result = _load(root, 'results/kevin/emulation.json')
    plot_emulation(result['summary'], path, result['config'])


def _draw_kevin_model(root, path):
    from scripts.kevin.report import plot_model
    result = _load(root, 'results/kevin/model_path_length.json')
    schemes = [key for key in result['means'][0] if key not in ('n', 'load') and not key.endswith('_weighted')]
    plot_model(path, result['means'], schemes, sorted({r['n'] for r in result['means']}), result['seeds'])


# {plot path (under the root): what draws it}
FILE_PLOTS = {
    'results/letflow/markov/fig7_markov.png': ('results/letflow/markov/results.json',
                                               'scripts.letflow.plots:markov_distribution'),
    'results/letflow/markov/fig8_delta_range.png': ('results/letflow/markov/results.json',
                                                    'scripts.letflow.plots:markov_delta_range'),
    'results/letflow/elasticity/fig5_elasticity.png': ('results/letflow/elasticity/results.json',
                                                       'scripts.letflow.plots:elasticity'),
    'results/letflow/load/load_sweep.png': ('results/letflow/load/results.json', 'scripts.letflow.plots:load_sweep'),
}


def plots(root=ROOT):
    """{plot path under ``root``: a function of the root and that path
    drawing it}; one function may draw several (a workload run's two)."""
    drawn = {'results/kevin/emulation.png': _draw_kevin_emulation,
             'results/kevin/model_path_length.png': _draw_kevin_model,
             TABLE2_PLOT: _draw_table2, FCT_PLOT: _draw_fct_load, REACTION_PLOT: _draw_reaction}
    for path, (results, draw) in FILE_PLOTS.items():
        drawn[path] = functools.partial(_draw_from, results, draw)
    for study in BISECTION_STUDIES.values():
        drawn[os.path.join(load_study(root, study)['results'], 'bisection.png')] = functools.partial(
            _draw_bisection, study)
    for study in WORKLOAD_STUDIES.values():
        draw = functools.partial(_draw_workload, study)
        for name in ('slowdown_vs_load.png', 'small_flow_fct_cdf.png'):
            drawn[os.path.join(load_study(root, study)['results'], name)] = draw
    return drawn


def draw_plots(root=ROOT):
    """Draw every plot of ``plots``; the paths drawn."""
    done = []
    for path, draw in plots(root).items():
        if draw not in done:
            draw(root, os.path.join(root, path))
            done.append(draw)
    return sorted(plots(root))


# --- pages ---------------------------------------------------------------------------------------

def pages(root):
    """README.md, every docs page and every study's page, relative to ``root``."""
    return ['README.md'] + sorted(os.path.relpath(p, root) for pattern in ('*.md', 'studies/*.md')
                                  for p in glob.glob(os.path.join(root, 'docs', pattern)))


def relinked(table, page):
    """A rendered table's links to results/ (written for a page in docs/)
    from ``page``, which may sit deeper (docs/studies/)."""
    depth = os.path.normpath(page).count(os.sep) - 1
    return table if depth <= 0 else table.replace('](../results/', '](%sresults/' % ('../' * (depth + 1)))


def render_text(text, render, page='page'):
    """``text`` with every marked table replaced by ``render(name)``.
    MarkerError on an unknown name, a malformed or unclosed marker, or an
    end marker without a start."""
    lines = text.split('\n')
    out, i = [], 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped == END:
            raise MarkerError('%s:%d: %s without a table marker before it' % (page, i + 1, END))
        if not stripped.startswith('<!-- table'):
            out.append(lines[i])
            i += 1
            continue
        match = START.fullmatch(stripped)
        if match is None:
            raise MarkerError('%s:%d: malformed marker %r: write <!-- table: NAME -->' % (page, i + 1, stripped))
        name = match.group(1)
        if name not in TABLES:
            raise MarkerError('%s:%d: unknown table %r (known: %s)' % (page, i + 1, name, ', '.join(sorted(TABLES))))
        end = i + 1
        while end < len(lines) and lines[end].strip() != END and not lines[end].strip().startswith('<!-- table'):
            end += 1
        if end == len(lines) or lines[end].strip() != END:
            raise MarkerError('%s:%d: table %r is not closed by %s' % (page, i + 1, name, END))
        out += [lines[i], ''] + relinked(render(name), page).strip('\n').split('\n') + ['', lines[end]]
        i = end + 1
    return '\n'.join(out)


def table_names(text):
    """The table names marked in ``text``, in order."""
    return [m.group(1) for m in (START.fullmatch(line.strip()) for line in text.split('\n')) if m]


def _renderer(root):
    cache = {}

    def render(name):
        if name not in cache:
            cache[name] = TABLES[name](root)
        return cache[name]
    return render


def rendered_pages(root=ROOT):
    """[(page, text now, text rendered)] for every page."""
    render = _renderer(root)
    result = []
    for page in pages(root):
        with open(os.path.join(root, page)) as f:
            text = f.read()
        result.append((page, text, render_text(text, render, page)))
    return result


def check(root=ROOT):
    """[(page, names of the tables that differ)] for every page whose
    tables are not what their results files render to."""
    differing = []
    for page, text, rendered in rendered_pages(root):
        if text != rendered:
            names = table_names(text)
            now, new = _tables_in(text), _tables_in(rendered)
            differing.append((page, [n for n, a, b in zip(names, now, new) if a != b] or names))
    return differing


def _tables_in(text):
    """The text between each pair of markers."""
    found, inside = [], None
    for line in text.split('\n'):
        if START.fullmatch(line.strip()):
            inside = []
        elif line.strip() == END and inside is not None:
            found.append('\n'.join(inside))
            inside = None
        elif inside is not None:
            inside.append(line)
    return found


def write(root=ROOT):
    """Rewrite every page whose tables differ; the pages rewritten."""
    written = []
    for page, text, rendered in rendered_pages(root):
        if text != rendered:
            with open(os.path.join(root, page), 'w') as f:
                f.write(rendered)
            written.append(page)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m scripts.docs', description=__doc__.split('\n\n')[0])
    parser.add_argument('--check', action='store_true',
                        help='change nothing: exit 1 naming the pages whose tables differ from their results')
    parser.add_argument('--root', default=ROOT, help='repository root (default: this checkout)')
    args = parser.parse_args(argv)
    try:
        if args.check:
            differing = check(args.root)
            for page, names in differing:
                print('%s: tables differ from their results: %s' % (page, ', '.join(names)))
            if differing:
                print('run: python -m scripts.docs', file=sys.stderr)
                return 1
            print('every table matches its results file (%d pages)' % len(pages(args.root)))
            return 0
        written = write(args.root)
        print('rewrote: %s' % ', '.join(written) if written else 'every table already matches its results file')
        print('drew %d plots from their results files' % len(draw_plots(args.root)))
        return 0
    except (MarkerError, OSError, KeyError) as err:
        print('scripts.docs: %s' % err, file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
