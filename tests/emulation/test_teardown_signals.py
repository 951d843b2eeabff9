"""Every way a session ends leaves nothing behind: `dcfabric run` and
`dcfabric cli` under SIGHUP (a closed terminal, the CLI's in a real tmux
pane), SIGTERM, and a second Ctrl-C during teardown; and a SIGKILLed run
is refused by the next fabric and removed by `dcfabric clean`, which
leaves a foreign bridge and namespace alone. k=4 without BFD: quick to
start."""
import os
import signal
import subprocess
import sys
import time

import pytest

from scripts import REPO_ROOT
from scripts.emulator import run_record
from tests.conftest import free_port
from topologies.fattree import FatTree
from topologies.mininet_topo import interface_name

pytestmark = pytest.mark.emulation

TOPO = FatTree(4)
BRIDGES = {switch.name for switch in TOPO.switches}
VETHS = {interface_name(TOPO, switch.name, port) for switch in TOPO.switches for port in TOPO.ports(switch.name)}
DCFABRIC = [sys.executable, '-m', 'scripts.cli']
FOREIGN = 'dcftestforeign'


def bridges():
    listed = subprocess.run(['ovs-vsctl', '--timeout=10', 'list-br'], capture_output=True, text=True, timeout=30)
    return set(listed.stdout.split())


def left_behind(ofp_port):
    """The fabric's bridges and veths, and controllers on ``ofp_port``, that exist now."""
    controllers = []
    for entry in os.listdir('/proc'):
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                argv = f.read().split(b'\0')
        except OSError:
            continue
        if b'controller.ryuapp.manager' in argv and str(ofp_port).encode() in argv:
            controllers.append(int(entry))
    return {'bridges': sorted(bridges() & BRIDGES), 'veths': sorted(VETHS & set(os.listdir('/sys/class/net'))),
            'controllers': controllers}


NOTHING = {'bridges': [], 'veths': [], 'controllers': []}


def run_records_of(pid):
    return [record for record in run_record.all_records() if record.pid == pid]


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError('not within %d s: %s' % (timeout, what))
        time.sleep(0.2)


def wait_gone(ofp_port, timeout=60):
    deadline = time.monotonic() + timeout
    while (left := left_behind(ofp_port)) != NOTHING and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


class Session:
    """`dcfabric COMMAND --k 4` in a process group of its own, as a
    terminal runs it (a Ctrl-C reaches the whole group); output in a file."""

    def __init__(self, tmp_path, command, *extra):
        self.ofp_port = free_port()
        self.output = tmp_path / ('%s.out' % command)
        argv = DCFABRIC + [command, '--k', '4', '--bfd-ms', '0', '--ofp-port', str(self.ofp_port),
                           '--rest-port', str(free_port()), *extra]
        with open(self.output, 'w') as out:
            self.process = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.PIPE, start_new_session=True,
                                            env=dict(os.environ, PYTHONUNBUFFERED='1'))

    def text(self):
        return self.output.read_text()

    def wait_text(self, marker, timeout=90):
        wait_for(lambda: marker in self.text() or self.process.poll() is not None, timeout, marker)
        assert marker in self.text(), self.text()

    def signal_group(self, signum):
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass  # it ended already

    def end(self, timeout=90):
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(10)


# a marker each command prints once its fabric runs
READY = {'run': 'reachable (pinging took', 'cli': 'live view:'}


@pytest.mark.parametrize('command', ['run', 'cli'])
@pytest.mark.parametrize('signum', [signal.SIGHUP, signal.SIGTERM])
def test_an_ending_signal_tears_everything_down(require_ovs, tmp_path, command, signum):
    session = Session(tmp_path, command, *(['--seconds', '60'] if command == 'run' else []))
    session.wait_text(READY[command])
    assert left_behind(session.ofp_port)['bridges'] == sorted(BRIDGES)
    session.signal_group(signum)
    assert session.end() == 128 + signum, session.text()
    assert wait_gone(session.ofp_port, timeout=5) == NOTHING
    assert not run_records_of(session.process.pid), session.text()


