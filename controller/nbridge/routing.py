"""Deterministic dimension-order routing and leaf-switch fault tolerance by
misrouting for the K-ary N-Bridge (seed 003 section 4), as OpenFlow 1.3
FlowRules. Pure: no Ryu or Mininet import.

Normal routing. From LSW(x) to LSW(y) a packet fixes the coordinates highest
dimension first: LSW(y_{N-1}, x_{N-2}, ..., x_0), LSW(y_{N-1}, y_{N-2}, x_{N-3},
...), ..., LSW(y). A leaf sends it up to a root of dimension z = the first
(highest) dimension in which the destination differs from the leaf; that root
sends it down to the leaf of its line with coordinate y_z. Among the Q roots
of a line the leaf uses p = (y_0 * H + h) mod Q, from the destination's
dimension-0 coordinate y_0 and host index h: destinations along a dimension-0
line are dealt round-robin over the Q roots (D-mod-Q), and a packet uses the
same p in every dimension, as figure 5 does.

Pipeline (every switch also carries controller.openflow.rules.housekeeping_rules:
ARP to the controller, IPv4 to table 1, counted miss drops):
  leaf  table 1  host /32 -> dec_ttl, host port
                 the leaf's own prefix otherwise -> drop (no such host)
                 S1: prefix "dimensions > z agree with this leaf" -> dimension z
                 S2: the same prefix arriving from a dimension-z root -> z-1
                 (S1/S2 write the chosen dimension + 1 to metadata, goto 2)
        table 2  metadata = dimension + 1, (y_0, h) -> dec_ttl, uplink (dim, p)
  root  table 1  prefix "dimensions >= i agree with leaf v of my line" -> v
                 misroute: from leaf v, anything else -> leaf (v+1) mod K_i
A longer prefix always wins (priority 1000 + 2 * length) and an in_port rule
beats the plain rule of its own prefix only (+1): OVS has no LPM of its own.

Misrouting (figure 5, following the prose). The leaf S2 entries and the root
misroute entries never match normally routed packets (normal traffic reaches a
dimension-z root only when it agrees with the root's line above z, and leaves
a dimension-z root with its first difference below z), so they are installed
everywhere from the start. Shielding a failed leaf F changes only the roots
attached to it: on F's line in dimension z >= 1, the entry that would deliver
transit traffic to F (hop 2) sends it to the next leaf LSW((F_z+1) mod K_z,
...) instead; if that is the leaf the packet came from, out of its ingress
port (OpenFlow IN_PORT: a plain output to the ingress port is dropped). Hops
3 and 4 are then the pre-installed S2 (leaf: to the dimension z-1 root) and
root misroute (to the next leaf of that line), after which normal routing
never meets F again in 2-D. Traffic for F's own hosts keeps its longer-prefix
entry, so they stay reachable until F is powered off.

The pseudo-code's S3 line, as printed, sends hop 2 to LSW(..., y_z, (x_{z-1}+1)
mod K_{z-1}, ...): that leaf differs from the root's line in dimension z-1, so
a dimension-z root has no cable to it. We implement the prose (the next leaf
in dimension z, LSW((y_z+1) mod K_z, x_{z-1})), which figure 5 draws.

In 3-D and above the detour can meet another root attached to F (F's own
line in a lower dimension), which applies its shield entry too; the detour
then takes a second lap (see tests/unit/test_nbridge_routing.py for the pinned
distribution of extra hops and why).
"""
from controller.openflow.diff import ordered_diff
from controller.openflow.lookup import pipeline, rules_hit
from controller.openflow.rules import (
    DEC_TTL, ETH_TYPE_IP, IN_PORT, PRIORITY_ROUTE_BASE, TABLE_FLOWS, TABLE_PREFIX, TABLE_SUFFIX,
    FlowRule, housekeeping_rules, output)
from topologies.addressing import int_to_ip, ip_to_int, prefix_mask
from topologies.nbridge import FABRIC_NET, FABRIC_PREFIX_LEN, field_bits, format_coords
from topologies.model import model_port, ofport

