"""Run a dcfabric network: a model's Mininet topology on userspace Open
vSwitch, driven by a dcfabric Ryu app in a controller subprocess.

``Fabric`` is a context manager that always tears down what it started (the
Mininet network, its veths and bridges, the controller and any process
started in a host) on exit, error, Ctrl-C or SIGTERM.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from mininet.link import Link, TCLink
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import OVSSwitch, RemoteController

from controller.ryuapp.manager import PortInUseError, check_port_free
from scripts import REPO_ROOT, faults
from topologies.mininet_topo import ModelTopo


class SetupError(RuntimeError):
    """The machine is not ready for an emulation (not root, OVS down, port taken)."""


class UserOVSSwitch(OVSSwitch):
    """OVS on the userspace datapath (no kernel module here), OpenFlow 1.3,
    fail-mode secure. A real subclass, so Mininet starts switches in one batch."""

    def __init__(self, name, **params):
        params.setdefault('datapath', 'user')
        params.setdefault('protocols', 'OpenFlow13')
        params.setdefault('failMode', 'secure')
        super().__init__(name, **params)


def progress(message):
    print('... ' + message, file=sys.stderr, flush=True)


def hosts_tx_offload_off(net):
    """TCP over veth into a software switch hangs with TX checksum offload on."""
    for host in net.hosts:
        for intf in host.intfList():
            host.cmd('ethtool -K %s tx off >/dev/null 2>&1' % intf.name)


def check_machine():
    if os.geteuid() != 0:
        raise SetupError('emulation needs root (Mininet creates namespaces and veths)')
    probe = subprocess.run(['ovs-vsctl', '--timeout=5', 'show'], capture_output=True, text=True)
    if probe.returncode != 0:
        raise SetupError('Open vSwitch is not running (%s); run scripts/setup.sh'
                         % (probe.stderr.strip() or 'ovs-vsctl failed'))


def terminate_on_sigterm():
    def handler(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, handler)


class ListeningController(RemoteController):
    """The controller is started and awaited by Controller.start; Mininet's
    own check telnets to it and decodes OpenFlow's binary HELLO as text,
    which fails at random (UnicodeDecodeError)."""

    def checkListening(self):
        pass


def end_process(process, grace_s=10):
    """SIGTERM, then SIGKILL if it has not exited within ``grace_s``."""
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Controller:
    """A dcfabric controller (python -m controller.ryuapp.manager) as a subprocess."""

    def __init__(self, app, params, ofp_port=6653, rest_port=8080, log_path=None, listen='127.0.0.1'):
        self.app, self.params = app, params
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
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                        cwd=REPO_ROOT)
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


class MininetContext:
    """What every emulated fabric runner shares: ``with`` starts it and, if
    starting fails part-way or the block ends, stops the network and then
    releases whatever else the runner holds; nodes are looked up by the
    model's names. A runner implements ``start()`` and ``release()``."""
    model = None
    net = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def stop(self):
        try:
            if self.net is not None:
                self.net.stop()
                self.net = None
        finally:
            self.release()

    def node(self, name):
        """The Mininet host or switch the model calls ``name``."""
        self.model.node(name)
        return self.net.get(name)


class Fabric(MininetContext):
    """Start ``model`` in Mininet with controller app ``app``.

    bw: host and switch link rate in Mbit/s (HTB shaping), None for unshaped.
    bfd_ms: BFD interval on every switch-to-switch link (detection after 3
    missed), None for no BFD.
    listen: the controller's address (switches connect to it).
    Subclasses that run the switches elsewhere (scripts/cluster) override
    ``check``, ``make_net`` and ``sites`` (where switch commands run).
    """
    sites = faults.LOCAL

    def __init__(self, model, app, params, ofp_port=6653, rest_port=8080, bw=None,
                 controller=True, log_level='warning', bfd_ms=None, listen='127.0.0.1'):
        self.model = model
        self.bw = bw
        self.bfd_ms = bfd_ms
        self.listen = listen
        self.controller = Controller(app, params, ofp_port, rest_port, listen=listen) if controller else None
        self.ofp_port = ofp_port
        self.net = None
        self.started_at = None  # when net.start() returned
        self.log_level = log_level

    def check(self):
        check_machine()

    def make_net(self, topo, link_class):
        return Mininet(topo=topo, switch=UserOVSSwitch, link=link_class, build=False,
                       controller=None, autoSetMacs=False, autoStaticArp=False)

    def start(self):
        self.check()
        terminate_on_sigterm()
        setLogLevel(self.log_level)
        if self.controller:
            self.controller.start()
        link_opts, link_class = None, Link
        if self.bw:
            # TCLink would turn offloads back on: keep them off (DESIGN.md).
            link_opts, link_class = {'bw': self.bw, 'txo': False, 'rxo': False}, TCLink
        topo = ModelTopo(self.model, link_opts=link_opts)
        self.net = self.make_net(topo, link_class)
        self.net.addController(ListeningController('c0', ip=self.listen, port=self.ofp_port))
        progress('building %s: %d switches, %d hosts, %d links'
                 % (self.model.name, len(self.model.switches), len(self.model.hosts),
                    len(self.model.links)))
        self.net.build()
        progress('starting switches')
        self.net.start()
        self.started_at = time.time()
        hosts_tx_offload_off(self.net)
        if self.bfd_ms:
            progress('exact-match datapath flows: megaflows go stale across failures '
                     '(scripts/faults.py exact_match_datapath)')
            faults.exact_match_datapath(self.sites)
            progress('BFD every %d ms on %d links' % (self.bfd_ms, len(self.model.switch_links())))
            faults.enable_bfd(self.model, self.bfd_ms, sites=self.sites)
            faults.wait_bfd_up(self.model, sites=self.sites)

    def release(self):
        if self.controller:
            self.controller.stop()
