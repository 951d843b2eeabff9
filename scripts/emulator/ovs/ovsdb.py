"""A whole fabric's bridges added or removed in one OVSDB transaction
(RFC 7047 JSON-RPC on ovsdb-server's socket).

Why not ovs-vsctl: it re-reads and re-checks the whole database for every
command, and ovs-vswitchd reconfigures after every transaction it commits;
at k=16 (320 bridges, 5,120 ports) the ovs-vsctl batches took 160 s where
one transaction takes seconds and ovs-vswitchd reconfigures once.

``Bridge`` describes a bridge as Mininet's OVSSwitch would make it (its
local internal port, controllers, options); ``add_bridges_ops`` is the
transaction, pure data, unit tested; ``transact`` sends it.
"""
import collections
import json
import os
import socket
import time

DATABASE = 'Open_vSwitch'

# ports: [(interface name, ofport_request, {Interface column: value})], a
# dict value being an OVSDB map (bfd, options); inactivity_probe: ms a
# controller may stay silent before the switch drops the connection (None:
# Open vSwitch's 5 s)
Bridge = collections.namedtuple('Bridge', 'name datapath_type fail_mode protocols other_config controllers '
                                          'max_backoff ports inactivity_probe', defaults=(None,))


class OvsdbError(Exception):
    pass


def default_remote():
    """ovsdb-server's socket where ovs-vsctl looks for it: under $OVS_RUNDIR
    when set (scripts/emulator/ovs/private_ovs.sh sets it for a private Open vSwitch)."""
    return 'unix:%s/db.sock' % os.environ.get('OVS_RUNDIR', '/var/run/openvswitch')


def _map(pairs):
    return ['map', sorted([str(k), str(v)] for k, v in pairs.items())]


def _set(items):
    return ['set', list(items)]


def add_bridges_ops(bridges):
    """The operations of one transaction that creates every bridge of
    ``bridges`` with its ports, interfaces and controllers and adds them
    to the switch's bridge set."""
    ops, bridge_refs = [], []

    def insert(table, row, name):
        ops.append({'op': 'insert', 'table': table, 'row': row, 'uuid-name': name})
        return ['named-uuid', name]

    for b, bridge in enumerate(bridges):
        local = insert('Interface', {'name': bridge.name, 'type': 'internal'}, 'b%di' % b)
        port_refs = [insert('Port', {'name': bridge.name, 'interfaces': local}, 'b%dp' % b)]
        for p, (intf, ofport, columns) in enumerate(bridge.ports):
            row = {'name': intf, 'ofport_request': ofport}
            row.update((column, _map(value) if isinstance(value, dict) else value)
                       for column, value in columns.items())
            interface = insert('Interface', row, 'b%di%d' % (b, p))
            port_refs.append(insert('Port', {'name': intf, 'interfaces': interface}, 'b%dp%d' % (b, p)))
        controller_refs = []
        for c, target in enumerate(bridge.controllers):
            row = {'target': target}
            if bridge.max_backoff:
                row['max_backoff'] = bridge.max_backoff
            if bridge.inactivity_probe:
                row['inactivity_probe'] = bridge.inactivity_probe
            controller_refs.append(insert('Controller', row, 'b%dc%d' % (b, c)))
        bridge_refs.append(insert('Bridge', {
            'name': bridge.name, 'ports': _set(port_refs), 'controller': _set(controller_refs),
            'datapath_type': bridge.datapath_type, 'fail_mode': bridge.fail_mode,
            'protocols': _set(bridge.protocols), 'other_config': _map(bridge.other_config)}, 'b%d' % b))
    ops.append({'op': 'mutate', 'table': 'Open_vSwitch', 'where': [],
                'mutations': [['bridges', 'insert', _set(bridge_refs)]]})
    return ops


def delete_bridges_ops(uuids):
    """Removing bridges from the switch's set is enough: their ports,
    interfaces and controllers are no longer referenced and go with them."""
    return [{'op': 'mutate', 'table': 'Open_vSwitch', 'where': [],
             'mutations': [['bridges', 'delete', _set(['uuid', u] for u in uuids)]]}]


