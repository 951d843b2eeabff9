"""The workload's FCT slowdowns at a datacenter rate on the simulator:
finished ``dcfabric workload --backend sim`` runs (one directory per
invocation, any loads, schemes and seeds in each) gathered into one
results file, one cell per workload, failed links, load, hosts' TCP and
scheme.

    python -m scripts.experiments.datacenter_fcts RUN [RUN ...] --out results/sim/fct-10gbps.json

A cell holds its finished flows' slowdown (FCT over the simulated fabric's
ideal FCT) for small flows (below 100 KB, the workload's first bucket) and
large ones (the rest): their number, mean, median and 99th percentile, and
the flows that did not finish. The runs of one workload must share the
settings that are the table's conditions (rate, queue, arrival window,
minimum RTO, seeds, ...); its ECN threshold belongs to its TCP. What each
run cost (the simulator's wall time and events) and what its switches'
queues dropped and marked are kept per cell.

``markdown(data)`` is the table docs/simulator.md renders (scripts/docs.py).
Pure: reads files, writes one; no simulation.
"""
import argparse

from scripts.experiments.workload_report import BUCKETS, slowdown_stats
from scripts.results import write_result_file
from scripts.experiments.datacenter_rates import SCHEME_ORDER, link_rate
from scripts.runner.records import load_results
from scripts.sim.scenario import TCP_VARIANTS

SMALL_BELOW_BYTES = BUCKETS[0][2]
SIZES = ('small', 'large')
# what the runs of one workload must share: the table's conditions
SAME_SETTINGS = ('k', 'bw', 'queue', 'seconds', 'pattern', 'seeds', 'min_rto_ms', 'control_delay_ms', 'period_s',
                 'link_delay_us', 'drain')
WORKLOAD_ORDER = ('web-search', 'data-mining')


class FctsError(ValueError):
    """The runs given do not make one table: another backend, settings that
    differ within a workload, a cell in two runs."""


def load(run_dir):
    """(run_dir, its summary.json, its flows.csv rows) of a finished run."""
    try:
        saved = load_results(run_dir)
    except ValueError as err:  # RecordError names the file and what is wrong
        raise FctsError('%s is not a finished workload run: %s' % (run_dir, err)) from None
    if saved['config']['experiment'] != 'workload':
        raise FctsError('%s is a %s run, not a workload' % (run_dir, saved['config']['experiment']))
    return run_dir, saved, saved.pop('rows')


def _cell(rows, run):
    finished = [r for r in rows if r['slowdown'] is not None]
    sizes = {size: slowdown_stats([r['slowdown'] for r in finished
                                   if (r['size_bytes'] < SMALL_BELOW_BYTES) == (size == 'small')])
             for size in SIZES}
    simulation = run['simulation']
    return dict(sizes, unfinished=len(rows) - len(finished), wall_s=run['ran_on']['wall_s'],
                events=simulation.get('events'), queue_drops=simulation.get('queue_drops'),
                ecn_marked=simulation.get('ecn_marked'), host_queue_drops=simulation.get('host_queue_drops'))


def gather(saved_runs):
    """The results file's figures from ``saved_runs`` [(run_dir, summary.json,
    flows.csv rows)]: {'workloads': [{cdf, conditions, runs, ecn thresholds
    by TCP}], 'cells': [...], 'not_run': [...]}. FctsError unless every run
    is simulated, a workload's runs share SAME_SETTINGS and a TCP one ECN
    threshold, and no cell is in two runs."""
    workloads, cells, seen = {}, [], {}
    for run_dir, summary, rows in saved_runs:
        config = summary['config']
        if config['backend'] != 'sim':
            raise FctsError('%s ran on the %s: this table is the simulator\'s' % (run_dir, config['backend']))
        settings = dict({key: config.get(key) for key in SAME_SETTINGS}, sender_queue=config['sender_queue'])
        tcp, threshold = config['tcp'], config['ecn_threshold_packets']
        workload = workloads.setdefault(config['cdf'], {'cdf': config['cdf'], 'conditions': settings,
                                                        'first_run': run_dir, 'runs': [], 'ecn_threshold': {}})
        if settings != workload['conditions']:
            differing = sorted(k for k in settings if settings[k] != workload['conditions'][k])
            raise FctsError('%s and %s differ in %s' % (workload['first_run'], run_dir, ', '.join(differing)))
        if workload['ecn_threshold'].setdefault(tcp, threshold) != threshold:
            raise FctsError('%s runs %s with ECN threshold %d, another run of %s with %d'
                            % (run_dir, tcp, threshold, config['cdf'], workload['ecn_threshold'][tcp]))
        workload['runs'].append(run_dir)
        fail = ' '.join(config['fail'])
        for run in summary['runs']:
            key = (config['cdf'], fail, run['load'], tcp, run['scheme'], run['seed'])
            if key in seen:
                raise FctsError('%s, failed %s, load %g, %s, %s, seed %d is in both %s and %s'
                                % (config['cdf'], fail or 'none', run['load'], tcp, run['scheme'], run['seed'],
                                   seen[key], run_dir))
            seen[key] = run_dir
            of_run = [r for r in rows if (r['scheme'], r['load'], r['seed']) == (run['scheme'], run['load'], run['seed'])]
            cells.append(dict({'cdf': config['cdf'], 'fail': fail, 'load': run['load'], 'tcp': tcp,
                               'scheme': run['scheme'], 'seed': run['seed'], 'run': run_dir}, **_cell(of_run, run)))
    cells.sort(key=_order)
    for workload in workloads.values():
        del workload['first_run']
    return {'workloads': sorted(workloads.values(), key=lambda w: _rank(WORKLOAD_ORDER, w['cdf'])),
            'cells': cells, 'not_run': not_run(cells)}


