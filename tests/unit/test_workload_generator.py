"""The workload experiment's pure parts (scripts/experiments/workload_report.py)
and its generator on loopback (scripts/emulator/flowgen.py): the flows
drawn achieve the CDF's mean size and the offered load, each pattern picks
the peers it says, the ideal FCT, the summary, and the generator's
request/response flows."""
import asyncio
import json
import socket
import subprocess
import time

import numpy as np
import pytest

from scripts.experiments.patterns import WORKLOAD_PATTERNS
from scripts.workloads.flow_sizes import DATA_MINING, WEB_SEARCH
from scripts.emulator import flowgen, shaping
from scripts.experiments import workload, workload_report as report
from topologies.fattree import FatTree

TOPO = FatTree(4)


@pytest.mark.parametrize('cdf', [WEB_SEARCH, DATA_MINING])
def test_drawn_flows_achieve_the_cdf_mean_and_the_load(cdf):
    load, link_mbps, seconds = 0.6, 1000.0, 200.0
    flows = report.draw_flows(TOPO, cdf, load, link_mbps, seconds, 'all-to-all', seed=5)
    sizes = np.array([f['size'] for f in flows])
    hosts = len(TOPO.hosts)
    offered = sizes.sum() * 8 / (seconds * hosts * link_mbps * 1e6)
    # heavy tails: data-mining's 2% of flows above 100 MB carry most of its bytes
    tolerance = 0.05 if cdf is WEB_SEARCH else 0.3
    assert len(flows) == pytest.approx(load * link_mbps * 1e6 * seconds * hosts / (8 * cdf.mean_bytes()), rel=0.05)
    assert sizes.mean() == pytest.approx(cdf.mean_bytes(), rel=tolerance)
    assert offered == pytest.approx(load, rel=tolerance)
    starts = [f['start_s'] for f in flows]
    assert starts == sorted(starts) and 0 < starts[0] and starts[-1] < seconds
    # every host offers its own share
    per_host = {h.name: 0 for h in TOPO.hosts}
    for f in flows:
        per_host[f['src']] += 1
    assert min(per_host.values()) > 0.8 * len(flows) / hosts


def test_each_host_arrivals_are_poisson():
    flows = report.draw_flows(TOPO, WEB_SEARCH, 0.5, 1000.0, 300.0, 'all-to-all', seed=2)
    starts = np.array([f['start_s'] for f in flows if f['src'] == TOPO.hosts[3].name])
    gaps = np.diff(starts)
    assert np.std(gaps) / np.mean(gaps) == pytest.approx(1, abs=0.1)  # exponential gaps


def test_the_same_seed_and_load_draw_the_same_flows():
    one = report.draw_flows(TOPO, WEB_SEARCH, 0.3, 10, 20, 'all-to-all', 37)
    assert one == report.draw_flows(TOPO, WEB_SEARCH, 0.3, 10, 20, 'all-to-all', 37)
    assert one != report.draw_flows(TOPO, WEB_SEARCH, 0.3, 10, 20, 'all-to-all', 38)


@pytest.mark.parametrize('pattern', WORKLOAD_PATTERNS)
def test_patterns_pick_their_peers(pattern):
    flows = report.draw_flows(TOPO, DATA_MINING, 0.9, 1000.0, 5.0, pattern, seed=3)
    assert flows and all(f['src'] != f['dst'] for f in flows)
    if pattern == 'inter-pod':
        assert all(TOPO.pod_of(f['src']) != TOPO.pod_of(f['dst']) for f in flows)
    if pattern == 'permutation':
        peers = {}
        for f in flows:
            peers.setdefault(f['src'], set()).add(f['dst'])
        assert all(len(d) == 1 for d in peers.values())
        assert len({next(iter(d)) for d in peers.values()}) == len(peers)
    if pattern == 'all-to-all':
        assert len({f['dst'] for f in flows}) == len(TOPO.hosts)


def test_ideal_fct_is_size_beyond_the_buckets_over_goodput_plus_two_rtts_and_a_frame_per_switch():
    # 1,448 payload bytes per 1,514-byte frame at 10 Mbit/s; the buckets (24 ms
    # of 10 Mbit/s: 30,000 bytes of frames) pass at once
    assert shaping.ideal_fct_s(1448 * 1000, 10, 0.002, 5) == pytest.approx(
        (1000 * 1514 - 30000) * 8 / 10e6 + 2 * 0.002 + 5 * 1514 * 8 / 10e6)
    # a flow the buckets hold whole: its RTTs and frames alone
    assert shaping.ideal_fct_s(20000, 10, 0.002, 1) == pytest.approx(2 * 0.002 + 1514 * 8 / 10e6)
    assert [TOPO.switches_between('h0_0_2', other) for other in ('h0_0_3', 'h0_1_2', 'h3_1_3')] == [1, 3, 5]


