"""A whole fabric's bridges added or removed in one OVSDB transaction
(RFC 7047, sent to ovsdb-server with Open vSwitch's own Python library).

Why not ovs-vsctl: it re-reads and re-checks the whole database for every
command, and ovs-vswitchd reconfigures after every transaction it commits;
at k=16 (320 bridges, 5,120 ports) the ovs-vsctl batches took 160 s where
one transaction takes seconds and ovs-vswitchd reconfigures once.

``Bridge`` describes a bridge as Mininet's OVSSwitch would make it (its
local internal port, controllers, options); ``add_bridges_ops`` is the
transaction, pure data, unit tested; ``transact`` sends it.
"""
import collections
import os
import select

DB_SOCKET = 'unix:/var/run/openvswitch/db.sock'
DATABASE = 'Open_vSwitch'

# ports: [(interface name, ofport_request, {Interface column: value})], a
# dict value being an OVSDB map (bfd, options)
Bridge = collections.namedtuple('Bridge', 'name datapath_type fail_mode protocols other_config controllers '
                                          'max_backoff ports')


class OvsdbError(Exception):
    pass


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


def transact(ops, remote=DB_SOCKET):
    """Send one transaction; the result of each operation, or OvsdbError
    naming the first operation that failed."""
    import ovs.jsonrpc
    import ovs.poller
    import ovs.stream
    # The library waits with select() unless told otherwise (its own comment:
    # replace SelectPoll by select.poll when not under eventlet); select()
    # cannot watch descriptors >= 1024 and a k=16 fabric's process holds
    # thousands (a pty per node).
    ovs.poller.SelectPoll = select.poll
    error, stream = ovs.stream.Stream.open_block(ovs.stream.Stream.open(remote))
    if error:
        raise OvsdbError('cannot reach ovsdb-server at %s: %s (is Open vSwitch running?)'
                         % (remote, os.strerror(error)))
    connection = ovs.jsonrpc.Connection(stream)
    try:
        request = ovs.jsonrpc.Message.create_request('transact', [DATABASE] + list(ops))
        error, reply = connection.transact_block(request)
    finally:
        connection.close()
    if error:
        raise OvsdbError('ovsdb-server at %s: %s' % (remote, os.strerror(error)))
    if reply.error is not None:
        raise OvsdbError('ovsdb-server refused the transaction: %s' % (reply.error,))
    ops = list(ops)
    for index, result in enumerate(reply.result):
        if result and 'error' in result:
            op = ops[index] if index < len(ops) else {'op': 'commit', 'table': ''}
            raise OvsdbError('ovsdb transaction failed at %s %s: %s: %s' % (
                op['op'], op['table'], result['error'], result.get('details', '')))
    return reply.result


def bridge_uuids(names, remote=DB_SOCKET):
    """{bridge name: uuid} of those of ``names`` that exist."""
    result = transact([{'op': 'select', 'table': 'Bridge', 'where': [], 'columns': ['name', '_uuid']}],
                      remote)
    wanted = set(names)
    return {row['name']: row['_uuid'][1] for row in result[0]['rows'] if row['name'] in wanted}


def add_bridges(bridges, remote=DB_SOCKET):
    transact(add_bridges_ops(bridges), remote)


def delete_bridges(names, remote=DB_SOCKET):
    """Remove the bridges of ``names`` that exist, in one transaction."""
    uuids = bridge_uuids(names, remote)
    if uuids:
        transact(delete_bridges_ops(uuids.values()), remote)
    return sorted(uuids)