def _rank(order, value):
    return (order.index(value), '') if value in order else (len(order), value)


def _order(cell):
    return (_rank(WORKLOAD_ORDER, cell['cdf']), cell['fail'], cell['load'], _rank(TCP_VARIANTS, cell['tcp']),
            _rank(SCHEME_ORDER, cell['scheme']), cell['seed'])


def not_run(cells):
    """Per workload and failed links, the cells of its loads x TCPs x
    schemes (those of any of its cells) that no run holds."""
    missing = []
    for group in dict.fromkeys((c['cdf'], c['fail']) for c in cells):
        held = [c for c in cells if (c['cdf'], c['fail']) == group]
        present = {(c['load'], c['tcp'], c['scheme']) for c in held}
        loads = sorted({c['load'] for c in held})
        tcps = sorted({c['tcp'] for c in held}, key=lambda t: _rank(TCP_VARIANTS, t))
        schemes = sorted({c['scheme'] for c in held}, key=lambda s: _rank(SCHEME_ORDER, s))
        missing += [{'cdf': group[0], 'fail': group[1], 'load': load, 'tcp': tcp, 'scheme': scheme}
                    for load in loads for tcp in tcps for scheme in schemes if (load, tcp, scheme) not in present]
    return missing


# --- Markdown ------------------------------------------------------------------------------------

def _figures(stats):
    if not stats['flows']:
        return ['0', '-', '-']
    return ['%d' % stats['flows'], '%.2f' % stats['mean'], '%.2f' % stats['p99']]


def _count(value):
    return '-' if value is None else '{:,}'.format(value)


def conditions_line(workload):
    c = workload['conditions']
    marking = '; '.join('%s: %s' % (tcp, 'ECN marked from %d queued packets' % k if k else 'no ECN marking')
                        for tcp, k in sorted(workload['ecn_threshold'].items(),
                                             key=lambda item: _rank(TCP_VARIANTS, item[0])))
    return ('**%s**: k=%d fat-tree, %s links, %d-packet queues (%s), %s, %g ms of arrivals then at most %s to '
            'finish, hosts\' minimum RTO %g ms and send queues %s, the dynamic schemes polled every %s with their '
            'flow-mods %g ms later, seed(s) %s; runs %s.'
            % (workload['cdf'], c['k'], link_rate(c['bw']), c['queue'], marking, c['pattern'], c['seconds'] * 1e3,
               '%g ms' % (c['drain'] * 1e3) if c['drain'] else 'the default drain', c['min_rto_ms'],
               c['sender_queue'],
               'the app\'s default 1 s' if c['period_s'] is None else '%g ms' % (c['period_s'] * 1e3),
               c['control_delay_ms'], ' '.join(map(str, c['seeds'])),
               ', '.join('`%s`' % r for r in workload['runs'])))


def markdown(data):
    """The conditions per workload, one row per cell, the cells not run,
    and what the runs cost."""
    header = ['workload', 'failed link', 'load', 'TCP', 'scheme', 'small flows', 'small mean', 'small p99',
              'large flows', 'large mean', 'large p99', 'unfinished', 'switch drops', 'sender drops', 'ECN marks',
              'wall (s)']
    lines = ['| %s |' % ' | '.join(header), '|---' * len(header) + '|']
    for c in data['cells']:
        lines.append('| %s |' % ' | '.join(
            [c['cdf'], c['fail'] or '-', '%g' % c['load'], c['tcp'], c['scheme']] + _figures(c['small'])
            + _figures(c['large']) + [str(c['unfinished']), _count(c['queue_drops']),
                                      _count(c['host_queue_drops']), _count(c['ecn_marked']),
                                      '-' if c['wall_s'] is None else '%.0f' % c['wall_s']]))
    walls = [c['wall_s'] for c in data['cells'] if c['wall_s'] is not None]
    notes = ['FCT slowdown: a flow\'s FCT over its ideal FCT alone on the simulated fabric; small: below %d KB, '
             'large: the rest; mean and 99th percentile over the cell\'s finished flows (one seed: the 99th '
             'percentile of a cell of n flows rests on its n/100 slowest). Switch drops and ECN marks: packets '
             'the switches\' queues dropped and marked in the run; sender drops: packets the hosts\' own device '
             'queues dropped, which ns-3\'s TCP is not told of (-: a run made before they were counted). Wall: '
             'the simulator\'s wall time for the run.'
             % (SMALL_BELOW_BYTES / 1e3)]
    if walls:
        notes.append('Cost: %d runs, %.0f s of simulator wall time in all, %.0f-%.0f s a run.'
                     % (len(walls), sum(walls), min(walls), max(walls)))
    if data['not_run']:
        notes.append('Not run (of the loads, TCPs and schemes above): %s.' % '; '.join(
            '%s%s, load %g, %s, %s' % (m['cdf'], ', failed %s' % m['fail'] if m['fail'] else '', m['load'], m['tcp'],
                                        m['scheme']) for m in data['not_run']))
    return '\n\n'.join([conditions_line(w) for w in data['workloads']] + ['\n'.join(lines)] + notes)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('runs', nargs='+', metavar='RUN', help='simulated workload run directories')
    parser.add_argument('--out', default='results/sim/fct-10gbps.json')
    args = parser.parse_args(argv)
    try:
        data = gather([load(d) for d in args.runs])
    except FctsError as err:
        parser.exit(2, 'error: %s\n' % err)
    write_result_file(args.out, data, markdown)


if __name__ == '__main__':
    main()
