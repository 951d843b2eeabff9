"""Compile a switch's two-level table into the OpenFlow 1.3 pipeline.

  table 0  ARP -> table 3 on a lower (edge) switch, dropped elsewhere; IPv4 -> table 1
  table 1  first-level prefixes, priority 1000 + prefix length. Terminating:
           dec_ttl, output. Non-terminating: write the suffix table's id
           (derived from its content: suffix_table_ids) to metadata, goto
           table 2.
  table 2  second-level suffixes: metadata + right-handed ipv4_dst mask,
           priority 1000 + suffix length.
  tables 3-5 (lower switches only) answer ARP in the switch: a request whose
           target is a fabric host (pod < k, then subnet < k/2, then host ID
           in 2..k/2+1, one octet per table) is turned into the reply from
           the target's MAC, derived from its IP (02:00 + IPv4), and sent
           back out of its in-port. Anything else is a counted miss: ARP for
           an unknown address gets no reply, and the controller never sees ARP.
  every table ends in a priority-0 drop whose counters count the misses.

A matching prefix always wins over a suffix (the TCAM rule of section 3.4)
because table 2 is only reached through a non-terminating prefix.

A suffix whose table lists failover ports outputs through a fast-failover
group: its own port first, then the other usable up-ports in cyclic order,
each bucket watching its port, so a switch repairs a dead up-link in the data
plane before the controller hears of it (local repair first).
"""
import functools
import zlib

from controller.openflow.rules import (
    DEC_TTL, ETH_TYPE_ARP, ETH_TYPE_IP, PRIORITY_ARP, PRIORITY_ROUTE_BASE, TABLE_FLOWS,
    TABLE_PREFIX, TABLE_SUFFIX, FlowRule, Group, housekeeping_rules, miss_drop, move, output)
from topologies.addressing import int_to_ip, left_mask, right_mask
from topologies.model import ofport
from topologies.nonblocking import SWITCH as NONBLOCKING_SWITCH

METADATA_MASK = 0xffffffff
TABLE_ARP_POD, TABLE_ARP_SUBNET, TABLE_ARP_HOST = 3, 4, 5
ARP_REQUEST, ARP_REPLY = 1, 2
# Host MACs are 02:00 followed by the IPv4 address (topologies.model.mac_from_ip).
HOST_MAC_BASE = '02:00:00:00:00:00'


# The reply built in place from the request: to the asker, from the target's
# derived MAC, target and sender swapped (reg0 holds the target IP meanwhile).
ARP_REPLY_ACTIONS = (
    move('eth_src', 'eth_dst'),
    ('set_field', 'eth_src', HOST_MAC_BASE),
    move('arp_tpa', 'eth_src', 32),
    ('set_field', 'arp_op', ARP_REPLY),
    move('arp_sha', 'arp_tha'),
    move('eth_src', 'arp_sha'),
    move('arp_tpa', 'reg0'),
    move('arp_spa', 'arp_tpa'),
    move('reg0', 'arp_spa'),
    ('in_port',),
)


def arp_responder_rules(topo, switch):
    """A fat-tree switch's ARP rules: lower switches answer requests for
    the fabric's hosts (tables 3-5), other switches drop ARP."""
    role = topo.node(switch).role
    return list(_arp_rules(role, _host_coordinates(topo) if role == 'edge' else None))


def fabric_arp_rules(topo):
    """arp_responder_rules of every switch, {name: rules}: the hosts are
    read once for all (once per lower switch was half of k=48's start-up
    compile)."""
    coordinates = _host_coordinates(topo)
    return {s.name: list(_arp_rules(s.role, coordinates if s.role == 'edge' else None)) for s in topo.switches}


def _host_coordinates(topo):
    """The pods, subnets and host IDs of the fabric's hosts, each sorted."""
    hosts = topo.hosts
    return tuple(tuple(sorted({h.coords[level] for h in hosts})) for level in range(3))


