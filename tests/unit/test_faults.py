"""Finding a Mininet host's namespace for failures of its link: by its
shell's command line (``bash ... mininet:NAME``), exactly one."""
import subprocess

import pytest

from scripts.faults import FaultError, host_pid


def fake_host_shell(name):
    # what Mininet runs for a host; the second command keeps bash from exec'ing sleep
    return subprocess.Popen(['bash', '-c', 'sleep 30; true', 'mininet:' + name])


def test_host_pid_finds_the_one_shell_of_that_name():
    shell = fake_host_shell('h4test_0_2')
    try:
        assert host_pid('h4test_0_2') == shell.pid
        with pytest.raises(FaultError, match='no Mininet hosts named h4test_0_3 are running'):
            host_pid('h4test_0_3')
        twin = fake_host_shell('h4test_0_2')
        try:
            with pytest.raises(FaultError, match='2 Mininet hosts named h4test_0_2'):
                host_pid('h4test_0_2')
        finally:
            twin.kill()
            twin.wait()
    finally:
        shell.kill()
        shell.wait()
