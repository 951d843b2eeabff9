"""dcfabric workload --backend sim (scripts/sim/workload_backend.py): the
scenario a run writes, the simulator's result as flows.csv's rows, the
simulated fabric's ideal FCT against lone simulated flows, failed links
known to the rules, and the options one backend takes refused with the
other before anything runs."""
import random

import pytest

from scripts.experiments import workload, workload_report as report
from scripts.runner import loop
from scripts.sim import bisection_backend, workload_backend
from scripts.sim.scenario import SimFailure, SimFlow, SimSettings, scenario_lines
from scripts.workloads.flow_sizes import WEB_SEARCH
from topologies.fattree import FatTree

TOPO = FatTree(4)
CONFIG = {'backend': 'sim', 'k': 4, 'bw': 20.0, 'queue': 50, 'loads': [0.3], 'seconds': 2.0,
          'pattern': 'all-to-all', 'schemes': ['nonblocking', 'twolevel'], 'seeds': [37], 'fail': [],
          'drain': None, 'hosts': 16, 'control_delay_ms': 1.0, 'min_rto_ms': 200.0, 'link_delay_us': 1.0,
          'tcp': 'cubic', 'ecn_threshold_packets': 0, 'sender_queue': 'fq'}


def flow_fields(line):
    _, index, src, dst, start, stop, size, port = line.split()
    return int(index), src, dst, float(start), float(stop), int(size), int(port)


def fake_simulator(calls, fct_of=lambda index, flow: 0.5):
    """simulate's stand-in: records its arguments, answers as fattree_sim's
    JSON with ``fct_of(index, flow)`` (None: unfinished)."""
    def simulate(topo, scheme, flows, settings, progress=None, control_delay_s=None, failed_links=(), failures=(),
                 scheme_params=None):
        calls.append({'topo': topo, 'scheme': scheme, 'flows': flows, 'settings': settings,
                      'control_delay_s': control_delay_s, 'failed_links': failed_links, 'failures': failures,
                      'scheme_params': scheme_params, 'lines': scenario_lines(topo, 'rules.txt', settings, flows)})
        return {'simulated_s': settings.stop_s, 'wall_s': 0.1, 'events': 10, 'host_queue_drops': 3, 'switches': {},
                'flows': [{'id': i, 'src': f.src, 'dst': f.dst, 'fct_s': fct_of(i, f)} for i, f in enumerate(flows)]}
    return simulate


def run(monkeypatch, config=CONFIG, fct_of=lambda index, flow: 0.5):
    """The experiment's plan run by the backend, one run after another, and
    its records as the experiment reads them: (simulate's calls, rows, runs)."""
    calls, rows, runs = [], [], []
    monkeypatch.setattr(workload_backend, 'simulate', fake_simulator(calls, fct_of))
    for planned in workload.plan(config, WEB_SEARCH):
        record = dict(workload_backend.run_one(config, planned, lambda line: None), id=planned['id'])
        run_rows = workload.run_rows(planned, record)
        rows += run_rows
        runs.append(workload.run_summary(planned, record, run_rows))
    return calls, rows, runs


def test_the_scenario_holds_the_drawn_flows_sizes_start_times_and_hosts(monkeypatch):
    calls, _, _ = run(monkeypatch)
    drawn = report.draw_flows(TOPO, WEB_SEARCH, 0.3, 20.0, 2.0, 'all-to-all', 37)
    stop_s = 2.0 + report.default_drain_s(drawn, 20.0)
    reference, twolevel = calls
    assert (reference['scheme'], twolevel['scheme']) == ('nonblocking', 'twolevel')
    written = [flow_fields(line) for line in twolevel['lines'] if line.startswith('flow ')]
    assert [(i, s, d, start, stop, size) for i, s, d, start, stop, size, _ in written] == [
        (f['id'], f['src'], f['dst'], f['start_s'], stop_s, f['size']) for f in drawn]
    assert 'stop_s %r' % stop_s in twolevel['lines'] and 'link_mbps 20.0' in twolevel['lines']
    # the reference's hosts are the fat-tree's of the same index; the same flows, the same ports
    index = {h.name: i for i, h in enumerate(TOPO.hosts)}
    on_reference = [flow_fields(line) for line in reference['lines'] if line.startswith('flow ')]
    assert [(s, d) for _, s, d, *_ in on_reference] == [
        ('nbh%d' % index[f['src']], 'nbh%d' % index[f['dst']]) for f in drawn]
    assert [w[3:] for w in on_reference] == [w[3:] for w in written]
    # a source port never taken twice on one host
    ports = [(src, port) for _, src, _, _, _, _, port in written]
    assert len(set(ports)) == len(ports) and all(32768 <= port <= 60999 for _, port in ports)
    assert twolevel['control_delay_s'] == pytest.approx(0.001) and twolevel['settings'].min_rto_ms == 200.0
    assert 'tcp cubic' in twolevel['lines'] and 'ecn_threshold_packets 0' in twolevel['lines']
    assert twolevel['scheme_params'] == {}


