"""The hosts' CPU group in this machine's real cgroup v1 cpu hierarchy:
made with its shares, a command joins it through mnexec -g, removal ends
what is left in it. (cgroup v2 cannot be tested for real here: the unified
hierarchy of these machines has no cpu controller; tests/unit/
test_host_cpu_group.py tests it against a directory.)"""
import os
import subprocess
import time

import pytest

from scripts.emulator.faults import LOCAL
from scripts.emulator.host_cpu_group import CPU_CGROUPS, HOSTS_CPU_SHARES, HostCpuGroup


def test_a_command_joins_the_real_v1_group_and_ends_with_it(require_ovs):
    if not os.access(os.path.join(CPU_CGROUPS, 'cpu.shares'), os.W_OK):
        pytest.fail('this machine has no writable cgroup v1 cpu hierarchy at %s' % CPU_CGROUPS)
    group = HostCpuGroup(LOCAL, pid=os.getpid())
    prefix = group.make()
    try:
        assert group.hierarchy == ('v1', CPU_CGROUPS) and prefix[:2] == ['mnexec', '-g']
        with open(os.path.join(CPU_CGROUPS, group.name, 'cpu.shares')) as shares:
            assert int(shares.read()) == HOSTS_CPU_SHARES
        sleeper = subprocess.Popen(prefix + ['sleep', '60'])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open('/proc/%d/cgroup' % sleeper.pid) as cgroups:
                if any(line.split(':')[1] == 'cpu' and line.strip().endswith('/' + group.name)
                       for line in cgroups):
                    break
            time.sleep(0.05)
        else:
            pytest.fail('the command did not join %s' % group.name)
    finally:
        group.remove()
    assert sleeper.wait(10) == -9
    assert not os.path.exists(os.path.join(CPU_CGROUPS, group.name))
