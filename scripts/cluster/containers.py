"""Servers on one machine: namespace containers that stand in for the
machines of a cluster, for tests and measurements.

Each server is a process tree in its own network, mount, UTS and PID
namespace with its own /run (tmpfs), so it runs its own ovsdb-server and
ovs-vswitchd (the machine's own Open vSwitch is never touched) and its own
sshd, listening only on the server's address. A *head* namespace (network
and mount) holds the Linux bridge that joins them, the head's address
(where the controller listens) and a throwaway ssh key and client config
on a tmpfs over /root, so ssh from the head reaches the servers exactly as
it would reach real machines. All addresses live inside these namespaces:
nothing is routed off the machine.

Nothing outlives the harness: every namespace is held by an ``unshare``
that dies with the harness (PR_SET_PDEATHSIG) and takes its child with it
(``--kill-child``); a server's PID namespace ends with its first process,
killing its daemons; the namespaces, veths and bridge vanish with their
last process; the key directory is removed on exit.

    with ContainerServers(2) as cluster:
        cluster.servers        # ['192.168.250.11', '192.168.250.12']
        cluster.head_address   # '192.168.250.1'
        with cluster.in_head():  # this process joins the head's namespaces
            ...                  # MininetCluster, controller, ssh
"""
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass

from scripts.emulator.ovs.vswitchd import JEMALLOC, TSO_CONFIG

SUBNET = '192.168.250'
HEAD_HOST = 1
FIRST_SERVER_HOST = 11
BRIDGE = 'dcfcl0'
PR_SET_PDEATHSIG = 1
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
CLONE_NEWUTS = 0x04000000
# The namespaces a process joins in ``in_head`` (a mount namespace last: after
# it, /proc/... of the others would be looked up in the new mounts).
HEAD_NAMESPACES = (('net', CLONE_NEWNET), ('uts', CLONE_NEWUTS), ('mnt', CLONE_NEWNS))
_libc = ctypes.CDLL(None, use_errno=True)


class HarnessError(RuntimeError):
    pass


@dataclass(frozen=True)
class ServerSpec:
    """How a container server is set up; the defaults make a working server,
    the others the broken servers that bad-input tests need."""
    sshd: bool = True       # False: ssh is refused
    ovs: bool = True        # False: Open vSwitch is not running
    sudo: bool = True       # False: sudo is missing (/usr/bin/sudo is /bin/false)
    # Open_vSwitch other_config set before ovs-vswitchd starts (some, such as
    # userspace-tso-enable, are read only then): ((key, value), ...)
    other_config: tuple = (TSO_CONFIG,)


def _die_with_parent():
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _run(argv, what):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise HarnessError('%s failed (%s): %s' % (what, ' '.join(argv[:12]),
                                                   (result.stderr or result.stdout).strip()))
    return result.stdout


class Namespaces:
    """``unshare`` holding new namespaces; ``init`` runs as their first
    process and prints 'ready' once set up, then sleeps."""

    def __init__(self, flags, init):
        self.process = subprocess.Popen(
            ['unshare', *flags, '--fork', '--kill-child', 'bash', '-c',
             'set -e; %s; echo ready; exec sleep infinity' % init],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, preexec_fn=_die_with_parent)
        line = self.process.stdout.readline()
        if line.strip() != 'ready':
            self.stop()
            raise HarnessError('namespace set-up failed: %s' % self.process.stderr.read().strip())
        children = open('/proc/%d/task/%d/children' % (self.process.pid, self.process.pid)).read()
        self.init_pid = int(children.split()[0])

    def nsenter(self, *namespaces):
        """argv prefix that runs a command inside these namespaces."""
        return ['nsenter', '-t', str(self.init_pid)] + ['--%s' % n for n in namespaces]

    def stop(self):
        if self.process.poll() is None:
            # unshare ignores SIGTERM while it waits; SIGKILL it and --kill-child
            # kills its child, and with it the child's PID namespace.
            self.process.kill()
            self.process.wait()


