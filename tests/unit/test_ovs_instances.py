"""Which switch runs on which private Open vSwitch instance (how many a
fabric gets: test_daemon_policy.py)."""
import pytest

from scripts.emulator.ovs import instances as ovs_instances
from scripts.emulator.ovs.daemon_policy import switch_ports
from topologies.fattree import FatTree


@pytest.mark.parametrize('k, count', [(4, 2), (8, 3), (16, 4)])
def test_placement_balances_ports_and_bfd_sessions(k, count):
    model = FatTree(k)
    ports = switch_ports(model)
    placement = ovs_instances.placement(ports, count)
    assert set(placement) == set(ports) and set(placement.values()) == set(range(count))
    load, sessions = [0] * count, [0] * count
    for switch, index in placement.items():
        load[index] += ports[switch]
    for link in model.switch_links():
        sessions[placement[link.node_a]] += 1
        sessions[placement[link.node_b]] += 1
    assert max(load) - min(load) <= max(ports.values())
    if k == 16:  # the default: 1,024 ports and BFD sessions on each daemon, the most one keeps up with
        assert load == [1280] * 4 and sessions == [1024] * 4


def test_placement_takes_the_least_loaded_instance_in_order():
    assert ovs_instances.placement({'a': 4, 'b': 2, 'c': 1, 'd': 3}, 2) == {'a': 0, 'b': 1, 'c': 1, 'd': 1}


@pytest.mark.parametrize('count, message', [(0, 'at least one'), (3, 'at most one per switch')])
def test_placement_rejects_impossible_counts(count, message):
    with pytest.raises(ValueError, match=message):
        ovs_instances.placement({'a': 1, 'b': 1}, count)


def test_an_instance_names_its_namespace_and_points_the_tools_at_its_daemons():
    instance = ovs_instances.OvsInstance(3)
    assert instance.netns == 'dcfovs3'
    assert instance.prefix()[:4] == ['ip', 'netns', 'exec', 'dcfovs3']
    assert 'OVS_RUNDIR=/run/dcfabric/ovs3' in instance.prefix()
    assert instance.db_remote() == 'unix:/run/dcfabric/ovs3/db.sock'


def test_k16_defaults_bring_bfd_back_within_each_daemons_sessions():
    from scripts.fattree.bfd_defaults import defaults
    from scripts.fattree.bfd_defaults_report import markdown
    row = defaults(16)
    assert row == {'k': 16, 'switch_links': 2048, 'ovs_instances': 4, 'sessions_per_instance': 1024,
                   'interval_ms': 2050, 'bfd_packets_per_s': 1998, 'detection_ms': 6150}
    assert '| 16 | 2,048 | 4 | 1,024 | 2,050 ms | 1,998 | 6,150 ms |' in markdown([row])


def test_veths_are_made_in_batches_an_open_file_limit_allows():
    """iproute2 keeps a file open per ``netns NAME`` of a batch: k=16's
    5,120 switch ends in one batch failed where the limit was 4,096."""
    from scripts.emulator.mininet_classes import batch_lines, ip_batches
    assert batch_lines(1024) == 496 and batch_lines(256) == 112 and batch_lines(10 ** 6) == 2000
    assert batch_lines(16) == 1
    lines = ['link %d' % i for i in range(1001)]
    batches = ip_batches(lines, 496)
    assert [len(batch) for batch in batches] == [496, 496, 9]
    assert sum(batches, []) == lines and ip_batches([], 496) == []
