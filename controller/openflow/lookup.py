"""What an OpenFlow 1.3 switch holding a set of FlowRules does with a
packet, read from the rules themselves (tests check generated rules this
way instead of trusting the generator). Pure: no Ryu, no switch.

A packet is a dict of integer match fields (ipv4 addresses as integers,
``metadata`` starting at 0); matching is masked equality, highest priority
first, the OXM way.
"""
from functools import lru_cache

from topologies.addressing import ip_to_int

_ALL_BITS = 0xffffffffffffffff


@lru_cache(maxsize=None)
def match_terms(rule):
    """A rule's match as (field, value, mask) integer terms."""
    terms = []
    for name, want in rule.match:
        if name in ('ipv4_dst', 'ipv4_src'):
            terms.append((name,) + ipv4_term(want))
        else:
            value, mask = want if isinstance(want, tuple) else (want, _ALL_BITS)
            terms.append((name, value, mask))
    return tuple(terms)


def ipv4_term(want):
    """(value, mask) as integers of an IPv4 match as a rule writes it: a
    dotted quad, or a (dotted quad, dotted mask) pair."""
    value, mask = want if isinstance(want, tuple) else (want, None)
    return ip_to_int(value), ip_to_int(mask) if mask else 0xffffffff


def pipeline(rules):
    """{table: [(match terms, rule)], highest priority first}: a switch's
    rules prepared for ``rules_hit``."""
    tables = {}
    for rule in sorted(rules, key=lambda r: -r.priority):
        tables.setdefault(rule.table, []).append((match_terms(rule), rule))
    return tables


def rules_hit(tables, packet, first_table=0):
    """The rules a packet meets, table by table (write-metadata applied,
    goto followed), from ``first_table`` (see pipeline); a table that
    nothing matches ends the list with None. ``packet`` is updated."""
    return tables_walked(lambda table, packet: _first_match(tables.get(table, ()), packet), packet, first_table)


def _first_match(entries, packet):
    return next((candidate for terms, candidate in entries if matches(terms, packet)), None)


def matches(terms, packet):
    """Whether a packet has every field of ``terms`` (match_terms) under its mask."""
    return all(name in packet and packet[name] & mask == value for name, value, mask in terms)


def tables_walked(first_match, packet, first_table=0):
    """rules_hit with the rule a table gives a packet found by
    ``first_match(table, packet)`` (None: no match)."""
    hit, table = [], first_table
    while table is not None:
        rule = first_match(table, packet)
        hit.append(rule)
        if rule is None:
            break
        if rule.write_metadata is not None:
            value, mask = rule.write_metadata
            packet['metadata'] = packet['metadata'] & ~mask | value & mask
        table = rule.goto_table
    return hit