METADATA_MASK = 0xffffffff
IP = ('eth_type', ETH_TYPE_IP)


class ShieldError(ValueError):
    """A shield/renew request that conflicts with the current state."""


def _priority(length, in_port_specific=False):
    # Prefix lengths differ by at least one bit, so +1 for an in_port rule
    # never lets it beat a longer prefix.
    return PRIORITY_ROUTE_BASE + 2 * length + (1 if in_port_specific else 0)


def _dst(network, length):
    return ('ipv4_dst', network if length == 32 else (network, prefix_mask(length)))


def leaf_rules(topo, coords):
    """Table 1 and 2 entries of LSW(coords) (normal S1 plus pre-installed S2)."""
    rules = []
    for h in range(topo.hosts_per_leaf):
        rules.append(FlowRule(TABLE_PREFIX, _priority(32), (IP, _dst(topo.host_ip(coords, h), 32)),
                              (DEC_TTL, output(ofport(h)))))
    network, length = topo.prefix(coords, 0)
    # An address of this leaf with no host would otherwise go up and come back until its TTL ran out.
    rules.append(FlowRule(TABLE_PREFIX, _priority(length), (IP, _dst(network, length))))
    for dim in range(topo.n):
        network, length = topo.prefix(coords, dim + 1)
        rules.append(FlowRule(TABLE_PREFIX, _priority(length), (IP, _dst(network, length)),
                              write_metadata=(dim + 1, METADATA_MASK), goto_table=TABLE_SUFFIX))
        if dim == 0:
            continue  # a dimension-0 root only ever delivers: S2 cannot arise there
        for p in range(topo.q):
            match = (('in_port', ofport(topo.leaf_port_up(dim, p))), IP, _dst(network, length))
            rules.append(FlowRule(TABLE_PREFIX, _priority(length, True), match,
                                  write_metadata=(dim, METADATA_MASK), goto_table=TABLE_SUFFIX))
    low_bits = field_bits(topo.k(0)) + topo.host_bits
    for dim in range(topo.n):
        for y0 in range(topo.k(0)):
            for h in range(topo.hosts_per_leaf):
                p = (y0 * topo.hosts_per_leaf + h) % topo.q
                low = int_to_ip(y0 << topo.host_bits | (h + 1))
                match = (IP, ('metadata', (dim + 1, METADATA_MASK)),
                         ('ipv4_dst', (low, int_to_ip((1 << low_bits) - 1))))
                rules.append(FlowRule(TABLE_SUFFIX, _priority(low_bits), match,
                                      (DEC_TTL, output(ofport(topo.leaf_port_up(dim, p))))))
    return rules


def root_rules(topo, dim, line, shielded=None):
    """Table 1 of RSW(dim, line, p) (the same for every p), with the hop-2
    entries of figure 5 if the shielded leaf is on this line."""
    k = topo.k(dim)
    rules = []
    for v in range(k):
        leaf = topo.leaf_on_line(line, dim, v)
        network, length = topo.prefix(leaf, dim)
        match = (IP, _dst(network, length))
        # In dimension 0 the prefix is the shielded leaf's own: no transit traffic to move.
        if leaf != shielded or dim == 0:
            rules.append(FlowRule(TABLE_PREFIX, _priority(length), match, (DEC_TTL, output(ofport(v)))))
            continue
        detour = (v + 1) % k
        rules.append(FlowRule(TABLE_PREFIX, _priority(length), match, (DEC_TTL, output(ofport(detour)))))
        rules.append(FlowRule(TABLE_PREFIX, _priority(length, True), (('in_port', ofport(detour)),) + match,
                              (DEC_TTL, IN_PORT)))
        own_network, own_length = topo.prefix(leaf, 0)
        rules.append(FlowRule(TABLE_PREFIX, _priority(own_length), (IP, _dst(own_network, own_length)),
                              (DEC_TTL, output(ofport(v)))))
    if dim < topo.n - 1:
        # Root S2: a packet whose first difference is above this dimension
        # (only misrouted packets) goes on to the next leaf of the line.
        fabric = _dst(FABRIC_NET, FABRIC_PREFIX_LEN)
        for v in range(k):
            rules.append(FlowRule(TABLE_PREFIX, _priority(FABRIC_PREFIX_LEN, True),
                                  (('in_port', ofport(v)), IP, fabric),
                                  (DEC_TTL, output(ofport((v + 1) % k)))))
    return rules


