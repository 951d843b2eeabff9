"""LetFlow as a scheme of the simulated fat-tree: ECMP's export with
flowlet groups (scripts/sim/rules_export.py), which the simulator's
pipeline executes with the LetFlow flowlet table
(scripts/sim/ns3/flowlet_table.h) and the emulator refuses."""
import argparse
import subprocess

import pytest

from controller.fattree.scheme_parameters import SchemeParameterError, scheme_config
from scripts.experiments import bisection
from scripts.emulator.bisection_backend import Fabrics
from scripts.sim import bisection_backend, rules_export
from scripts.sim.scenario import SimFlow, SimSettings
from tests.unit.test_sim_pipeline import path_trace  # noqa: F401 (the fixture: the built driver)
from topologies.fattree import FatTree

TOPO = FatTree(4)
DELTA_NS = 500_000  # the default flowlet timeout, 500 us


def export_lines(scheme, **params):
    return rules_export.export_lines(rules_export.export_switches(TOPO, scheme, **params), topo=TOPO,
                                     scheme=scheme)


FAILED = {'failed_links': [('e0_0', 'a0_2')], 'failed_switches': ['c1_2']}


@pytest.mark.parametrize('failures', [{}, FAILED])
@pytest.mark.parametrize('params, timeout', [({}, '500'), ({'flowlet_timeout_us': 150.5}, '150.5')])
def test_the_export_is_ecmps_with_flowlet_groups(failures, params, timeout):
    ecmp, letflow = export_lines('ecmp', **failures), export_lines('letflow', **failures, **params)
    assert len(ecmp) == len(letflow)
    groups = 0
    for ecmp_line, letflow_line in zip(ecmp, letflow):
        if ecmp_line.startswith('group ') and ' select ' in ecmp_line:
            groups += 1
            assert letflow_line == ecmp_line.replace(' select ', ' flowlet timeout_us=%s ' % timeout)
        elif ecmp_line.startswith('scheme '):
            assert letflow_line == 'scheme letflow'
        else:
            assert letflow_line == ecmp_line
    assert groups >= len([s for s in TOPO.switches if s.role != 'core'])  # one at least per pod switch


def trace(path_trace, tmp_path, queries):
    """path_trace's lines for ``queries`` over the letflow export."""
    export = tmp_path / 'letflow.txt'
    rules_export.write_export(rules_export.export_switches(TOPO, 'letflow'), export, topo=TOPO, scheme='letflow')
    done = subprocess.run([path_trace, str(export)], input='\n'.join(queries) + '\n', capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if not line.startswith('counter ')]


def flow_traces(times_ns, flow='h0_0_2 h3_1_3 6 40000 5201'):
    return [q for t in times_ns for q in ('at %d' % t, 'trace %s 1500' % flow)]


def test_packets_within_a_flowlet_keep_its_bucket(path_trace, tmp_path):
    # One packet every 0.4 Delta: never a silence the checker could end.
    paths = trace(path_trace, tmp_path, flow_traces(range(0, 40 * DELTA_NS, 2 * DELTA_NS // 5)))
    assert len(paths) == 100 and all(p.endswith('-> h3_1_3') for p in paths)
    assert len(set(paths)) == 1


def test_after_a_longer_silence_a_new_flowlet_takes_a_random_bucket(path_trace, tmp_path):
    # One packet every 2.5 Delta (a flowlet ends after Delta to 2 Delta): each its own
    # flowlet, its bucket drawn anew at the edge and at the aggregation switch.
    paths = trace(path_trace, tmp_path, flow_traces(range(0, 200 * DELTA_NS, 5 * DELTA_NS // 2)))
    assert all(p.endswith('-> h3_1_3') for p in paths)
    cores = {hop.split(':')[0] for p in paths for hop in p.split() if hop.startswith('c')}
    assert cores == {s.name for s in TOPO.switches if s.role == 'core'}  # every path up
    # and the flow's bursts stay whole: the same path within each
    bursts = trace(path_trace, tmp_path, [q for start in range(0, 20 * 3 * DELTA_NS, 3 * DELTA_NS)
                                          for q in flow_traces(range(start, start + 5 * 1000, 1000))])
    for n in range(0, len(bursts), 5):
        assert len(set(bursts[n:n + 5])) == 1
    assert len(set(bursts)) > 1


def test_a_flowlet_on_a_dead_bucket_moves_to_a_live_one(path_trace, tmp_path):
    flow = 'h0_0_2 h3_1_3 6 40001 5201'
    (first,) = trace(path_trace, tmp_path, flow_traces([0], flow))
    up = first.split()[6].split(':')[0]  # e0_0's uplink: a0_0 or a0_1
    queries = flow_traces([0], flow) + ['dead_link e0_0 %s' % up] + flow_traces([1000, 2000], flow)
    before, moved, kept = trace(path_trace, tmp_path, queries)
    assert before == first and up not in moved and moved.endswith('-> h3_1_3')
    assert kept == moved  # the moved flowlet stays on its new bucket


def test_a_flowlet_group_needs_its_timeout(path_trace, tmp_path):
    export = tmp_path / 'bad.txt'
    export.write_text('switch s\ngroup 1 flowlet bucket 0 output=0\n')
    done = subprocess.run([path_trace, str(export)], input='', capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and 'flowlet group without a positive timeout_us' in done.stderr


def test_a_simulated_letflow_run_starts_flowlets_and_delivers():
    flows = [SimFlow('h0_0_2', 'h2_0_2', 0.0, 0.03), SimFlow('h0_0_3', 'h3_1_2', 0.0002, 0.03)]
    result = bisection_backend.simulate(FatTree(4), 'letflow', flows,
                                        SimSettings(link_mbps=1000, stop_s=0.03, measure_from_s=0.01),
                                        progress=lambda line: None)
    assert all(f['goodput_mbps'] > 300 for f in result['flows'])
    flowlets = {name: s['flowlets'] for name, s in result['switches'].items() if 'flowlets' in s}
    assert set(flowlets) == {s.name for s in TOPO.switches if s.role != 'core'}
    assert flowlets['e0_0'] >= 2  # each flow's data, at least


def test_the_emulator_refuses_letflow_before_anything_runs(monkeypatch):
    def started(*_):
        raise AssertionError('an emulated fabric was started')
    monkeypatch.setattr(Fabrics, '__enter__', started)
    with pytest.raises(SystemExit, match='letflow runs on the simulator only .*no flowlet group'):
        bisection.main(['--schemes', 'nonblocking', 'letflow', '--patterns', 'random', '--seeds', '1',
                        '--out', '/nonexistent'])
    # and the Ryu app, asked for it, refuses it alike
    with pytest.raises(SchemeParameterError, match='OpenFlow 1.3 and Open vSwitch have no flowlet group'):
        scheme_config({'scheme': 'letflow'})
    assert scheme_config({'scheme': 'letflow'}, simulated=True)['flowlet_timeout_us'] == 500


def test_letflow_is_named_never_a_default():
    parser = argparse.ArgumentParser()
    bisection.add_arguments(parser)
    assert 'letflow' not in parser.parse_args([]).schemes
    assert parser.parse_args(['--schemes', 'letflow']).schemes == ['letflow']