def test_dctcp_its_ecn_threshold_and_the_period_reach_every_run(monkeypatch):
    calls, _, _ = run(monkeypatch, dict(CONFIG, tcp='dctcp', ecn_threshold_packets=20, period_s=0.01))
    for call in calls:
        assert 'tcp dctcp' in call['lines'] and 'ecn_threshold_packets 20' in call['lines']
        assert call['scheme_params'] == {'period': 0.01}


def test_failed_links_go_to_the_fat_tree_runs_only(monkeypatch):
    calls, _, _ = run(monkeypatch, dict(CONFIG, fail=['a0_2-c1_1']))
    assert [c['failed_links'] for c in calls] == [(), [('a0_2', 'c1_1')]]


def test_with_a_failure_time_the_links_fail_during_the_fat_tree_runs(monkeypatch):
    calls, _, _ = run(monkeypatch, dict(CONFIG, fail=['a0_2-c1_1'], fail_at_s=1.5))
    assert [c['failed_links'] for c in calls] == [(), ()]
    assert [c['failures'] for c in calls] == [[], [SimFailure(1.5, 'a0_2', TOPO.port_to('a0_2', 'c1_1'))]]


def test_finished_and_unfinished_simulated_flows_become_rows(monkeypatch):
    # every third flow unfinished (fct_s null in the simulator's JSON)
    _, rows, runs = run(monkeypatch, fct_of=lambda index, flow: None if index % 3 == 0 else 0.25 + index * 1e-7)
    drawn = report.draw_flows(TOPO, WEB_SEARCH, 0.3, 20.0, 2.0, 'all-to-all', 37)
    twolevel = [r for r in rows if r['scheme'] == 'twolevel']
    assert [(r['src'], r['dst'], r['size_bytes'], r['start_s']) for r in twolevel] == [
        (f['src'], f['dst'], f['size'], f['start_s']) for f in drawn]
    for i, row in enumerate(twolevel):
        ideal = workload_backend.ideal_fct_s(row['size_bytes'], TOPO.switches_between(row['src'], row['dst']),
                                             20.0, 1.0)
        assert row['ideal_fct_s'] == round(ideal, 6)
        if i % 3 == 0:
            assert row['fct_s'] is None and row['slowdown'] is None
        else:
            assert row['fct_s'] == round(0.25 + i * 1e-7, 6)
            assert row['slowdown'] == round(row['fct_s'] / ideal, 4)
    reference = [r for r in rows if r['scheme'] == 'nonblocking']
    assert {r['ideal_fct_s'] for r in reference if r['size_bytes'] == drawn[1]['size']} == {
        round(workload_backend.ideal_fct_s(drawn[1]['size'], 1, 20.0, 1.0), 6)}
    run_of = {r['scheme']: r for r in runs}['twolevel']
    assert (run_of['flows'], run_of['unfinished']) == (len(drawn), len(range(0, len(drawn), 3)))
    assert run_of['simulation'] == {'events': 10, 'queue_drops': 0, 'ecn_marked': 0,
                                    'host_queue_drops': 3, 'simulated_s': 2.0 + report.default_drain_s(drawn, 20.0)}
    # a 58-byte SYN and SYN-ACK at 20 Mbit/s (23.2 us) and 1 us on each of 2, 4 or 6 links
    assert 'fidelity' not in run_of and run_of['idle_rtt_ms'] == {'1': 0.0968, '3': 0.1936, '5': 0.2904}
    summary = report.summarize(rows, runs)
    assert '| sim |' in report.format_table(summary, CONFIG)


def test_source_ports_are_distinct_per_host():
    flows = [{'src': 'h0_0_2'}] * 500 + [{'src': 'h0_0_3'}] * 500
    ports = workload_backend.source_ports(flows, random.Random(1))
    assert len(set(ports[:500])) == 500 and len(set(ports[500:])) == 500


