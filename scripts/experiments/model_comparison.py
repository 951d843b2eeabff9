"""The flow-level model against the packet simulator: Table 2's cells, each
as a percentage of its own backend's non-blocking reference for the same
flows, side by side, and whether they lie within TOLERANCE_POINTS of each
other (pure but for main).

    python -m scripts.experiments.model_comparison SIMULATED_RUN FLOW_RUN [--out results/flow]

Both runs must be the same plan (k, link rate, seeds, patterns): the flow
model then routes the very flows, with the same source ports, that ns-3
simulated. Writes table2-k<K>-<BW>mbps-vs-sim.json, which docs/schemes.md
renders.
"""
import argparse
import os

from scripts.experiments.bisection_report import summarize
from scripts.experiments.patterns import label
from scripts.results import write_result_file
from scripts.runner.records import load_results

TOLERANCE_POINTS = 5.0
SAME_PLAN = ('k', 'bw', 'seeds', 'patterns')


def compare(simulated, modelled, tolerance=TOLERANCE_POINTS):
    """Rows, one per (pattern, scheme other than the reference) both hold,
    of two loaded results (load_results): the simulated and the modelled
    cell, their difference and whether it is within ``tolerance`` points.
    ValueError unless they are a simulated and a flow-model run of one plan."""
    backends = (simulated['config']['backend'], modelled['config']['backend'])
    if backends != ('sim', 'flow'):
        raise ValueError('need a packet-simulator run and a flow-model run, got backends %s and %s' % backends)
    differing = [key for key in SAME_PLAN if simulated['config'][key] != modelled['config'][key]]
    if differing:
        raise ValueError('the runs are not one plan: they differ in %s' % ', '.join(differing))
    sim = summarize(simulated['runs'], simulated['config'])
    flow = summarize(modelled['runs'], modelled['config'])
    rows = []
    for pattern in simulated['config']['patterns']:
        for scheme in simulated['config']['schemes']:
            if scheme == 'nonblocking' or (pattern, scheme) not in flow or (pattern, scheme) not in sim:
                continue
            a, b = sim[(pattern, scheme)]['pct_of_nonblocking'], flow[(pattern, scheme)]['pct_of_nonblocking']
            rows.append({'pattern': pattern, 'scheme': scheme, 'simulated_pct': round(a, 1),
                         'flow_pct': round(b, 1), 'difference_points': round(b - a, 1),
                         'within': abs(b - a) <= tolerance})
    return rows


def markdown(result):
    rows = result['rows']
    within = sum(1 for r in rows if r['within'])
    lines = ['k=%d, %g Mbit/s, seeds %s: the packet simulator (hosts\' send queues %s) and the flow-level model on '
             'the same flows; each cell %% of its own backend\'s reference, mean over the seeds. **%d of %d cells** '
             'lie within %g points.' % (result['k'], result['bw'], ' '.join(map(str, result['seeds'])),
                                         result['sender_queue'], within, len(rows), result['tolerance_points']),
             '', '| pattern | scheme | simulator | flow model | flow - sim | within |', '|---|---|---|---|---|---|']
    lines += ['| %s | %s | %.1f | %.1f | %+.1f | %s |' % (label(r['pattern']), r['scheme'], r['simulated_pct'],
                                                          r['flow_pct'], r['difference_points'],
                                                          'yes' if r['within'] else '**no**') for r in rows]
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('simulated', help='a simulated bisection run directory')
    parser.add_argument('modelled', help='the flow-model run of the same plan')
    parser.add_argument('--out', default='results/flow')
    args = parser.parse_args(argv)
    try:
        simulated, modelled = load_results(args.simulated), load_results(args.modelled)
        rows = compare(simulated, modelled)
    except ValueError as error:
        parser.error('cannot compare %s with %s: %s' % (args.simulated, args.modelled, error))
    config = simulated['config']
    result = {'k': config['k'], 'bw': config['bw'], 'seeds': config['seeds'], 'sender_queue': config['sender_queue'],
              'tolerance_points': TOLERANCE_POINTS, 'simulated_run': os.path.normpath(args.simulated),
              'flow_run': os.path.normpath(args.modelled), 'rows': rows}
    write_result_file(os.path.join(args.out, 'table2-k%d-%gmbps-vs-sim.json' % (config['k'], config['bw'])), result,
                      markdown)


if __name__ == '__main__':
    main()