@pytest.mark.parametrize('command', ['run', 'cli'])
def test_a_second_ctrl_c_during_teardown_leaves_nothing(require_ovs, tmp_path, command):
    session = Session(tmp_path, command, *(['--seconds', '60'] if command == 'run' else []))
    session.wait_text(READY[command])
    controller, = left_behind(session.ofp_port)['controllers']
    os.kill(controller, signal.SIGSTOP)  # teardown then waits at its last step, stopping the controller
    try:
        if command == 'run':
            session.signal_group(signal.SIGINT)
        else:  # Ctrl-C at the prompt only interrupts a command: leave the CLI
            session.process.stdin.write(b'exit\n')
            session.process.stdin.flush()
        session.wait_text('stopping fattree')
        time.sleep(0.5)
        for _ in range(3):  # Ctrl-C, again and again, while it tears down
            session.signal_group(signal.SIGINT)
            time.sleep(0.1)
        time.sleep(0.5)
        assert session.process.poll() is None, 'a Ctrl-C cut teardown short:\n' + session.text()
    finally:
        os.kill(controller, signal.SIGCONT)
    assert session.end() == 1, session.text()
    assert 'interrupted; everything torn down' in session.text()
    assert wait_gone(session.ofp_port, timeout=5) == NOTHING


def test_closing_the_terminal_of_the_cli_tears_everything_down(require_ovs, tmp_path):
    ofp_port, pane = free_port(), 'dcftest%d' % os.getpid()
    command = ' '.join(DCFABRIC + ['cli', '--k', '4', '--ofp-port', str(ofp_port), '--rest-port', str(free_port())])
    subprocess.run(['tmux', 'new-session', '-d', '-s', pane, '-x', '200', '-y', '50', '-c', REPO_ROOT, command],
                   check=True, timeout=30)
    try:
        def at_prompt():
            screen = subprocess.run(['tmux', 'capture-pane', '-p', '-t', pane], capture_output=True, text=True,
                                    timeout=30)
            assert screen.returncode == 0, 'the pane ended before the prompt'
            return 'mininet>' in screen.stdout
        wait_for(at_prompt, 120, 'the mininet> prompt')
        assert left_behind(ofp_port)['controllers']
    finally:
        subprocess.run(['tmux', 'kill-session', '-t', pane], capture_output=True, timeout=30)
    assert wait_gone(ofp_port, timeout=60) == NOTHING


@pytest.fixture
def foreign_bridge_and_namespace(require_ovs):
    """A bridge and a namespace that dcfabric did not make."""
    subprocess.run(['ovs-vsctl', '--timeout=30', '--may-exist', 'add-br', FOREIGN, '--', 'set', 'bridge', FOREIGN,
                    'datapath_type=netdev'], check=True, timeout=60)
    subprocess.run(['ip', 'netns', 'add', FOREIGN], check=True, timeout=30)
    yield
    subprocess.run(['ovs-vsctl', '--timeout=30', '--if-exists', 'del-br', FOREIGN], timeout=60)
    subprocess.run(['ip', 'netns', 'delete', FOREIGN], timeout=30)


def test_clean_removes_what_a_killed_run_left_and_nothing_else(foreign_bridge_and_namespace, tmp_path):
    session = Session(tmp_path, 'run', '--seconds', '60')
    session.wait_text(READY['run'])
    os.kill(session.process.pid, signal.SIGKILL)
    session.end()
    left = left_behind(session.ofp_port)
    assert left['bridges'] == sorted(BRIDGES) and left['controllers'], left

    refused = subprocess.run(DCFABRIC + ['run', '--k', '4', '--bfd-ms', '0', '--ofp-port', str(session.ofp_port)],
                             cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and 'dcfabric clean' in refused.stderr, refused.stderr
    assert 'already in use' not in refused.stderr

    listed = subprocess.run(DCFABRIC + ['clean', '--dry-run'], cwd=REPO_ROOT, capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert 'would remove 20 bridges' in listed.stdout and 'controller %d' % left['controllers'][0] in listed.stdout
    still = left_behind(session.ofp_port)  # (host veths go as the orphaned host shells end)
    assert still['bridges'] == left['bridges'] and still['controllers'] == left['controllers']

    cleaned = subprocess.run(DCFABRIC + ['clean'], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert 'removed 20 bridges' in cleaned.stdout, cleaned.stdout
    assert left_behind(session.ofp_port) == NOTHING
    assert FOREIGN in bridges()
    assert FOREIGN in subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True, timeout=30).stdout
    again = subprocess.run(DCFABRIC + ['clean'], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert 'nothing to clean' in again.stdout, again.stdout