def _own_hostname(name, hosts_file):
    """Set the UTS namespace's host name and make it resolve (sudo warns
    otherwise, and Mininet's cluster code takes any output as an error)."""
    return ['hostname %s' % name, "printf '127.0.0.1 localhost %s\\n' > %s" % (name, hosts_file),
            'mount --bind %s /etc/hosts' % hosts_file]


def _server_setup(address, spec, keydir):
    """Shell commands run inside a server container once its veth is in."""
    lines = ['ip link set lo up', 'ip addr add %s/24 dev eth0' % address, 'ip link set eth0 up',
             'ip link add ifb0 type ifb',  # silent failures redirect packets to ifb0 (scripts/emulator/faults.py)
             'mkdir -p -m 755 /run/openvswitch /run/sshd /run/dcfcl']
    if spec.ovs:
        # the daemons at the priority Debian's service gives them (ovs-ctl: nice -10), as on a real server
        lines += ['ovsdb-tool create /run/openvswitch/conf.db /usr/share/openvswitch/vswitch.ovsschema',
                  'nice -n -10 ovsdb-server /run/openvswitch/conf.db --remote=punix:/run/openvswitch/db.sock '
                  '--pidfile --detach --log-file=/run/openvswitch/ovsdb-server.log',
                  'ovs-vsctl --timeout=30 --no-wait init',
                  *['ovs-vsctl --timeout=30 --no-wait set Open_vSwitch . other_config:%s=%s' % kv
                    for kv in spec.other_config],
                  'nice -n -10 env LD_PRELOAD=%s ovs-vswitchd --pidfile --detach '
                  '--log-file=/run/openvswitch/ovs-vswitchd.log' % JEMALLOC]  # why: scripts/emulator/ovs/vswitchd.py
    if spec.sshd:
        lines += ['cp %s/host_key %s/id.pub /run/dcfcl/' % (keydir, keydir),
                  "printf '%s' > /run/dcfcl/sshd_config" % '\\n'.join([
                      'ListenAddress %s' % address, 'HostKey /run/dcfcl/host_key',
                      'AuthorizedKeysFile /run/dcfcl/id.pub', 'PidFile /run/sshd.pid',
                      'PermitRootLogin prohibit-password', 'PasswordAuthentication no',
                      'KbdInteractiveAuthentication no', 'UsePAM no', 'UseDNS no',
                      # Mininet's cluster edition multiplexes one connection per server:
                      # one session per node shell.
                      'MaxSessions 1000', 'MaxStartups 200', '']),
                  # where sshd (and the preflight's `sshd -T`) reads it, as on a real server
                  'mount --bind /run/dcfcl/sshd_config /etc/ssh/sshd_config', '/usr/sbin/sshd']
    return '; '.join(lines)


