"""Measured: the classifier minus two-level routing, per pattern,
from finished bisection runs (scripts.experiments.bisection) that ran both
schemes and the non-blocking reference, one or more seeds each.

    python -m scripts.fattree.classifier_difference RUN_DIR [RUN_DIR ...]
        [--out results/classifier_difference]

Each scheme's score is the bisection experiment's (% of the non-blocking
switch's aggregate rate, same pattern and seed). Writes difference.json
(the run directories, every seed's scores) and difference.csv (per pattern:
two-level and classifier mean, classifier minus two-level mean, standard
deviation, min and max over the seeds, and the classifier's moves in each
seed's run, from the controller's log, not counting the entries placed
ahead of a moved flow; in brackets, how many moved a server -> client
stream, the iperf3 flows' ACKs), and the same as Markdown tables
(difference.md). A seed found in several run directories is repeated: its
score is the mean of its runs, and repeats.csv lists each run's scores and
their range (the run-to-run noise of one placement).
"""
import argparse
import csv
import json
import os
import statistics

from scripts.emulator.bisection_measure import IPERF_PORT
from scripts.experiments.bisection_report import summarize
from scripts.experiments.patterns import label
from scripts.runner.records import load_results

SCHEMES = ('twolevel', 'classifier')


def moves_in(decisions):
    """The lines of a classifier run's logged decisions that move a flow:
    not the entries placed ahead of a moved flow ('port None -> P', see
    controller.fattree.classifier.Move)."""
    return [line for line in decisions if ' port None -> ' not in line]


def returning(moves):
    """How many ``moves`` are of server -> client streams (the iperf3
    flows' ACKs and control replies): any destination port but iperf3's."""
    return sum(1 for line in moves if ' tcp/%d ' % IPERF_PORT not in line)


def per_seed(run_dirs):
    """[{'run': dir, 'seed', 'pattern', 'twolevel', 'classifier',
    'classifier_moves', 'classifier_return_moves'}, ...]: the two schemes'
    % of non-blocking for every
    seed and pattern of the runs, and the classifier's logged moves (None
    for runs from before the runner recorded them)."""
    rows = []
    for run_dir in run_dirs:
        saved = load_results(run_dir)
        for rep, seed in enumerate(saved['config']['seeds']):
            runs = [r for r in saved['runs'] if r['rep'] == rep]
            summary = summarize(runs, saved['config'])
            for pattern in dict.fromkeys(r['pattern'] for r in runs):
                missing = [s for s in SCHEMES if summary.get((pattern, s), {}).get('pct_of_nonblocking') is None]
                if missing:
                    raise ValueError('%s: %s seed %d has no %s run beside a non-blocking one'
                                     % (run_dir, pattern, seed, ' or '.join(missing)))
                decisions = [r.get('controller_decisions') for r in runs
                             if r['pattern'] == pattern and r['scheme'] == 'classifier']
                moves = None if None in decisions else [m for d in decisions for m in moves_in(d)]
                rows.append(dict({'run': run_dir, 'seed': seed, 'pattern': pattern},
                                 **{s: summary[(pattern, s)]['pct_of_nonblocking'] for s in SCHEMES},
                                 classifier_moves=None if moves is None else len(moves),
                                 classifier_return_moves=None if moves is None else returning(moves)))
    return rows


def _moves(group):
    """The classifier's moves of each row, with how many of them were of
    server -> client streams in brackets where any; '-' where not recorded."""
    return '/'.join('-' if r['classifier_moves'] is None else str(r['classifier_moves'])
                    + (' (%d)' % r['classifier_return_moves'] if r['classifier_return_moves'] else '')
                    for r in group)


def by_seed(rows):
    """{(pattern, seed): rows} in first-seen order; more than one row is
    repetitions of one seed (runs of it in several run directories)."""
    groups = {}
    for r in rows:
        groups.setdefault((r['pattern'], r['seed']), []).append(r)
    return groups


