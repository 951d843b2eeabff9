"""Compile Kevin's greedy LPM tables and spine circuits to OpenFlow 1.3.

ToR pipeline:
  table 0  housekeeping (ARP -> controller, IPv4 -> table 1, counted misses);
           per peer-ToR demand counters (nw_src/nw_dst ToR prefixes, goto 1):
           outgoing v -> u feed the central scheduler, incoming u -> v feed
           DistDA's destination-based elephant detection;
           DistDA messages (UDP DISTDA_UDP_PORT): to this ToR's own address ->
           controller (its agent), others -> table 2.
  table 1  greedy LPM: priority 1000 + IP prefix length; dec_ttl, write the
           egress id to metadata, goto 3. Own hosts: /32 -> dec_ttl, output.
  table 2  the static-only greedy LPM for DistDA messages, which ride the
           static de Bruijn links; same egress table.
  table 3  egress: metadata names a port or a port group. A greedy route often
           leaves by the spine port it arrived on (u -> v -> w over the same
           spine: the cable carries v's receive and transmit circuits), and
           OpenFlow drops output to the ingress port, so a higher-priority
           in_port twin of each egress uses IN_PORT (or a group variant whose
           bucket for that port is IN_PORT).
Spine bridges: in_port a -> output b for each circuit a -> b (IN_PORT for a
static self-loop); a DA spine holds only its current DA links.
TTL is decremented once per ToR, never on a spine (a circuit is not a hop).
"""
from controller.openflow.rules import (
    DEC_TTL, ETH_TYPE_IP, IN_PORT, PRIORITY_ROUTE_BASE, PRIORITY_TO_ROUTING,
    TABLE_FLOWS, TABLE_PREFIX, TO_CONTROLLER, FlowRule, Group, housekeeping_rules, miss_drop,
    output)
from topologies.addressing import int_to_ip, prefix_mask
from topologies.kevin import KevinParameterError, index_of
from topologies.model import ofport

# Kevin has no suffix table; goto must go forward, so the control LPM takes
# table 2 (its miss drop comes with housekeeping_rules) and egress is last.
TABLE_CONTROL = 2
TABLE_EGRESS = 3
IP_PROTO_UDP = 17
DISTDA_UDP_PORT = 6363
PRIORITY_AGENT = 300
PRIORITY_CONTROL = 250
PRIORITY_DEMAND = PRIORITY_TO_ROUTING + 10
PRIORITY_EGRESS, PRIORITY_EGRESS_HAIRPIN = 1, 2
PRIORITY_CIRCUIT = 1000
COOKIE_DEMAND_OUT = 0xdcfab0000000d001
COOKIE_DEMAND_IN = 0xdcfab0000000d002
GROUP_FLAG = 1 << 20
MAX_PORTS = 16


def _ip_match(kevin, symbols, field='ipv4_dst'):
    network, length = kevin.ip.prefix(symbols)
    return (field, (int_to_ip(network), prefix_mask(length)))


def egress_id(ports, in_port=None):
    """Metadata value: ofport of a single port, or a group id (flag | port
    bitmask), with the in_port variant in bits 24+ for hairpin groups."""
    ports = sorted(ports)
    if max(ports) >= MAX_PORTS:
        raise KevinParameterError('Kevin egress ids cover ToR ports < %d, got %s' % (MAX_PORTS, ports))
    if len(ports) == 1:
        return ofport(ports[0])
    value = GROUP_FLAG | sum(1 << p for p in ports)
    return value if in_port is None else value | ofport(in_port) << 24


def demand_counter_rules(kevin, tor):
    """Table-0 counters of traffic this ToR sends to / receives from each peer."""
    rules = []
    for peer in kevin.addresses:
        if peer == tor:
            continue
        for cookie, src, dst in ((COOKIE_DEMAND_OUT, tor, peer), (COOKIE_DEMAND_IN, peer, tor)):
            rules.append(FlowRule(TABLE_FLOWS, PRIORITY_DEMAND,
                                  (('eth_type', ETH_TYPE_IP), _ip_match(kevin, src, 'ipv4_src'),
                                   _ip_match(kevin, dst)),
                                  goto_table=TABLE_PREFIX, cookie=cookie))
    return rules


