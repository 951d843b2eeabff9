"""Table-0 state of the fat-tree's dynamic schemes as plain FlowRules and
Groups (compiled next to the two-level tables, which stay underneath as the
fallback: all of this state is soft, section 3.6).

  priority 500  per-flow entries (COOKIE_FLOW): ipv4 src/dst, ip_proto and
                destination port -> dec_ttl, output to the chosen upward port
                (or, for a flow only being measured, goto table 1)
  priority 400  classifier, scheduler: no upward choice -> goto table 1: a
                lower switch's own subnet, an upper switch's own pod
  priority 300  an upward TCP/UDP packet of a flow not seen yet:
                  classifier: to the controller, which picks the port and
                              sends the packet back through table 0;
                  scheduler:  a copy to the controller and on to table 1
                              (forwarding never waits for the controller);
  300+len       ECMP: the switch's first-level prefixes, each either
                dec_ttl + a select group over its usable upward ports (OVS
                hashes the 5-tuple) or on to table 1 (see
                ecmp_rules_and_groups).
"""
from controller.openflow.rules import (
    DEC_TTL, ETH_TYPE_IP, TABLE_FLOWS, TABLE_PREFIX, TO_CONTROLLER, FlowRule, Group, output)
from controller.fattree.classifier import FlowKey, PROTOCOLS
from controller.fattree.pipeline import group_id, prefix_match
from topologies.model import ofport

PRIORITY_FLOW = 500
PRIORITY_BYPASS = 400
PRIORITY_UPWARD = 300
COOKIE_FLOW = 0xdcfab0000000f001
# Bit 31 set: the fast-failover groups' content-derived ids never have it.
ECMP_GROUP_BIT = 0x80000000

_PORT_FIELD = {proto: name + '_dst' for proto, name in PROTOCOLS.items()}


def bypass_rule(topo, switch):
    """Destinations a pod switch has no upward choice for."""
    node = topo.node(switch)
    pod, z = node.coords
    if node.role == 'edge':
        dst = ('10.%d.%d.0' % (pod, z), '255.255.255.0')
    else:
        dst = ('10.%d.0.0' % pod, '255.255.0.0')
    return FlowRule(TABLE_FLOWS, PRIORITY_BYPASS, (('eth_type', ETH_TYPE_IP), ('ipv4_dst', dst)),
                    goto_table=TABLE_PREFIX)


def new_flow_rules(to_table):
    """Upward TCP and UDP packets of unknown flows to the controller; with
    ``to_table`` they also continue to the two-level tables."""
    return [FlowRule(TABLE_FLOWS, PRIORITY_UPWARD, (('eth_type', ETH_TYPE_IP), ('ip_proto', proto)),
                     (TO_CONTROLLER,), goto_table=TABLE_PREFIX if to_table else None)
            for proto in sorted(PROTOCOLS)]


def flow_match(flow):
    return (('eth_type', ETH_TYPE_IP), ('ip_proto', flow.proto), ('ipv4_src', flow.src),
            ('ipv4_dst', flow.dst), (_PORT_FIELD[flow.proto], flow.dport))


def flow_rule(flow, port):
    """The per-flow entry: out of model ``port``, or (None) on to the
    two-level tables -- still counted, so the flow can be measured."""
    if port is None:
        return FlowRule(TABLE_FLOWS, PRIORITY_FLOW, flow_match(flow), goto_table=TABLE_PREFIX,
                        cookie=COOKIE_FLOW)
    return FlowRule(TABLE_FLOWS, PRIORITY_FLOW, flow_match(flow), (DEC_TTL, output(ofport(port))),
                    cookie=COOKIE_FLOW)


def flow_of_match(match):
    """The FlowKey of a per-flow entry's match (a dict-like OFPMatch)."""
    proto = match['ip_proto']
    return FlowKey(match['ipv4_src'], match['ipv4_dst'], proto, match[_PORT_FIELD[proto]])


def ecmp_group(topo, switch, ports):
    """Select group over ``ports`` (upward); a bucket whose port is not live
    is skipped. OVS hashes the same 5-tuple with the same function on every
    switch, so a lower switch's choice would fix its upper switch's too (hash
    polarization: half the cores unused). The upper switches therefore hold
    m^2 buckets for m ports in "digit sum" order, bucket i -> port
    (i mod m + i div m) mod m: with OVS taking the bucket from the low hash
    bits, their choice is independent of the lower switch's. The id derives
    from the buckets (bit 31 set, which fast-failover ids never have)."""
    ports = tuple(ports)
    if topo.node(switch).role != 'edge':
        m = len(ports)
        ports = tuple(ports[(i % m + i // m) % m] for i in range(m * m))
    return Group(ECMP_GROUP_BIT | group_id(ports), 'select',
                 tuple((ofport(p), (output(ofport(p)),)) for p in ports))


def ecmp_rules_and_groups(topo, table):
    """ECMP as table-0 rules mirroring the switch's first level under the
    current failures (controller.fattree.failover.tables_with_failures):
    each prefix with a second-level table hashes over that table's usable
    up-ports (so the failure broadcast's avoidance and the switch's dead
    links apply to ECMP too); a terminating prefix (own hosts, own pod's
    subnets, detours) and a prefix left with no usable port go on to the
    two-level tables. Priority PRIORITY_UPWARD + prefix length: longest
    prefix wins, as in table 1."""
    rules, groups = [], {}
    for prefix in table.prefixes:
        ports = () if prefix.terminating else table.failover.get(prefix.suffix_table, ())
        priority = PRIORITY_UPWARD + prefix.length
        if not ports:
            rules.append(FlowRule(TABLE_FLOWS, priority, prefix_match(prefix), goto_table=TABLE_PREFIX))
            continue
        group = ecmp_group(topo, table.switch, ports)
        groups[group.group_id] = group
        rules.append(FlowRule(TABLE_FLOWS, priority, prefix_match(prefix),
                              (DEC_TTL, ('group', group.group_id))))
    return rules, sorted(groups.values(), key=lambda g: g.group_id)