@pytest.mark.parametrize('size, switches, expected_s', [
    # 1 byte across pods at 20 Mbit/s: the handshake (2 x 6 links of a 58-byte frame
    # and 1 us), the completing ACK (54 bytes), the 55-byte segment on 6 links, 6 us
    (1, 5, 2 * 6 * (58 * 8 / 20e6 + 1e-6) + 54 * 8 / 20e6 + 6 * 55 * 8 / 20e6 + 6e-6),
    # two segments under one switch: both frames, then the larger once more
    (1449, 1, 2 * 2 * (58 * 8 / 20e6 + 1e-6) + (54 + 1502 + 55) * 8 / 20e6 + 1502 * 8 / 20e6 + 2e-6)])
def test_the_ideal_is_the_idle_handshake_then_the_frames_store_and_forward(size, switches, expected_s):
    assert workload_backend.ideal_fct_s(size, switches, 20.0, 1.0) == pytest.approx(expected_s)


def test_a_flow_alone_on_the_simulated_fabric_finishes_in_its_ideal_fct():
    # one flow at a time, on each path length, from one segment to 2 MB (the
    # largest 0.07% over: one frame time, the sender's window once short)
    sizes, pairs = [1, 1449, 50000, 2_000_000], [('h0_0_2', 'h0_0_3'), ('h0_0_2', 'h0_1_2'), ('h0_0_2', 'h3_1_3')]
    flows, start = [], 0.01
    for src, dst in pairs:
        for size in sizes:
            flows.append(SimFlow(src, dst, start, 20.0, bytes=size, src_port=40000 + len(flows)))
            start += size * 8 / 20e6 * 1.5 + 0.05
    result = bisection_backend.simulate(TOPO, 'twolevel', flows, SimSettings(link_mbps=20, stop_s=start + 0.5),
                                        progress=lambda line: None)
    for flow, simulated in zip(flows, result['flows']):
        ideal = workload_backend.ideal_fct_s(flow.bytes, TOPO.switches_between(flow.src, flow.dst), 20, 1.0)
        assert simulated['fct_s'] == pytest.approx(ideal, rel=1e-3), (flow, simulated)


def test_a_failed_link_the_rules_know_of_costs_a_crossing_flow_nothing():
    # two-level routing sends h0_0_3 -> h1_0_2 up a0_2 to c1_1: with that link down and
    # the rules computed for it the flow finishes in its ideal FCT; down but known only
    # once BFD detects it (the controller's update after that), it waits for retransmissions
    flow = [SimFlow('h0_0_3', 'h1_0_2', 0.001, 2.0, bytes=20000, src_port=40000)]
    settings = SimSettings(link_mbps=20, stop_s=2.0)
    ideal = workload_backend.ideal_fct_s(20000, 5, 20, 1.0)
    known = bisection_backend.simulate(TOPO, 'twolevel', flow, settings, progress=lambda line: None,
                                       failed_links=[('a0_2', 'c1_1')])
    assert known['flows'][0]['fct_s'] == pytest.approx(ideal, rel=1e-6)
    unknown = bisection_backend.simulate(TOPO, 'twolevel', flow, settings, progress=lambda line: None,
                                         failures=[SimFailure(0.0, 'a0_2', TOPO.port_to('a0_2', 'c1_1'))])
    assert unknown['flows'][0]['fct_s'] > 10 * ideal