@functools.lru_cache(maxsize=16)
def _arp_rules(role, coordinates):
    """``coordinates``: _host_coordinates on a lower switch, else None."""
    arp = (('eth_type', ETH_TYPE_ARP),)
    if role != 'edge':
        return (FlowRule(TABLE_FLOWS, PRIORITY_ARP, arp),)
    request = arp + (('arp_op', ARP_REQUEST),)
    pods, subnets, host_ids = coordinates
    return tuple([FlowRule(TABLE_FLOWS, PRIORITY_ARP, arp, goto_table=TABLE_ARP_POD)]
                 + [FlowRule(TABLE_ARP_POD, PRIORITY_ARP, request + (('arp_tpa', ('10.%d.0.0' % pod, '255.255.0.0')),),
                             goto_table=TABLE_ARP_SUBNET) for pod in pods]
                 + [FlowRule(TABLE_ARP_SUBNET, PRIORITY_ARP, request + (('arp_tpa', ('0.0.%d.0' % z, '0.0.255.0')),),
                             goto_table=TABLE_ARP_HOST) for z in subnets]
                 + [FlowRule(TABLE_ARP_HOST, PRIORITY_ARP, request + (('arp_tpa', ('0.0.0.%d' % i, '0.0.0.255')),),
                             ARP_REPLY_ACTIONS) for i in host_ids]
                 + [miss_drop(TABLE_ARP_POD), miss_drop(TABLE_ARP_SUBNET), miss_drop(TABLE_ARP_HOST)])


@functools.lru_cache(maxsize=None)
def _dotted_mask(mask):
    return int_to_ip(mask)


def _masked(ip, mask):
    return (ip, _dotted_mask(mask))


def content_id(content):
    """A non-zero 31-bit id derived from ``content`` (crc32 of its repr)."""
    return _content_id(content)


# Compiling is a pure function of immutable entries, and a fabric's switches
# share most of them (all lower switches of one index have the same
# second-level table): the caches below make compiling a k=48 fabric about
# ten times faster. Their keys hold every input, the ids included.
@functools.lru_cache(maxsize=1 << 14)
def _content_id(content):
    return zlib.crc32(repr(content).encode()) & 0x7fffffff or 1


def suffix_table_ids(table):
    """Metadata id of each second-level table, derived from what it does
    (its entries and failover ports) as group ids are. So an update never
    rewrites a table in place: an unchanged table keeps its id and entries,
    a changed one gets a fresh id, and the ordered diff
    (controller.openflow.diff) fills it before a prefix points at it and
    deletes the old one after (make before break). Tables alike share one
    id and one set of entries; unlike tables with the same id are refused."""
    ids, contents = {}, {}
    for name, suffixes in table.suffix_tables.items():
        content = (tuple(sorted((s.value, s.length, s.port) for s in suffixes)),
                   tuple(table.failover.get(name, ())))
        table_id = content_id(content)
        if contents.setdefault(table_id, content) != content:
            raise ValueError('%s: suffix table %s has the id %d of another table'
                             % (table.switch, name, table_id))
        ids[name] = table_id
    return ids


def prefix_match(prefix):
    """The match of a first-level prefix: IPv4 with a left-handed mask."""
    if not prefix.length:
        return (('eth_type', ETH_TYPE_IP),)
    return (('eth_type', ETH_TYPE_IP), ('ipv4_dst', _masked(prefix.network, left_mask(prefix.length))))


@functools.lru_cache(maxsize=1 << 17)
def _prefix_rule(p, table_id):
    match = prefix_match(p)
    priority = PRIORITY_ROUTE_BASE + p.length
    if p.terminating:
        return FlowRule(TABLE_PREFIX, priority, match, (DEC_TTL, output(ofport(p.port))))
    return FlowRule(TABLE_PREFIX, priority, match, write_metadata=(table_id, METADATA_MASK),
                    goto_table=TABLE_SUFFIX)


