"""Finding a Mininet host's namespace for failures of its link: by its
shell's command line (``bash ... mininet:NAME``), exactly one."""
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripts.emulator.faults import FaultError, host_pid


def fake_host_shell(name):
    """A process whose command line reads like a Mininet host's shell (a
    real bash would fork for its command, briefly showing twice)."""
    process = subprocess.Popen(['bash', '-c', 'import time; time.sleep(30)', 'mininet:' + name],
                               executable=sys.executable)
    deadline = time.time() + 5
    while b'mininet:' not in Path('/proc/%d/cmdline' % process.pid).read_bytes():  # until exec'd
        assert time.time() < deadline
        time.sleep(0.01)
    return process


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
