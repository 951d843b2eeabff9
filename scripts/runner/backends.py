"""Where each backend runs one run of an experiment, and the one function a
local process or a Dask worker calls to do it.

A backend package holds a module ``<experiment>_backend`` per experiment it
runs, with ``run_one(config, run, progress) -> record``; the emulator's also
has ``session(config, progress)``, a context in which consecutive runs share
the fabrics it starts. Backends are imported by name, only where a run
happens, so that an experiment never imports one.
"""
import contextlib
import importlib
import os
import socket
import sys
import time

# backend name -> its package
PACKAGES = {'emulator': 'scripts.emulator', 'sim': 'scripts.sim', 'flow': 'scripts.flow'}
# what each backend is, for --help and errors
DESCRIPTIONS = {'emulator': 'Mininet and Open vSwitch, the hosts\' own TCP, judged by its fidelity verdict',
                'sim': 'ns-3 switches executing the controller\'s exported rules, hosts on ns-3\'s TCP',
                'flow': 'a flow-level model: the controller\'s paths, max-min fair rates (the paper\'s scale)'}


class BackendError(ValueError):
    pass


def module(experiment, backend):
    """The module that runs ``experiment`` on ``backend``; BackendError
    naming what the backend runs when it has none for it."""
    if backend not in PACKAGES:
        raise BackendError('unknown backend %r; choose one of %s' % (backend, ', '.join(PACKAGES)))
    name = '%s.%s_backend' % (PACKAGES[backend], experiment)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        raise BackendError('the %s backend does not run the %s experiment' % (backend, experiment)) from None


def session(experiment, backend):
    """The backend's context for consecutive runs in this process (the
    emulator's fabrics stay up between them); a no-op where it has none."""
    opened = getattr(module(experiment, backend), 'session', None)
    return opened or (lambda config, progress: contextlib.nullcontext())


def prefixed(run_id):
    """Progress lines of one run among others, each naming its run."""
    def progress(line):
        print('[%s] %s' % (run_id, line), file=sys.stderr, flush=True)
    return progress


def run(experiment, backend, config, run_spec, progress=None):
    """One run's record: what the backend measured, then ``ran_on``: the
    machine and process it ran in and its wall time. Only ``ran_on``
    differs between two executions of the same run on a deterministic
    backend."""
    started = time.monotonic()
    record = module(experiment, backend).run_one(config, run_spec, progress or prefixed(run_spec['id']))
    record['ran_on'] = {'host': socket.gethostname(), 'pid': os.getpid(),
                        'wall_s': round(time.monotonic() - started, 2)}
    return record
