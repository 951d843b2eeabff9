"""Compile a switch's two-level table into the OpenFlow 1.3 pipeline.

  table 0  ARP -> controller (answered there, never flooded); IPv4 -> table 1
  table 1  first-level prefixes, priority 1000 + prefix length. Terminating:
           dec_ttl, output. Non-terminating: write the suffix table's id to
           metadata, goto table 2.
  table 2  second-level suffixes: metadata + right-handed ipv4_dst mask,
           priority 1000 + suffix length.
  every table ends in a priority-0 drop whose counters count the misses.

A matching prefix always wins over a suffix (the TCAM rule of section 3.4)
because table 2 is only reached through a non-terminating prefix.

A suffix whose table lists failover ports outputs through a fast-failover
group: its own port first, then the other usable up-ports in cyclic order,
each bucket watching its port, so a switch repairs a dead up-link in the data
plane before the controller hears of it (issue 4, "local repair first").
"""
import zlib

from controller.openflow.rules import (
    DEC_TTL, ETH_TYPE_ARP, ETH_TYPE_IP, PRIORITY_ARP, PRIORITY_ROUTE_BASE,
    PRIORITY_TO_ROUTING, TABLE_FLOWS, TABLE_PREFIX, TABLE_SUFFIX, TO_CONTROLLER,
    FlowRule, Group, miss_drop, output)
from controller.fattree.twolevel import left_mask, right_mask, int_to_ip
from topologies.model import ofport

METADATA_MASK = 0xffffffff


def housekeeping_rules():
    """The fixed rules every switch carries besides its routes."""
    return [
        FlowRule(TABLE_FLOWS, PRIORITY_ARP, (('eth_type', ETH_TYPE_ARP),), (TO_CONTROLLER,)),
        FlowRule(TABLE_FLOWS, PRIORITY_TO_ROUTING, (('eth_type', ETH_TYPE_IP),),
                 goto_table=TABLE_PREFIX),
        miss_drop(TABLE_FLOWS), miss_drop(TABLE_PREFIX), miss_drop(TABLE_SUFFIX),
    ]


def _masked(ip, mask):
    return (ip, int_to_ip(mask))


def suffix_table_ids(table):
    """Metadata id of each second-level table (1, 2, ... in definition order)."""
    return {name: index for index, name in enumerate(table.suffix_tables, start=1)}


def prefix_match(prefix):
    """The match of a first-level prefix: IPv4 with a left-handed mask."""
    if not prefix.length:
        return (('eth_type', ETH_TYPE_IP),)
    return (('eth_type', ETH_TYPE_IP), ('ipv4_dst', _masked(prefix.network, left_mask(prefix.length))))


def prefix_rules(table):
    ids = suffix_table_ids(table)
    rules = []
    for p in table.prefixes:
        match = prefix_match(p)
        priority = PRIORITY_ROUTE_BASE + p.length
        if p.terminating:
            rules.append(FlowRule(TABLE_PREFIX, priority, match, (DEC_TTL, output(ofport(p.port)))))
        else:
            rules.append(FlowRule(TABLE_PREFIX, priority, match,
                                  write_metadata=(ids[p.suffix_table], METADATA_MASK),
                                  goto_table=TABLE_SUFFIX))
    return rules


def failover_buckets(port, failover):
    """Ports of a fast-failover group: ``port`` first, then the others of
    ``failover`` in cyclic order after it."""
    if port not in failover:
        return (port,)
    start = failover.index(port)
    return failover[start:] + failover[:start]


def group_id(ports):
    """A group id derived from its content, so the same buckets keep the same
    id whatever else changes on the switch (updates stay small diffs)."""
    return zlib.crc32(repr(ports).encode()) & 0x7fffffff or 1


def _suffix_output(port, failover):
    ports = failover_buckets(port, failover)
    if len(ports) == 1:
        return output(ofport(port)), None
    group = Group(group_id(ports), 'fast_failover',
                  tuple((ofport(p), (DEC_TTL, output(ofport(p)))) for p in ports))
    return ('group', group.group_id), group


def suffix_rules_and_groups(table):
    rules, groups = [], {}
    for name, table_id in suffix_table_ids(table).items():
        for s in table.suffix_tables[name]:
            match = (('eth_type', ETH_TYPE_IP), ('metadata', (table_id, METADATA_MASK)),
                     ('ipv4_dst', _masked(s.value, right_mask(s.length))))
            action, group = _suffix_output(s.port, table.failover.get(name, ()))
            if group is not None:
                if groups.get(group.group_id, group) != group:
                    raise ValueError('%s: group id collision %d' % (table.switch, group.group_id))
                groups[group.group_id] = group
                rules.append(FlowRule(TABLE_SUFFIX, PRIORITY_ROUTE_BASE + s.length, match, (action,)))
            else:
                rules.append(FlowRule(TABLE_SUFFIX, PRIORITY_ROUTE_BASE + s.length, match,
                                      (DEC_TTL, action)))
    return rules, sorted(groups.values(), key=lambda g: g.group_id)


def compile_table(table):
    """(rules, groups) of one switch: housekeeping, prefixes, suffixes and the
    fast-failover groups the suffixes output through."""
    suffixes, groups = suffix_rules_and_groups(table)
    return housekeeping_rules() + prefix_rules(table) + suffixes, groups


def rule_counts(table):
    """(first-level prefixes, second-level suffixes, housekeeping) rule counts."""
    return (len(prefix_rules(table)), len(suffix_rules_and_groups(table)[0]),
            len(housekeeping_rules()))
