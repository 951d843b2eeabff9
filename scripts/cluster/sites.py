"""Commands on the servers of a cluster, over ssh (no Mininet import).

``ServerSites`` tells scripts/emulator/faults.py where each switch runs and runs its
commands there, as root through ``sudo -n``; ``check_servers`` is the
preflight that names the first server that cannot take part, before
anything is started."""
import getpass
import os
import shlex
import socket
import subprocess

from scripts.emulator.faults import FaultError

# As Mininet's cluster edition does: ssh as the user who ran sudo, else as ourselves.
SSH_USER = os.environ.get('SUDO_USER') or getpass.getuser()
SSH = (['sudo', '-u', SSH_USER] if SSH_USER != getpass.getuser() else []) + [
    'ssh', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5', '-l', SSH_USER]
TUNNEL_KINDS = ('gre', 'vxlan')


class ServerError(RuntimeError):
    """A server that cannot take part (the message names it)."""


def ssh(server, *cmd):
    """Run ``cmd`` on ``server`` (its words quoted for the remote shell)."""
    return subprocess.run(SSH + [server, shlex.join(cmd)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300)


def server_address(server):
    """IPv4 address of a server name (Mininet's cluster edition connects by address)."""
    try:
        return socket.gethostbyname(server)
    except OSError as err:
        raise ServerError('cannot resolve server %s: %s' % (server, err)) from None


def tunnel_command(kind, name, local, remote, key):
    """``ip link`` words that create tunnel end ``name`` (an Ethernet-over-IP
    device: GRE's gretap, or VXLAN for kernels without ip_gre)."""
    if kind == 'gre':
        return ['ip', 'link', 'add', 'name', name, 'type', 'gretap', 'local', local, 'remote', remote,
                'ttl', '64', 'key', str(key)]
    if kind == 'vxlan':
        return ['ip', 'link', 'add', 'name', name, 'type', 'vxlan', 'id', str(key), 'local', local,
                'remote', remote, 'dstport', '4789', 'ttl', '64']
    raise ValueError('tunnel kind must be one of %s, got %r' % (', '.join(TUNNEL_KINDS), kind))


def explain_ssh_failure(server, stderr):
    """What ssh's own error (exit 255) means for ``server``."""
    text = stderr.strip()
    for needle, meaning in (('Connection refused', 'ssh is refused (is sshd running and listening there?)'),
                            ('timed out', 'server is unreachable'),
                            ('No route to host', 'server is unreachable'),
                            ('Network is unreachable', 'server is unreachable'),
                            ('Could not resolve', 'server name does not resolve'),
                            ('Permission denied', 'ssh key not accepted (BatchMode: no passwords)'),
                            ('Host key verification failed', 'host key unknown or changed')):
        if needle in text:
            return 'server %s: %s: %s' % (server, meaning, text)
    return 'server %s: ssh failed: %s' % (server, text or 'no message')


def sessions_needed(nodes):
    """ssh sessions a server's sshd must allow on one connection: a shell
    per node plus the commands run at once (16 fping sources, iperf3s)."""
    return nodes + 2 * 16


def max_sessions(sshd_config):
    """MaxSessions from ``sshd -T`` output (sshd's own default is 10)."""
    for line in sshd_config.splitlines():
        words = line.split()
        if len(words) == 2 and words[0].lower() == 'maxsessions':
            return int(words[1])
    raise ValueError('no maxsessions in sshd -T output')


def check_servers(servers, tunnel, nodes):
    """Raise ServerError naming the first server that cannot run its part:
    not reachable by ssh, no passwordless sudo, no Mininet, Open vSwitch
    not running, a kernel without the tunnel devices, or an sshd allowing
    fewer sessions per connection than the ``nodes[server]`` it will run need."""
    for server in servers:
        address = server_address(server)
        probe = ssh(server, 'true')
        if probe.returncode != 0:
            raise ServerError(explain_ssh_failure(server, probe.stderr))
        steps = [(('sudo', '-n', 'true'), 'passwordless sudo is needed for the ssh user'),
                 (('sh', '-c', 'command -v mnexec'), 'Mininet (mnexec) is not installed'),
                 (('sudo', '-n', 'ovs-vsctl', '--timeout=5', 'show'),
                  'Open vSwitch is not running (start it as scripts/setup.sh does)'),
                 (('sudo', '-n', 'sh', '-c', '%s && ip link del dcfprobe0' % shlex.join(
                     tunnel_command(tunnel, 'dcfprobe0', address, address, 1))),
                  'the kernel cannot make %s tunnels%s' % (
                      tunnel, ' (no ip_gre module; try --tunnel vxlan)' if tunnel == 'gre' else ''))]
        for cmd, meaning in steps + [(('sudo', '-n', 'sshd', '-T'), 'cannot read sshd\'s settings')]:
            result = ssh(server, *cmd)
            if result.returncode != 0:
                raise ServerError('server %s: %s (`%s` exited %d%s)' % (
                    server, meaning, ' '.join(cmd[:6]), result.returncode,
                    ': ' + result.stderr.strip() if result.stderr.strip() else ''))
        allowed, needed = max_sessions(result.stdout), sessions_needed(nodes[server])
        if allowed < needed:
            raise ServerError('server %s: sshd allows %d sessions per connection, the %d nodes there need '
                              '%d: set MaxSessions %d in its sshd_config' % (server, allowed, nodes[server],
                                                                            needed, needed))


def check_reaches(servers, address, port):
    """Raise ServerError naming a server that cannot open a TCP connection
    to ``address:port`` (the controller)."""
    for server in servers:
        result = ssh(server, 'timeout', '5', 'bash', '-c', 'exec 3<>/dev/tcp/%s/%d' % (address, port))
        if result.returncode != 0:
            raise ServerError('server %s cannot reach the controller at %s:%d (firewall? '
                              'wrong --listen address?): %s' % (server, address, port,
                                                                result.stderr.strip() or 'timed out'))


class ServerSites:
    """Where each switch runs (``placement``: node -> server) and how to
    run a command there."""

    def __init__(self, placement, servers):
        self.placement = placement
        self._servers = list(servers)

    def server_of(self, node):
        return self.placement[node]

    def servers(self):
        return list(self._servers)

    @staticmethod
    def run(server, *cmd, check=True):
        result = ssh(server, 'sudo', '-n', *cmd)
        if check and result.returncode != 0:
            raise FaultError('on %s: %s failed: %s' % (server, ' '.join(cmd), result.stderr.strip()))
        return result
