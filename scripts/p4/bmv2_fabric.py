"""Run the P4 programs of p4/ in Mininet: every switch is a bmv2
``simple_switch`` loaded by ``simple_switch_CLI`` with entries from
controller.p4.entries.

Needs ``p4c-bm2-ss``, ``simple_switch`` and ``simple_switch_CLI`` on PATH
(p4c and bmv2 are not packaged for Debian; see docs/p4.md) and root.

    python -m scripts.p4.bmv2_fabric fattree [--k 4] [--cli]   # two_level.p4 everywhere
    python -m scripts.p4.bmv2_fabric letflow [--delta-us N] [--cli]  # 2 leaves, 2 spines

Each switch runs in its own network namespace with its interfaces, so its
Thrift server (which bmv2 binds to every address) is reachable only from
inside that namespace and every switch can use the same Thrift port. Switch
port numbers are the model's OpenFlow ports (topologies.model.ofport), as in
the OVS fabrics. Hosts get static ARP entries for every other host (the OVS
fabrics ask the controller; there is none here) and TX checksum offload off.
Node names start with ``p4`` so that a P4 fabric never collides with another
emulation on the machine. ``P4Fabric`` always tears down the switches, hosts
and veths it made, on exit, error, Ctrl-C or SIGTERM.
"""
import argparse
import functools
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

from mininet.cli import CLI
from mininet.link import Link
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Switch

from controller.p4.entries import fattree_commands, letflow_commands, sketch_commands
from scripts import REPO_ROOT
from scripts.emulator import traffic
from scripts.emulator.controller_process import end_process
from scripts.emulator.fabric import MininetContext
from scripts.emulator.mininet_classes import TX_CHECKSUM_OFF, hosts_offloads, hosts_tcp
from topologies.fattree import FatTree
from topologies.leafspine import LeafSpine
from topologies.mininet_topo import ModelTopo
from topologies.model import Node, Topology
from topologies.renamed import renamed

TOOLS = ('p4c-bm2-ss', 'simple_switch', 'simple_switch_CLI')
P4_DIR = os.path.join(REPO_ROOT, 'p4')
PREFIX = 'p4'
THRIFT_PORT = 9090
ETH_P_ALL = 0x0003
ETHERTYPE_REPORT = 0x88B5
_REPORT = struct.Struct('!HII')  # report_t of p4/include/fabric.p4
# simple_switch_CLI exits 0 whatever fails; its error lines start like these
# (after its prompt, as it reads commands from stdin).
_CLI_ERROR = re.compile(r'^(?:RuntimeCmd: )?(?:Error|Invalid|Exception).*$', re.M)


class P4Error(RuntimeError):
    """A P4 tool failed: compile error, switch that does not start, rejected entry."""


