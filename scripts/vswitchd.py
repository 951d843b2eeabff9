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
shared (a private daemon, scripts/ovs_instances.py, or a container
server's ends with the fabric).

How the daemons share the CPU with the hosts: scripts/host_cpu_group.py.
"""
APPCTL = ('ovs-appctl', '--timeout=10')


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

    def undo(self):
        for server in self.megaflows_were_on:
            self.sites.run(server, *APPCTL, 'upcall/enable-megaflows')
        self.megaflows_were_on = []
