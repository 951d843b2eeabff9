"""One way in: every system's commands and every experiment are reachable through dcfabric."""
import importlib
import subprocess
import sys

import pytest

from scripts import cli
from scripts import REPO_ROOT as REPO


def test_help_lists_every_system():
    text = cli.build_parser().format_help()
    for command in ('run', 'cli', 'bisection', 'fail', 'recover', 'kevin', 'nbridge', 'letflow', 'p4', 'measure'):
        assert command in text


@pytest.mark.parametrize('command,name', [(c, n) for c, names in cli.EXPERIMENTS.items() for n in names])
def test_every_experiment_has_a_command_line(command, name):
    module, what = cli.EXPERIMENTS[command][name]
    assert callable(importlib.import_module(module).main) and what


def test_an_experiments_options_reach_its_own_command_line(tmp_path):
    """dcfabric measure bfd-defaults ... runs the module's main with everything after the name."""
    done = subprocess.run([sys.executable, '-m', 'scripts.cli', 'measure', 'bfd-defaults', '--k', '4',
                           '--out', str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert '| 4 |' in done.stdout and list(tmp_path.iterdir())


def test_an_unknown_experiment_is_named(capsys):
    with pytest.raises(SystemExit) as ended:
        cli.main(['measure', 'no-such-benchmark'])
    assert ended.value.code == 2 and "invalid choice: 'no-such-benchmark'" in capsys.readouterr().err


def test_unknown_options_of_a_fabric_command_are_refused(capsys):
    with pytest.raises(SystemExit):
        cli.main(['run', '--bogus'])
    assert 'unrecognized arguments: --bogus' in capsys.readouterr().err


def test_the_readme_names_every_measurement():
    with open(REPO + '/README.md') as readme:
        text = readme.read()
    assert [name for name in cli.EXPERIMENTS['measure'] if '`%s`' % name not in text] == []
