"""A fabric's bridges in one OVSDB transaction (scripts/emulator/ovs/ovsdb.py), in the
real ovsdb-server: what ovs-vsctl then reads back, removal, clear errors."""
import os
import subprocess

import pytest

from scripts.emulator.ovs import ovsdb


def vsctl(*args):
    return subprocess.run(('ovs-vsctl', '--timeout=60') + args, check=True, capture_output=True, text=True, timeout=120).stdout.strip()


def bridge(name, ports=()):
    return ovsdb.Bridge(name=name, datapath_type='netdev', fail_mode='secure', protocols=['OpenFlow13'],
                        other_config={'datapath-id': '00000000000000fe', 'dp-desc': name},
                        controllers=['tcp:127.0.0.1:6999'], max_backoff=1000, ports=list(ports))


def test_bridges_made_in_one_transaction_read_back_as_ovs_vsctl_makes_them(require_ovs):
    names = ['tovsdb-a', 'tovsdb-b']
    ovsdb.delete_bridges(names)
    # a k=16 fabric's process holds thousands of descriptors: the library must still wait on its socket
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        ovsdb.add_bridges([bridge('tovsdb-a', [('tovsdb-a-p1', 7, {'type': 'patch', 'options': {'peer': 'tovsdb-b-p1'}})]),
                           bridge('tovsdb-b', [('tovsdb-b-p1', 3, {'type': 'patch', 'options': {'peer': 'tovsdb-a-p1'},
                                                                   'bfd': {'enable': 'true', 'min_tx': 100}})])])
        assert set(names) <= set(vsctl('list-br').split())
        assert vsctl('list-ports', 'tovsdb-a') == 'tovsdb-a-p1'
        assert vsctl('get', 'bridge', 'tovsdb-a', 'datapath_type', 'fail_mode', 'protocols').split() == [
            'netdev', 'secure', '[OpenFlow13]']
        assert vsctl('get', 'bridge', 'tovsdb-a', 'other_config:datapath-id') == '"00000000000000fe"'
        assert vsctl('get-controller', 'tovsdb-b') == 'tcp:127.0.0.1:6999'
        assert vsctl('--timeout=10', 'wait-until', 'interface', 'tovsdb-a-p1', 'ofport=7') == ''
        assert vsctl('get', 'interface', 'tovsdb-b-p1', 'bfd:min_tx') == '"100"'
        # the bridge's own internal port, as add-br makes it
        assert vsctl('get', 'interface', 'tovsdb-a', 'type') == 'internal'
        with pytest.raises(ovsdb.OvsdbError, match='tovsdb-a'):
            ovsdb.add_bridges([bridge('tovsdb-a')])  # names are unique
    finally:
        for fd in held:
            os.close(fd)
        assert ovsdb.delete_bridges(names + ['tovsdb-none']) == names
    assert not set(names) & set(vsctl('list-br').split())
    assert 'tovsdb-a-p1' not in vsctl('--columns=name', 'list', 'interface')


def test_an_unreachable_database_is_a_clear_error():
    with pytest.raises(ovsdb.OvsdbError, match='cannot reach ovsdb-server at unix:/nonexistent.sock'):
        ovsdb.transact([], remote='unix:/nonexistent.sock')
