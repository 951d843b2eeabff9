"""This machine's emulator calibration and the defaults it sets
(scripts/emulator/calibration.py): the rate rounding, the predicted
faithful rate, the cache; the measuring itself runs in `dcfabric calibrate`."""
import json
import subprocess
import sys

import pytest

from scripts.emulator import calibration
from scripts.emulator.ovs import daemon_policy
from topologies.fattree import FatTree

MACHINE = {'cpu_model': 'Intel(R) Xeon(R) CPU @ 2.20GHz', 'cores': 2, 'ovs_version': '3.1.0'}


def measured(daemon_hop_mbps, host_mbps=2000.0, machine=MACHINE):
    return calibration.Calibration(machine=machine, measured_at='2026-12-07T10:00:00', took_s=24.0,
                                   daemon_hop_mbps=daemon_hop_mbps, host_mbps=host_mbps)


# a 2-core Xeon's thread: 1,385 Mbit/s of shaped hops, 526 of them faithfully
XEON = measured(1385.0)
ALL_SCHEMES = ['nonblocking', 'twolevel', 'ecmp', 'classifier', 'scheduler']
TABLE_2 = ['random', 'stride-1', 'stride-4', 'sameid-outgoing']


@pytest.mark.parametrize('mbps, nice', [(1, 1), (1.9, 1), (2, 2), (4.99, 2), (5, 5), (9.99, 5), (10, 10),
                                        (12.6, 10), (20, 20), (49, 20), (99, 50), (1000, 1000), (0.5, None)])
def test_rates_a_person_would_choose(mbps, nice):
    assert calibration.nice_rate_at_most(mbps) == nice


def test_the_xeon_gets_one_step_below_the_rate_its_sweep_found():
    """16 hosts x R x 5 switch hops within 526 Mbit/s: 5 Mbit/s (its sweep held 10, which needs 800)."""
    mbps, reason = calibration.default_link_mbps(XEON, FatTree(4), ALL_SCHEMES, TABLE_2, cores=2)
    assert mbps == 5
    assert '16 hosts x 5 Mbit/s x 5.0 switch hops (the longest path) = 400 Mbit/s of forwarding <= 1 daemon x 526' \
        in reason
    assert 'at 10 Mbit/s 16 hosts x 10 Mbit/s x 5.0 switch hops (the longest path) = 800' in reason


def test_a_slower_daemon_gets_a_step_lower():
    assert calibration.default_link_mbps(measured(1000.0), FatTree(4), ALL_SCHEMES, TABLE_2, cores=2)[0] == 2


def test_random_alone_counts_its_mean_path():
    # 526 / (16 x 67/15) = 7.4: still 5; a daemon of 4,000 forwards 1,520 faithfully: 21.3 on Random, 19 on the
    # longest path
    assert calibration.default_link_mbps(XEON, FatTree(4), ALL_SCHEMES, ['random'], cores=2)[0] == 5
    assert calibration.default_link_mbps(measured(4000.0), FatTree(4), ALL_SCHEMES, ['random'], cores=2)[0] == 20
    assert calibration.default_link_mbps(measured(4000.0), FatTree(4), ALL_SCHEMES, TABLE_2, cores=2)[0] == 10
    assert calibration.forwarding_needed(FatTree(4), ['random'])[0] == pytest.approx(67 / 15)
    assert calibration.forwarding_needed(FatTree(4), ['random', 'stride-4'])[0] == 5


def test_more_cores_more_daemons_higher_rates():
    """16 cores: up to 8 daemons; k=4 at 50 Mbit/s needs 4,000 Mbit/s of
    forwarding, 8 daemons (measured faithful there on 4); 100 would need 16."""
    sixteen_cores = measured(1385.0, host_mbps=8000.0)
    mbps, reason = calibration.default_link_mbps(sixteen_cores, FatTree(4), ALL_SCHEMES, TABLE_2, cores=16)
    assert mbps == 50 and '<= 8 daemons x 526' in reason and '> 8 daemons x 526' in reason


def test_the_reference_alone_is_limited_by_the_hosts_side():
    # half of 2,000 Mbit/s over 16 hosts: 62.5 -> 50
    mbps, reason = calibration.default_link_mbps(XEON, FatTree(4), ['nonblocking'], TABLE_2, cores=2)
    assert mbps == 50 and "within what the hosts' side carries" in reason
    assert calibration.default_link_mbps(measured(1e6, host_mbps=400.0), FatTree(4), ALL_SCHEMES, TABLE_2,
                                         cores=2)[0] == 10


def test_a_fabric_too_large_for_the_machine_names_the_simulator():
    with pytest.raises(calibration.TooSmallToEmulate) as error:
        calibration.default_link_mbps(XEON, FatTree(8), ALL_SCHEMES, TABLE_2, cores=2)
    assert isinstance(error.value, ValueError)
    assert '--backend sim' in str(error.value) and 'below 2 Mbit/s' in str(error.value)
    assert '128 hosts x 2 Mbit/s x 5.0 switch hops (the longest path) = 1,280' in str(error.value)
    assert 'Intel(R) Xeon(R) CPU @ 2.20GHz, 2 cores, Open vSwitch 3.1.0' in str(error.value)


