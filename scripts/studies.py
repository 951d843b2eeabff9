"""The studies the docs' tables render: each names its runs in a manifest,
results/studies/NAME.json (scripts/runner/records.py load_study), with the
command lines that made the runs and the command that makes the table's
results from them.

    python -m scripts.studies                 # every study, its runs and what its tables render
    python -m scripts.studies NAME            # the study's manifest: how its runs were made
    python -m scripts.studies NAME --remake   # run the command that makes its results from its runs
    python -m scripts.studies NAME --keep-aggregates   # its runs' records without per-flow rates
"""
import argparse
import os
import shlex
import subprocess
import sys

from scripts.runner.records import STUDIES_DIR, RecordError, keep_aggregates, load_study

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the commands that make a study's results read finished runs and write one file: minutes at most
REMAKE_TIMEOUT_S = 1800


def names(root=ROOT):
    return sorted(name[:-len('.json')] for name in os.listdir(os.path.join(root, STUDIES_DIR))
                  if name.endswith('.json'))


def describe(manifest):
    lines = ['%s: %d run(s); its tables render %s' % (manifest['study'], len(manifest['runs']),
                                                       manifest['results'])]
    lines += ['  made by: %s' % command for command in manifest['made_by']]
    lines += ['  run: %s' % run for run in manifest['runs']]
    lines.append('  results made by: %s' % (manifest['command'] or 'the run itself'))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m scripts.studies', description=__doc__.split('\n\n')[0])
    parser.add_argument('name', nargs='?', help='a study (default: list them)')
    action = parser.add_mutually_exclusive_group()
    action.add_argument('--remake', action='store_true',
                        help='run the command that makes the study\'s results from its runs')
    action.add_argument('--keep-aggregates', action='store_true',
                        help='rewrite the study\'s bisection runs without their per-flow rates, each run '
                             'keeping its aggregate (for runs of thousands of flows, before committing them)')
    args = parser.parse_args(argv)
    try:
        if args.name is None:
            for name in names():
                manifest = load_study(ROOT, name)
                print('%-28s %3d run(s)  %s' % (name, len(manifest['runs']), manifest['results']))
            return 0
        manifest = load_study(ROOT, args.name)
    except RecordError as err:
        print('scripts.studies: %s' % err, file=sys.stderr)
        return 2
    if args.keep_aggregates:
        try:
            for run in manifest['runs']:
                print('%s: %d per-flow rates dropped' % (run, keep_aggregates(os.path.join(ROOT, run))))
        except RecordError as err:
            print('scripts.studies: %s' % err, file=sys.stderr)
            return 2
        return 0
    if not args.remake:
        print(describe(manifest))
        return 0
    if manifest['command'] is None:
        print('scripts.studies: %s\'s tables render its run\'s own report; rerun the experiment: %s'
              % (args.name, '; '.join(manifest['made_by'])), file=sys.stderr)
        return 2
    words = shlex.split(manifest['command'])
    if words[:2] == ['python', '-m']:  # this checkout's interpreter
        words[0] = sys.executable
    elif words[0] == 'dcfabric':
        words[:1] = [sys.executable, '-m', 'scripts.cli']
    print(manifest['command'], flush=True)
    return subprocess.run(words, cwd=ROOT, timeout=REMAKE_TIMEOUT_S, check=False).returncode


if __name__ == '__main__':
    sys.exit(main())
