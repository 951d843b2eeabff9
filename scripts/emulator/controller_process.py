"""The dcfabric controller as a subprocess: started, awaited until it
listens and until the fabric is programmed, stopped."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from controller.ryuapp.manager import PortInUseError, check_port_free
from scripts import REPO_ROOT
from scripts.emulator.errors import SetupError


def end_process(process, grace_s=10):
    """SIGTERM, then SIGKILL if it has not exited within ``grace_s``."""
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace_s)


class Controller:
    """A dcfabric controller (python -m controller.ryuapp.manager) as a subprocess.
    ``ready_path``: the REST path that answers ``{"ready": true}`` once the
    controller has programmed the whole fabric (None: not awaited)."""

    def __init__(self, app, params, ofp_port=6653, rest_port=8080, log_path=None, ready_path=None,
                 stats_period=None, listen='127.0.0.1'):
        self.app, self.params = app, params
        self.ready_path = ready_path
        self.stats_period = stats_period  # the live view's counter polls (manager's default if None)
        self.ofp_port, self.rest_port = ofp_port, rest_port
        self.listen = listen
        self.log_path = log_path or tempfile.mktemp(prefix='dcfabric-controller-', suffix='.log')
        self.process = None

    def start(self, timeout=30):
        try:
            check_port_free(self.listen, self.ofp_port, 'OpenFlow')
            check_port_free(self.listen, self.rest_port, 'REST')
        except PortInUseError as err:
            raise SetupError(str(err)) from None
        cmd = [sys.executable, '-m', 'controller.ryuapp.manager', self.app, '--params', json.dumps(self.params),
               '--ofp-port', str(self.ofp_port), '--rest-port', str(self.rest_port), '--log', self.log_path,
               '--listen', self.listen]
        if self.stats_period is not None:
            cmd += ['--stats-period', str(self.stats_period)]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                        cwd=REPO_ROOT, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SetupError('controller exited with %d; log: %s\n%s'
                                 % (self.process.returncode, self.log_path, self.log_tail()))
            with socket.socket() as probe:
                if probe.connect_ex((self.listen, self.ofp_port)) == 0:
                    return self
            time.sleep(0.2)
        raise SetupError('controller did not listen on port %d within %ds' % (self.ofp_port, timeout))

    def readiness(self):
        """The controller's ready section (a dict), or None while it cannot answer."""
        # REST listens where OpenFlow does (--listen): the head's address with --cluster
        url = 'http://%s:%d%s' % (self.listen, self.rest_port, self.ready_path)
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                return json.load(reply)
        except (OSError, ValueError):
            return None

    def wait_ready(self, timeout):
        deadline = time.time() + timeout
        state = None
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SetupError('controller exited with %d; log: %s\n%s'
                                 % (self.process.returncode, self.log_path, self.log_tail()))
            state = self.readiness()
            if state and state.get('ready'):
                return state
            time.sleep(0.2)
        raise SetupError('controller not ready after %ds: %s' % (timeout, state))

    def log_tail(self, lines=20):
        try:
            with open(self.log_path) as log:
                return ''.join(log.readlines()[-lines:])
        except OSError:
            return ''

    def stop(self):
        """Stop the controller; its log is kept only if it had died by itself."""
        crashed = self.process is not None and self.process.poll() is not None
        if self.process and not crashed:
            end_process(self.process)
        if not crashed and os.path.exists(self.log_path):
            os.unlink(self.log_path)
