"""Table-0 state of the fat-tree's dynamic schemes as plain FlowRules and
Groups (compiled next to the two-level tables, which stay underneath as the
fallback: all of this state is soft, section 3.6).

  priority 500  per-flow entries (COOKIE_FLOW): ipv4 src/dst, ip_proto and
                destination port -> dec_ttl, output to the chosen upward port
                (or, for a flow only being measured, goto table 1)
  priority 400  no upward choice -> goto table 1: a lower switch's own subnet,
                an upper switch's own pod
  priority 300  an upward TCP/UDP packet of a flow not seen yet:
                  classifier: to the controller, which picks the port and
                              sends the packet back through table 0;
                  scheduler:  a copy to the controller and on to table 1
                              (forwarding never waits for the controller);
                upward IPv4 under ECMP: dec_ttl, select group over the
                upward ports (OVS hashes the 5-tuple).
"""
from controller.openflow.rules import (
    DEC_TTL, ETH_TYPE_IP, TABLE_FLOWS, TABLE_PREFIX, TO_CONTROLLER, FlowRule, Group, output)
from controller.fattree.classifier import FlowKey, PROTOCOLS
from topologies.model import ofport

PRIORITY_FLOW = 500
PRIORITY_BYPASS = 400
PRIORITY_UPWARD = 300
COOKIE_FLOW = 0xdcfab0000000f001
# Bit 31 set: the fast-failover groups' content-derived ids never have it.
ECMP_GROUP_ID = 0x8000ec01

_PORT_FIELD = {proto: name + '_dst' for proto, name in PROTOCOLS.items()}


def upward_ports(topo):
    """Model ports k/2..k-1: the upward ports of every pod switch."""
    return list(range(topo.half, topo.k))


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


def ecmp_group(topo, switch):
    """Select group over the upward ports; a bucket whose port is not live is
    skipped. OVS hashes the same 5-tuple with the same function on every
    switch, so a lower switch's choice would fix its upper switch's too (hash
    polarization: half the cores unused). The upper switches therefore hold
    (k/2)^2 buckets in "digit sum" order, bucket i -> upward port
    (i mod k/2 + i div k/2) mod k/2: with OVS taking the bucket from the low
    hash bits, their choice is independent of the lower switch's."""
    up = upward_ports(topo)
    half = topo.half
    if topo.node(switch).role == 'edge':
        ports = up
    else:
        ports = [up[(i % half + i // half) % half] for i in range(half * half)]
    return Group(ECMP_GROUP_ID, 'select', tuple((ofport(p), (output(ofport(p)),)) for p in ports))


def ecmp_rule():
    return FlowRule(TABLE_FLOWS, PRIORITY_UPWARD, (('eth_type', ETH_TYPE_IP),),
                    (DEC_TTL, ('group', ECMP_GROUP_ID)))