def _unix_path(remote):
    if not remote.startswith('unix:'):
        raise OvsdbError('only unix: ovsdb remotes are supported here, not %r' % remote)
    return remote[len('unix:'):]


def transact(ops, remote=None, timeout_s=120):
    """Send one transaction (JSON-RPC over ovsdb-server's socket, RFC 7047
    4.1.3) and return the result of each operation, or raise OvsdbError
    naming the first operation that failed. A blocking socket on purpose:
    Open vSwitch's Python library waits with select(), which cannot watch
    the descriptors >= 1024 a k=16 fabric's process holds."""
    ops = list(ops)
    remote = remote or default_remote()
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(timeout_s)
        connection.connect(_unix_path(remote))
    except OSError as error:
        raise OvsdbError('cannot reach ovsdb-server at %s: %s (is Open vSwitch running?)'
                         % (remote, error.strerror or error))
    with connection:
        try:
            connection.sendall(json.dumps({'method': 'transact', 'params': [DATABASE] + ops,
                                           'id': 0}).encode())
            reply = _reply(connection, 0)
        except OSError as error:
            raise OvsdbError('ovsdb-server at %s: %s' % (remote, error))
    if reply.get('error') is not None:
        raise OvsdbError('ovsdb-server refused the transaction: %s' % (reply['error'],))
    for index, result in enumerate(reply['result']):
        if result and 'error' in result:
            op = ops[index] if index < len(ops) else {'op': 'commit', 'table': ''}
            raise OvsdbError('ovsdb transaction failed at %s %s: %s: %s' % (
                op['op'], op['table'], result['error'], result.get('details', '')))
    return reply['result']


def _reply(connection, request_id):
    """Read messages until the reply to ``request_id``, answering the
    server's echo (inactivity probe) requests meanwhile."""
    decoder, buffer = json.JSONDecoder(), ''
    while True:
        chunk = connection.recv(1 << 20)
        if not chunk:
            raise OvsdbError('ovsdb-server closed the connection before replying')
        buffer += chunk.decode()
        while buffer.strip():
            try:
                message, end = decoder.raw_decode(buffer.lstrip())
            except ValueError:
                break  # incomplete: read more
            buffer = buffer.lstrip()[end:]
            if message.get('method') == 'echo':
                connection.sendall(json.dumps({'id': message['id'], 'result': message['params'],
                                               'error': None}).encode())
            elif message.get('id') == request_id:
                return message


def bridge_uuids(names, remote=None):
    """{bridge name: uuid} of those of ``names`` that exist."""
    result = transact([{'op': 'select', 'table': 'Bridge', 'where': [], 'columns': ['name', '_uuid']}],
                      remote)
    wanted = set(names)
    return {row['name']: row['_uuid'][1] for row in result[0]['rows'] if row['name'] in wanted}


def wait_applied(timeout_s, remote=None):
    """Return once ovs-vswitchd has applied every transaction committed so
    far, as ovs-vsctl waits: bump next_cfg, then watch cur_cfg reach it."""
    bumped = transact([{'op': 'mutate', 'table': 'Open_vSwitch', 'where': [],
                        'mutations': [['next_cfg', '+=', 1]]},
                       {'op': 'select', 'table': 'Open_vSwitch', 'where': [], 'columns': ['next_cfg']}], remote)
    target = bumped[1]['rows'][0]['next_cfg']
    deadline = time.monotonic() + timeout_s
    while True:
        current = transact([{'op': 'select', 'table': 'Open_vSwitch', 'where': [], 'columns': ['cur_cfg']}],
                           remote)[0]['rows'][0]['cur_cfg']
        if current >= target:
            return
        if time.monotonic() > deadline:
            raise OvsdbError('ovs-vswitchd did not apply the configuration within %d s (is it running?)'
                             % timeout_s)
        time.sleep(0.1)


def add_bridges(bridges, remote=None):
    transact(add_bridges_ops(bridges), remote)


def delete_bridges(names, remote=None):
    """Remove the bridges of ``names`` that exist, in one transaction."""
    uuids = bridge_uuids(names, remote)
    if uuids:
        transact(delete_bridges_ops(uuids.values()), remote)
    return sorted(uuids)
