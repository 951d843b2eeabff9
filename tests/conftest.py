import os
import shutil
import subprocess

import pytest

from scripts.emulator.ports import free_port  # noqa: F401 (tests import it from here)

# The one way to let tests that need root, Open vSwitch and Mininet skip
# instead of fail where those are missing (never set in CI).
ALLOW_SKIP = 'DCFABRIC_ALLOW_SKIP'


def missing_for_emulation():
    """What tests with real bridges need and this machine lacks: root, a running Open vSwitch, Mininet."""
    if os.geteuid() != 0:
        return 'root'
    if shutil.which('mn') is None:
        return 'Mininet (mn not on PATH)'
    if not shutil.which('ovs-vsctl'):
        return 'Open vSwitch (ovs-vsctl not on PATH)'
    if subprocess.run(['ovs-vsctl', '--timeout=5', 'show'], capture_output=True, timeout=30).returncode != 0:
        return 'a running Open vSwitch (ovs-vsctl cannot reach ovsdb-server)'
    return None


@pytest.fixture(scope='session')
def require_ovs():
    require_emulation()


def require_emulation():
    """Fail (skip only with ALLOW_SKIP=1) where root, Open vSwitch or Mininet is missing."""
    missing = missing_for_emulation()
    if missing is None:
        return
    if os.environ.get(ALLOW_SKIP) == '1':
        pytest.skip('needs %s (skipped: %s=1)' % (missing, ALLOW_SKIP))
    pytest.fail('needs %s: run scripts/setup.sh as root first, or set %s=1 to skip the tests that need '
                'root, Open vSwitch and Mininet' % (missing, ALLOW_SKIP), pytrace=False)
