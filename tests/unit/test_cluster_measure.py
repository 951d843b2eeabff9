"""scripts/cluster/measure.py: rows of one configuration per command are
merged into the results; arguments are checked."""
import argparse

import pytest

from scripts.cluster.measure import LOCAL, combined, config_arg, merged, servers_arg


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
