"""Run records and the clean plan (pure): a dead run's leftovers are
removed, a live run's and anything no run recorded are not."""
import os

from scripts.emulator import clean, run_record
from scripts.emulator.run_record import RunRecord


def record(tmp_path, pid, started, **items):
    made = RunRecord(str(tmp_path / ('%d-%d' % (pid, started))), pid, started, 'dcfabric run')
    made.add('fattree(k=4)#1', name='fattree(k=4)', **items)
    return made


def dead(tmp_path, **items):
    # this process's pid with another start time: a pid reused by someone else
    return record(tmp_path, os.getpid(), run_record.start_time(os.getpid()) - 1, **items)


def live(tmp_path, **items):
    return record(tmp_path, os.getpid(), run_record.start_time(os.getpid()), **items)


def test_a_record_survives_a_reload_and_goes_with_its_last_fabric(tmp_path):
    made = live(tmp_path, bridges=['e0_0'])
    made.add('fattree(k=4)#1', bridges=['e0_1'])
    loaded, = run_record.all_records(str(tmp_path))
    assert loaded.alive() and loaded.items('bridges') == ['e0_0', 'e0_1']
    assert not dead(tmp_path).alive()
    made.finish('fattree(k=4)#1')
    assert not os.path.exists(made.directory)


def test_clean_takes_only_what_a_dead_run_made_and_no_live_run_holds(tmp_path):
    gone = dead(tmp_path, bridges=['e0_0', 'e0_1', 'c1_1'], veths=['e0_0-eth1', 'e0_1-eth1'],
                cpu_groups=['dcfabrichosts1'], settings=[{'what': 'megaflows', 'undo': ['true']}])
    running = live(tmp_path, bridges=['e0_1'], veths=['e0_1-eth1'])
    present = clean.Present(bridges=['e0_0', 'e0_1', 'foreign'], links=['e0_0-eth1', 'e0_1-eth1', 'eth0'],
                            cpu_groups=['dcfabrichosts1', 'other'],
                            processes={10: (gone.run_id, 'ryu'), 11: (running.run_id, 'bash'), 12: ('x', 'y')})
    removal, = clean.plan([gone, running], present)
    assert removal.record is gone
    assert removal.processes == {10: 'ryu'}
    assert removal.bridges == ['e0_0'] and removal.veths == ['e0_0-eth1']  # c1_1 is gone already
    assert removal.cpu_groups == ['dcfabrichosts1'] and removal.holds_state()
    assert [s['what'] for s in removal.settings] == ['megaflows']
    assert 'would remove 1 bridges: e0_0' in removal.describe(dry_run=True)


def test_a_setting_a_live_run_also_changed_is_left_to_it(tmp_path):
    setting = {'what': 'megaflows', 'undo': ['true']}
    removal, = clean.plan([dead(tmp_path, settings=[setting]), live(tmp_path, settings=[setting])], clean.Present())
    assert removal.settings == [] and not removal.holds_state()


def test_clean_takes_a_dead_runs_kernel_bridge_but_not_a_live_runs(tmp_path):
    gone = dead(tmp_path, kernel_bridges=['nbsw', 'gone'])
    running = live(tmp_path, kernel_bridges=['other'])
    removal, = clean.plan([gone, running], clean.Present(links=['nbsw', 'other', 'eth0']))
    assert removal.kernel_bridges == ['nbsw'] and removal.holds_state()
    assert 'would remove 1 kernel bridges: nbsw' in removal.describe(dry_run=True)
