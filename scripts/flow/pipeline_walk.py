"""A switch's OpenFlow 1.3 rules and groups compiled for fast lookup, and
the walk of one packet through a fabric of such switches: what the
simulator's switches (scripts/sim/ns3/of_pipeline.h) do with it, read from
the controller's own rule values (scripts/sim/rules_export.export_switches).

Lookup is a tuple-space search, as Open vSwitch's own classifier: a table's
rules are grouped by the fields and masks they match, each group a dict
from the masked values to its rules. A packet costs one dict lookup per
group, not a scan of the table (a k=48 edge switch holds 156 rules before
its per-flow entries, and one per-flow entry per flow it sources). The
winner is what a linear scan, highest priority first, finds:
controller.openflow.lookup's semantics, ties kept in arrival order as the
simulator's pipeline keeps them.

Select groups take OVS's bucket for the packet's symmetric L3/L4 hash
(scripts.sim.ovs_select, checked against real OVS); fast-failover groups
their first live bucket.
"""
from dataclasses import dataclass, field

from controller.openflow.lookup import match_terms, tables_walked
from scripts.sim.ovs_select import select_bucket
from topologies.addressing import ip_to_int
from topologies.model import model_port

ETH_TYPE_IP = 0x0800
INITIAL_TTL = 64
MAX_HOPS = 64
_TRANSPORT = {6: 'tcp', 17: 'udp'}


class _Subtable:
    """The rules of one table that match the same fields under the same
    masks: {masked values: [(priority, arrival), rule]...} best first."""

    def __init__(self, fields):
        self.fields = fields  # ((name, mask), ...)
        self.entries = {}
        self.max_priority = -1  # an upper bound: only ever raised

    def key(self, packet):
        try:
            return tuple(packet[name] & mask for name, mask in self.fields)
        except KeyError:  # the packet lacks a matched field: no rule here matches it
            return None


class SwitchPipeline:
    """One switch's tables and groups, changed by flow-mods as the
    simulator's switch is: ``add`` replaces an entry of the same table,
    priority and match (OFPFC_ADD), ``delete_strict`` removes it."""

    def __init__(self, rules, groups):
        self.tables = {}  # table -> {fields: _Subtable}
        self._ordered = {}  # table -> its subtables, highest max_priority first
        self._arrival = 0
        self.groups = {g.group_id: g for g in groups}
        for rule in rules:
            self.add(rule)

    @staticmethod
    def _split(rule):
        terms = match_terms(rule)
        return tuple((name, mask) for name, _, mask in terms), tuple(value for _, value, _ in terms)

    def add(self, rule):
        fields, values = self._split(rule)
        subtables = self.tables.setdefault(rule.table, {})
        subtable = subtables.get(fields)
        if subtable is None:
            subtable = subtables[fields] = _Subtable(fields)
        same_key = subtable.entries.setdefault(values, [])
        for i, (rank, old) in enumerate(same_key):
            if rank[0] == rule.priority:  # same match and priority: replaced in place
                same_key[i] = (rank, rule)
                return
        self._arrival += 1
        same_key.append(((rule.priority, self._arrival), rule))
        same_key.sort(key=lambda entry: (-entry[0][0], entry[0][1]))
        if rule.priority > subtable.max_priority:
            subtable.max_priority = rule.priority
            self._ordered[rule.table] = sorted(subtables.values(), key=lambda s: -s.max_priority)

    def delete_strict(self, rule):
        """Remove the entry of ``rule``'s table, priority and match; whether there was one."""
        fields, values = self._split(rule)
        subtable = self.tables.get(rule.table, {}).get(fields)
        same_key = subtable.entries.get(values, []) if subtable else []
        for i, (rank, _) in enumerate(same_key):
            if rank[0] == rule.priority:
                del same_key[i]
                if not same_key:
                    del subtable.entries[values]
                return True
        return False

    def first_match(self, table, packet):
        """The rule a linear scan of ``table``, highest priority first (ties
        in arrival order), would give ``packet``; None when none matches."""
        best, best_rank = None, None
        for subtable in self._ordered.get(table, ()):
            if best_rank is not None and best_rank[0] > subtable.max_priority:
                break
            key = subtable.key(packet)
            same_key = subtable.entries.get(key) if key is not None else None
            if same_key:
                rank, rule = same_key[0]
                if best_rank is None or (-rank[0], rank[1]) < (-best_rank[0], best_rank[1]):
                    best, best_rank = rule, rank
        return best


