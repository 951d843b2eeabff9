"""``dcfabric clean``: remove what dcfabric runs that have ended left
behind, from their run records (scripts/emulator/run_record.py).

Only runs whose owner process is gone are cleaned, and only what their
records name: processes carrying their tag, and bridges (Open vSwitch's and
the kernel's), veths, private Open vSwitch instances and CPU groups listed there that exist and that no
live run lists too. Open vSwitch settings they changed are put back
unless a live run changed the same. Nothing dcfabric did not make is
touched (unlike ``mn -c``, which removes everyone's by name).

``plan`` is pure: the records and what the machine holds in, what to
remove out.
"""
import os
import shutil
import signal
import subprocess
import time

from scripts.emulator import run_record
from scripts.emulator.errors import SetupError
from scripts.emulator.faults import LOCAL
from scripts.emulator.host_cpu_group import HostCpuGroup, groups_here
from scripts.emulator.ovs import instances as ovs_instances, ovsdb, vswitchd
from scripts.emulator.teardown import Steps, TeardownError

COMMAND_TIMEOUT_S = 30
# the machine's own daemons are never a run's, whatever their environment says
MACHINE_DAEMON_PIDS = ('/run/openvswitch/ovs-vswitchd.pid', '/run/openvswitch/ovsdb-server.pid')


class Present:
    """What the machine holds now: bridge names (its own ovsdb), interface
    names (root namespace), private instance indexes (namespace or run
    directory), CPU group names, and {pid: (run tag, command)} of tagged
    processes."""

    def __init__(self, bridges=(), links=(), instances=(), cpu_groups=(), processes=None):
        self.bridges, self.links = set(bridges), set(links)
        self.instances, self.cpu_groups = set(instances), set(cpu_groups)
        self.processes = processes or {}

    @classmethod
    def on_this_machine(cls, protected_pids=()):
        return cls(_bridges(), _links(), [i.index for i in ovs_instances.left_over()], groups_here(),
                   {pid: tagged for pid, tagged in _tagged_processes().items() if pid not in protected_pids})


class Removal:
    """What cleaning dead run ``record`` removes."""

    def __init__(self, record, processes, bridges, veths, instances, cpu_groups, settings, kernel_bridges=()):
        self.record = record
        self.processes = processes  # {pid: command}
        self.bridges, self.veths, self.instances, self.cpu_groups = bridges, veths, instances, cpu_groups
        self.kernel_bridges = list(kernel_bridges)
        self.settings = settings  # the record's setting entries to put back

    def holds_state(self):
        """Whether the run left anything that is there now (settings cannot be seen)."""
        return bool(self.processes or self.bridges or self.kernel_bridges or self.veths or self.instances
                    or self.cpu_groups)

    def describe(self, dry_run):
        controllers = {entry.get('controller_pid') for entry in self.record.fabrics.values()}
        verb = (lambda now, would: would) if dry_run else (lambda now, would: now)
        lines = ['run %s (pid %d, ended): %s' % (self.record.run_id, self.record.pid, self.record.command)]
        if self.processes:
            named = ['controller %d' % pid if pid in controllers else '%d %s' % (pid, command[:40])
                     for pid, command in sorted(self.processes.items())]
            lines.append('  %s %d processes: %s' % (verb('ended', 'would end'), len(named), ', '.join(named)))
        for what, names in (('bridges', self.bridges), ('kernel bridges', self.kernel_bridges), ('veths', self.veths),
                            ('Open vSwitch instances', ['ovs%d' % i for i in self.instances]),
                            ('CPU groups', self.cpu_groups)):
            if names:
                lines.append('  %s %d %s: %s' % (verb('removed', 'would remove'), len(names), what,
                                                 ' '.join(sorted(names))))
        for setting in self.settings:
            lines.append('  %s %s' % (verb('put back', 'would put back'), setting['what']))
        if len(lines) == 1:
            lines.append('  nothing of it is left' + ('' if dry_run else '; its record removed'))
        return '\n'.join(lines)


def plan(records, present):
    """A Removal for each run of ``records`` whose owner is gone."""
    live = [record for record in records if record.alive()]
    dead = [record for record in records if not record.alive()]
    claimed = {what: set().union(*(record.items(what) for record in live))
               for what in ('bridges', 'kernel_bridges', 'veths', 'ovs_instances', 'cpu_groups')}
    live_settings = {setting['what'] for record in live for setting in record.items('settings')}
    removals = []
    for record in dead:
        def owned(what, there):
            return sorted(set(record.items(what)) & set(there) - claimed[what])
        removals.append(Removal(
            record,
            {pid: command for pid, (tag, command) in present.processes.items() if tag == record.run_id},
            owned('bridges', present.bridges), owned('veths', present.links),
            owned('ovs_instances', present.instances), owned('cpu_groups', present.cpu_groups),
            [setting for setting in record.items('settings') if setting['what'] not in live_settings],
            owned('kernel_bridges', present.links)))
    return removals