def prefix_rules(table, ids=None):
    """``ids``: suffix_table_ids(table), when already known."""
    ids = suffix_table_ids(table) if ids is None else ids
    return [_prefix_rule(p, None if p.terminating else ids[p.suffix_table]) for p in table.prefixes]


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
    return content_id(ports)


@functools.lru_cache(maxsize=1 << 12)
def _failover_group(gid, ports):
    return Group(gid, 'fast_failover', tuple((ofport(p), (DEC_TTL, output(ofport(p)))) for p in ports))


def _suffix_output(port, failover):
    ports = failover_buckets(port, failover)
    if len(ports) == 1:
        return output(ofport(port)), None
    group = _failover_group(group_id(ports), ports)
    return ('group', group.group_id), group


@functools.lru_cache(maxsize=1 << 12)
def _suffix_table_rules(table_id, suffixes, failover):
    """(rules, the group of each rule or None) of one second-level table."""
    rules, groups = [], []
    for s in suffixes:
        match = (('eth_type', ETH_TYPE_IP), ('metadata', (table_id, METADATA_MASK)),
                 ('ipv4_dst', _masked(s.value, right_mask(s.length))))
        action, group = _suffix_output(s.port, failover)
        groups.append(group)
        if group is not None:
            rules.append(FlowRule(TABLE_SUFFIX, PRIORITY_ROUTE_BASE + s.length, match, (action,)))
        else:
            rules.append(FlowRule(TABLE_SUFFIX, PRIORITY_ROUTE_BASE + s.length, match,
                                  (DEC_TTL, action)))
    return tuple(rules), tuple(groups)


def suffix_rules_and_groups(table, ids=None):
    """``ids``: suffix_table_ids(table), when already known."""
    rules, groups = [], {}
    compiled = set()
    for name, table_id in (suffix_table_ids(table) if ids is None else ids).items():
        if table_id in compiled:
            continue  # a table alike under another name: its entries are in
        compiled.add(table_id)
        table_rules, table_groups = _suffix_table_rules(
            table_id, tuple(table.suffix_tables[name]), tuple(table.failover.get(name, ())))
        rules.extend(table_rules)
        for group in table_groups:
            if group is not None:
                if groups.get(group.group_id, group) != group:
                    raise ValueError('%s: group id collision %d' % (table.switch, group.group_id))
                groups[group.group_id] = group
    return rules, sorted(groups.values(), key=lambda g: g.group_id)


@functools.lru_cache(maxsize=None)
def _housekeeping():
    return tuple(housekeeping_rules(arp_to_controller=False))


def compile_table(table):
    """(rules, groups) of one switch's routing: housekeeping (ARP left to
    arp_responder_rules), prefixes, suffixes and the fast-failover groups the
    suffixes output through."""
    ids = suffix_table_ids(table)
    suffixes, groups = suffix_rules_and_groups(table, ids)
    return list(_housekeeping()) + prefix_rules(table, ids) + suffixes, groups


def rule_counts(topo, table):
    """(first-level prefixes, second-level suffixes, housekeeping and ARP) rule counts."""
    return (len(prefix_rules(table)), len(suffix_rules_and_groups(table)[0]),
            len(housekeeping_rules(arp_to_controller=False)) + len(arp_responder_rules(topo, table.switch)))


def nonblocking_rules(topo):
    """The non-blocking reference switch's rules (topologies.nonblocking):
    housekeeping with ARP to the controller, one /32 route per host."""
    routes = [FlowRule(TABLE_PREFIX, PRIORITY_ROUTE_BASE + 32,
                       (('eth_type', ETH_TYPE_IP), ('ipv4_dst', topo.node(host).ip)),
                       (DEC_TTL, output(ofport(port))))
              for port in topo.ports(NONBLOCKING_SWITCH) for host in [topo.peer(NONBLOCKING_SWITCH, port)[0]]]
    return housekeeping_rules() + routes
