"""The hosts' CPU group: made on every server that can have it, stale
groups of ended runs swept, removed at the end (in a directory standing in
for the cpu cgroup hierarchy, v1 or v2: these machines' v2 hierarchy has no
cpu controller, so v2 is tested only here; v1 for real in
tests/emulation/test_host_cpu_group_v1.py)."""
import os
import subprocess
import time

from scripts.emulator.host_cpu_group import HOSTS_CPU_SHARES, HOSTS_CPU_WEIGHT, HostCpuGroup, group_name


class DirSites:
    """Servers whose cpu hierarchy is a directory of this test (None: a
    server without one); commands run in sh here."""

    def __init__(self, tmp_path, servers_with_cgroups, servers_without=()):
        self.tmp_path = tmp_path
        self._servers = list(servers_with_cgroups) + list(servers_without)
        for server in servers_with_cgroups:
            (tmp_path / server).mkdir()
            (tmp_path / server / 'cpu.shares').write_text('1024\n')
        for server in servers_without:
            (tmp_path / server).mkdir()
        self.ran_on = []

    def servers(self):
        return list(self._servers)

    def run(self, server, *cmd, check=True):
        assert cmd[:2] == ('sh', '-c')
        self.ran_on.append(server)
        # every server's root is tmp_path/<server>: the group's commands name {root};
        # cgroupfs removes a group's files with it, a plain directory needs rm -r
        script = cmd[2].replace(str(self.tmp_path / 'ROOT'), str(self.tmp_path / server))
        script = script.replace('rmdir ', 'rm -r ')
        return subprocess.run(['sh', '-c', script], capture_output=True, text=True, check=check, timeout=120)


def dead_pid():
    """A pid no process has (one that just ended)."""
    process = subprocess.Popen(['true'])
    process.wait()
    return process.pid


def test_made_on_every_server_and_removed_at_the_end(tmp_path):
    sites = DirSites(tmp_path, ['s1', 's2'])
    group = HostCpuGroup(sites, roots=[str(tmp_path / 'ROOT')], pid=4242)
    assert group.make() == ['mnexec', '-g', 'dcfabrichosts4242', '--'] and group_name(4242) == 'dcfabrichosts4242'
    assert (tmp_path / 's1' / 'dcfabrichosts4242').is_dir()
    assert (tmp_path / 's2' / 'dcfabrichosts4242').is_dir()
    assert (tmp_path / 's1' / 'dcfabrichosts4242' / 'cpu.shares').read_text() == '%d\n' % HOSTS_CPU_SHARES
    assert group.unavailable == [] and group.stale_removed == 0
    group.remove()
    assert not (tmp_path / 's1' / 'dcfabrichosts4242').exists()
    assert not (tmp_path / 's2' / 'dcfabrichosts4242').exists()
    runs = len(sites.ran_on)
    group.remove()  # twice: nothing left
    assert len(sites.ran_on) == runs


def test_a_server_without_the_hierarchy_is_named_not_grouped(tmp_path):
    sites = DirSites(tmp_path, ['s1'], servers_without=['old'])
    group = HostCpuGroup(sites, roots=[str(tmp_path / 'ROOT')], pid=4242)
    assert group.make() == ['mnexec', '-g', 'dcfabrichosts4242', '--']
    assert group.unavailable == ['old']
    assert not (tmp_path / 'old' / 'dcfabrichosts4242').exists()


def test_no_server_with_the_hierarchy_means_no_group(tmp_path):
    group = HostCpuGroup(DirSites(tmp_path, [], servers_without=['old']), roots=[str(tmp_path / 'ROOT')])
    assert group.make() is None
    assert group.unavailable == ['old']


def test_groups_of_ended_runs_are_removed_and_running_ones_kept(tmp_path):
    sites = DirSites(tmp_path, ['s1'])
    stale = tmp_path / 's1' / group_name(dead_pid())
    running = tmp_path / 's1' / group_name(1)  # init never ends
    stale.mkdir()
    running.mkdir()
    group = HostCpuGroup(sites, roots=[str(tmp_path / 'ROOT')], pid=4242)
    group.make()
    assert group.stale_removed == 1
    assert not stale.exists() and running.is_dir()


