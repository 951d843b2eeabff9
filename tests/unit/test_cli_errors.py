"""Bad input gets a clear error and leaves nothing running."""
import json
import socket
import subprocess
import sys

import pytest

from scripts.emulator import machine_checks
from scripts.cli import main
from topologies.fattree import FatTree
from topologies.renamed import renamed


def run_cli(*args):
    return subprocess.run([sys.executable, '-m', 'scripts.cli', *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize('k, message', [('5', 'must be even'), ('2', 'between 4 and 254'),
                                        ('256', 'between 4 and 254'), ('four', 'integer')])
def test_bad_k(k, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(['run', '--k', k])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_unknown_switch_name_lists_the_real_ones(capsys):
    with pytest.raises(SystemExit, match="unknown node 'x9'.*a0_2"):
        main(['tables', '--switch', 'x9'])


def test_tables_print_paper_notation(capsys):
    main(['tables', '--k', '4', '--switch', 'a2_2'])
    out = capsys.readouterr().out
    assert '10.2.0.0/24        0' in out and 'OpenFlow rules: 3 prefix + 2 suffix + 5 housekeeping' in out


def test_not_root_is_refused(monkeypatch):
    monkeypatch.setattr(machine_checks.os, 'geteuid', lambda: 1000)
    with pytest.raises(machine_checks.SetupError, match='needs root'):
        machine_checks.check_machine()


def test_ovs_down_is_refused(monkeypatch):
    monkeypatch.setattr(machine_checks.os, 'geteuid', lambda: 0)
    monkeypatch.setattr(machine_checks.subprocess, 'run', lambda *a, **k: subprocess.CompletedProcess(
        a, 1, '', 'database connection failed'))
    with pytest.raises(machine_checks.SetupError, match='Open vSwitch is not running'):
        machine_checks.check_machine()


def test_taken_port_is_refused_and_nothing_is_left(require_ovs):
    bridges_before = subprocess.run(['ovs-vsctl', '--timeout=60', 'list-br'], capture_output=True, text=True, timeout=120).stdout
    with socket.socket() as squatter:
        squatter.bind(('127.0.0.1', 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        result = run_cli('run', '--ofp-port', str(port))
    assert result.returncode == 1
    assert 'OpenFlow port 127.0.0.1:%d is already in use' % port in result.stderr
    assert subprocess.run(['ovs-vsctl', '--timeout=60', 'list-br'], capture_output=True, text=True, timeout=120).stdout == bridges_before


def test_a_fabric_too_large_for_the_memory_is_refused_before_anything_starts(capsys):
    with pytest.raises(SystemExit, match=r'fattree\(k=64\) needs about \d+ MB of memory, \d+ MB are available'):
        main(['run', '--k', '64'])


def test_names_mininet_cannot_give_are_refused(monkeypatch):
    # prefixed names too long for IFNAMSIZ (as k >= 198 would give)
    monkeypatch.setattr(machine_checks, 'available_memory_mb', lambda: 10 ** 9)
    model = renamed(FatTree(4), 'x' * 9)
    with pytest.raises(machine_checks.SetupError, match='exceed 15 characters'):
        machine_checks.check_fits(model)


def test_external_controller_takes_the_link_rate(monkeypatch):
    from controller.ryuapp import manager
    calls = []
    monkeypatch.setattr(manager, 'main', calls.append)
    main(['controller', '--k', '4', '--scheme', 'scheduler', '--bw', '2'])
    params = json.loads(calls[0][calls[0].index('--params') + 1])
    assert params == {'k': 4, 'scheme': 'scheduler', 'link_mbps': 2.0}
