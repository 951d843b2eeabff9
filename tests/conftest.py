import os
import shutil
import subprocess

import pytest

from scripts.emulator.ports import free_port  # noqa: F401 (tests import it from here)


def ovs_ready():
    """Root and a running Open vSwitch: what tests with real bridges need.
    CI (scripts/setup.sh) always provides both, so these tests never skip there."""
    if os.geteuid() != 0 or not shutil.which('ovs-vsctl'):
        return False
    return subprocess.run(['ovs-vsctl', '--timeout=5', 'show'], capture_output=True).returncode == 0


@pytest.fixture(scope='session')
def require_ovs():
    if not ovs_ready():
        if os.environ.get('CI'):
            pytest.fail('CI must run the OVS/Mininet tests: run scripts/setup.sh as root first')
        pytest.skip('needs root and a running Open vSwitch (scripts/setup.sh)')
