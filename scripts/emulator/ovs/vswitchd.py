"""What a running fabric sets on the ovs-vswitchd of every server its
switches run on, and puts back when it ends (``DaemonSettings``).

Exact-match datapath flows, not megaflows (with BFD, i.e. when links
fail). With megaflows, Open vSwitch 3.1's userspace datapath kept a
wildcarded flow whose output port had gone down after the controller had
rerouted: after a core switch failure, an upper switch went on sending
some destinations to its dead core port for as long as they had traffic,
while its OpenFlow table and ofproto/trace said otherwise (`ovs-appctl
revalidator/wait` did not fix it, `revalidator/purge` did). Seen in 4 of 4
runs of the fault tests after another fabric, 0 of 5 with exact-match
flows; they only cost more upcalls. Daemon-wide, until the daemon
restarts, so ``undo`` turns megaflows back on: the machine's own daemon is
shared (a private daemon, scripts/emulator/ovs/instances.py, or a container
server's ends with the fabric).

``SendBuffer``: the send buffer of the daemon's one packet socket, on
shaped fabrics.

``JEMALLOC``: every ovs-vswitchd dcfabric starts (scripts/setup.sh, private
daemons, container servers) allocates with jemalloc. With glibc's malloc
a k=4 fabric's daemon spent 49% of its time in libc's malloc and free
(perf; ``coverage/show``: 11.9 million allocations per second while it
forwarded 10,000 packets per second); with jemalloc the same permutation
(scripts.fattree.bfd_floor, unshaped, BFD every 70 ms) carried 541 Mbit/s
instead of 394, with 0 BFD false failures instead of 20, and the idle
daemon took 20% of a core instead of 28%.

``TSO_CONFIG``: no ovs-vswitchd dcfabric starts has userspace TSO (read
only when the daemon starts; setup.sh removes the setting before it starts
the machine's). With it, the daemon reads every packet into a buffer large
enough for a 64 KB segment, and a freshly started daemon's first-packet
path slowed down: on a bare Debian 12 container (tools/fresh_container.sh),
a k=8 fabric with BFD lost 2,095 of 16,256 pairs' pings (three tries each)
in its first all-pairs round right after "ready", which took 16.9 s; with
TSO off, 0 lost in 5.5 s, on the same machine. Fabrics keep the hosts' TX
checksum offload off (mininet_classes.py), so no host would hand the daemon
a segment anyway. A cluster measurement can still ask for it per server
(``--ovs-config userspace-tso-enable=true``).

How the daemons share the CPU with the hosts: scripts/emulator/host_cpu_group.py.
"""
import contextlib
import ctypes
import os
import socket
import time

from scripts.emulator import run_record
from scripts.emulator.faults import FaultError

APPCTL = ('ovs-appctl', '--timeout=10')
# at teardown the daemon may still be dropping the fabric's ports (k=8: about
# 10 s, and a 10 s ovs-appctl timed out once in a full suite)
APPCTL_AFTER_TEARDOWN = ('ovs-appctl', '--timeout=120')
JEMALLOC = 'libjemalloc.so.2'  # Debian's libjemalloc2, as LD_PRELOAD finds it
TSO_CONFIG = ('userspace-tso-enable', 'false')  # Open_vSwitch other_config, read at the daemon's start


def daemon_pid_path():
    """The pid file of the ovs-vswitchd that ovs-vsctl (and so Mininet)
    talks to here: this machine's, or a private one's ($OVS_RUNDIR,
    scripts/emulator/ovs/private_ovs.sh)."""
    return os.path.join(os.environ.get('OVS_RUNDIR', '/run/openvswitch'), 'ovs-vswitchd.pid')


def daemon_pid():
    """The pid of the ovs-vswitchd of ``daemon_pid_path``."""
    with open(daemon_pid_path()) as pid_file:
        return int(pid_file.read())



class DaemonSettings:
    """``apply`` sets the fabric's settings on the daemon of every one of
    ``sites``' servers; ``undo`` puts back what ``apply`` changed there."""

    def __init__(self, sites, exact_match):
        self.sites = sites
        self.exact_match = exact_match
        self.megaflows_were_on = []  # servers whose megaflows apply() turned off

    def apply(self):
        if self.exact_match:
            for server in self.sites.servers():
                self.sites.run(server, *APPCTL, 'upcall/disable-megaflows')
                self.megaflows_were_on.append(server)
                run_record.note_setting(server, 'megaflows (upcall/enable-megaflows)',
                                        undo=APPCTL_AFTER_TEARDOWN + ('upcall/enable-megaflows',))

    def undo(self):
        for server in self.megaflows_were_on:
            self.sites.run(server, *APPCTL_AFTER_TEARDOWN, 'upcall/enable-megaflows')
        self.megaflows_were_on = []


