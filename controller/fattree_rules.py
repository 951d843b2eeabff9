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
"""
from controller.flowrules import (
    DEC_TTL, ETH_TYPE_ARP, ETH_TYPE_IP, PRIORITY_ARP, PRIORITY_ROUTE_BASE,
    PRIORITY_TO_ROUTING, TABLE_FLOWS, TABLE_PREFIX, TABLE_SUFFIX, TO_CONTROLLER,
    FlowRule, miss_drop, output)
from controller.twolevel import left_mask, right_mask, int_to_ip
from topologies.fattree import ip_to_int
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


def prefix_rules(table):
    ids = suffix_table_ids(table)
    rules = []
    for p in table.prefixes:
        match = [('eth_type', ETH_TYPE_IP)]
        if p.length:
            match.append(('ipv4_dst', _masked(p.network, left_mask(p.length))))
        priority = PRIORITY_ROUTE_BASE + p.length
        if p.terminating:
            rules.append(FlowRule(TABLE_PREFIX, priority, tuple(match), (DEC_TTL, output(ofport(p.port)))))
        else:
            rules.append(FlowRule(TABLE_PREFIX, priority, tuple(match),
                                  write_metadata=(ids[p.suffix_table], METADATA_MASK),
                                  goto_table=TABLE_SUFFIX))
    return rules


def suffix_rules(table):
    rules = []
    for name, table_id in suffix_table_ids(table).items():
        for s in table.suffix_tables[name]:
            match = (('eth_type', ETH_TYPE_IP), ('metadata', (table_id, METADATA_MASK)),
                     ('ipv4_dst', _masked(s.value, right_mask(s.length))))
            rules.append(FlowRule(TABLE_SUFFIX, PRIORITY_ROUTE_BASE + s.length, match,
                                  (DEC_TTL, output(ofport(s.port)))))
    return rules


def compile_table(table):
    """All flow rules of one switch: housekeeping, prefixes, suffixes."""
    return housekeeping_rules() + prefix_rules(table) + suffix_rules(table)


def rule_counts(table):
    """(first-level prefixes, second-level suffixes, housekeeping) rule counts."""
    return (len(prefix_rules(table)), len(suffix_rules(table)), len(housekeeping_rules()))
