"""The one loop over a plan's runs: in this process, on N local processes
(``--jobs``) or on a Dask distributed cluster (``--dask ADDRESS``).

Before it starts it prints how many runs the plan holds and how long they
should take; at each finished run, the runs done and the time left. Each
record is saved the moment its run ends (scripts/runner/records.py). An
interruption (Ctrl-C, SIGTERM, a closed terminal) or a run that failed (a
worker lost) leaves the finished records in place and the missing runs
named; ``--resume DIR`` then runs only those.
"""
import concurrent.futures
import multiprocessing
import signal
import sys
import time
import uuid

from scripts.runner import backends, records

EMULATOR_JOBS = 1  # one fabric per kernel: emulated runs share the machine's interfaces and CPU
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class PlanIncomplete(RuntimeError):
    """Runs of the plan have no record: ``missing`` {run id: why}."""

    def __init__(self, out_dir, missing):
        self.out_dir, self.missing = out_dir, missing
        super().__init__('%d run(s) of the plan have no record: %s; the finished ones are kept in %s, and '
                         '--resume %s runs the rest' % (len(missing), '; '.join(
                             '%s (%s)' % item for item in list(missing.items())[:5]), out_dir, out_dir))


def clock(seconds):
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return '%d:%02d:%02d' % (hours, rest // 60, rest % 60) if hours else '%d:%02d' % divmod(rest, 60)


class Progress:
    """Runs done and the time left: the backend's estimate for the runs not
    yet done, scaled by how the finished runs compared with theirs, over the
    runs going at once."""

    def __init__(self, estimates, parallel, say):
        self.estimates, self.parallel, self.say = estimates, max(1, parallel), say
        self.started = time.monotonic()
        self.done, self.estimated_done, self.wall_done = set(), 0.0, 0.0

    def total_s(self):
        return sum(self.estimates.values()) / self.parallel

    def finished(self, run_id, wall_s, line):
        self.done.add(run_id)
        self.estimated_done += self.estimates[run_id]
        self.wall_done += wall_s
        scale = self.wall_done / self.estimated_done if self.estimated_done else 1.0
        left = sum(s for i, s in self.estimates.items() if i not in self.done) * scale / self.parallel
        self.say('[%d/%d] %s  (%s elapsed, about %s left)' % (len(self.done), len(self.estimates), line,
                                                               clock(time.monotonic() - self.started), clock(left)))


def _raise_on_ending_signal(signum, frame):
    raise KeyboardInterrupt('signal %d' % signum)


def say_on_stderr(line):
    print(line, file=sys.stderr, flush=True)


def execute(experiment, backend, config, plan, out_dir, describe, jobs=1, dask=None, say=say_on_stderr):
    """{run id: record} of every run of ``plan`` (its records saved in
    ``out_dir``, those already there kept), ``describe(record)`` said as
    each run ends. PlanIncomplete, after every run that could finish has,
    when a run has no record; an interruption stops the runs in flight and
    raises PlanIncomplete too."""
    module = backends.module(experiment, backend)
    if backend == 'emulator' and jobs > EMULATOR_JOBS:
        raise ValueError('--jobs %d: emulated runs share this machine\'s kernel and CPU, one fabric at a time; '
                         'use --dask with a worker per machine to run several' % jobs)
    records.save_plan(out_dir, experiment, backend, config, plan)
    done = records.finished(out_dir, plan)
    todo = [(index, run) for index, run in enumerate(plan) if run['id'] not in done]
    where = ('the Dask cluster at %s' % dask if dask else '%d local process(es)' % jobs if jobs > 1
             else 'this process')
    progress = Progress({run['id']: module.estimate_s(config, run) for _, run in todo}, 1 if dask else jobs, say)
    say('plan: %d run(s) of the %s on the %s backend%s, on %s; estimated %s (%s)' % (
        len(plan), experiment, backend, ', %d already done' % len(done) if done else '', where,
        clock(progress.total_s()) if not dask else '%s of run time' % clock(progress.total_s()),
        module.SPEED_BASIS))
    missing = {}

    def finish(index, run, record):
        record['id'] = run['id']
        records.save(out_dir, index, record)
        done[run['id']] = record
        progress.finished(run['id'], record['ran_on']['wall_s'], describe(record))

    previous = {sig: signal.signal(sig, _raise_on_ending_signal) for sig in ENDING_SIGNALS}
    try:
        if dask:
            _on_dask(dask, experiment, backend, config, todo, finish, missing)
        elif jobs > 1:
            _on_processes(jobs, experiment, backend, config, todo, finish, missing)
        else:
            _in_process(experiment, backend, config, todo, finish, missing, say)
    except KeyboardInterrupt:
        missing.update({run['id']: 'interrupted' for _, run in todo if run['id'] not in done})
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if missing:
        raise PlanIncomplete(out_dir, {run['id']: missing[run['id']] for run in plan if run['id'] in missing})
    return done


def _in_process(experiment, backend, config, todo, finish, missing, say):
    """The runs one after another in this process, in one backend session;
    a run that fails ends the plan there (an emulated fabric after a failure
    is no place for the next run), the failure and the runs left named."""
    with backends.session(experiment, backend)(config, say):
        for position, (index, run) in enumerate(todo):
            try:
                record = backends.run(experiment, backend, config, run, say)
            except Exception as err:
                missing[run['id']] = '%s: %s' % (type(err).__name__, err)
                missing.update({later['id']: 'not run: %s failed before it' % run['id'] for _, later in todo[position + 1:]})
                return
            finish(index, run, record)


def _on_processes(jobs, experiment, backend, config, todo, finish, missing):
    # spawned, not forked: a worker starts clean of this process's threads and signal handlers
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context('spawn')) as pool:
        futures = {pool.submit(backends.run, experiment, backend, config, run): (index, run) for index, run in todo}
        try:
            for future in concurrent.futures.as_completed(futures):
                index, run = futures[future]
                try:
                    record = future.result()
                except Exception as err:  # the run failed or its process died: the others go on
                    missing[run['id']] = '%s: %s' % (type(err).__name__, err)
                    continue
                finish(index, run, record)
        except KeyboardInterrupt:
            for future in futures:
                future.cancel()
            raise


def _on_dask(address, experiment, backend, config, todo, finish, missing):
    from distributed import Client, as_completed
    # an emulated run takes a whole machine: it asks for the workers' one `fabric` resource
    resources = {'fabric': 1} if backend == 'emulator' else None
    with Client(address, timeout='20s') as client:
        futures = {client.submit(backends.run_isolated, experiment, backend, config, run, pure=False,
                                 key='dcfabric-%s-%s' % (run['id'].replace('/', '-'), uuid.uuid4().hex[:8]),
                                 resources=resources): (index, run) for index, run in todo}
        try:
            for future in as_completed(futures):
                index, run = futures[future]
                try:
                    record = future.result()
                except Exception as err:  # the run failed, or its worker was lost
                    missing[run['id']] = '%s: %s' % (type(err).__name__, err)
                    continue
                finish(index, run, record)
        except KeyboardInterrupt:
            client.cancel(list(futures))
            raise
