"""LetFlow's ns-3 sweeps run through the runner (scripts/runner): a tiny
sweep's runs measure what the scenario run on its own measures, and an
interrupted sweep resumes with only its missing runs."""
import json

import pytest

from scripts.letflow import ns3_experiments
from scripts.letflow.ns3 import letflow_backend, scenarios
from scripts.letflow.ns3.sim import bottlenecks, run, summarise
from scripts.runner import records

# the delta sweep at its smallest: one multiple, one seed, a few flows; a LetFlow run and a per-flow ECMP run
TINY_DELTA = ['delta', '--delta-multiples', '1', '--seeds', '1', '--load', '0.05', '--duration', '0.002',
              '--warmup', '0.001', '--jobs', '1']  # the sweep builds the simulator first, naming what failed


def sweep(tmp_path, *more):
    return ns3_experiments.main(TINY_DELTA + ['--out', str(tmp_path)] + list(more))


def test_a_sweep_through_the_runner_measures_what_each_scenario_measures_alone(tmp_path, capsys):
    assert sweep(tmp_path) == 0
    target = tmp_path / 'delta'
    experiment, backend, config, plan = records.load_plan(str(target))
    assert (experiment, backend, config['sweep']) == ('letflow', 'leafspine', 'delta')
    assert [r['id'] for r in plan] == ['delta/1rtt/letflow/seed1', 'delta/ecmp/seed1']
    saved = json.loads((target / 'results.json').read_text())
    assert len(saved['runs']) == 2 and saved['seeds'] == [1]
    assert not any(set(ns3_experiments.RUNNER_KEYS) & set(r) for r in saved['runs'])
    for entry, measured in zip(plan, saved['runs']):
        scenario = scenarios.build(config['settings'], entry['scenario'])
        alone = run(scenario)
        summary = summarise(alone, scenario.stop_s, scenario.labels['source_leaf'], scenario.measure_window_s)
        summary['bottlenecks'] = bottlenecks(alone, scenario)
        assert measured['summary'] == json.loads(json.dumps(summary))
        assert measured['labels'] == scenario.labels and measured['flows'] == alone['flows']
    assert (target / 'results.csv').exists() and (target / 'delta_sweep.png').exists()
    assert 'plan: 2 run(s) of the letflow on the leafspine backend' in capsys.readouterr().err


def test_an_interrupted_sweep_resumes_with_only_its_missing_runs(tmp_path, monkeypatch, capsys):
    real, calls, interrupt = letflow_backend.run_one, [], ['delta/ecmp/seed1']

    def interrupted_once(config, run_spec, progress):
        calls.append(run_spec['id'])
        if run_spec['id'] in interrupt:
            interrupt.remove(run_spec['id'])
            raise KeyboardInterrupt
        return real(config, run_spec, progress)
    monkeypatch.setattr(letflow_backend, 'run_one', interrupted_once)
    assert sweep(tmp_path) == 1
    target = tmp_path / 'delta'
    assert 'delta/ecmp/seed1 (interrupted)' in capsys.readouterr().err
    _, _, _, plan = records.load_plan(str(target))
    assert sorted(records.finished(str(target), plan)) == ['delta/1rtt/letflow/seed1']
    assert not (target / 'results.json').exists()
    # a new sweep leaves the unfinished one for --resume
    assert sweep(tmp_path) == 1
    assert '--resume %s runs them' % target in capsys.readouterr().err
    calls.clear()
    # other settings on the command line: the plan's own go on
    assert ns3_experiments.main(['delta', '--resume', str(target), '--duration', '9', '--jobs', '1']) == 0
    assert calls == ['delta/ecmp/seed1']
    assert len(json.loads((target / 'results.json').read_text())['runs']) == 2
    # a finished sweep's records give way to a new one's
    calls.clear()
    assert sweep(tmp_path) == 0 and len(calls) == 2


def test_resume_takes_only_the_named_sweeps_plan(tmp_path, capsys):
    records.save_plan(str(tmp_path), 'letflow', 'leafspine', {'sweep': 'delta', 'settings': {}}, [])
    assert ns3_experiments.main(['weights', '--resume', str(tmp_path)]) == 1
    assert 'holds a plan of the delta experiment, not LetFlow\'s weights' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ns3_experiments.parse_args(['all', '--resume', str(tmp_path)])
    assert '--resume DIR completes one simulated sweep' in capsys.readouterr().err
