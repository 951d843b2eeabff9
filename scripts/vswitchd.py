"""What a running fabric sets on the ovs-vswitchd of every server its
switches run on, and puts back when it ends (``DaemonSettings``).

- Exact-match datapath flows, not megaflows (with BFD, i.e. when links
  fail). With megaflows, Open vSwitch 3.1's userspace datapath kept a
  wildcarded flow whose output port had gone down after the controller had
  rerouted: after a core switch failure, an upper switch went on sending
  some destinations to its dead core port for as long as they had traffic,
  while its OpenFlow table and ofproto/trace said otherwise
  (`ovs-appctl revalidator/wait` did not fix it, `revalidator/purge` did).
  Seen in 4 of 4 runs of the fault tests after another fabric, 0 of 5 with
  exact-match flows; they only cost more upcalls. Daemon-wide, until the
  daemon restarts.
- The daemons' scheduling groups first (ovs-vswitchd's and
  ovsdb-server's). Every command Mininet starts in a host (``mnexec -d``)
  is a session of its own, and with the kernel's
  autogroups each session is a scheduling group of the same weight as the
  daemon's: under a k=8 permutation of 128 iperf3 flows, 256 busy sessions
  left ovs-vswitchd a few percent of the two cores ("Unreasonably long
  2464ms poll interval (57ms user, 3ms system)"), BFD missed its
  deadlines, 221 of 256 links were failed and every flow stalled. With its
  autogroup at nice -20 the same run carried 268 Mbit/s in 19 s. Switches
  before hosts is also what the emulation should give: traffic generators
  may slow down, the network they measure must not.

The machine's own daemon is shared, so ``undo`` restores both; a private
daemon (scripts/ovs_instances.py) or a container server's ends with the
fabric. The controller is part of the network too: ``network_session``
gives it a session of its own at the daemons' priority, so that the
hosts' sessions do not starve it either. Cost: with k=16's four private
daemons first, `dcfabric run --k 16 --pairs-sample 1000` was ready after
137 s and pinged its pairs in 278 s (62 s and 49 s without); at their
usual priority k=8's permutation on two of them stalls again.
"""
import os

from scripts.faults import FaultError

DAEMON_NICE = -20
# ovsdb-server too: at its usual priority beside ovs-vswitchd at -20 it
# starved, and k=16's four daemons took 136 s instead of 40 s to add their ports
DAEMONS = ('ovs-vswitchd', 'ovsdb-server')
# a daemon's autogroup file where its commands run ($OVS_RUNDIR: a private daemon's)
AUTOGROUP = '/proc/$(cat ${OVS_RUNDIR:-/run/openvswitch}/%s.pid)/autogroup'
APPCTL = ('ovs-appctl', '--timeout=10')


def autogroup_nice(text):
    """The nice value in a /proc/PID/autogroup line ("/autogroup-5 nice 0")."""
    fields = text.split()
    if len(fields) != 3 or fields[1] != 'nice':
        raise FaultError('unexpected autogroup line %r' % text.strip())
    return int(fields[2])


def network_session():
    """In a child process before exec (``preexec_fn`` with
    ``start_new_session``): its new session's autogroup at the daemons'
    priority, where the kernel has autogroups."""
    if os.path.exists('/proc/self/autogroup'):
        with open('/proc/self/autogroup', 'w') as autogroup:
            autogroup.write(str(DAEMON_NICE))


class DaemonSettings:
    """``apply`` sets the fabric's settings on the daemon of every one of
    ``sites``' servers; ``undo`` puts back what ``apply`` changed there."""

    def __init__(self, sites, exact_match):
        self.sites = sites
        self.exact_match = exact_match
        self.megaflows_were_on = []  # servers whose megaflows apply() turned off
        self.nice_before = {}  # (server, daemon): its autogroup nice before apply()

    def apply(self):
        for server in self.sites.servers():
            if self.exact_match:
                self.sites.run(server, *APPCTL, 'upcall/disable-megaflows')
                self.megaflows_were_on.append(server)
            for daemon in DAEMONS:
                nice = self._nice(server, daemon)
                if nice is not None:
                    self.nice_before[server, daemon] = nice
                    self._set_nice(server, daemon, DAEMON_NICE)

    def undo(self):
        for (server, daemon), nice in self.nice_before.items():
            self._set_nice(server, daemon, nice)
        self.nice_before = {}
        for server in self.megaflows_were_on:
            self.sites.run(server, *APPCTL, 'upcall/enable-megaflows')
        self.megaflows_were_on = []

    def _nice(self, server, daemon):
        """The daemon's autogroup nice; None on a kernel without autogroups
        (each task is then scheduled alone, and sessions do not matter)."""
        out = self.sites.run(server, 'sh', '-c', '[ ! -e {0} ] || cat {0}'.format(AUTOGROUP % daemon)).stdout
        return autogroup_nice(out) if out.strip() else None

    def _set_nice(self, server, daemon, nice):
        self.sites.run(server, 'sh', '-c', 'echo %d > %s' % (nice, AUTOGROUP % daemon))
