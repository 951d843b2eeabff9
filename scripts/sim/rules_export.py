"""The rules and groups the fat-tree controller installs for a scheme and a
failure set, exported for the simulator's switches (scripts/sim/ns3/of_pipeline.h).

``export_switches`` computes them with the very code the Ryu app calls
(controller.fattree.routing_app.rules_for/groups_for: the compiled
two-level tables under the failures, the ARP responder, the scheme's
table-0 state; the non-blocking reference's rules for scheme
'nonblocking'); nothing here routes. ``write_export`` writes them as text
that C++ reads without a JSON library.

Format: one record per line, space-separated tokens, '#' starts a comment.
Numbers are decimal or 0x-hex; addresses are written as integers (IPv4 as
32 bits, MAC as 48). Ports are the model's port numbers (topologies.model:
OpenFlow port - 1) everywhere: matches, actions, watch ports, links.

    scheme NAME
    failed_link A B                    the failure set the rules were computed for
    failed_switch S
    node NAME ROLE IPV4                every node (with ``topo``)
    link A PORT_A B PORT_B             every cable (with ``topo``)
    switch NAME                        the records below belong to it
    group ID KIND [timeout_us=US] {bucket WATCH ACTION...}...
                                       KIND select | fast_failover | all |
                                       flowlet (no OpenFlow counterpart: a
                                       random live bucket per flowlet, a
                                       flowlet ending after timeout_us);
                                       WATCH a port or '-'
    flow TABLE PRIORITY COOKIE [FIELD=VALUE[/MASK]]... actions [ACTION]...
                                       [write_metadata=VALUE/MASK] [goto=TABLE]

FIELD is an OXM name (in_port eth_type eth_src eth_dst ipv4_src ipv4_dst
ip_proto tcp_src tcp_dst udp_src udp_dst metadata arp_op arp_spa arp_tpa
arp_sha arp_tha reg0). ACTION is output=PORT, group=ID, dec_ttl,
controller, in_port, set_field=FIELD:VALUE or move=SRC:DST:NBITS (0 bits:
the whole field). A flow with no action and no goto drops.
"""
import logging
import time

from controller.fattree.failover import expand_failures, tables_with_failures
from controller.fattree.pipeline import compile_table, fabric_arp_rules, nonblocking_rules
from controller.fattree.scheme_parameters import scheme_config
from controller.fattree.scheme_strategies import SCHEMES
from topologies.addressing import ip_to_int
from topologies.model import model_port

NONBLOCKING = 'nonblocking'
SCHEME_CHOICES = (NONBLOCKING,) + tuple(SCHEMES)


def export_switches(topo, scheme, failed_links=(), failed_switches=(), **scheme_params):
    """{switch: {'rules': [FlowRule], 'groups': [Group]}} as the controller
    installs them for ``scheme`` once it knows of the failures (pairs of
    switch names, switch names). The rules are the controller's own values
    (OpenFlow port numbers); write_export turns them into model ports.
    Scheme 'nonblocking' takes a topologies.nonblocking model and no failures."""
    if scheme == NONBLOCKING:
        if failed_links or failed_switches:
            raise ValueError('the non-blocking reference has no failures to route around')
        return {s.name: {'rules': nonblocking_rules(topo), 'groups': []} for s in topo.switches}
    if scheme not in SCHEMES:
        raise ValueError('unknown scheme %r; choose one of %s' % (scheme, ', '.join(SCHEME_CHOICES)))
    conf = scheme_config(dict(scheme_params, scheme=scheme), simulated=True)
    strategy, tables = scheme_strategy(topo, conf, time.monotonic, failed_links, failed_switches)
    export, arp_rules = {}, fabric_arp_rules(topo)
    for name, table in tables.items():
        rules, groups = switch_state(name, compile_table(table), arp_rules[name], strategy)
        export[name] = {'rules': rules, 'groups': groups}
    return export


