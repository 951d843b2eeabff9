"""The runner (scripts/runner): one plan gives the same records in this
process, on local processes and on a Dask cluster whose scheduler and
workers run from their own command lines on 127.0.0.1; a lost worker
leaves the finished runs kept and the missing ones named, and --resume
completes them; the plan's estimate and progress; the simulated time
settings that follow the rate."""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from scripts.experiments import bisection, defaults, workload
from scripts.runner import loop, records
from tests.dask_cluster import ROOT, DaskCluster

# a small simulated Table 2: 8 runs of 6 ms at 1 Gbit/s, the dynamic scheme included
SMALL_BISECTION = ['--backend', 'sim', '--k', '4', '--bw', '1000', '--seeds', '3', '--patterns', 'random', 'stride-4',
                   '--schemes', 'nonblocking', 'twolevel', 'ecmp', 'scheduler', '--duration', '0.004', '--omit', '0.002']
SMALL_WORKLOAD = ['--backend', 'sim', '--k', '4', '--bw', '1000', '--seeds', '5', '--load', '0.3',
                  '--schemes', 'nonblocking', 'ecmp', 'scheduler', '--seconds', '0.002', '--drain', '0.01']


def plan_dir(out):
    (run_dir,) = glob.glob(os.path.join(out, '*'))
    return run_dir


def saved_records(run_dir):
    """{run id: record} without where and how long each ran."""
    _, _, _, plan = records.load_plan(run_dir)
    return {i: {k: v for k, v in r.items() if k != 'ran_on'} for i, r in records.finished(run_dir, plan).items()}


def run_command(main, argv, out):
    main(argv + ['--out', str(out)])
    return plan_dir(out)


def test_the_same_plan_gives_the_same_records_in_process_and_on_two_processes(tmp_path, capsys):
    serial = run_command(bisection.main, SMALL_BISECTION + ['--jobs', '1'], tmp_path / 'serial')
    parallel = run_command(bisection.main, SMALL_BISECTION + ['--jobs', '2'], tmp_path / 'parallel')
    assert len(saved_records(serial)) == 8
    assert saved_records(parallel) == saved_records(serial)
    err = capsys.readouterr().err
    assert 'plan: 8 run(s) of the bisection on the sim backend, on 2 local process(es); estimated' in err
    assert '[8/8]' in err and 'left)' in err
    with open(os.path.join(parallel, 'results.json')) as f:
        assert len(json.load(f)['runs']) == 8


def test_the_rate_sets_a_simulated_runs_time_settings_and_says_where_each_came_from():
    config = bisection.experiment_config(bisection_args(['--backend', 'sim', '--bw', '10000', '--period', '0.002']))
    assert (config['duration'], config['omit'], config['period_s'], config['min_rto_ms'],
            config['control_delay_ms']) == (0.01, 0.005, 0.002, 1, 0.1)  # the given period, the rest at 10 Gbit/s
    assert config['defaults']['period_s'] == 'given'
    assert config['defaults']['min_rto_ms'].startswith('10 ms at 1 Gbit/s, inversely with the rate')
    at_1g = {name: value for name, (value, _) in defaults.simulated(1000).items()}
    assert at_1g == {'period_s': 0.01, 'duration': 0.1, 'omit': 0.05, 'min_rto_ms': 10, 'control_delay_ms': 1}
    at_10m = {name: value for name, (value, _) in defaults.simulated(10).items()}
    assert at_10m == {'period_s': 1, 'duration': 10, 'omit': 5, 'min_rto_ms': 200, 'control_delay_ms': 1}


def bisection_args(argv):
    import argparse
    parser = argparse.ArgumentParser()
    bisection.add_arguments(parser)
    return parser.parse_args(argv)


def test_the_readmes_command_plans_the_1_gbit_table(capsys, monkeypatch):
    planned = {}
    monkeypatch.setattr(loop, 'execute', lambda experiment, backend, config, plan, *a, **k:
                        planned.update(config=config, plan=plan) or {})
    bisection.main(['--backend', 'sim', '--bw', '1000', '--out', '/nonexistent'])
    config = planned['config']
    assert len(planned['plan']) == 150 and len({run['id'] for run in planned['plan']}) == 150
    assert (config['duration'], config['omit'], config['period_s'], config['min_rto_ms']) == (0.1, 0.05, 0.01, 10)


def test_the_plan_alternates_the_fat_tree_schemes_after_the_reference():
    config = {'k': 4, 'seeds': [1], 'patterns': ['random', 'stride-4'],
              'schemes': ['nonblocking', 'twolevel', 'ecmp', 'scheduler']}
    assert [run['id'] for run in bisection.plan(config)] == [
        'seed1/random/nonblocking', 'seed1/random/twolevel', 'seed1/random/ecmp', 'seed1/random/scheduler',
        'seed1/stride-4/nonblocking', 'seed1/stride-4/scheduler', 'seed1/stride-4/ecmp', 'seed1/stride-4/twolevel']


