"""Where each backend runs one run of an experiment, and the one function a
local process or a Dask worker calls to do it.

A backend package holds a module ``<experiment>_backend`` per experiment it
runs, with ``run_one(config, run, progress) -> record``, ``estimate_s(config, run)`` and
``SPEED_BASIS`` (what the estimate rests on); the emulator's also
has ``session(config, progress)``, a context in which consecutive runs share
the fabrics it starts. Backends are imported by name, only where a run
happens, so that an experiment never imports one.
"""
import contextlib
import ctypes
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

# backend name -> its package
PACKAGES = {'emulator': 'scripts.emulator', 'sim': 'scripts.sim', 'flow': 'scripts.flow',
            'leafspine': 'scripts.letflow.ns3'}
# the fat-tree backends an experiment's --backend chooses among, and what each is, for --help
# (leafspine, LetFlow's ns-3 leaf-spine simulator, runs only LetFlow's own sweeps, which choose none)
DESCRIPTIONS = {'emulator': 'Mininet and Open vSwitch, the hosts\' own TCP, judged by its fidelity verdict',
                'sim': 'ns-3 switches executing the controller\'s exported rules, hosts on ns-3\'s TCP',
                'flow': 'a flow-level model: the controller\'s paths, max-min fair rates (the paper\'s scale)'}


# A run in a process of its own is stopped after this long; the longest measured runs take hours
# (k=16 at 1 Gbit/s on the simulator: 1,174 s a run on average, the scheduler's several times that).
ISOLATED_RUN_TIMEOUT_S = 24 * 3600
PR_SET_PDEATHSIG = 1


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
    """One run's record: the run's plan entry, what the backend measured,
    then ``ran_on``: the machine and process it ran in and its wall time. Only ``ran_on``
    differs between two executions of the same run on a deterministic
    backend."""
    started = time.monotonic()
    measured = module(experiment, backend).run_one(config, run_spec, progress or prefixed(run_spec['id']))
    # the run's identity (its plan entry but the flows, which the record gives as measured), then what it measured
    record = dict({key: value for key, value in run_spec.items() if key != 'flows'}, **measured)
    # where and how long it ran, beside what the backend says the run cost (its CPU time, say)
    record['ran_on'] = dict(measured.get('ran_on', {}), host=socket.gethostname(), pid=os.getpid(),
                            wall_s=round(time.monotonic() - started, 2))
    return record


def _end_with_parent():
    """In a run's own process: SIGTERM when the process that started it
    dies (a Dask worker killed), so that the run tears down what it made."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run_isolated(experiment, backend, config, run_spec):
    """``run`` in a process of its own, as a Dask worker calls it: the
    run's main thread is that process's (the emulator's signal handling
    needs it), and the run ends with the worker."""
    with tempfile.TemporaryDirectory(prefix='dcfabric-run-') as work:
        given, record_path = os.path.join(work, 'run.json'), os.path.join(work, 'record.json')
        with open(given, 'w') as f:
            json.dump({'experiment': experiment, 'backend': backend, 'config': config, 'run': run_spec}, f)
        done = subprocess.run([sys.executable, '-m', 'scripts.runner.backends', given, record_path],
                              preexec_fn=_end_with_parent, timeout=ISOLATED_RUN_TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError('run %s ended with status %d (its output above says why)'
                               % (run_spec['id'], done.returncode))
        with open(record_path) as f:
            return json.load(f)


def main(argv):
    """python -m scripts.runner.backends RUN_JSON RECORD_JSON: the run
    ``run_isolated`` hands over."""
    given, record_path = argv
    with open(given) as f:
        task = json.load(f)
    record = run(task['experiment'], task['backend'], task['config'], task['run'])
    with open(record_path, 'w') as f:
        json.dump(record, f)


if __name__ == '__main__':
    main(sys.argv[1:])
