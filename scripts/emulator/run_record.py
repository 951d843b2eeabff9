"""What a run of dcfabric made, written down as it makes it, so that
``dcfabric clean`` (scripts/emulator/clean.py) can remove what a killed
run left, and nothing else.

A run is a process that starts fabrics. Its directory,
RUNS_DIR/<run id>/, holds record.json: per fabric, the bridges and veths
it makes on this machine, its private Open vSwitch instances, the hosts'
CPU group, the controller's pid, the host and switch shells' pids and the
Open vSwitch settings it changed (with the command that puts each back).
Every process the run starts carries RUN_TAG=<run id> in its environment
(shells and what runs in them, the controller, private daemons and their
relays): clean finds them by it even when the run died before writing
their pids down. A fabric's entry goes when the fabric tore down without
error; the directory, when no entry is left.

The run id is the owner's pid and its start time, so a pid that a later
process reuses does not look like the owner.
"""
import json
import os
import shutil

RUNS_DIR = '/run/dcfabric/runs'
RUN_TAG = 'DCFABRIC_RUN'


def start_time(pid):
    """When process ``pid`` started (clock ticks since boot), None if there is no such process."""
    try:
        with open('/proc/%d/stat' % pid) as stat:
            # the command name (field 2) may hold spaces: count from its closing parenthesis
            return int(stat.read().rsplit(')', 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


class RunRecord:
    """The record of run ``run_id`` (owner ``pid`` started at ``started``)
    in ``directory``: {fabric key: {what: value}}."""

    def __init__(self, directory, pid, started, command, fabrics=None):
        self.directory, self.pid, self.started, self.command = directory, pid, started, command
        self.fabrics = fabrics if fabrics is not None else {}

    @property
    def run_id(self):
        return '%d-%d' % (self.pid, self.started)

    @classmethod
    def of_this_process(cls, root=RUNS_DIR):
        pid = os.getpid()
        started = start_time(pid)
        with open('/proc/self/cmdline', 'rb') as cmdline:
            command = cmdline.read().replace(b'\0', b' ').decode(errors='replace').strip()
        return cls(os.path.join(root, '%d-%d' % (pid, started)), pid, started, command)

    @classmethod
    def load(cls, directory):
        with open(os.path.join(directory, 'record.json')) as f:
            data = json.load(f)
        return cls(directory, data['pid'], data['started'], data['command'], data['fabrics'])

    def alive(self):
        """Whether the owner still runs."""
        return start_time(self.pid) == self.started

    def add(self, key, **items):
        """Merge ``items`` into fabric ``key``'s entry: lists grow, other values are set."""
        entry = self.fabrics.setdefault(key, {})
        for what, value in items.items():
            if isinstance(value, list):
                entry[what] = entry.get(what, []) + value
            else:
                entry[what] = value
        self.save()

    def finish(self, key):
        """Fabric ``key`` left nothing behind: drop its entry (and the directory with the last)."""
        self.fabrics.pop(key, None)
        if self.fabrics:
            self.save()
        else:
            shutil.rmtree(self.directory, ignore_errors=True)

    def save(self):
        os.makedirs(self.directory, exist_ok=True)
        path = os.path.join(self.directory, 'record.json')
        with open(path + '.new', 'w') as f:
            json.dump({'pid': self.pid, 'started': self.started, 'command': self.command,
                       'fabrics': self.fabrics}, f, indent=1)
        os.replace(path + '.new', path)  # a reader never sees half a record

    def items(self, what):
        """Every fabric's ``what`` (a list), concatenated."""
        return [item for entry in self.fabrics.values() for item in entry.get(what, [])]


def all_records(root=RUNS_DIR):
    """Every run's record under ``root`` (unreadable ones are skipped: a run writing its first)."""
    records = []
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        try:
            records.append(RunRecord.load(os.path.join(root, name)))
        except (OSError, ValueError, KeyError):
            continue
    return records


_this_run = []  # this process's RunRecord, once a fabric started
_starting = []  # the key of the fabric whose start() runs now


def begin(name):
    """Open an entry for a fabric about to start in this process; its key.
    From here on every process this one starts carries the run's tag."""
    if not _this_run:
        _this_run.append(RunRecord.of_this_process())
    record = _this_run[0]
    key = '%s#%d' % (name, len(record.fabrics) + 1)
    while key in record.fabrics:
        key += "'"
    os.environ[RUN_TAG] = record.run_id
    record.add(key, name=name)
    _starting[:] = [key]
    return key


def started(key):
    """Fabric ``key``'s start() has returned."""
    if _starting == [key]:
        _starting.clear()


def add(key, **items):
    _this_run[0].add(key, **items)


def finish(key):
    """Fabric ``key`` tore down completely. With the run's last entry the
    tag leaves the environment: later processes are no fabric's."""
    started(key)
    record = _this_run[0]
    record.finish(key)
    if not record.fabrics:
        os.environ.pop(RUN_TAG, None)


def note_setting(server, what, **how):
    """The starting fabric changed Open vSwitch setting ``what`` on
    ``server``; ``how`` puts it back: ``undo`` (a command) or
    ``send_buffer`` (vswitchd.SendBuffer's pid, fd, size). Only this
    machine's daemon (server None) is recorded: a private daemon ends with
    its fabric, and clean does not reach other servers."""
    if server is None and _starting and _this_run:
        add(_starting[0], settings=[dict(what=what, **{key: list(value) for key, value in how.items()})])


def teardown_state():
    """What a session that ends says: whether everything this process made is gone."""
    left = sorted(_this_run[0].fabrics) if _this_run else []
    if not left:
        return 'everything torn down'
    return ('teardown incomplete (%s): `dcfabric clean` removes what is left once this process has ended'
            % ', '.join(left))