def differences(rows):
    """Per pattern over the seeds (each seed's score the mean of its
    repetitions): both schemes' mean and classifier minus two-level, mean,
    standard deviation, min and max."""
    seeds = [{'pattern': p, 'seed': seed, 'moves': _moves(g),
              **{s: statistics.mean(r[s] for r in g) for s in SCHEMES}}
             for (p, seed), g in by_seed(rows).items()]
    out = []
    for pattern in dict.fromkeys(r['pattern'] for r in seeds):
        group = [r for r in seeds if r['pattern'] == pattern]
        diff = [r['classifier'] - r['twolevel'] for r in group]
        out.append({'pattern': pattern, 'seeds': ' '.join(str(r['seed']) for r in group),
                    'twolevel_pct': statistics.mean(r['twolevel'] for r in group),
                    'classifier_pct': statistics.mean(r['classifier'] for r in group),
                    'difference_mean_pct': statistics.mean(diff),
                    'difference_std_pct': statistics.stdev(diff) if len(diff) > 1 else 0.0,
                    'difference_min_pct': min(diff), 'difference_max_pct': max(diff),
                    'classifier_moves': ' '.join(r['moves'] for r in group)})
    return out


def repeats(rows):
    """Per pattern and seed run more than once: each scheme's scores and
    their range, the run-to-run noise of one and the same placement."""
    return [{'pattern': p, 'seed': seed, 'repetitions': len(g),
             **{s + '_pct': ' '.join('%.1f' % r[s] for r in g) for s in SCHEMES},
             **{s + '_range_pct': max(r[s] for r in g) - min(r[s] for r in g) for s in SCHEMES},
             'classifier_moves': _moves(g)}
            for (p, seed), g in by_seed(rows).items() if len(g) > 1]


def markdown(summary, repeated):
    """The tables as Markdown (the README's are pasted from it)."""
    lines = ['| pattern | seeds | two-level | classifier | classifier - two-level: mean +- std (min..max) '
             '| classifier moves per seed (of them server -> client streams) |', '|---|---|---|---|---|---|']
    lines += ['| %s | %s | %.1f | %.1f | %+.1f +- %.1f (%+.1f..%+.1f) | %s |' % (
        label(r['pattern']), r['seeds'], r['twolevel_pct'], r['classifier_pct'], r['difference_mean_pct'],
        r['difference_std_pct'], r['difference_min_pct'], r['difference_max_pct'], r['classifier_moves'])
        for r in summary]
    if repeated:
        lines += ['', '| pattern, seed | two-level, each run | range | classifier, each run | range '
                  '| classifier moves |', '|---|---|---|---|---|---|']
        lines += ['| %s, %d | %s | %.1f | %s | %.1f | %s |' % (
            label(r['pattern']), r['seed'], r['twolevel_pct'], r['twolevel_range_pct'], r['classifier_pct'],
            r['classifier_range_pct'], r['classifier_moves']) for r in repeated]
    return '\n'.join(lines) + '\n'


def write_csv(path, rows):
    with open(path, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m scripts.fattree.classifier_difference',
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('run_dirs', nargs='+', metavar='RUN_DIR')
    parser.add_argument('--out', default='results/classifier_difference')
    args = parser.parse_args(argv)
    try:
        rows = per_seed(args.run_dirs)
    except (OSError, ValueError, KeyError) as err:
        parser.error(str(err))
    summary, repeated = differences(rows), repeats(rows)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'difference.json'), 'w') as f:
        json.dump({'runs': args.run_dirs, 'per_seed': rows, 'differences': summary, 'repeats': repeated},
                  f, indent=1)
    write_csv(os.path.join(args.out, 'difference.csv'), summary)
    if repeated:
        write_csv(os.path.join(args.out, 'repeats.csv'), repeated)
    with open(os.path.join(args.out, 'difference.md'), 'w') as f:
        f.write(markdown(summary, repeated))
    print('% of the non-blocking switch; classifier - two-level over seeds; classifier moves per seed '
          '(of them server -> client streams)')
    for row in summary:
        print('%-27s seeds %-7s two-level %5.1f classifier %5.1f difference %+5.1f +- %4.1f (%+5.1f..%+5.1f)'
              ' moves %s' % (label(row['pattern']), row['seeds'], row['twolevel_pct'], row['classifier_pct'],
                             row['difference_mean_pct'], row['difference_std_pct'], row['difference_min_pct'],
                             row['difference_max_pct'], row['classifier_moves']))
    for row in repeated:
        print('%-27s seed %d, %d runs: two-level %s (range %.1f), classifier %s (range %.1f), moves %s' % (
            label(row['pattern']), row['seed'], row['repetitions'], row['twolevel_pct'],
            row['twolevel_range_pct'], row['classifier_pct'], row['classifier_range_pct'],
            row['classifier_moves']))
    print('written: %s/difference.json, difference.csv, difference.md%s'
          % (args.out, ', repeats.csv' if repeated else ''))


if __name__ == '__main__':
    main()
