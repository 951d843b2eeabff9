"""OpenFlow 1.3 rules as plain data, and their ovs-ofctl rendering.

Routing logic produces ``FlowRule`` values; the Ryu app turns them into
flow-mods (controller.ryuapp.ofp) and tests install the very same values into real
bridges with ovs-ofctl (``to_ofctl``). Match fields use OXM names as Ryu's
OFPMatch takes them; masked values are (value, mask) pairs.
"""
import dataclasses
from dataclasses import dataclass
import functools

ETH_TYPE_IP = 0x0800
ETH_TYPE_ARP = 0x0806

# Table ids of the dcfabric pipeline: per-flow entries first, then
# first-level prefixes, then second-level suffixes chosen by metadata (the
# table order makes a prefix beat a suffix, Al-Fares et al. 3.4).
TABLE_FLOWS = 0
TABLE_PREFIX = 1
TABLE_SUFFIX = 2

# Longest-prefix match by priority: OVS has no LPM of its own.
PRIORITY_ROUTE_BASE = 1000
PRIORITY_ARP = 200
PRIORITY_TO_ROUTING = 100
PRIORITY_MISS = 0

COOKIE_ROUTING = 0xdcfab00000000001


def output(port):
    return ('output', port)


def move(src, dst, n_bits=None):
    """Copy field ``src`` into ``dst`` (Nicira reg-move; OXM field names).
    ``n_bits`` copies only the low bits (the whole field when None)."""
    return ('move', src, dst, n_bits)


DEC_TTL = ('dec_ttl',)
TO_CONTROLLER = ('controller',)
IN_PORT = ('in_port',)


def _kept_hash(value):
    """A frozen value's hash, worked out once: compiled rules and groups are
    shared by many switches' states, and every diff and every encoding
    (controller.ryuapp.ofp) hashes them again."""
    try:
        return value.__dict__['_hash']
    except KeyError:
        value.__dict__['_hash'] = result = hash(
            tuple(getattr(value, f.name) for f in dataclasses.fields(value)))
        return result


def _fields_only(value):
    """What pickles a value: its fields (a kept hash holds only in its process)."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


@dataclass(frozen=True)
class FlowRule:
    """One flow entry: match fields, apply-actions, then optional
    write-metadata (value, mask) and goto-table. No actions and no goto = drop."""
    table: int
    priority: int
    match: tuple = ()
    actions: tuple = ()
    write_metadata: tuple = None
    goto_table: int = None
    cookie: int = COOKIE_ROUTING

    __hash__ = _kept_hash
    __getstate__ = _fields_only

    @property
    def match_dict(self):
        return dict(self.match)

    @functools.cached_property
    def key(self):
        """What identifies the entry in a switch: (table, priority, match).
        Kept with the rule: compiled rules are shared by many switches'
        states, and every diff asks each rule for it."""
        return (self.table, self.priority, self.match)


@dataclass(frozen=True)
class Group:
    """An OpenFlow group: kind 'select', 'fast_failover' or 'all'; buckets are
    (watch_port or None, actions) pairs. Select and fast-failover buckets with a
    watch port are skipped while that port is not live. Kind 'flowlet' (with
    ``flowlet_timeout_us``) has no OpenFlow counterpart: a select group that
    picks per flowlet, which only the simulator's switches execute
    (scripts/sim/ns3/of_pipeline.h)."""
    group_id: int
    kind: str
    buckets: tuple
    flowlet_timeout_us: float = None

    __hash__ = _kept_hash
    __getstate__ = _fields_only


def miss_drop(table):
    """Table-miss entry that drops and so counts what nothing matched."""
    return FlowRule(table, PRIORITY_MISS)


def housekeeping_rules(arp_to_controller=True):
    """The fixed rules every switch of every fabric carries besides its
    routes: ARP to the controller (answered there from the model, never
    flooded) unless the fabric's switches answer it themselves
    (``arp_to_controller=False``), IPv4 on to the routing table, counted
    miss drops."""
    arp = [FlowRule(TABLE_FLOWS, PRIORITY_ARP, (('eth_type', ETH_TYPE_ARP),), (TO_CONTROLLER,))]
    return (arp if arp_to_controller else []) + [
        FlowRule(TABLE_FLOWS, PRIORITY_TO_ROUTING, (('eth_type', ETH_TYPE_IP),),
                 goto_table=TABLE_PREFIX),
        miss_drop(TABLE_FLOWS), miss_drop(TABLE_PREFIX), miss_drop(TABLE_SUFFIX),
    ]


_OFCTL_FIELDS = {'eth_type': 'dl_type', 'ipv4_dst': 'nw_dst', 'ipv4_src': 'nw_src',
                 'ip_proto': 'nw_proto', 'in_port': 'in_port', 'metadata': 'metadata',
                 'arp_op': 'arp_op', 'arp_tpa': 'arp_tpa', 'tcp_dst': 'tcp_dst',
                 'tcp_src': 'tcp_src', 'udp_dst': 'udp_dst', 'udp_src': 'udp_src',
                 'eth_dst': 'dl_dst', 'eth_src': 'dl_src', 'arp_spa': 'arp_spa',
                 'arp_sha': 'arp_sha', 'arp_tha': 'arp_tha', 'reg0': 'reg0'}


def _ofctl_value(value):
    if isinstance(value, tuple):
        return '%s/%s' % tuple(_ofctl_value(v) for v in value)
    return hex(value) if isinstance(value, int) else str(value)


def _ofctl_action(action):
    kind = action[0]
    if kind == 'output':
        return 'output:%d' % action[1]
    if kind == 'controller':
        return 'CONTROLLER:65535'
    if kind == 'in_port':
        return 'IN_PORT'
    if kind == 'group':
        return 'group:%d' % action[1]
    if kind == 'set_field':
        return 'set_field:%s->%s' % (_ofctl_value(action[2]), _OFCTL_FIELDS[action[1]])
    if kind == 'move':
        _, src, dst, n_bits = action
        bits = '[]' if n_bits is None else '[0..%d]' % (n_bits - 1)
        return 'move:%s%s->%s%s' % (_OFCTL_FIELDS[src], bits, _OFCTL_FIELDS[dst], bits)
    return kind


def to_ofctl(rule):
    """The rule as an ``ovs-ofctl -O OpenFlow13 add-flow`` line."""
    parts = ['table=%d' % rule.table, 'priority=%d' % rule.priority, 'cookie=%#x' % rule.cookie]
    # ovs-ofctl reads in_port=0x1 as a port *name*: port numbers go in decimal.
    parts += ['%s=%s' % (_OFCTL_FIELDS[name], value if name == 'in_port' else _ofctl_value(value))
              for name, value in rule.match]
    instructions = [_ofctl_action(a) for a in rule.actions]
    if rule.write_metadata is not None:
        instructions.append('write_metadata:%#x/%#x' % rule.write_metadata)
    if rule.goto_table is not None:
        instructions.append('goto_table:%d' % rule.goto_table)
    return ','.join(parts) + ',actions=' + (','.join(instructions) or 'drop')


def group_to_ofctl(group):
    """The group as an ``ovs-ofctl -O OpenFlow13 add-group`` line."""
    buckets = []
    for watch_port, actions in group.buckets:
        watch = 'watch_port:%d,' % watch_port if watch_port is not None else ''
        buckets.append('bucket=%sactions=%s' % (watch, ','.join(_ofctl_action(a) for a in actions)))
    return 'group_id=%d,type=%s,%s' % (group.group_id, group.kind, ','.join(buckets))