def run_pipeline(tables, in_port, dst_ip):
    """What an OpenFlow 1.3 switch holding ``tables`` (controller.openflow.lookup.pipeline)
    does with an IPv4 packet: ('output', ofport), ('in_port',) or None for a drop.
    The rules the switch gets, read hop by hop in tests instead of trusted."""
    packet = {'in_port': in_port, 'eth_type': ETH_TYPE_IP, 'ipv4_dst': ip_to_int(dst_ip), 'metadata': 0}
    result = None
    for rule in rules_hit(tables, packet, TABLE_FLOWS):
        if rule is None:
            return None
        for action in rule.actions:
            if action[0] in ('output', 'in_port'):
                result = action
            elif action[0] != 'dec_ttl':
                raise ValueError('run_pipeline: action %r is not modelled' % (action,))
    return result


class NBridgeRouting:
    """Routing state of one fabric: every switch's rules, plus which leaf is
    shielded (one at a time: the detour is verified for one failed leaf)."""

    def __init__(self, topo):
        self.topo = topo
        self.shielded = None
        self._rules = {}
        self._tables = {}

    def rules_for(self, name):
        """All FlowRules of a switch in the current shield state."""
        if name not in self._rules:
            node = self.topo.node(name)
            if node.role == 'leaf':
                own = leaf_rules(self.topo, node.coords)
            elif node.role == 'root':
                dim, line, _ = node.coords
                own = root_rules(self.topo, dim, line, self.shielded)
            else:
                raise ValueError('%s is a host, not a switch' % name)
            self._rules[name] = housekeeping_rules() + own
        return self._rules[name]

    def attached_roots(self, coords):
        """Every root cabled to LSW(coords): the switches a shield changes."""
        return [self.topo.root_of(coords, dim, p) for dim in range(self.topo.n) for p in range(self.topo.q)]

    def _set_shield(self, shielded):
        coords = shielded if shielded is not None else self.shielded
        changed = {}
        before = {name: self.rules_for(name) for name in self.attached_roots(coords)}
        self.shielded = shielded
        for name in before:
            self._rules.pop(name)
            self._tables.pop(name, None)
            ops = ordered_diff(before[name], self.rules_for(name))
            if ops:
                changed[name] = ops
        return changed

    def shield(self, coords):
        """Shield LSW(coords); {root: its ordered diff (controller.openflow.diff)}."""
        coords = self.topo.check_coords(coords)
        if self.shielded is not None:
            raise ShieldError('%s is already shielded; renew it first (one failed leaf at a time)'
                              % format_coords(self.shielded))
        return self._set_shield(coords)

    def renew(self, coords):
        """Undo the shield of LSW(coords): the roots get back their exact
        pre-fault rules; {root: its ordered diff}."""
        coords = self.topo.check_coords(coords)
        if self.shielded != coords:
            raise ShieldError('%s is not shielded (shielded: %s)' % (
                format_coords(coords), format_coords(self.shielded) if self.shielded else 'none'))
        return self._set_shield(None)

    def forward(self, switch, in_port, dst_ip):
        """Model out port of an IPv4 packet at ``switch`` (topologies.walk's contract)."""
        if switch not in self._tables:
            self._tables[switch] = pipeline(self.rules_for(switch))
        action = run_pipeline(self._tables[switch], ofport(in_port), dst_ip)
        if action is None:
            return None
        return in_port if action[0] == 'in_port' else model_port(action[1])
