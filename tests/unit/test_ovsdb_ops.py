"""One OVSDB transaction for a fabric's bridges: what it inserts and how
rows refer to each other (scripts/emulator/ovs/ovsdb.py)."""
from scripts.emulator.ovs.ovsdb import Bridge, add_bridges_ops, default_remote, delete_bridges_ops


def bridge(name, ports):
    return Bridge(name=name, datapath_type='netdev', fail_mode='secure', protocols=['OpenFlow13'],
                  other_config={'datapath-id': '0000000000000001', 'dp-desc': name},
                  controllers=['tcp:127.0.0.1:6653'], max_backoff=1000, ports=ports)


def test_bridges_ports_interfaces_and_controllers_in_one_transaction():
    bfd = {'enable': 'true', 'min_tx': 100, 'min_rx': 100, 'mult': 3}
    ops = add_bridges_ops([bridge('e0_0', [('e0_0-eth1', 1, {}), ('e0_0-eth3', 3, {'bfd': bfd})]),
                           bridge('a0_2', [])])
    inserts = [op for op in ops if op['op'] == 'insert']
    by_name = {op['uuid-name']: op for op in inserts}
    assert [op['table'] for op in inserts] == [
        'Interface', 'Port', 'Interface', 'Port', 'Interface', 'Port', 'Controller', 'Bridge',
        'Interface', 'Port', 'Controller', 'Bridge']
    e0_0 = by_name['b0']['row']
    assert e0_0['name'] == 'e0_0' and e0_0['datapath_type'] == 'netdev' and e0_0['fail_mode'] == 'secure'
    assert e0_0['protocols'] == ['set', ['OpenFlow13']]
    assert e0_0['other_config'] == ['map', [['datapath-id', '0000000000000001'], ['dp-desc', 'e0_0']]]
    # the bridge's own internal port comes first, then one port per interface
    ports = [by_name[ref[1]]['row'] for ref in e0_0['ports'][1]]
    assert [p['name'] for p in ports] == ['e0_0', 'e0_0-eth1', 'e0_0-eth3']
    interfaces = [by_name[p['interfaces'][1]]['row'] for p in ports]
    assert interfaces[0] == {'name': 'e0_0', 'type': 'internal'}
    assert interfaces[1] == {'name': 'e0_0-eth1', 'ofport_request': 1}
    assert interfaces[2] == {'name': 'e0_0-eth3', 'ofport_request': 3, 'bfd': [
        'map', [['enable', 'true'], ['min_rx', '100'], ['min_tx', '100'], ['mult', '3']]]}
    patch = add_bridges_ops([bridge('x', [('x-p1', 1, {'type': 'patch', 'options': {'peer': 'y-p1'}})])])
    assert patch[2]['row'] == {'name': 'x-p1', 'ofport_request': 1, 'type': 'patch',
                               'options': ['map', [['peer', 'y-p1']]]}
    controller = by_name[e0_0['controller'][1][0][1]]['row']
    assert controller == {'target': 'tcp:127.0.0.1:6653', 'max_backoff': 1000}
    # last: both bridges join the switch's bridge set
    assert ops[-1] == {'op': 'mutate', 'table': 'Open_vSwitch', 'where': [],
                       'mutations': [['bridges', 'insert', ['set', [['named-uuid', 'b0'], ['named-uuid', 'b1']]]]]}
    assert len({op['uuid-name'] for op in inserts}) == len(inserts)


def test_deleting_bridges_removes_them_from_the_switch_set():
    assert delete_bridges_ops(['u1', 'u2']) == [{
        'op': 'mutate', 'table': 'Open_vSwitch', 'where': [],
        'mutations': [['bridges', 'delete', ['set', [['uuid', 'u1'], ['uuid', 'u2']]]]]}]


def test_the_database_is_found_where_ovs_vsctl_finds_it(monkeypatch):
    monkeypatch.delenv('OVS_RUNDIR', raising=False)
    assert default_remote() == 'unix:/var/run/openvswitch/db.sock'
    monkeypatch.setenv('OVS_RUNDIR', '/tmp/private-ovs')  # scripts/emulator/ovs/private_ovs.sh
    assert default_remote() == 'unix:/tmp/private-ovs/db.sock'


def test_the_controller_gets_the_inactivity_probe_asked_for():
    ops = add_bridges_ops([bridge('e0_0', [])._replace(inactivity_probe=30000)])
    controller = next(op['row'] for op in ops if op['op'] == 'insert' and op['table'] == 'Controller')
    assert controller == {'target': 'tcp:127.0.0.1:6653', 'max_backoff': 1000, 'inactivity_probe': 30000}
