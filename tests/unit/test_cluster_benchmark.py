"""scripts/emulator/benchmarks/cluster.py: rows of one configuration per command are
merged into the results; arguments are checked; the emulator's verdicts
on repeated runs are counted in the row and its table cell."""
import argparse

import pytest

from scripts.emulator.benchmarks.cluster import LOCAL, combined, config_arg, judged, merged, servers_arg
from scripts.emulator.benchmarks.cluster_report import emulator_cell, markdown, throughput_markdown
from scripts.emulator.fidelity import verdict


def row(k, servers, config='', mbps=1.0):
    return {'k': k, 'servers': servers, 'tunnel': 'vxlan' if servers not in (LOCAL, 1) else None,
            'ovs_config': config, 'aggregate_mbps': mbps}


def test_a_new_row_replaces_only_its_own_configuration_and_rows_stay_ordered():
    old = [row(4, LOCAL), row(4, 2), row(8, 1), row(8, 1, 'userspace-tso-enable=true')]
    rows = merged(old, [row(8, 1, mbps=9.0), row(4, 3)])
    assert [(r['k'], r['servers'], r['ovs_config'], r['aggregate_mbps']) for r in rows] == [
        (4, LOCAL, '', 1.0), (4, 2, '', 1.0), (4, 3, '', 1.0),
        (8, 1, '', 9.0), (8, 1, 'userspace-tso-enable=true', 1.0)]


def test_servers_are_local_or_a_positive_count():
    assert servers_arg('local') == LOCAL and servers_arg('3') == 3
    for bad in ('0', 'two'):
        with pytest.raises((argparse.ArgumentTypeError, ValueError)):
            servers_arg(bad)


def test_ovs_config_is_key_equals_value():
    assert config_arg('userspace-tso-enable=true') == ('userspace-tso-enable', 'true')
    with pytest.raises(argparse.ArgumentTypeError):
        config_arg('userspace-tso-enable')


def test_repeated_runs_give_their_medians_and_keep_the_runs():
    runs = [dict(row(8, 2, mbps=mbps), tunnels=64, vswitchd_cpu_pct=[cpu, 50.0], bfd_down_seen_within_s=None)
            for mbps, cpu in ((300.0, 90.0), (100.0, 70.0), (200.0, 80.0))]
    result = combined(runs)
    assert result['aggregate_mbps'] == 200.0 and result['vswitchd_cpu_pct'] == [80.0, 50.0]
    assert result['tunnels'] == 64 and result['bfd_down_seen_within_s'] is None
    assert (result['k'], result['servers'], result['tunnel']) == (8, 2, 'vxlan')
    assert [r['aggregate_mbps'] for r in result['runs']] == [300.0, 100.0, 200.0]
    assert 'runs' not in combined(runs[:1])


def test_a_failed_run_is_kept_and_left_out_of_the_medians():
    runs = [dict(row(8, 1, mbps=300.0), vswitchd_cpu_pct=[90.0]), dict(row(8, 1), failure='96 pairs unreachable'),
            dict(row(8, 1, mbps=100.0), vswitchd_cpu_pct=[70.0])]
    for run in runs[1:2]:
        del run['aggregate_mbps']
    result = combined(runs)
    assert result['aggregate_mbps'] == 200.0 and result['failed_runs'] == ['96 pairs unreachable']
    assert 'failure' not in result and len(result['runs']) == 3
    only_failed = combined(runs[1:2])
    assert only_failed['failure'] == '96 pairs unreachable' and 'aggregate_mbps' not in only_failed


def judged_run(mbps, idle=50.0, socket_drops=0):
    figures = {'idle_pct_median': idle, 'daemon_socket_drops': socket_drops}
    return dict(row(4, LOCAL, mbps=mbps), vswitchd_cpu_pct=[90.0], tunnels=0, fidelity=judged(verdict(figures), []))


def test_the_limited_runs_are_counted_with_what_limited_them():
    runs = [judged_run(500.0, socket_drops=1200), judged_run(600.0, idle=3.0, socket_drops=40),
            judged_run(550.0, socket_drops=7)]
    result = combined(runs)
    assert 'fidelity' not in result and result['runs'][1]['fidelity']['daemon_socket_drops'] == 40
    assert emulator_cell(result) == 'LIMITED 3/3 runs: machine idle; ovs-vswitchd dropped'
    assert result['aggregate_mbps'] == 550.0


def test_faithful_runs_and_a_failed_one():
    failed = dict(row(4, LOCAL), failure='16 pairs unreachable')
    del failed['aggregate_mbps']
    result = combined([judged_run(500.0), failed, judged_run(700.0)])
    assert emulator_cell(result) == 'faithful'
    one_limited = combined([judged_run(500.0), failed, judged_run(700.0, socket_drops=3)])
    assert emulator_cell(one_limited) == 'LIMITED 1/3 runs: ovs-vswitchd dropped'


def test_a_single_run_keeps_its_verdict():
    result = combined([judged_run(500.0, socket_drops=9)])
    assert result['fidelity']['limited_by'] == ['ovs-vswitchd dropped 9 packets it did not read in time']
    assert emulator_cell(result) == 'LIMITED 1/1 runs: ovs-vswitchd dropped'


def test_a_daemon_the_monitor_did_not_see_is_named_and_the_run_not_called_faithful():
    fidelity = judged(verdict({'idle_pct_median': 50.0, 'daemon_socket_drops': 0}), ['192.168.250.12'])
    assert not fidelity['ok'] and fidelity['unwatched_daemons'] == ['192.168.250.12']
    assert fidelity['limited_by'] == ['ovs-vswitchd not watched: 192.168.250.12']
    assert emulator_cell(combined([dict(judged_run(1.0), fidelity=fidelity)])) == \
        'LIMITED 1/1 runs: ovs-vswitchd not watched'
    assert judged(verdict({'idle_pct_median': 50.0, 'daemon_socket_drops': 0}), [])['ok']


def test_rows_recorded_before_the_verdict_are_not_judged_in_both_tables():
    old = dict(row(4, LOCAL, mbps=573.7), flows=16, tunnels=0, build_and_start_s=1.1, ready_s=3.0,
               all_pairs_s=0.1, vswitchd_cpu_pct=[73.0], tunnel_failure_injection_s=None,
               bfd_down_seen_within_s=None, ovs_instances=1)
    assert emulator_cell(old) == 'not judged'
    assert markdown([old]).splitlines()[-1].endswith('| - | - | not judged |')
    assert throughput_markdown([old]).splitlines()[-1] == '| 4 | 1 | this machine\'s | 16 | 1 | 573.7 | 73 | not judged |'


def test_local_rows_run_on_the_daemon_policys_choice_unless_asked(capsys):
    from scripts.emulator.benchmarks.cluster import daemons_of
    assert daemons_of(4, None) == 1  # unshaped k=4: one daemon holds its 80 switch ports
    assert daemons_of(16, None) == 4  # 3,072 ports at 1,280 a daemon
    assert daemons_of(4, 3) == 3
    assert 'as asked (--ovs-instances 3)' in capsys.readouterr().err