def test_rows_and_summary_by_size_bucket():
    flows = [{'id': 0, 'start_s': 0.1, 'src': 'h0_0_2', 'dst': 'h1_0_2', 'size': 50_000},
             {'id': 1, 'start_s': 0.2, 'src': 'h1_0_2', 'dst': 'h0_0_2', 'size': 5_000_000},
             {'id': 2, 'start_s': 0.3, 'src': 'h0_0_3', 'dst': 'h1_0_2', 'size': 20_000_000}]
    results = {0: {'id': 0, 'start_s': 0.1005, 'fct_s': 0.2, 'bytes': 50_000},
               1: {'id': 1, 'start_s': 0.2, 'fct_s': 8.0, 'bytes': 5_000_000},
               2: {'id': 2, 'unfinished': True, 'bytes': 10, 'start_s': 0.3}}
    rows = report.flow_rows('ecmp', 37, 0.5, flows, results, lambda f: f['size'] / 1e6)
    assert [r['slowdown'] for r in rows] == [4.0, 1.6, None]
    assert rows[0]['start_s'] == 0.1005 and rows[2]['fct_s'] is None
    counts = report.run_counts(rows)
    assert (counts['flows'], counts['finished'], counts['unfinished']) == (3, 2, 1)
    assert counts['unfinished_flows'][0]['size_bytes'] == 20_000_000
    summary = report.summarize(rows, [dict(counts, scheme='ecmp', seed=37, load=0.5, fidelity={'ok': True})])
    cells = summary['schemes']['ecmp']['0.5']
    assert cells['<100KB'] == {'flows': 1, 'mean': 4.0, 'p50': 4.0, 'p99': 4.0}
    assert cells['100KB-10MB']['mean'] == 1.6 and '>10MB' not in cells
    assert cells['all']['flows'] == 2
    assert '| emulator, faithful |' in report.format_table(summary, {'backend': 'emulator'})


def test_outputs_have_the_issue_columns(tmp_path):
    flows = report.draw_flows(TOPO, WEB_SEARCH, 0.5, 10, 2, 'all-to-all', 1)
    results = {f['id']: {'id': f['id'], 'start_s': f['start_s'], 'fct_s': 1.0, 'bytes': f['size']} for f in flows}
    rows = report.flow_rows('twolevel', 1, 0.5, flows, results, lambda f: 0.5)
    runs = [dict(report.run_counts(rows), scheme='twolevel', seed=1, load=0.5, fidelity={'ok': False})]
    config = {'experiment': 'workload', 'backend': 'emulator', 'k': 4, 'cdf': 'web-search', 'pattern': 'all-to-all',
              'bw': 10, 'queue': 50, 'seeds': [1]}
    report.write_outputs(str(tmp_path), config, rows, report.summarize(rows, runs))
    header = (tmp_path / 'flows.csv').read_text().splitlines()[0]
    assert header == 'scheme,seed,load,src,dst,size_bytes,start_s,fct_s,ideal_fct_s,slowdown'
    saved = json.loads((tmp_path / 'summary.json').read_text())
    assert saved['runs'][0]['fidelity'] == {'ok': False} and saved['config']['k'] == 4
    # what it wrote is what the one loader reads: the schema, and flows.csv's rows typed again
    from scripts.runner.records import load_results
    assert load_results(str(tmp_path))['rows'] == rows
    assert (tmp_path / 'slowdown_vs_load.png').exists() and (tmp_path / 'small_flow_fct_cdf.png').exists()


def test_default_drain_follows_the_largest_flow():
    flows = [{'size': 1448 * 1000}]
    assert report.default_drain_s(flows, 10) == 10 + 3  # 1.21 s alone, twice, rounded up
    assert report.default_drain_s([{'size': 10 ** 9}], 10) == report.DRAIN_CAP_S


@pytest.mark.parametrize('argv,problem', [
    (['--load', '0'], 'load must be in (0, 1]'), (['--load', '1.5'], 'load must be in (0, 1]'),
    (['--fail', 'a0_2'], 'a link is A-B')])
def test_command_line_errors_name_the_bad_value(argv, problem, capsys):
    with pytest.raises(SystemExit):
        workload.main(argv)
    assert problem in capsys.readouterr().err


def test_a_bad_cdf_file_stops_the_command_naming_the_line(tmp_path, capsys):
    bad = tmp_path / 'bad.cdf'
    bad.write_text('100 0.5\n50 1\n')
    with pytest.raises(SystemExit) as stop:
        workload.main(['--cdf', str(bad)])
    assert 'line 2' in str(stop.value) and 'sizes must increase' in str(stop.value)


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_the_generator_runs_many_flows_a_second_each_on_its_own_connection():
    """1,000 request/response flows in one second from one client process:
    every one completes with its bytes, starts on time, on a port of its own."""
    port = _free_port()
    server = subprocess.Popen(flowgen.command('serve', '--port', port), cwd=flowgen.ROOT, stdout=subprocess.PIPE)
    try:
        assert b'listening' in server.stdout.readline()
        schedule = [[i, i * 0.001, '127.0.0.1', port, 1000 + 37 * i] for i in range(1000)]
        epoch = time.time() + 1.0
        done = subprocess.run(flowgen.command('client', '--epoch', epoch, '--until', epoch + 20),
                              cwd=flowgen.ROOT, input=json.dumps(schedule), capture_output=True, text=True,
                              timeout=60)
    finally:
        server.kill()
        server.wait()
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(r['id'] for r in lines) == list(range(1000))
    assert all(r.get('bytes') == 1000 + 37 * r['id'] and 'fct_s' in r for r in lines), lines[:3]
    lags = sorted(r['start_s'] - r['id'] * 0.001 for r in lines)
    assert lags[len(lags) // 2] < 0.02 and lags[0] > -0.005


def test_a_flow_cut_off_at_the_deadline_is_reported_unfinished(capsys):
    port = _free_port()
    listener = socket.socket()
    listener.bind(('127.0.0.1', port))
    listener.listen()  # accepts, never answers
    try:
        epoch = time.time()
        asyncio.run(flowgen.client([[7, 0.0, '127.0.0.1', port, 5000]], epoch, epoch + 0.5))
    finally:
        listener.close()
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [{'id': 7, 'unfinished': True, 'bytes': 0, 'start_s': pytest.approx(0.0, abs=0.05)}]
