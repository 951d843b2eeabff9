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

On cgroup v1 (a ``cpu`` hierarchy at /sys/fs/cgroup/cpu) the group has
``cpu.shares`` 1024 and hosts join it by ``mnexec -g``. On cgroup v2 (the
cpu controller in the unified hierarchy, as on current Debian, Ubuntu and
Fedora installs) it has the same weight as ``cpu.weight`` 100 (the default
of each, 1024 shares and weight 100, are what a daemon's group has), the cpu
controller is enabled for the hierarchy's children, and a host's command
joins it by writing its own pid to ``cgroup.procs`` before it execs
(``mnexec -g`` knows only v1). The v2 path is tested against a directory
standing in for the hierarchy (tests/unit/test_host_cpu_group.py): these
machines are v1 hybrids whose unified hierarchy has no cpu controller.
"""
import os

# Where a cpu hierarchy may be, in the order tried: cgroup v1's (where
# mnexec -g adds a process), then v2's unified one (hybrid, or v2 only).
CPU_CGROUPS = '/sys/fs/cgroup/cpu'
ROOTS = (CPU_CGROUPS, '/sys/fs/cgroup/unified', '/sys/fs/cgroup')
# The hosts' weight together: one daemon's (1024, a cgroup's default
# cpu.shares and an autogroup's weight at nice 0). Less was tried: at 256 k=4
# on this machine's daemon carried 400 Mbit/s instead of 574 (3 runs each; at
# k=4 the daemon is not saturated and the hosts' own CPU limits them), k=16
# was ready in 49.4 s and reached its pairs in 40.6 s (33.6-41.5 s and
# 16.3-22.0 s in three runs at 1024); only k=8 on two daemons looked better in
# one run (458 against 335).
HOSTS_CPU_SHARES = 1024
HOSTS_CPU_WEIGHT = HOSTS_CPU_SHARES * 100 // 1024  # v2's weight: 100 is v1's 1024
# the first root with a cpu hierarchy: "v1 ROOT" or "v2 ROOT", nothing without one
FIND = ('for r in {roots}; do if [ -w $r/cpu.shares ]; then echo v1 $r; exit 0; fi; '
        'if grep -qw cpu $r/cgroup.controllers 2>/dev/null; then echo v2 $r; exit 0; fi; done; true')
MAKE = {'v1': 'mkdir -p {root}/{name} && echo {shares} > {root}/{name}/cpu.shares',
        # the cpu controller for the root's children first (a v2 group has no cpu.weight without it)
        'v2': ('{{ grep -qw cpu {root}/cgroup.subtree_control || echo +cpu > {root}/cgroup.subtree_control; }} && '
               'mkdir -p {root}/{name} && echo {weight} > {root}/{name}/cpu.weight')}
# a v2 host command joins the group itself, then becomes the command
JOIN_V2 = 'echo $$ > {root}/{name}/cgroup.procs && exec "$@"'
# mnexec -g takes letters and digits only; the pid of the process that made it
NAME_PREFIX = 'dcfabrichosts'
# kill what is left in a group, then remove it (processes take a moment to leave)
REMOVE = ('for r in {roots}; do g=$r/{name}; [ -d $g ] || continue; '
          'for i in $(seq 50); do p=$(cat $g/cgroup.procs); [ -n "$p" ] || break; '
          'kill -9 $p 2>/dev/null; sleep 0.1; done; rmdir $g; done')
# groups of runs that ended without removing theirs (their maker is gone)
STALE = ('for g in {root}/{prefix}*; do [ -d "$g" ] || continue; n=${{g##*/{prefix}}}; '
         '[ -d /proc/$n ] || echo ${{g##*/}}; done; true')


def groups_here(roots=ROOTS):
    """The names of the hosts' groups in this machine's cpu hierarchies."""
    return sorted({name for root in roots if os.path.isdir(root) for name in os.listdir(root)
                   if name.startswith(NAME_PREFIX) and os.path.isdir(os.path.join(root, name))})


def group_name(pid):
    return '%s%d' % (NAME_PREFIX, pid)


class HostCpuGroup:
    """``make`` creates the group on each of ``sites``' servers (where a
    server has no cpu hierarchy, v1 or v2, ``unavailable`` names it and its
    hosts run ungrouped) and returns the words that run a command in it;
    ``remove`` ends it there. ``roots``: where hierarchies may be, tried in
    order."""

    def __init__(self, sites, roots=ROOTS, pid=None):
        self.sites = sites
        self.roots = tuple(roots)
        self.name = group_name(os.getpid() if pid is None else pid)
        self.made_on = []  # servers where make() created the group
        self.hierarchy = None  # (v1 or v2, root) of the first server with one
        self.unavailable = []  # servers without a cpu cgroup hierarchy
        self.stale_removed = 0  # groups of earlier runs removed by make()

    def make(self):
        for server in self.sites.servers():
            found = self._run(server, FIND.format(roots=' '.join(self.roots))).split()
            if not found:
                self.unavailable.append(server)
                continue
            kind, root = found
            for stale in self._run(server, STALE.format(root=root, prefix=NAME_PREFIX)).split():
                if stale == self.name:
                    continue  # ours, made on a server that shares this kernel but not our pids
                self.remove_group(server, stale)
                self.stale_removed += 1
            self._run(server, MAKE[kind].format(root=root, name=self.name, shares=HOSTS_CPU_SHARES,
                                                weight=HOSTS_CPU_WEIGHT))
            self.made_on.append(server)
            self.hierarchy = self.hierarchy or (kind, root)
        return self.command_prefix()

    def command_prefix(self):
        """The words before a command that run it in the group (None: no group)."""
        if self.hierarchy is None:
            return None
        kind, root = self.hierarchy
        if kind == 'v1':
            # '--': mnexec's getopt would otherwise take the command's options as its own
            return ['mnexec', '-g', self.name, '--']
        return ['sh', '-c', JOIN_V2.format(root=root, name=self.name), 'sh']

    def remove(self):
        for server in self.made_on:
            self.remove_group(server, self.name)
        self.made_on = []

    def remove_group(self, server, name):
        """End what is left in group ``name`` on ``server`` and remove the group."""
        self._run(server, REMOVE.format(roots=' '.join(self.roots), name=name))

    def _run(self, server, script):
        return self.sites.run(server, 'sh', '-c', script).stdout
