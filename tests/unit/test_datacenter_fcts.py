"""scripts.experiments.datacenter_fcts: simulated workload runs gathered into FCT
slowdowns per workload, failed links, load, TCP and scheme, and its Markdown."""
import csv
import json

import pytest

from scripts.runner.records import FLOW_COLUMNS, RESULTS_SCHEMA
from scripts.experiments import datacenter_fcts as fcts

CONFIG = {'experiment': 'workload', 'backend': 'sim', 'sender_queue': 'drop-tail', 'k': 8, 'bw': 10000.0, 'queue': 150, 'seconds': 0.01, 'pattern': 'all-to-all',
          'seeds': [1], 'min_rto_ms': 1.0, 'control_delay_ms': 0.1, 'period_s': 0.001, 'link_delay_us': 1.0,
          'drain': 0.1, 'cdf': 'web-search', 'fail': [], 'tcp': 'cubic', 'ecn_threshold_packets': 0}


def write_run(path, slowdowns, host_queue_drops=None, **config):
    """A finished run: ``slowdowns`` {(scheme, load): [(size_bytes, slowdown or None)]}; its
    records count the senders' drops unless ``host_queue_drops`` is None (a run from before)."""
    config = dict(CONFIG, **config)
    rows, runs = [], []
    for (scheme, load), flows in slowdowns.items():
        for size, slowdown in flows:
            rows.append({'scheme': scheme, 'seed': 1, 'load': load, 'src': 'h0_0_2', 'dst': 'h1_0_2',
                         'size_bytes': size, 'start_s': 0.0, 'fct_s': '' if slowdown is None else slowdown / 1e3,
                         'ideal_fct_s': 1e-3, 'slowdown': '' if slowdown is None else slowdown})
        simulation = {'events': 1000, 'queue_drops': 7, 'ecn_marked': 3}
        if host_queue_drops is not None:
            simulation['host_queue_drops'] = host_queue_drops
        runs.append({'scheme': scheme, 'seed': 1, 'load': load, 'flows': len(flows),
                     'finished': sum(1 for _, slowdown in flows if slowdown is not None), 'simulation': simulation,
                     'ran_on': {'wall_s': 60.0}})
    path.mkdir()
    with open(path / 'flows.csv', 'w', newline='') as f:
        writer = csv.DictWriter(f, FLOW_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (path / 'summary.json').write_text(json.dumps({'schema': RESULTS_SCHEMA, 'config': config, 'runs': runs}))
    return str(path)


def cell(data, **key):
    return next(c for c in data['cells'] if all(c[k] == v for k, v in key.items()))


def test_small_and_large_flows_slowdowns_per_cell(tmp_path):
    # 99,999 bytes is small, 100,000 large; an unfinished flow counts apart
    cubic = write_run(tmp_path / 'cubic', {('ecmp', 0.3): [(1000, 1.0), (99999, 3.0), (100000, 2.0), (5000000, None)],
                                           ('twolevel', 0.3): [(1000, 4.0)]})
    dctcp = write_run(tmp_path / 'dctcp', {('ecmp', 0.3): [(1000, 1.5)]}, host_queue_drops=1234, tcp='dctcp',
                      ecn_threshold_packets=65)
    data = fcts.gather([fcts.load(cubic), fcts.load(dctcp)])
    ecmp = cell(data, scheme='ecmp', tcp='cubic')
    assert ecmp['small'] == {'flows': 2, 'mean': 2.0, 'p50': 2.0, 'p99': 2.98}
    assert ecmp['large'] == {'flows': 1, 'mean': 2.0, 'p50': 2.0, 'p99': 2.0}
    assert (ecmp['unfinished'], ecmp['wall_s'], ecmp['queue_drops'], ecmp['ecn_marked']) == (1, 60.0, 7, 3)
    assert cell(data, tcp='dctcp')['small']['mean'] == 1.5 and cell(data, tcp='dctcp')['large']['flows'] == 0
    # the senders' drops where the run counted them, "-" where it predates the count
    assert (ecmp['host_queue_drops'], cell(data, tcp='dctcp')['host_queue_drops']) == (None, 1234)
    rows = [line for line in fcts.markdown(data).splitlines() if line.startswith('| web-search')]
    assert [line.split(' | ')[12:14] for line in rows] == [['7', '-'], ['7', '-'], ['7', '1,234']]
    # rows ordered by TCP, then by the schemes' run order; the matrix's missing cell named
    assert [(c['tcp'], c['scheme']) for c in data['cells']] == [
        ('cubic', 'twolevel'), ('cubic', 'ecmp'), ('dctcp', 'ecmp')]
    assert data['not_run'] == [{'cdf': 'web-search', 'fail': '', 'load': 0.3, 'tcp': 'dctcp', 'scheme': 'twolevel'}]
    assert data['workloads'][0]['ecn_threshold'] == {'cubic': 0, 'dctcp': 65}
    assert data['workloads'][0]['runs'] == [cubic, dctcp]


def test_failed_link_runs_are_cells_of_their_own(tmp_path):
    whole = write_run(tmp_path / 'whole', {('ecmp', 0.6): [(1000, 1.0)]})
    failed = write_run(tmp_path / 'failed', {('ecmp', 0.6): [(1000, 9.0)]}, fail=['a0_4-c0_0'])
    data = fcts.gather([fcts.load(failed), fcts.load(whole)])
    assert [(c['fail'], c['small']['mean']) for c in data['cells']] == [('', 1.0), ('a0_4-c0_0', 9.0)]
    assert data['not_run'] == []
    assert '| web-search | a0_4-c0_0 | 0.6 | cubic | ecmp | 1 | 9.00 | 9.00 | 0 | - | - | 0 | 7 | - | 3 | 60 |' \
        in fcts.markdown(data)


@pytest.mark.parametrize('other, message', [
    ({'seconds': 0.02}, 'differ in seconds'), ({'queue': 50}, 'differ in queue'),
    ({'tcp': 'cubic', 'ecn_threshold_packets': 20}, 'runs cubic with ECN threshold 20'),
    ({'backend': 'emulator'}, 'ran on the emulator'),
    ({}, 'web-search, failed none, load 0.3, cubic, ecmp, seed 1 is in both')])
def test_runs_that_make_no_one_table_are_refused(tmp_path, other, message):
    first = write_run(tmp_path / 'a', {('ecmp', 0.3): [(1000, 1.0)]})
    second = write_run(tmp_path / 'b', {('ecmp', 0.3): [(1000, 1.0)]}, **other)
    with pytest.raises(fcts.FctsError, match=message):
        fcts.gather([fcts.load(first), fcts.load(second)])


def test_another_workload_may_have_its_own_conditions(tmp_path):
    web = write_run(tmp_path / 'web', {('ecmp', 0.3): [(1000, 1.0)]})
    mining = write_run(tmp_path / 'mining', {('ecmp', 0.3): [(1000, 1.0)]}, cdf='data-mining', seconds=0.02)
    data = fcts.gather([fcts.load(mining), fcts.load(web)])
    assert [w['cdf'] for w in data['workloads']] == ['web-search', 'data-mining']
    text = fcts.markdown(data)
    assert '**web-search**: k=8 fat-tree, 10 Gbit/s links, 150-packet queues (cubic: no ECN marking), ' \
           'all-to-all, 10 ms of arrivals then at most 100 ms to finish' in text
    assert '**data-mining**' in text and '20 ms of arrivals' in text
    assert 'Cost: 2 runs, 120 s of simulator wall time in all, 60-60 s a run.' in text