def control_rules(kevin, tor):
    udp = (('eth_type', ETH_TYPE_IP), ('ip_proto', IP_PROTO_UDP))
    agent = ('ipv4_dst', kevin.ip.host_ip(tor, 0))
    return [FlowRule(TABLE_FLOWS, PRIORITY_AGENT, udp + (agent, ('udp_dst', DISTDA_UDP_PORT)),
                     (TO_CONTROLLER,)),
            FlowRule(TABLE_FLOWS, PRIORITY_CONTROL, udp + (('udp_dst', DISTDA_UDP_PORT),),
                     goto_table=TABLE_CONTROL)]


def lpm_rules(kevin, table, table_id):
    rules = []
    for entry in table.entries:
        network_match = _ip_match(kevin, entry.symbols)
        priority = PRIORITY_ROUTE_BASE + kevin.ip.prefix(entry.symbols)[1]
        if entry.local:
            # Unknown addresses inside the ToR's own prefix stop here.
            rules.append(FlowRule(table_id, priority, (('eth_type', ETH_TYPE_IP), network_match)))
            continue
        rules.append(FlowRule(table_id, priority, (('eth_type', ETH_TYPE_IP), network_match),
                              (DEC_TTL,), write_metadata=(egress_id(entry.ports), 0xffffffff),
                              goto_table=TABLE_EGRESS))
    if table_id == TABLE_PREFIX:
        for h in range(kevin.hosts_per_tor):
            rules.append(FlowRule(TABLE_PREFIX, PRIORITY_ROUTE_BASE + 32,
                                  (('eth_type', ETH_TYPE_IP),
                                   ('ipv4_dst', kevin.ip.host_ip(table.address, h + 1))),
                                  (DEC_TTL, output(ofport(kevin.host_port(h))))))
    return rules


def egress_rules_and_groups(kevin, tables):
    """Egress entries for every spine port and every port group in ``tables``."""
    rules, groups = [miss_drop(TABLE_EGRESS)], []
    for port in range(kevin.k):
        meta = ('metadata', (egress_id([port]), 0xffffffff))
        rules.append(FlowRule(TABLE_EGRESS, PRIORITY_EGRESS, (meta,), (output(ofport(port)),)))
        rules.append(FlowRule(TABLE_EGRESS, PRIORITY_EGRESS_HAIRPIN,
                              (('in_port', ofport(port)), meta), (IN_PORT,)))
    port_groups = sorted({tuple(sorted(e.ports)) for t in tables for e in t.entries
                          if len(e.ports) > 1})
    for ports in port_groups:
        meta = ('metadata', (egress_id(ports), 0xffffffff))
        groups.append(Group(egress_id(ports), 'select',
                            tuple((None, (output(ofport(p)),)) for p in ports)))
        rules.append(FlowRule(TABLE_EGRESS, PRIORITY_EGRESS, (meta,), (('group', egress_id(ports)),)))
        for hairpin in ports:
            variant = egress_id(ports, hairpin)
            groups.append(Group(variant, 'select', tuple(
                (None, (IN_PORT if p == hairpin else output(ofport(p)),)) for p in ports)))
            rules.append(FlowRule(TABLE_EGRESS, PRIORITY_EGRESS_HAIRPIN,
                                  (('in_port', ofport(hairpin)), meta), (('group', variant),)))
    return rules, groups


def tor_rules(kevin, table, static_table):
    """(FlowRules, Groups) of one ToR from its current table and its
    static-only table (for DistDA messages)."""
    egress, groups = egress_rules_and_groups(kevin, [table, static_table])
    rules = (housekeeping_rules() + demand_counter_rules(kevin, table.address)
             + control_rules(kevin, table.address) + lpm_rules(kevin, table, TABLE_PREFIX)
             + lpm_rules(kevin, static_table, TABLE_CONTROL) + egress)
    return rules, groups


def circuit_rule(kevin, source, destination):
    """The spine-bridge rule of one directed circuit source -> destination."""
    a, b = index_of(source, kevin.k_s), index_of(destination, kevin.k_s)
    return FlowRule(TABLE_FLOWS, PRIORITY_CIRCUIT, (('in_port', ofport(a)),),
                    (IN_PORT,) if a == b else (output(ofport(b)),))


def spine_rules(kevin, circuits):
    """All rules of a spine bridge carrying ``circuits`` {source address:
    destination address}."""
    return [miss_drop(TABLE_FLOWS)] + [circuit_rule(kevin, s, t)
                                       for s, t in sorted(circuits.items())]


def static_circuits(kevin, spine):
    return dict(kevin.static_matchings[spine])