def missing_tools():
    """The P4 tools not on PATH."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def compile_program(name, out_dir):
    """Compile p4/NAME.p4 with p4c's bmv2 back end; the JSON's path."""
    source = os.path.join(P4_DIR, name + '.p4')
    target = os.path.join(out_dir, name + '.json')
    result = subprocess.run(['p4c-bm2-ss', '--std', 'p4-16', '--target', 'bmv2', '--arch', 'v1model',
                             '-o', target, source], capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        raise P4Error('p4c-bm2-ss failed on %s:\n%s' % (source, result.stderr or result.stdout))
    return target


# --- models ---------------------------------------------------------------

def fattree_model(k=4):
    """The k-ary fat-tree under P4-prefixed names, and its switch commands
    (keyed by the prefixed names)."""
    topo = FatTree(k)
    commands = {PREFIX + name: lines for name, lines in fattree_commands(topo).items()}
    return renamed(topo, PREFIX), commands


def letflow_model(delta_us, leaves=2, spines=2, hosts_per_leaf=2, weights=None):
    """The leaf-spine fabric (topologies.leafspine) under P4-prefixed names,
    and its letflow.p4 commands (keyed by the prefixed names). weights:
    optional {spine name in the model, e.g. 'spine1': weight}, the same at
    every leaf."""
    topo = LeafSpine(leaves, spines, hosts_per_leaf)
    commands = {}
    for spine in topo.switches:
        if spine.role == 'spine':
            commands[spine.name] = letflow_commands({topo.subnet(leaf): topo.port_to(spine.name, leaf)
                                                     for leaf in topo.leaf_names()})
    for leaf in topo.leaf_names():
        routes = {ip + '/32': port for ip, port in topo.host_ports(leaf).items()}
        routes.update({topo.subnet(other): None for other in topo.leaf_names() if other != leaf})
        port_weights = {topo.port_to(leaf, spine): w for spine, w in (weights or {}).items()}
        commands[leaf] = letflow_commands(routes, topo.uplinks(leaf), delta_us, port_weights)
    return renamed(topo, PREFIX), {PREFIX + name: lines for name, lines in commands.items()}


def sketch_model(window_us, threshold_bytes, sources=2):
    """One destination ToR running distda_sketch.p4: its host ``p4dst``
    (10.0.0.2, port 0); hosts ``p4src1``.. (10.T.0.2, port T) stand for the
    source ToRs T; ``p4cpu`` on the last port receives the reports."""
    topo = Topology('sketch-tor')
    tor = PREFIX + 'tor0'
    topo.add_node(Node(tor, 'tor', '10.0.0.1', (0,), dpid=1))
    topo.add_node(Node(PREFIX + 'dst', 'host', '10.0.0.2', (0,)))
    topo.add_link(tor, 0, PREFIX + 'dst', 0)
    for t in range(1, sources + 1):
        topo.add_node(Node(PREFIX + 'src%d' % t, 'host', '10.%d.0.2' % t, (t,)))
        topo.add_link(tor, t, PREFIX + 'src%d' % t, 0)
    topo.add_node(Node(PREFIX + 'cpu', 'host', '10.0.0.254', ()))
    topo.add_link(tor, sources + 1, PREFIX + 'cpu', 0)
    commands = sketch_commands(
        local_hosts={'10.0.0.2/32': 0},
        routes={'10.%d.0.2/32' % t: t for t in range(1, sources + 1)},
        source_tors={'10.%d.0.0/16' % t: t for t in range(1, sources + 1)},
        report_port=sources + 1, window_us=window_us, threshold_bytes=threshold_bytes)
    return topo, {tor: commands}


# --- Mininet --------------------------------------------------------------

class P4Switch(Switch):
    """bmv2 simple_switch in its own namespace, Mininet port N = switch
    port N. ``json`` is the compiled program, ``commands`` the
    simple_switch_CLI entries by switch name, loaded by P4Fabric."""

    def __init__(self, name, json=None, commands=None, log_dir=None, **params):
        params['inNamespace'] = True
        super().__init__(name, **params)
        self.json, self.log_dir = json, log_dir
        self.commands = (commands or {}).get(name, [])
        self.process = None
        self.log_path = os.path.join(log_dir, name + '.log')

    def start(self, controllers):
        self.cmd('ip link set lo up')
        # the kernel's own IPv6 neighbour discovery on the switch ports would
        # show in their counters as traffic the switch never forwarded
        self.cmd('sysctl -qw net.ipv6.conf.all.disable_ipv6=1')
        args = ['simple_switch', '--thrift-port', str(THRIFT_PORT),
                # the default, ipc:///tmp/bmv2-0-notifications.ipc, would be
                # shared by every switch on the machine
                '--notifications-addr', 'ipc://%s/%s.ipc' % (self.log_dir, self.name)]
        for port, intf in sorted(self.intfs.items()):
            if intf.name != 'lo':
                args += ['-i', '%d@%s' % (port, intf.name)]
        with open(self.log_path, 'w') as log:
            self.process = self.popen(args + [self.json], stdout=log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout=60):
        """Until the Thrift server accepts connections."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise P4Error('%s: simple_switch exited with %d:\n%s'
                              % (self.name, self.process.returncode, self.log_tail()))
            probe = "bash -c 'echo > /dev/tcp/127.0.0.1/%d' 2>/dev/null && echo up" % THRIFT_PORT
            if self.cmd(probe).strip() == 'up':
                return
            time.sleep(0.1)
        raise P4Error('%s: simple_switch did not start within %ds:\n%s'
                      % (self.name, timeout, self.log_tail()))

    def cli(self, commands):
        """A running simple_switch_CLI fed ``commands``."""
        with tempfile.TemporaryFile('w+') as script:
            script.write('\n'.join(commands) + '\n')
            script.seek(0)
            return self.popen(['simple_switch_CLI', '--thrift-port', str(THRIFT_PORT)],
                              stdin=script, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)

    def finish_cli(self, process):
        output = process.stdout.read()
        process.wait()
        errors = _CLI_ERROR.findall(output)
        if process.returncode or errors:
            raise P4Error('%s: simple_switch_CLI failed (exit %s):\n%s'
                          % (self.name, process.returncode, '\n'.join(errors) or output[-2000:]))
        return output

    def run_cli(self, commands):
        return self.finish_cli(self.cli(commands))

    def log_tail(self, lines=20):
        with open(self.log_path) as log:
            return ''.join(log.readlines()[-lines:])

    def stop(self, deleteIntfs=True):
        if self.process is not None and self.process.poll() is None:
            end_process(self.process)
        super().stop(deleteIntfs)