def removals_now(root=run_record.RUNS_DIR):
    records = run_record.all_records(root)
    live_owners = {record.pid for record in records if record.alive()}
    return plan(records, Present.on_this_machine(protected_pids=live_owners | _machine_daemons() | {os.getpid()}))


def remove(removal):
    """Remove what ``removal`` lists, then its record; errors are raised together at the end."""
    steps = Steps()
    steps.run('ending processes', end_processes, list(removal.processes))
    if removal.bridges:
        steps.run('deleting bridges', ovsdb.delete_bridges, removal.bridges)
    if removal.veths:
        steps.run('deleting veths', delete_links, removal.veths)
    if removal.kernel_bridges:
        steps.run('deleting kernel bridges', delete_links, removal.kernel_bridges)
    for index in removal.instances:
        steps.run('stopping Open vSwitch instance ovs%d' % index, ovs_instances.OvsInstance(index).stop)
    for name in removal.cpu_groups:
        steps.run('removing CPU group %s' % name, HostCpuGroup(LOCAL).remove_group, None, name)
    for setting in removal.settings:
        steps.run('putting back %s' % setting['what'], put_back, setting)
    if not steps.errors:
        shutil.rmtree(removal.record.directory, ignore_errors=True)
    steps.raise_errors()


def delete_links(names, timeout_s=COMMAND_TIMEOUT_S * 30):
    """Delete the interfaces ``names`` of this namespace, in one ``ip``
    (-force: one already gone, a veth with its peer, is no reason to stop)."""
    subprocess.run(['ip', '-force', '-batch', '-'], capture_output=True, text=True, timeout=timeout_s,
                   input=''.join('link del dev %s\n' % name for name in names))


def put_back(setting):
    if 'undo' in setting:
        done = subprocess.run(setting['undo'], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S * 5)
        if done.returncode != 0:
            raise SetupError('%s failed: %s' % (' '.join(setting['undo']), done.stderr.strip()))
    else:  # the send buffer of a daemon that may have restarted since (then it is back already)
        pid, fd, size = setting['send_buffer']
        if vswitchd.daemon_pid() == pid:
            buffer = vswitchd.SendBuffer(None)
            buffer.before = pid, fd, size
            buffer.undo()


def end_processes(pids, grace_s=3):
    """SIGTERM, then SIGKILL what is left after ``grace_s`` (an interactive
    shell ignores SIGTERM)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(_exists(pid) for pid in pids):
            time.sleep(0.05)
        pids = [pid for pid in pids if _exists(pid)]
        if not pids:
            return
    raise SetupError('processes %s did not end' % ' '.join(map(str, pids)))


def _exists(pid):
    """Whether ``pid`` is there and not a zombie."""
    try:
        with open('/proc/%d/stat' % pid) as stat:
            return stat.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def refuse_stale_state():
    """Before a fabric starts: raise SetupError when a run that ended left
    state behind (its controller would hold the port, its bridges and veths
    the names), naming it and pointing at ``dcfabric clean``."""
    left = [removal for removal in removals_now() if removal.holds_state()]
    if left:
        raise SetupError('a dcfabric run that ended without tearing down left its fabric behind:\n%s\n'
                         'run `dcfabric clean` to remove it (`dcfabric clean --dry-run` lists it)'
                         % '\n'.join(removal.describe(dry_run=True) for removal in left))


def _bridges():
    done = subprocess.run(['ovs-vsctl', '--timeout=10', 'list-br'], capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S)
    return done.stdout.split() if done.returncode == 0 else []


def _links():
    return os.listdir('/sys/class/net')


def _machine_daemons():
    pids = set()
    for path in MACHINE_DAEMON_PIDS:
        try:
            with open(path) as f:
                pids.add(int(f.read()))
        except (OSError, ValueError):
            continue
    return pids


def _tagged_processes():
    """{pid: (run id, command)} of every process whose environment carries a run tag."""
    marker = (run_record.RUN_TAG + '=').encode()
    found = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/environ' % entry, 'rb') as f:
                environ = f.read().split(b'\0')
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                command = f.read().replace(b'\0', b' ').decode(errors='replace').strip()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        for variable in environ:
            if variable.startswith(marker):
                found[int(entry)] = (variable[len(marker):].decode(), command)
    return found


def main(dry_run=False, root=run_record.RUNS_DIR):
    """Clean (or with ``dry_run`` list) every dead run; print what was done."""
    removals = removals_now(root)
    if not removals:
        print('nothing to clean: no dcfabric run ended without tearing down')
        return
    errors = []
    for removal in removals:
        print(removal.describe(dry_run), flush=True)
        if not dry_run:
            try:
                remove(removal)
            except TeardownError as error:
                errors.append('run %s: %s' % (removal.record.run_id, error))
    if errors:
        raise SetupError('clean incomplete: %s' % '; '.join(errors))
