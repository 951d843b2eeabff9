"""The hosts' CPU group: made on every server that can have it, stale
groups of ended runs swept, removed at the end (in a directory standing in
for the cpu cgroup hierarchy)."""
import subprocess

from scripts.emulator.host_cpu_group import HOSTS_CPU_SHARES, HostCpuGroup, group_name


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
    group = HostCpuGroup(sites, root=str(tmp_path / 'ROOT'), pid=4242)
    assert group.make() == group_name(4242) == 'dcfabrichosts4242'
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
    group = HostCpuGroup(sites, root=str(tmp_path / 'ROOT'), pid=4242)
    assert group.make() == 'dcfabrichosts4242'
    assert group.unavailable == ['old']
    assert not (tmp_path / 'old' / 'dcfabrichosts4242').exists()


def test_no_server_with_the_hierarchy_means_no_group(tmp_path):
    group = HostCpuGroup(DirSites(tmp_path, [], servers_without=['old']), root=str(tmp_path / 'ROOT'))
    assert group.make() is None
    assert group.unavailable == ['old']


def test_groups_of_ended_runs_are_removed_and_running_ones_kept(tmp_path):
    sites = DirSites(tmp_path, ['s1'])
    stale = tmp_path / 's1' / group_name(dead_pid())
    running = tmp_path / 's1' / group_name(1)  # init never ends
    stale.mkdir()
    running.mkdir()
    group = HostCpuGroup(sites, root=str(tmp_path / 'ROOT'), pid=4242)
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
    group = HostCpuGroup(sites, root=str(tmp_path / 'ROOT'), pid=dead_pid())
    group.make()
    assert group.stale_removed == 0 and group.made_on == ['s1', 's2']
    assert (tmp_path / 'shared' / group.name).is_dir()
