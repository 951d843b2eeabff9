"""A switch's installed state read back from ``ovs-ofctl -O OpenFlow13
--no-stats dump-flows`` and ``dump-groups`` as the plain data of
controller.openflow.rules (the inverse of ``to_ofctl``), so that what a
switch holds can be compared with what was computed, and walked with
controller.openflow.lookup without trusting the controller. Pure: text in,
FlowRule and Group out.

Matches come back as sorted integer (field, value, mask) terms: OVS prints a
match its own way (``ip`` for eth_type 0x800, ``nw_dst=10.0.0.0/16``), so
two rules are compared by what they match, not by how they were written.
Actions come back as rules' action tuples for the ones routing uses
(output, group, dec_ttl, goto_table, write_metadata); any other action is
kept as its text, ('raw', text).
"""
import re

from controller.openflow.rules import ETH_TYPE_ARP, ETH_TYPE_IP, FlowRule, Group
from topologies.addressing import ip_to_int

_ALL_BITS = 0xffffffffffffffff

# ovs-ofctl's shorthands for a protocol: (eth_type, ip_proto)
_SHORTHANDS = {'ip': (ETH_TYPE_IP, None), 'arp': (ETH_TYPE_ARP, None), 'tcp': (ETH_TYPE_IP, 6),
               'udp': (ETH_TYPE_IP, 17), 'icmp': (ETH_TYPE_IP, 1)}
_FIELDS = {'dl_type': 'eth_type', 'nw_dst': 'ipv4_dst', 'nw_src': 'ipv4_src', 'nw_proto': 'ip_proto',
           'in_port': 'in_port', 'metadata': 'metadata', 'arp_op': 'arp_op', 'arp_tpa': 'arp_tpa',
           'arp_spa': 'arp_spa', 'tp_dst': 'tcp_dst', 'tp_src': 'tcp_src', 'tcp_dst': 'tcp_dst',
           'tcp_src': 'tcp_src', 'udp_dst': 'udp_dst', 'udp_src': 'udp_src'}
_IP_FIELDS = ('ipv4_dst', 'ipv4_src', 'arp_tpa', 'arp_spa')
_SKIPPED = ('cookie', 'duration', 'n_packets', 'n_bytes', 'idle_age', 'hard_age', 'reset_counts',
            'idle_timeout', 'hard_timeout', 'send_flow_rem', 'check_overlap')


class DumpError(ValueError):
    """A dump line this reader does not understand."""


def _split_top(text):
    """``text`` split at commas outside parentheses and brackets."""
    parts, depth, current = [], 0, ''
    for char in text:
        if char in '([':
            depth += 1
        elif char in ')]':
            depth -= 1
        if char == ',' and depth == 0:
            parts.append(current)
            current = ''
        else:
            current += char
    if current:
        parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def _number(text):
    return int(text, 0)


def _ip_and_mask(text):
    address, _, mask = text.partition('/')
    if not mask:
        return ip_to_int(address), 0xffffffff
    if '.' in mask:
        return ip_to_int(address), ip_to_int(mask)
    length = int(mask)
    return ip_to_int(address), (0xffffffff << (32 - length)) & 0xffffffff


def _term(field, text):
    """One (field, value, mask) term in lookup's integer form."""
    if field in _IP_FIELDS:
        value, mask = _ip_and_mask(text)
        return field, value & mask, mask
    value, _, mask = text.partition('/')
    return field, _number(value), _number(mask) if mask else _ALL_BITS


def _action(text):
    kind, _, argument = text.partition(':')
    if kind == 'output' and argument.isdigit():
        return ('output', int(argument))
    if kind == 'group':
        return ('group', int(argument))
    if kind == 'dec_ttl' and not argument:
        return ('dec_ttl',)
    return ('raw', text)