@pytest.mark.parametrize('argv, message', [
    (['--backend', 'sim', '--ovs-instances', '2'], "--ovs-instances sets the emulator's"),
    (['--control-delay', '2'], r"--control-delay is the simulator's \(--backend sim\)"),
    (['--min-rto', '5'], r"--min-rto is the simulator's \(--backend sim\)"),
    (['--backend', 'sim', '--min-rto', '0'], '--min-rto must be positive, got 0'),
    (['--backend', 'sim', '--control-delay', '-1'], '--control-delay must not be negative, got -1'),
    (['--fail-at', '1'], r"--fail-at is the simulator's \(--backend sim\)"),
    (['--backend', 'sim', '--fail-at', '1'], '--fail-at takes a time >= 0 and the links of --fail'),
    (['--backend', 'sim', '--fail', 'a0_2-c1_1', '--fail-at', '-1'], '--fail-at takes a time >= 0'),
    (['--tcp', 'dctcp', '--ecn-threshold', '20'], r"--tcp is the simulator's \(--backend sim\)"),
    (['--tcp', 'cubic'], r"--tcp is the simulator's \(--backend sim\)"),
    (['--ecn-threshold', '20'], r"--ecn-threshold is the simulator's \(--backend sim\)"),
    (['--period', '0.01'], r"--period is the simulator's \(--backend sim\)"),
    (['--sender-queue', 'fq'], r"--sender-queue is the simulator's \(--backend sim\)"),
    (['--backend', 'sim', '--tcp', 'dctcp'], '--tcp dctcp needs --ecn-threshold PACKETS'),
    (['--backend', 'sim', '--ecn-threshold', '20'], "--ecn-threshold marks ECN-capable packets, and the "
                                                     "simulated hosts' cubic sends none"),
    (['--backend', 'sim', '--tcp', 'dctcp', '--ecn-threshold', '50'], '--ecn-threshold 50 never marks in '
                                                                       '50-packet queues')])
def test_an_option_of_the_other_backend_is_refused_before_anything_runs(argv, message, monkeypatch):
    def ran(*args, **kwargs):
        raise AssertionError('an experiment started')
    monkeypatch.setattr(loop, 'execute', ran)
    with pytest.raises(SystemExit, match=message):
        workload.main(argv + ['--out', '/nonexistent'])


def sim_config(argv, monkeypatch):
    """The config ``workload.main(argv)`` hands the runner."""
    configs = []
    monkeypatch.setattr(loop, 'execute', lambda experiment, backend, config, *args, **kwargs: configs.append(config)
                        or {})
    workload.main(['--backend', 'sim', '--out', '/nonexistent'] + argv)
    return configs[0]


@pytest.mark.parametrize('argv, tcp, threshold, period, sender_queue', [
    ([], 'cubic', 0, 0.01, SimSettings.sender_queue),  # the period of the default 1 Gbit/s
    (['--tcp', 'dctcp', '--ecn-threshold', '65', '--queue', '150', '--period', '0.002', '--sender-queue',
      'drop-tail'], 'dctcp', 65, 0.002, 'drop-tail'),
    (['--tcp', 'dctcp', '--ecn-threshold', '49', '--sender-queue', 'fq', '--bw', '10000'], 'dctcp', 49, 0.001,
     'fq')])
def test_the_hosts_tcp_the_ecn_threshold_and_the_period_are_in_the_config(argv, tcp, threshold, period, sender_queue,
                                                                          monkeypatch):
    config = sim_config(argv, monkeypatch)
    assert (config['tcp'], config['ecn_threshold_packets'], config.get('period_s'), config['sender_queue']) == (
        tcp, threshold, period, sender_queue)
    settings = workload_backend.run_settings(config, 1, 1.0)
    settings.check()
    assert (settings.tcp, settings.ecn_threshold_packets, settings.sender_queue) == (tcp, threshold, sender_queue)


def test_dctcp_keeps_a_shared_queue_below_its_drops_where_cubic_overflows_it():
    # two long flows into one core port (two-level routing sends both through c1_1) at
    # 1 Gbit/s with 150-packet queues: CUBIC fills the queue and loses there; DCTCP, the
    # switches marking from 20 queued packets, slows on the marks and loses nothing
    flows = [SimFlow('h0_0_2', 'h1_0_2', 0.001, 0.05, src_port=40001),
             SimFlow('h2_0_2', 'h1_0_2', 0.001, 0.05, src_port=40002)]
    outcome = {}
    for tcp, threshold in (('cubic', 0), ('dctcp', 20)):
        settings = SimSettings(link_mbps=1000, stop_s=0.05, measure_from_s=0.01, queue_packets=150,
                               ecn_threshold_packets=threshold, tcp=tcp, min_rto_ms=1.0)
        result = bisection_backend.simulate(TOPO, 'twolevel', flows, settings, progress=lambda line: None)
        record = bisection_backend.simulation_record(result)
        outcome[tcp] = (record['queue_drops'], record['ecn_marked'], sum(f['goodput_mbps'] for f in result['flows']))
    assert outcome['cubic'][0] > 0 and outcome['cubic'][1] == 0
    assert outcome['dctcp'][0] == 0 and outcome['dctcp'][1] > 100
    assert outcome['dctcp'][2] > 900  # the port stays busy: 2 x 482 Mbit/s of goodput