def test_the_policy_gets_the_faithful_share_of_the_measured_forwarding():
    assert XEON.faithful_mbps_per_daemon == pytest.approx(526.3)
    config = XEON.as_config()
    assert config['key'] == 'Intel(R) Xeon(R) CPU @ 2.20GHz, 2 cores, Open vSwitch 3.1.0'
    assert config['faithful_mbps_per_daemon'] == 526
    assert calibration.Calibration.from_config(json.loads(json.dumps(config))) == XEON


def test_cache_places():
    assert calibration.cache_dirs(0, {'HOME': '/root'}) == ['/var/lib/dcfabric', '/root/.cache/dcfabric']
    assert calibration.cache_dirs(1000, {'HOME': '/home/a', 'XDG_CACHE_HOME': '/x'}) == ['/x/dcfabric']
    assert (calibration.cache_file_name(MACHINE)
            == 'calibration-intel-r-xeon-r-cpu-2.20ghz-2-cores-open-vswitch-3.1.0.json')


def test_cached_per_machine_kind(tmp_path, monkeypatch):
    monkeypatch.setattr(calibration, 'CACHE_ROOT', str(tmp_path / 'root'))
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'user'))
    assert calibration.cached(MACHINE) is None
    calibration.save(XEON)
    assert calibration.cached(MACHINE) == XEON
    assert calibration.cached(dict(MACHINE, cores=4)) is None
    assert calibration.cached(dict(MACHINE, ovs_version='3.3.0')) is None


def test_current_uses_the_cache_without_measuring(monkeypatch):
    monkeypatch.setattr(calibration, 'this_machine', lambda: MACHINE)
    monkeypatch.setattr(calibration, 'cached', lambda machine: XEON)
    monkeypatch.setattr(calibration, 'measure', lambda *a: pytest.fail('measured although cached'))
    assert calibration.current() is XEON


def test_current_measures_once_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(calibration, 'CACHE_ROOT', str(tmp_path / 'root'))
    monkeypatch.setattr(calibration, 'this_machine', lambda: MACHINE)
    monkeypatch.setattr(calibration, 'measure', lambda machine, progress: XEON)
    said = []
    assert calibration.current(said.append) == XEON
    assert 'measuring it once' in said[0] and 'calibrated in 24.0 s' in said[1]
    assert calibration.current(pytest.fail) == XEON


def test_the_policy_reads_the_calibration_for_shaped_links(monkeypatch):
    monkeypatch.setattr(calibration, 'current', lambda: measured(700.0))  # 266 faithfully
    choice = daemon_policy.choose_for(FatTree(4), 50, cores=16)
    assert choice.count == 8 and 'at 266 Mbit/s each' in choice.reason


def test_the_chain_is_a_fat_trees_longest_path_with_k4s_hosts():
    chain = calibration.forwarding_chain()
    assert len(chain.switches) == 5 and len(chain.hosts) == 16
    assert daemon_policy.longest_switch_path(chain) == 5
    flows = calibration.chain_flows(chain)
    assert len(flows) == 16 and sorted(server for _, server in flows) == sorted(h.name for h in chain.hosts)


def test_the_calibration_imports_no_emulator():
    imported = subprocess.run([sys.executable, '-c', 'import sys, scripts.emulator.calibration; '
                               'print(" ".join(sorted(sys.modules)))'], capture_output=True, text=True,
                              check=True, timeout=60).stdout.split()
    assert not [name for name in imported if name.split('.')[0] in ('mininet', 'ryu', 'eventlet')]


def test_the_machines_table_puts_each_sweep_beside_its_calibration():
    from scripts.emulator.benchmarks.rate_sweep_report import machines_markdown
    table = machines_markdown({'machines': [
        {'machine': 'AMD EPYC, 2 cores', 'sweep_highest_faithful_mbps': 5.0, 'predicted_mbps': 5,
         'calibration': dict(measured(1132.2, 734.0).as_config()), 'load': 'quiet'},
        {'machine': 'AMD EPYC, 2 cores, busy', 'sweep_highest_faithful_mbps': None, 'predicted_mbps': None,
         'calibration': dict(measured(403.0, 483.0).as_config()), 'load': 'busy'},
        {'machine': 'Intel Xeon, 2 cores', 'sweep_highest_faithful_mbps': 10.0, 'predicted_mbps': None}]})
    assert '| AMD EPYC, 2 cores | 5 | 5 | 1,132 | 430 | 734 | 24.0 | quiet |' in table
    assert '| AMD EPYC, 2 cores, busy | - | below 2: refused | 403 | 153 | 483 | 24.0 | busy |' in table
    assert '| Intel Xeon, 2 cores | 10 | - | not measured | not measured | not measured | not measured | - |' in table