class SendBuffer:
    """The send buffer of the one AF_PACKET socket through which an
    ovs-vswitchd sends every packet of every port (netdev-linux's
    ``af_packet_sock``): ``apply`` raises it to ``size`` bytes, ``undo``
    puts the old size back.

    A packet waiting in a shaped port's queue still counts against the
    socket that sent it, and the socket has the machine's default
    (net.core.wmem_default, 208 KiB). Under a load on shaped links the
    queues held that much within a second (``ss -0 -m``: 203,200 of
    212,992 bytes), from then on every send of the daemon failed with
    EAGAIN until a queued packet left, on every port: the whole fabric
    became one 208 KiB shared buffer, and BFD packets on idle links were
    lost with the data (a k=4 fabric at 2 Mbit/s, BFD every 70 ms: 36-92
    false failures in 30 s; also at 400 ms). With a send buffer larger than
    all the ports' queues together, each port's queue is the only limit,
    as on a switch. The socket is reached through pidfd_getfd(2) (root;
    Linux 5.6); it exists once the daemon has sent a packet, so ``apply``
    takes a callable that makes it send one."""

    def __init__(self, size, pid=None):
        self.size = size
        self.pid = pid  # the daemon's (None: the one of daemon_pid_path)
        self.before = None  # (daemon pid, its socket's fd, SO_SNDBUF) before apply()

    def apply(self, make_daemon_send, timeout=5):
        pid = self.pid or daemon_pid()
        deadline = time.time() + timeout
        fd = send_socket_fd(pid)
        if fd is None:
            make_daemon_send()
        while fd is None:
            if time.time() > deadline:
                raise FaultError('ovs-vswitchd (pid %d) has no send socket %ds after sending a packet'
                                 % (pid, timeout))
            time.sleep(0.05)
            fd = send_socket_fd(pid)
        with daemon_socket(pid, fd) as sock:
            sndbuf = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, self.size)
        self.before = pid, fd, sndbuf
        run_record.note_setting(None, "ovs-vswitchd's send buffer (%d bytes)" % sndbuf, send_buffer=list(self.before))

    def undo(self):
        if self.before is None:
            return
        pid, fd, sndbuf = self.before
        self.before = None
        try:
            with daemon_socket(pid, fd) as sock:
                # the kernel doubles what it is given (socket(7)): give half of what it reported
                sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, sndbuf // 2)
        except ProcessLookupError:
            pass  # the daemon ended: its socket with it


# a shaped interface's data queue: Mininet's HTB class has no qdisc of its
# own, so the device's default, a pfifo of txqueuelen (1000 for a veth)
DATA_QUEUE_PACKETS = 1000


def send_buffer_bytes(switch_ports):
    """A send buffer for ovs-vswitchd's socket larger than every shaped
    switch port's queue full (``DATA_QUEUE_PACKETS`` packets of at most 4 KiB
    each in the kernel), within what the kernel takes (INT_MAX / 2)."""
    return min(switch_ports * DATA_QUEUE_PACKETS * 4096, (2 ** 31 - 1) // 2)


SO_SNDBUFFORCE = 32  # socket(7); not in Python's socket module
SYS_PIDFD_GETFD = 438  # the same number on every architecture


def send_socket_inode(packet_table, socket_inodes):
    """The inode of a daemon's send socket: in its network namespace's
    /proc/net/packet (``packet_table``), the raw one (type 3) of no protocol
    bound to no interface that is among its own sockets (``socket_inodes``);
    None if it has none yet."""
    found = [int(fields[8]) for fields in (line.split() for line in packet_table.splitlines()[1:])
             if fields[2:5] == ['3', '0000', '0'] and int(fields[8]) in socket_inodes]
    if len(found) > 1:
        raise FaultError('%d unbound packet sockets in ovs-vswitchd, expected one' % len(found))
    return found[0] if found else None


def send_socket_fd(pid):
    """The descriptor number of ovs-vswitchd ``pid``'s send socket, None if
    it has none yet."""
    fds = {}
    for fd in os.listdir('/proc/%d/fd' % pid):
        try:
            target = os.readlink('/proc/%d/fd/%s' % (pid, fd))
        except FileNotFoundError:
            continue  # closed meanwhile
        if target.startswith('socket:['):
            fds[int(target[len('socket:['):-1])] = int(fd)
    with open('/proc/%d/net/packet' % pid) as table:
        inode = send_socket_inode(table.read(), fds)
    return None if inode is None else fds[inode]


@contextlib.contextmanager
def daemon_socket(pid, fd):
    """Descriptor ``fd`` of process ``pid`` as a socket of this process (the
    same socket: options set on it are the daemon's)."""
    pidfd = os.pidfd_open(pid)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        dup = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        if dup < 0:
            raise OSError(ctypes.get_errno(), 'pidfd_getfd of ovs-vswitchd\'s fd %d' % fd)
    finally:
        os.close(pidfd)
    sock = socket.socket(fileno=dup)
    try:
        yield sock
    finally:
        sock.close()  # our copy only


def uses_jemalloc():
    """Whether the ovs-vswitchd of ``daemon_pid_path`` has jemalloc loaded."""
    with open('/proc/%d/maps' % daemon_pid()) as maps:
        return any('libjemalloc' in line for line in maps)