def test_an_interrupted_plan_keeps_its_records_and_resume_runs_only_the_rest(tmp_path, monkeypatch):
    from scripts.sim import bisection_backend
    real, calls = bisection_backend.run_one, []

    def interrupted_third(config, run, progress):
        calls.append(run['id'])
        if calls == ['seed3/random/nonblocking', 'seed3/random/twolevel', 'seed3/random/ecmp']:
            raise KeyboardInterrupt
        return real(config, run, progress)
    monkeypatch.setattr(bisection_backend, 'run_one', interrupted_third)
    with pytest.raises(SystemExit, match=r'6 run\(s\) of the plan have no record: seed3/random/ecmp \(interrupted\)'):
        bisection.main(SMALL_BISECTION + ['--jobs', '1', '--out', str(tmp_path)])
    run_dir = plan_dir(tmp_path)
    assert sorted(saved_records(run_dir)) == ['seed3/random/nonblocking', 'seed3/random/twolevel']
    calls.clear()
    bisection.main(['--jobs', '1', '--resume', run_dir])  # the plan's backend and settings, none given
    assert len(calls) == 6 and 'seed3/random/nonblocking' not in calls
    assert len(saved_records(run_dir)) == 8


def test_resume_refuses_another_experiments_plan_and_another_backend(tmp_path):
    records.save_plan(str(tmp_path), 'workload', 'sim', {}, [])
    with pytest.raises(SystemExit, match='holds a plan of the workload experiment, not the bisection'):
        bisection.main(['--backend', 'sim', '--resume', str(tmp_path)])
    with pytest.raises(SystemExit, match='ran on the sim backend; --backend emulator would mix'):
        workload.main(['--backend', 'emulator', '--resume', str(tmp_path)])


def test_the_emulator_takes_one_fabric_at_a_time(tmp_path):
    with pytest.raises(ValueError, match='--jobs 2: emulated runs share this machine'):
        loop.execute('bisection', 'emulator', {}, [], str(tmp_path), str, jobs=2)


@pytest.fixture
def cluster(tmp_path):
    started = DaskCluster(tmp_path)
    yield started
    started.close()


def test_a_dask_cluster_gives_the_serial_records(tmp_path, cluster):
    serial = run_command(bisection.main, SMALL_BISECTION + ['--jobs', '1'], tmp_path / 'serial')
    on_dask = run_command(bisection.main, SMALL_BISECTION + ['--dask', cluster.address], tmp_path / 'dask')
    assert saved_records(on_dask) == saved_records(serial)
    assert {r['ran_on']['pid'] for r in records.finished(on_dask, records.load_plan(on_dask)[3]).values()} != {
        os.getpid()}
    serial = run_command(workload.main, SMALL_WORKLOAD + ['--jobs', '1'], tmp_path / 'wserial')
    on_dask = run_command(workload.main, SMALL_WORKLOAD + ['--dask', cluster.address], tmp_path / 'wdask')
    assert len(saved_records(serial)) == 3 and saved_records(on_dask) == saved_records(serial)


def test_a_lost_worker_leaves_its_runs_named_and_resume_completes_them(tmp_path, cluster):
    # one worker killed once the first record is saved: its run in flight fails, the rest finish on the other
    argv = SMALL_BISECTION[:-4] + ['--duration', '0.02', '--omit', '0.002', '--dask', cluster.address,
                                   '--out', str(tmp_path / 'out')]
    command = subprocess.Popen([sys.executable, '-m', 'scripts.experiments.bisection'] + argv, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not glob.glob(str(tmp_path / 'out' / '*' / 'runs' / '*.json')) and time.time() < deadline:
        time.sleep(0.05)
    os.kill(cluster.workers[0].pid, signal.SIGKILL)
    out, err = command.communicate(timeout=300)
    run_dir = plan_dir(tmp_path / 'out')
    kept = saved_records(run_dir)
    assert command.returncode == 1, err
    assert 'have no record' in err and 'KilledWorker' in err and '--resume %s' % run_dir in err
    assert 1 <= len(kept) < 8
    bisection.main(argv[:-2] + ['--resume', run_dir])
    assert len(saved_records(run_dir)) == 8


@pytest.mark.parametrize('experiment, backend', [('bisection', 'emulator'), ('bisection', 'sim'), ('bisection', 'flow'),
                                                 ('workload', 'emulator'), ('workload', 'sim')])
def test_every_backend_says_what_its_estimate_rests_on(experiment, backend):
    from scripts.runner import backends
    module = backends.module(experiment, backend)
    assert callable(module.run_one) and callable(module.estimate_s) and module.SPEED_BASIS


def test_a_backend_without_the_experiment_is_named():
    from scripts.runner import backends
    with pytest.raises(backends.BackendError, match='the flow backend does not run the workload experiment'):
        backends.module('workload', 'flow')


def test_a_failed_run_ends_an_in_process_plan_keeping_the_records_and_naming_the_rest(tmp_path, monkeypatch):
    from scripts.sim import bisection_backend
    real = bisection_backend.run_one

    def failing_second(config, run, progress):
        if run['id'] == 'seed3/random/twolevel':
            raise RuntimeError('fattree_sim failed (1): no such flow')
        return real(config, run, progress)
    monkeypatch.setattr(bisection_backend, 'run_one', failing_second)
    with pytest.raises(SystemExit, match=r'7 run\(s\) .*seed3/random/twolevel \(RuntimeError: fattree_sim failed'):
        bisection.main(SMALL_BISECTION + ['--jobs', '1', '--out', str(tmp_path)])
    run_dir = plan_dir(tmp_path)
    assert sorted(saved_records(run_dir)) == ['seed3/random/nonblocking']
    assert os.path.exists(os.path.join(run_dir, 'results.json'))  # the finished run is reported