def parse_flow(line):
    """(FlowRule, match terms) of one dump-flows line: the rule with its
    match left empty, and the match as sorted integer terms."""
    body, sep, actions = line.strip().partition(' actions=')
    if not sep:
        raise DumpError('no actions in flow %r' % line)
    table, priority, terms = 0, 32768, []
    for part in _split_top(body.replace(', ', ',')):
        name, has_value, value = part.partition('=')
        if name in _SKIPPED:
            continue
        if name == 'table':
            table = int(value)
        elif name == 'priority':
            priority = int(value)
        elif not has_value and name in _SHORTHANDS:
            eth_type, ip_proto = _SHORTHANDS[name]
            terms.append(('eth_type', eth_type, _ALL_BITS))
            if ip_proto is not None:
                terms.append(('ip_proto', ip_proto, _ALL_BITS))
        elif name in _FIELDS:
            terms.append(_term(_FIELDS[name], value))
        else:
            raise DumpError('unknown match field %r in flow %r' % (name, line))
    applied, write_metadata, goto_table = [], None, None
    for part in ([] if actions == 'drop' else _split_top(actions)):
        kind, _, argument = part.partition(':')
        if kind == 'goto_table':
            goto_table = int(argument)
        elif kind == 'write_metadata':
            value, _, mask = argument.partition('/')
            write_metadata = (_number(value), _number(mask) if mask else _ALL_BITS)
        else:
            applied.append(_action(part))
    rule = FlowRule(table, priority, (), tuple(applied), write_metadata, goto_table)
    return rule, tuple(sorted(terms))


def parse_flows(text):
    """[(FlowRule, match terms)] of a whole dump-flows output."""
    return [parse_flow(line) for line in text.splitlines() if 'actions=' in line]


def parse_group(line):
    """The Group of one dump-groups line. Buckets' watch ports come back
    (None when not watched); their actions as parse_flow reads them."""
    head, *buckets = line.strip().split('bucket=')
    fields = dict(part.split('=', 1) for part in _split_top(head) if '=' in part)
    try:
        group_id, kind = int(fields['group_id']), fields['type']
    except KeyError:
        raise DumpError('no group_id or type in group %r' % line) from None
    read = []
    for bucket in buckets:
        watch_port, actions = None, []
        for part in _split_top(bucket.rstrip(',')):
            if part.startswith('watch_port:'):
                watch_port = int(part.split(':', 1)[1])
            elif part.startswith('actions='):
                actions.append(_action(part[len('actions='):]))
            elif part.startswith(('bucket_id:', 'weight:', 'watch_group:')):
                continue
            else:
                actions.append(_action(part))
        read.append((watch_port, tuple(actions)))
    return Group(group_id, kind, tuple(read))


def parse_groups(text):
    return [parse_group(line) for line in text.splitlines() if 'group_id=' in line]


def comparable_rule(rule):
    """A computed FlowRule in the form parse_flow reads back: (rule with no
    match and the cookie dropped, match terms). Actions routing does not use
    are compared only by their kind (OVS spells them its own way)."""
    actions = tuple(a if a[0] in ('output', 'group', 'dec_ttl') else ('raw', a[0]) for a in rule.actions)
    return (FlowRule(rule.table, rule.priority, (), actions, rule.write_metadata, rule.goto_table),
            tuple(sorted(_computed_term(name, want) for name, want in rule.match)))


def _computed_term(name, want):
    value, mask = want if isinstance(want, tuple) else (want, None)
    if name in _IP_FIELDS:
        value, mask = ip_to_int(value), ip_to_int(mask) if mask else 0xffffffff
        return name, value & mask, mask
    return name, value, _ALL_BITS if mask is None else mask


def comparable_read(read):
    """A rule parse_flow read, in comparable_rule's form."""
    rule, terms = read
    actions = tuple(a if a[0] != 'raw' else ('raw', _raw_kind(a[1])) for a in rule.actions)
    return FlowRule(rule.table, rule.priority, (), actions, rule.write_metadata, rule.goto_table), terms


_RAW_KINDS = (('move:', 'move'), ('set_field:', 'set_field'), ('load:', 'set_field'),
              ('IN_PORT', 'in_port'), ('in_port', 'in_port'), ('CONTROLLER', 'controller'))


def _raw_kind(text):
    for start, kind in _RAW_KINDS:
        if text.startswith(start):
            return kind
    return text


def comparable_group(group):
    """A Group (computed or read) with one spelling of its kind."""
    kind = {'ff': 'fast_failover'}.get(group.kind, group.kind)
    return Group(group.group_id, kind, tuple(group.buckets))
