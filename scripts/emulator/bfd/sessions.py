"""BFD sessions of a running fabric's switch links: enabled, read and
awaited on every server its switches run on (``sites``: scripts.emulator.faults)."""
import json
import time

from scripts.emulator.faults import LOCAL, FaultError
from topologies.mininet_topo import interface_name


def enable(model, column, sites=LOCAL):
    """Open vSwitch BFD on both ends of every switch-to-switch link, one
    transaction per server; ``column``: scripts.emulator.bfd.policy.interface_options."""
    cmds = {}
    for link in model.switch_links():
        for node, port in ((link.node_a, link.port_a), (link.node_b, link.port_b)):
            cmds.setdefault(sites.server_of(node), ['ovs-vsctl', '--timeout=60']).extend(
                ['--', 'set', 'interface', interface_name(model, node, port)]
                + ['bfd:%s=%s' % item for item in column.items()])
    for server, cmd in cmds.items():
        sites.run(server, *cmd)


def status(model, sites=LOCAL):
    """{interface: its bfd_status column (state, flap_count, ...)} for every
    switch-to-switch interface OVS has."""
    statuses = {}
    for server in sites.servers():
        out = sites.run(server, 'ovs-vsctl', '--timeout=30', '-f', 'json', '--columns=name,bfd_status',
                        'list', 'interface').stdout
        for name, (_, status) in json.loads(out)['data']:
            statuses[name] = dict(status)
    wanted = {interface_name(model, n, p) for l in model.switch_links()
              for n, p in ((l.node_a, l.port_a), (l.node_b, l.port_b))}
    return {name: status for name, status in statuses.items() if name in wanted}


def states(model, sites=LOCAL):
    """{interface: BFD state} for every switch-to-switch interface."""
    return {name: status.get('state') for name, status in status(model, sites).items()}


def flaps(model, sites=LOCAL):
    """Changes of BFD's forwarding state OVS has counted (flap_count: down
    and up again are two) over every switch-to-switch interface, summed."""
    return sum(int(status.get('flap_count', 0)) for status in status(model, sites).values())


def wait_up(model, timeout=30, sites=LOCAL):
    deadline = time.time() + timeout
    while True:
        now = states(model, sites)
        # an interface missing from OVS counts as down, or no bridges at all would pass
        down = sorted(name for name, state in now.items() if state != 'up') + (
            ['%d missing' % (2 * len(model.switch_links()) - len(now))]
            if len(now) < 2 * len(model.switch_links()) else [])
        if not down:
            return
        if time.time() > deadline:
            raise FaultError('BFD not up on %d interfaces after %ds: %s' % (len(down), timeout, down[:8]))
        time.sleep(0.2)