def compiled_switches(export):
    """{switch: SwitchPipeline} of an export (rules_export.export_switches)."""
    return {name: SwitchPipeline(state['rules'], state['groups']) for name, state in export.items()}


@dataclass
class Trace:
    """Where a packet went: ``hops`` [(switch, model out port)], ``end`` the
    destination host's name or KIND@SWITCH (KIND drop, controller (held
    there), dead (sent into a dead port), ttl), or 'loop'; ``rules`` the
    (switch, rule) entries it met, in order; ``packet_ins`` the switches
    whose rules sent it (or a copy) to the controller."""
    hops: list = field(default_factory=list)
    end: str = 'loop'
    rules: list = field(default_factory=list)
    packet_ins: list = field(default_factory=list)

    @property
    def delivered(self):
        return '@' not in self.end and self.end != 'loop'


def group_bucket(group, five_tuple, live):
    """The actions of the bucket ``group`` gives a packet of ``five_tuple``
    (source and destination as integers, proto, ports): a fast-failover
    group's first live one, a select group's as OVS picks it; None when no
    bucket is live. ``live(model port)`` judges a bucket's watch port."""
    alive = [watch is None or live(model_port(watch)) for watch, _ in group.buckets]
    if group.kind == 'fast_failover':
        index = next((i for i, up in enumerate(alive) if up), None)
    else:
        index = select_bucket(len(group.buckets), *five_tuple, live=alive.__getitem__)
    return None if index is None else group.buckets[index][1]


def trace_packet(topo, switches, src, dst, proto, sport, dport, live=None, failed_switches=()):
    """The Trace of one IPv4 packet from host ``src`` to host ``dst`` (names)
    with transport ``proto``/``sport``/``dport`` through ``switches``
    ({name: SwitchPipeline}) over ``topo``'s cabling. ``live(switch, model
    port)`` says whether a port is live (default: every one);
    ``failed_switches`` forward nothing."""
    live = live or (lambda switch, port: True)
    src_ip, dst_ip = ip_to_int(topo.node(src).ip), ip_to_int(topo.node(dst).ip)
    five_tuple = (src_ip, dst_ip, proto, sport, dport)
    fields = {'eth_type': ETH_TYPE_IP, 'ipv4_src': src_ip, 'ipv4_dst': dst_ip, 'ip_proto': proto}
    if proto in _TRANSPORT:
        fields.update({_TRANSPORT[proto] + '_src': sport, _TRANSPORT[proto] + '_dst': dport})
    trace, ttl = Trace(), INITIAL_TTL
    node, port = topo.host_attachment(src)
    for _ in range(MAX_HOPS):
        if topo.nodes[node].is_host:
            trace.end = node
            return trace
        if node in failed_switches:
            trace.end = 'drop@' + node
            return trace
        switch = switches[node]
        packet = dict(fields, in_port=port + 1, metadata=0)
        actions = []
        for rule in tables_walked(switch.first_match, packet):
            if rule is None:
                break
            trace.rules.append((node, rule))
            actions += rule.actions
        out, dec_ttl, to_controller = None, False, False
        while actions:
            action = actions.pop(0)
            if action[0] == 'output':
                out = model_port(action[1])
            elif action[0] == 'group':
                bucket = group_bucket(switch.groups[action[1]], five_tuple, lambda p, node=node: live(node, p))
                actions = list(bucket or ()) + actions
            elif action[0] == 'dec_ttl':
                dec_ttl = True
            elif action[0] == 'controller':
                to_controller = True
        if to_controller:
            trace.packet_ins.append(node)
        if out is None:
            trace.end = ('controller@' if to_controller else 'drop@') + node
            return trace
        if dec_ttl:
            ttl -= 1
            if ttl == 0:
                trace.end = 'ttl@' + node
                return trace
        trace.hops.append((node, out))
        if not live(node, out):
            trace.end = 'dead@' + node
            return trace
        node, port = topo.peer(node, out)
    return trace