class P4Fabric(MininetContext):
    """Start ``model`` in Mininet with p4/PROGRAM.p4 in every switch, loaded
    with ``commands`` ({switch name: simple_switch_CLI lines})."""

    def __init__(self, model, program, commands, log_level='warning'):
        self.model, self.program, self.commands = model, program, commands
        self.log_level = log_level
        self.net = None
        self.work_dir = None

    def start(self):
        if os.geteuid() != 0:
            raise P4Error('a P4 fabric needs root (Mininet creates namespaces and veths)')
        if missing_tools():
            raise P4Error('not on PATH: %s (see docs/p4.md)' % ' '.join(missing_tools()))
        setLogLevel(self.log_level)
        self.work_dir = tempfile.mkdtemp(prefix='dcfabric-p4-')
        program = compile_program(self.program, self.work_dir)
        switch = functools.partial(P4Switch, json=program, commands=self.commands,
                                   log_dir=self.work_dir)
        self.net = Mininet(topo=ModelTopo(self.model), switch=switch, link=Link, build=False,
                           controller=None, autoSetMacs=False, autoStaticArp=False)
        self.net.build()
        self.net.start()
        for node in self.net.switches:
            node.wait_ready()
        # one simple_switch_CLI per switch, all at once: each takes a second to start
        loading = [(node, node.cli(node.commands)) for node in self.net.switches]
        for node, process in loading:
            node.finish_cli(process)
        self.net.staticArp()
        hosts_offloads(self.net, TX_CHECKSUM_OFF)
        hosts_tcp(self.net)

    def release(self):
        if self.work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)
            self.work_dir = None


def decode_report(frame):
    """(source ToR, estimated bytes, window) of an elephant report frame, or
    None for any other frame."""
    if len(frame) < 14 + _REPORT.size or struct.unpack_from('!H', frame, 12)[0] != ETHERTYPE_REPORT:
        return None
    return _REPORT.unpack_from(frame, 14)


def listen_reports(interface, seconds):
    """Print every elephant report arriving on ``interface`` for ``seconds``
    as a JSON line, after a first line saying it listens (run in the
    collector's namespace)."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL)) as sock:
        sock.bind((interface, 0))
        print(json.dumps({'listening': interface}), flush=True)
        deadline = time.time() + seconds
        while time.time() < deadline:
            sock.settimeout(max(deadline - time.time(), 0.01))
            try:
                report = decode_report(sock.recv(2048))
            except socket.timeout:
                break
            if report:
                tor, estimate, window = report
                print(json.dumps({'tor': tor, 'bytes': estimate, 'window': window}), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m scripts.p4.bmv2_fabric', description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='fabric', required=True)
    tree = sub.add_parser('fattree', help='k-ary fat-tree, two_level.p4 in every switch')
    tree.add_argument('--k', type=int, default=4)
    flow = sub.add_parser('letflow', help='2-leaf/2-spine fabric, letflow.p4 in every switch')
    flow.add_argument('--delta-us', type=int, default=50000, help='flowlet timeout Delta (us)')
    for fabric_parser in (tree, flow):
        fabric_parser.add_argument('--cli', action='store_true', help='open the Mininet CLI after ping-all')
    listen = sub.add_parser('listen-reports', help=argparse.SUPPRESS)
    listen.add_argument('interface')
    listen.add_argument('seconds', type=float)
    args = parser.parse_args(argv)
    if args.fabric == 'listen-reports':
        listen_reports(args.interface, args.seconds)
        return 0
    if args.fabric == 'fattree':
        (model, commands), program = fattree_model(args.k), 'two_level'
    else:
        (model, commands), program = letflow_model(args.delta_us), 'letflow'
    try:
        with P4Fabric(model, program, commands) as fabric:
            pings = traffic.reachability(fabric.net, [h.name for h in fabric.net.hosts])
            lost = sorted(pair for pair, ok in pings.items() if not ok)
            print('ping-all: %d/%d pairs reached%s' % (len(pings) - len(lost), len(pings),
                                                      '' if not lost else '; lost: %s' % lost))
            if args.cli:
                CLI(fabric.net)
            return 1 if lost else 0
    except P4Error as err:
        print('error: %s' % err, file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
