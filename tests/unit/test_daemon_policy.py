"""How many ovs-vswitchd daemons a fabric gets, by the machine's cores, the
forwarding its calibration measured and the fabric
(scripts/emulator/ovs/daemon_policy.py)."""
import subprocess
import sys

import pytest

from scripts.emulator.ovs import daemon_policy
from topologies.fattree import FatTree

CORES = (2, 4, 8, 16, 64)
# Mbit/s of shaped switch hops one daemon forwards faithfully: 65% of a
# 2-core Intel Xeon's thread (about 1,385), what the tables below were set by
PER_DAEMON = 900.0
# {k: daemons on 2, 4, 8, 16 and 64 cores}
UNSHAPED = {4: (1, 1, 1, 1, 1), 8: (1, 1, 1, 1, 1), 16: (4, 4, 4, 4, 4)}
AT_10_MBPS = {4: (1, 1, 1, 1, 1), 8: (1, 2, 4, 7, 7), 16: (4, 4, 4, 8, 32)}
AT_50_MBPS = {4: (1, 2, 4, 4, 4), 8: (1, 2, 4, 8, 32), 16: (4, 4, 4, 8, 32)}


@pytest.mark.parametrize('k', [4, 8, 16])
@pytest.mark.parametrize('bw, table', [(None, UNSHAPED), (10, AT_10_MBPS), (50, AT_50_MBPS)])
def test_daemons_by_cores_fabric_and_rate(k, bw, table):
    model = FatTree(k)
    assert [daemon_policy.choose_for(model, bw, cores=cores, per_daemon_mbps=PER_DAEMON).count
            for cores in CORES] == list(table[k])


def test_two_cores_keep_what_is_measured_best_there():
    """Shaped experiments on the machine's daemon (two private ones took
    both cores at any rate); unshaped k=16 on four, by switch ports."""
    for k in (4, 8):
        for bw in (5, 10, 20, 100):
            assert daemon_policy.choose_for(FatTree(k), bw, cores=2, per_daemon_mbps=PER_DAEMON).count == 1
    assert daemon_policy.choose_for(FatTree(16), None, cores=2).count == 4


def test_sixteen_cores_give_what_was_faithful_there():
    """k=4 on 16 cores: 4 daemons faithful at 50 Mbit/s, 8 at 100."""
    assert daemon_policy.choose_for(FatTree(4), 50, cores=16, per_daemon_mbps=PER_DAEMON).count == 4
    assert daemon_policy.choose_for(FatTree(4), 100, cores=16, per_daemon_mbps=PER_DAEMON).count == 8


def test_half_the_cores_stay_with_the_hosts_and_the_reason_says_so():
    choice = daemon_policy.choose_for(FatTree(8), 10, cores=2, per_daemon_mbps=PER_DAEMON)
    assert choice.count == 1
    assert '7 daemons at 900 Mbit/s each' in choice.reason
    assert '2 cores leave room for 1' in choice.reason and 'limited by the emulator' in choice.reason
    assert daemon_policy.choose(cores=64, switch_ports=4, switches=2, hosts=1000, hops=5, bw=100,
                                per_daemon_mbps=PER_DAEMON).count == 2


def test_a_daemon_forwarding_less_gets_help_sooner():
    """The measured capacity decides: k=4 at 50 Mbit/s on 16 cores needs
    3,573 Mbit/s of forwarding, 4 daemons at 900 each, 8 at 450."""
    assert daemon_policy.choose_for(FatTree(4), 50, cores=16, per_daemon_mbps=450.0).count == 8
    assert daemon_policy.choose_for(FatTree(4), 50, cores=16, per_daemon_mbps=3600.0).count == 1
    assert '8 daemons at 450 Mbit/s each' in daemon_policy.choose_for(FatTree(4), 50, cores=16,
                                                                       per_daemon_mbps=450.0).reason


def test_unshaped_or_asked_never_needs_the_calibration():
    """Without a link rate (or with a count asked for) the policy reads no
    calibration, so it measures nothing."""
    assert daemon_policy.choose_for(FatTree(4), None, cores=2).count == 1
    assert daemon_policy.choose_for(FatTree(4), 10, ovs_instances=2).count == 2


def test_asked_for_overrides_the_policy():
    choice = daemon_policy.choose_for(FatTree(4), 50, ovs_instances=3, cores=16)
    assert choice == (3, 'as asked (--ovs-instances 3)')
    assert daemon_policy.describe(choice).startswith('ovs-vswitchd daemons: 3, private')
    assert daemon_policy.describe(daemon_policy.choose_for(FatTree(4), None, cores=2)).startswith(
        "ovs-vswitchd daemons: 1, the machine's own (unshaped links: one daemon per 1,280 switch ports, 80 here)")


@pytest.mark.parametrize('k, hops', [(4, 67 / 15), (8, 599 / 127)])
def test_mean_switch_hops_of_a_fat_tree(k, hops):
    # pairs on one edge switch cross 1 switch, in one pod 3, across pods 5
    assert daemon_policy.mean_switch_hops(FatTree(k)) == pytest.approx(hops)


@pytest.mark.parametrize('k, hops', [(4, 5), (8, 5)])
def test_longest_switch_path_of_a_fat_tree(k, hops):
    assert daemon_policy.longest_switch_path(FatTree(k)) == hops


@pytest.mark.parametrize('k, count', [(4, 1), (6, 1), (8, 1), (12, 2), (16, 4), (24, 14)])
def test_unshaped_by_switch_ports(k, count):
    assert daemon_policy.by_switch_ports(sum(daemon_policy.switch_ports(FatTree(k)).values())) == count


def test_by_switch_ports_is_capped():
    assert daemon_policy.by_switch_ports(10 ** 6) == daemon_policy.MAX_INSTANCES


def test_the_policy_imports_no_emulator():
    imported = subprocess.run([sys.executable, '-c', 'import sys, scripts.emulator.ovs.daemon_policy; '
                               'print(" ".join(sorted(sys.modules)))'], capture_output=True, text=True,
                              check=True, timeout=60).stdout.split()
    assert not [name for name in imported if name.split('.')[0] in ('mininet', 'ryu', 'eventlet')]