def test_servers_sharing_one_hierarchy_keep_the_group_made_for_the_first(tmp_path):
    """Container servers share this kernel's cgroups but not its pids: our
    own group looks stale from the second server and must stay."""
    class SharedSites(DirSites):
        def run(self, server, *cmd, check=True):
            return super().run('shared', *cmd, check=check)
    sites = SharedSites(tmp_path, ['shared'])
    sites._servers = ['s1', 's2']
    group = HostCpuGroup(sites, roots=[str(tmp_path / 'ROOT')], pid=dead_pid())
    group.make()
    assert group.stale_removed == 0 and group.made_on == ['s1', 's2']
    assert (tmp_path / 'shared' / group.name).is_dir()


def v2_hierarchy(path, controllers='cpuset cpu io memory pids'):
    """A directory standing in for a cgroup v2 root with ``controllers``."""
    path.mkdir()
    (path / 'cgroup.controllers').write_text(controllers + '\n')
    (path / 'cgroup.subtree_control').write_text('')
    return path


def test_on_cgroup_v2_the_group_gets_the_same_weight_and_the_cpu_controller(tmp_path):
    sites = DirSites(tmp_path, [], servers_without=['s1'])
    (tmp_path / 's1').rmdir()
    v2_hierarchy(tmp_path / 's1')
    group = HostCpuGroup(sites, roots=[str(tmp_path / 'ROOT')], pid=4242)
    prefix = group.make()
    assert group.hierarchy == ('v2', str(tmp_path / 's1')) and group.unavailable == []
    assert HOSTS_CPU_WEIGHT == 100
    assert (tmp_path / 's1' / 'cgroup.subtree_control').read_text() == '+cpu\n'
    assert (tmp_path / 's1' / 'dcfabrichosts4242' / 'cpu.weight').read_text() == '100\n'
    assert prefix[:2] == ['sh', '-c'] and 'mnexec' not in prefix  # mnexec -g knows only v1


def test_a_v2_host_command_joins_the_group_itself_and_is_ended_with_it(tmp_path):
    v2 = v2_hierarchy(tmp_path / 'v2')
    group = HostCpuGroup(DirSites(tmp_path, []), roots=[str(v2)], pid=4242)
    group.sites._servers = [None]
    group.sites.run = lambda server, *cmd, check=True: subprocess.run(
        list(cmd[:2]) + [cmd[2].replace('rmdir ', 'rm -r ')], capture_output=True, text=True, check=check,
        timeout=120)
    prefix = group.make()
    sleeper = subprocess.Popen(prefix + ['sleep', '60'])
    procs = v2 / 'dcfabrichosts4242' / 'cgroup.procs'
    deadline = time.monotonic() + 10
    while not (procs.exists() and procs.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert procs.read_text().split() == [str(sleeper.pid)]  # the command's own pid: it exec'd
    assert os.readlink('/proc/%d/exe' % sleeper.pid).endswith('sleep')
    group.remove()
    assert sleeper.wait(10) == -9
    assert not (v2 / 'dcfabrichosts4242').exists()


def test_a_v2_hierarchy_without_the_cpu_controller_is_no_hierarchy(tmp_path):
    """As on these hybrid machines: /sys/fs/cgroup/unified has only hugetlb."""
    sites = DirSites(tmp_path, [], servers_without=['s1'])
    (tmp_path / 's1').rmdir()
    v2_hierarchy(tmp_path / 's1', controllers='hugetlb')
    group = HostCpuGroup(sites, roots=[str(tmp_path / 'ROOT')], pid=4242)
    assert group.make() is None and group.unavailable == ['s1']


def test_v1_is_tried_before_v2_and_joined_by_mnexec(tmp_path):
    v1 = tmp_path / 'v1'
    v1.mkdir()
    (v1 / 'cpu.shares').write_text('1024\n')
    v2 = v2_hierarchy(tmp_path / 'v2')
    group = HostCpuGroup(DirSites(tmp_path, []), roots=[str(v1), str(v2)], pid=4242)
    group.sites._servers = [None]
    group.sites.run = lambda server, *cmd, check=True: subprocess.run(list(cmd), capture_output=True, text=True,
                                                                       check=check, timeout=120)
    assert group.make() == ['mnexec', '-g', 'dcfabrichosts4242', '--']
    assert (v1 / 'dcfabrichosts4242' / 'cpu.shares').read_text() == '%d\n' % HOSTS_CPU_SHARES
    assert not (v2 / 'dcfabrichosts4242').exists()
