"""The options every experiment takes to choose its backend and how its
plan runs (--backend, --jobs, --dask, --resume), and the one way an
experiment's command hands its plan to the loop."""
import argparse
import os

from scripts.argtypes import positive
from scripts.runner import backends, loop, records


class _Given(argparse.Action):
    """Stores the value and that it was given: --resume takes the plan's
    backend unless one is given, which must then be the plan's."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, self.dest + '_given', True)


def add_backend_argument(p, default='emulator'):
    p.add_argument('--backend', choices=tuple(backends.DESCRIPTIONS), default=default, action=_Given,
                   help='where the runs run (default %s; with --resume, the plan\'s): %s' % (default, '; '.join(
                       '%s: %s' % item for item in backends.DESCRIPTIONS.items())))


def add_arguments(p):
    p.add_argument('--jobs', type=positive(int), default=None, metavar='N',
                   help='runs at once, each in its own local process (default: the machine\'s cores on a '
                        'simulated backend, where a dynamic scheme\'s controller and its simulator take turns '
                        'on one core; 1 on the emulator, one fabric per kernel)')
    p.add_argument('--dask', metavar='ADDRESS',
                   help='send the runs to the Dask distributed scheduler at ADDRESS (e.g. tcp://10.0.0.1:8786); '
                        'its workers need the project installed by scripts/setup.sh, and an emulated run asks '
                        'for the resource fabric=1 (dask worker ADDRESS --resources fabric=1)')
    p.add_argument('--resume', metavar='DIR',
                   help='run only the runs an interrupted plan in DIR has no record of, with its settings, '
                        'and report them all there')


def default_jobs(backend):
    return loop.EMULATOR_JOBS if backend == 'emulator' else os.cpu_count() or 1


def resumed(args, experiment):
    """(config, plan) of the plan in ``args.resume``, ``args.backend`` set
    to its backend; ValueError when it is another experiment's or this
    command asks for another backend."""
    saved_experiment, backend, config, plan = records.load_plan(args.resume)
    if saved_experiment != experiment:
        raise ValueError('%s holds a plan of the %s experiment, not the %s' % (args.resume, saved_experiment,
                                                                              experiment))
    if getattr(args, 'backend_given', False) and args.backend != backend:
        raise ValueError('%s ran on the %s backend; --backend %s would mix two backends in one table'
                         % (args.resume, backend, args.backend))
    args.backend = backend
    return config, plan


def run_plan(args, experiment, config, plan, out_dir, describe, report, say=None):
    """Run ``plan`` (scripts/runner/loop.py) and ``report`` what finished,
    also when runs are missing (then ValueError naming them, after the
    report)."""
    if args.dask and args.jobs:
        raise ValueError('--jobs sets local processes and --dask a cluster\'s workers: give one of them')
    jobs = args.jobs or default_jobs(config['backend'])
    kwargs = {'say': say} if say else {}
    try:
        finished = loop.execute(experiment, config['backend'], config, plan, out_dir, describe, jobs=jobs,
                                dask=args.dask, **kwargs)
    except loop.PlanIncomplete as incomplete:
        report(records.finished(out_dir, plan))
        raise ValueError(str(incomplete)) from None
    report(finished)
