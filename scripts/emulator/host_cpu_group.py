"""Every host of a fabric in one CPU scheduling group (``HostCpuGroup``),
so that the hosts together weigh as much as one switch daemon.

Each command Mininet starts in a host is a session of its own (``mnexec
-d``). With the kernel's autogroups each session is scheduled as a group
as heavy as all of ovs-vswitchd, and without autogroups each busy process
still weighs as much as the daemon's one forwarding thread: under a k=8
permutation of 128 iperf3 flows, 256 busy sessions left ovs-vswitchd a
few percent of the two cores ("Unreasonably long 2464ms poll interval
(57ms user, 3ms system)"), BFD missed its deadlines, 221 of 256 links were
failed and every flow stalled. Traffic generators may slow down; the
network they measure must not.

Putting the daemons first instead (their autogroups at nice -20, the
previous round) ended that stall but starved the hosts whenever the
daemons were busy: with k=16's four daemons, `dcfabric run --k 16
--pairs-sample 1000` was ready after 137 s and pinged its pairs in 278 s
(62 s and 49 s before). One cpu cgroup holding every host (Mininet's own
``mnexec -g``; tasks in a cgroup are not autogrouped) gives the hosts one
weight beside each daemon's, whatever the number of hosts or daemons.

The group is made on every server that runs hosts (``sites``) and removed
at the end, with any process still in it: nothing a host started outlives
the fabric.
"""
import os

# cgroup v1's cpu hierarchy (where mnexec -g adds a process)
CPU_CGROUPS = '/sys/fs/cgroup/cpu'
# The hosts' weight together: one daemon's (1024, a cgroup's default
# cpu.shares and an autogroup's weight at nice 0). Less was tried: at 256 k=4
# on this machine's daemon carried 400 Mbit/s instead of 574 (3 runs each; at
# k=4 the daemon is not saturated and the hosts' own CPU limits them), k=16
# was ready in 49.4 s and reached its pairs in 40.6 s (33.6-41.5 s and
# 16.3-22.0 s in three runs at 1024); only k=8 on two daemons looked better in
# one run (458 against 335).
HOSTS_CPU_SHARES = 1024
# mnexec -g takes letters and digits only; the pid of the process that made it
NAME_PREFIX = 'dcfabrichosts'
# kill what is left in a group, then remove it (processes take a moment to leave)
REMOVE = ('g={root}/{name}; [ -d $g ] || exit 0; '
          'for i in $(seq 50); do p=$(cat $g/cgroup.procs); [ -n "$p" ] || break; '
          'kill -9 $p 2>/dev/null; sleep 0.1; done; rmdir $g')
# groups of runs that ended without removing theirs (their maker is gone)
STALE = ('for g in {root}/{prefix}*; do [ -d "$g" ] || continue; n=${{g##*/{prefix}}}; '
         '[ -d /proc/$n ] || echo ${{g##*/}}; done; true')


def group_name(pid):
    return '%s%d' % (NAME_PREFIX, pid)


class HostCpuGroup:
    """``make`` creates the group on each of ``sites``' servers (None where
    a server has no cgroup v1 cpu hierarchy: then ``unavailable`` names
    them and hosts run ungrouped); ``remove`` ends it there."""

    def __init__(self, sites, root=CPU_CGROUPS, pid=None):
        self.sites = sites
        self.root = root
        self.name = group_name(os.getpid() if pid is None else pid)
        self.made_on = []  # servers where make() created the group
        self.unavailable = []  # servers without a cpu cgroup hierarchy
        self.stale_removed = 0  # groups of earlier runs removed by make()

    def make(self):
        for server in self.sites.servers():
            if self._run(server, 'if [ -w %s/cpu.shares ]; then echo yes; fi' % self.root).strip() != 'yes':
                self.unavailable.append(server)
                continue
            for stale in self._run(server, STALE.format(root=self.root, prefix=NAME_PREFIX)).split():
                if stale == self.name:
                    continue  # ours, made on a server that shares this kernel but not our pids
                self.remove_group(server, stale)
                self.stale_removed += 1
            self._run(server, 'mkdir -p {0}/{1} && echo {2} > {0}/{1}/cpu.shares'.format(
                self.root, self.name, HOSTS_CPU_SHARES))
            self.made_on.append(server)
        return self.name if self.made_on else None

    def remove(self):
        for server in self.made_on:
            self.remove_group(server, self.name)
        self.made_on = []

    def remove_group(self, server, name):
        """End what is left in group ``name`` on ``server`` and remove the group."""
        self._run(server, REMOVE.format(root=self.root, name=name))

    def _run(self, server, script):
        return self.sites.run(server, 'sh', '-c', script).stdout