def switch_state(name, compiled, arp_rules, strategy):
    """(rules, groups) of switch ``name`` as the app's rules_for and
    groups_for put them together: its compiled two-level table
    (compile_table's (rules, groups)), its ARP rules, the scheme's."""
    rules, groups = compiled
    return rules + arp_rules + strategy.rules(name), groups + strategy.groups(name)


def scheme_strategy(topo, conf, clock, failed_links=(), failed_switches=(), log=None):
    """(the strategy the app builds for ``conf``'s scheme (scheme_config),
    told of the failures as the app tells it; every switch's two-level
    tables under them). ``clock`` is the strategy's time in seconds."""
    failed = expand_failures(topo, failed_links, failed_switches)
    tables = tables_with_failures(topo, failed)
    strategy = SCHEMES[conf['scheme']](topo, conf, log or logging.getLogger('dcfabric.sim'), clock)
    if failed:
        strategy.links_changed(failed, tables)
    return strategy, tables


def _number(field, value):
    if field == 'in_port':
        return model_port(value)
    if isinstance(value, str):
        if '.' in value:
            return ip_to_int(value)
        if ':' in value:
            return int(value.replace(':', ''), 16)
    return int(value)


def _value(field, value):
    if isinstance(value, tuple):
        return '%#x/%#x' % (_number(field, value[0]), _number(field, value[1]))
    return '%#x' % _number(field, value)


def _action(action):
    kind = action[0]
    if kind == 'output':
        return 'output=%d' % model_port(action[1])
    if kind == 'group':
        return 'group=%d' % action[1]
    if kind == 'set_field':
        return 'set_field=%s:%s' % (action[1], _value(action[1], action[2]))
    if kind == 'move':
        _, src, dst, n_bits = action
        return 'move=%s:%s:%d' % (src, dst, n_bits or 0)
    if kind in ('dec_ttl', 'controller', 'in_port'):
        return kind
    raise ValueError('action %r has no export' % (action,))


def rule_line(rule):
    """One FlowRule as a ``flow`` record (also what a run-time flow-mod sends)."""
    tokens = ['flow', str(rule.table), str(rule.priority), '%#x' % rule.cookie]
    tokens += ['%s=%s' % (field, _value(field, value)) for field, value in rule.match]
    tokens.append('actions')
    tokens += [_action(a) for a in rule.actions]
    if rule.write_metadata is not None:
        tokens.append('write_metadata=%#x/%#x' % rule.write_metadata)
    if rule.goto_table is not None:
        tokens.append('goto=%d' % rule.goto_table)
    return ' '.join(tokens)


def group_line(group):
    """One Group as a ``group`` record."""
    tokens = ['group', str(group.group_id), group.kind]
    if group.flowlet_timeout_us is not None:
        tokens.append('timeout_us=%g' % group.flowlet_timeout_us)
    for watch_port, actions in group.buckets:
        tokens += ['bucket', '-' if watch_port is None else str(model_port(watch_port))]
        tokens += [_action(a) for a in actions]
    return ' '.join(tokens)


def export_lines(export, topo=None, scheme=None, failed_links=(), failed_switches=()):
    """The records of an export (see the module docstring), in order."""
    lines = ['# dcfabric OpenFlow export: ports are model ports']
    if scheme is not None:
        lines.append('scheme %s' % scheme)
    lines += ['failed_link %s %s' % tuple(link) for link in failed_links]
    lines += ['failed_switch %s' % name for name in failed_switches]
    if topo is not None:
        lines += ['node %s %s %s' % (n.name, n.role, n.ip) for n in topo.nodes.values()]
        lines += ['link %s %d %s %d' % (l.node_a, l.port_a, l.node_b, l.port_b) for l in topo.links]
    for name, state in export.items():
        lines.append('switch %s' % name)
        lines += [group_line(g) for g in state['groups']]
        lines += [rule_line(r) for r in state['rules']]
    return lines


def write_export(export, path, **header):
    """Write ``export`` (export_switches) to ``path``; ``header`` takes
    export_lines' topo, scheme, failed_links and failed_switches."""
    with open(path, 'w') as out:
        out.write('\n'.join(export_lines(export, **header)) + '\n')