class ContainerServers:
    """``specs``: a ServerSpec per server, or a count of working servers."""

    def __init__(self, specs=2):
        self.specs = [ServerSpec()] * specs if isinstance(specs, int) else list(specs)
        self.servers = ['%s.%d' % (SUBNET, FIRST_SERVER_HOST + i) for i in range(len(self.specs))]
        self.head_address = '%s.%d' % (SUBNET, HEAD_HOST)
        self.head = None
        self.containers = []
        self.keydir = None

    def __enter__(self):
        with contextlib.ExitStack() as on_failure:
            on_failure.callback(self.stop)  # a half-built harness is taken down too
            self.start()
            on_failure.pop_all()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        self.keydir = tempfile.mkdtemp(prefix='dcfcl-keys-')
        for key in ('id', 'host_key'):
            _run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'dcfabric-cluster-test',
                  '-f', os.path.join(self.keydir, key)], 'ssh-keygen')
        ssh_config = ('Host *\n  IdentityFile /root/.ssh/id\n  UserKnownHostsFile /dev/null\n'
                      '  StrictHostKeyChecking no\n  LogLevel ERROR\n')
        with open(os.path.join(self.keydir, 'config'), 'w') as config:
            config.write(ssh_config)
        # The head: a tmpfs over /root gives ssh (which reads the passwd home) its key and config.
        self.head = Namespaces(['--net', '--mount', '--uts'], ' && '.join([
            'mount --make-rprivate /', 'mount -t tmpfs -o mode=700 tmpfs /root',
            'mkdir -m 700 /root/.ssh', 'cp %s/id %s/config /root/.ssh/' % (self.keydir, self.keydir),
            *_own_hostname('dcfcl-head', '/root/hosts'), 'ip link set lo up',
            'ip link add %s type bridge' % BRIDGE, 'ip link set %s up' % BRIDGE,
            'ip addr add %s/24 dev %s' % (self.head_address, BRIDGE)]))
        for index, spec in enumerate(self.specs):
            # an empty /root: a server is a fresh machine, and this machine's
            # shell start-up files (pyenv's rehash) write noise into every command's stderr
            init = ['mount --make-rprivate /', 'mount -t tmpfs -o mode=755 tmpfs /run',
                    'mount -t tmpfs -o mode=700 tmpfs /root',
                    *_own_hostname('dcfcl-s%d' % (index + 1), '/run/hosts')]
            if not spec.sudo:
                init.append('mount --bind /bin/false /usr/bin/sudo')
            server = Namespaces(['--net', '--mount', '--uts', '--pid', '--mount-proc'], ' && '.join(init))
            self.containers.append(server)
            port = 'dcfcl-s%d' % (index + 1)
            _run(self.head.nsenter('net') + ['ip', 'link', 'add', port, 'type', 'veth', 'peer',
                                             'name', 'eth0', 'netns', str(server.process.pid)],
                 'veth to server %d' % (index + 1))
            _run(self.head.nsenter('net') + ['ip', 'link', 'set', port, 'master', BRIDGE, 'up'],
                 'bridge port %s' % port)
            _run(server.nsenter('net', 'mount', 'uts', 'pid') + [
                'bash', '-ec', _server_setup(self.servers[index], spec, self.keydir)],
                'set-up of server %s' % self.servers[index])

    def stop(self):
        for namespaces in self.containers + ([self.head] if self.head else []):
            namespaces.stop()
        self.containers, self.head = [], None
        if self.keydir:
            shutil.rmtree(self.keydir, ignore_errors=True)
            self.keydir = None

    def on_server(self, index, argv):
        """argv that runs ``argv`` as root inside server ``index`` (its namespaces)."""
        return self.containers[index].nsenter('net', 'mount', 'uts', 'pid') + list(argv)

    def on_head(self, argv, cwd):
        """argv that runs ``argv`` in the head (network and mount namespace) from ``cwd``."""
        return self.head.nsenter('net', 'mount', 'uts') + ['--wd=%s' % cwd] + list(argv)

    @contextlib.contextmanager
    def in_head(self):
        """This (single-threaded) process joins the head's network, UTS and
        mount namespaces for the block, then returns to its own."""
        cwd = os.getcwd()
        own = [os.open('/proc/self/ns/%s' % n, os.O_RDONLY) for n, _ in HEAD_NAMESPACES]
        head = [os.open('/proc/%d/ns/%s' % (self.head.init_pid, n), os.O_RDONLY) for n, _ in HEAD_NAMESPACES]
        try:
            for fd, (_, kind) in zip(head, HEAD_NAMESPACES):
                _setns(fd, kind)
            os.chdir(cwd)
            yield self
        finally:
            for fd, (_, kind) in zip(own, HEAD_NAMESPACES):
                _setns(fd, kind)
            os.chdir(cwd)
            for fd in own + head:
                os.close(fd)


def _setns(fd, kind):
    if _libc.setns(fd, kind) != 0:
        raise HarnessError('setns: %s' % os.strerror(ctypes.get_errno()))
