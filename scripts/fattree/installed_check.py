"""Checks of a fat-tree's installed state that do not trust the controller:
a hop walk over what the switches hold, and a comparison of that with the
tables computed for the failures in place. Pure: dumps and the model in,
verdicts out (scripts.fattree.fault_campaign reads the dumps).

The walk follows an IPv4 packet from each source host through each switch's
dumped rules (controller.openflow.ofctl_dump, controller.openflow.lookup)
and the model's cabling. A fast-failover group takes its first bucket whose
watch port is live, live meaning what the switch's port would say: the link
and the switch at its far end are up (BFD makes a silently failed link's
ports not live once it detects it; the campaign checks after the controller
says ready, which waits for that). Which hosts are still physically connected
comes from the model minus the failures (networkx), not from any routing.
"""
import networkx

from controller.fattree.failover import link_key
from controller.fattree.pipeline import arp_responder_rules, compile_table
from controller.openflow import ofctl_dump
from controller.openflow.lookup import rules_hit
from topologies.addressing import ip_to_int
from topologies.model import model_port, ofport
from topologies.walk import RoutingError, walk


class InstalledState:
    """One switch's dumped rules and groups, ready to forward with."""

    def __init__(self, flows_text, groups_text):
        self.rules = ofctl_dump.parse_flows(flows_text)
        self.groups = {g.group_id: g for g in ofctl_dump.parse_groups(groups_text)}
        tables = {}
        for rule, terms in self.rules:
            tables.setdefault(rule.table, []).append((terms, rule))
        for entries in tables.values():
            entries.sort(key=lambda entry: -entry[1].priority)
        self.tables = tables


def connected_pairs(topo, failed_links, failed_switches):
    """Ordered host pairs that still have a physical path."""
    graph = networkx.Graph()
    graph.add_nodes_from(n.name for n in topo.nodes.values() if n.name not in failed_switches)
    for link in topo.links:
        if (link.node_a in failed_switches or link.node_b in failed_switches
                or link_key(link.node_a, link.node_b) in failed_links):
            continue
        graph.add_edge(link.node_a, link.node_b)
    pairs = []
    for component in networkx.connected_components(graph):
        hosts = sorted(name for name in component if topo.nodes[name].is_host)
        pairs.extend((a, b) for a in hosts for b in hosts if a != b)
    return pairs


def port_is_live(topo, switch, port, failed_links, failed_switches):
    """Whether a switch port (model number) would be live: cabled, and the
    link and the far end up (a host's link fails only with its switch)."""
    peer = topo.peer(switch, port)
    if peer is None or switch in failed_switches or peer[0] in failed_switches:
        return False
    return link_key(switch, peer[0]) not in failed_links


def installed_forward(topo, states, failed_links, failed_switches):
    """forward(switch, in_port, dst_ip) -> model out port or None, from the
    dumped state (topologies.walk's interface)."""
    def forward(switch, in_port, dst_ip):
        if switch in failed_switches:
            return None
        state = states[switch]
        packet = {'eth_type': 0x0800, 'ip_proto': 1, 'ipv4_dst': ip_to_int(dst_ip),
                  'in_port': ofport(in_port), 'metadata': 0}
        hit = rules_hit(state.tables, packet)
        if not hit or hit[-1] is None:
            return None
        port = None
        for action in hit[-1].actions:
            if action[0] == 'output':
                port = model_port(action[1])
                break
            if action[0] == 'group':
                port = _group_port(topo, switch, state.groups.get(action[1]), failed_links, failed_switches)
                break
        if port is None or not port_is_live(topo, switch, port, failed_links, failed_switches):
            return None  # dropped, or sent into a dead link
        return port
    return forward


def _group_port(topo, switch, group, failed_links, failed_switches):
    if group is None:
        return None
    if group.kind not in ('ff', 'fast_failover'):
        raise ValueError('%s: a %s group is not walked (only fast-failover groups: the default '
                         'two-level app)' % (switch, group.kind))
    for watch_port, actions in group.buckets:
        if watch_port is None or port_is_live(topo, switch, model_port(watch_port), failed_links,
                                              failed_switches):
            return next((model_port(a[1]) for a in actions if a[0] == 'output'), None)
    return None


def unrouted_pairs(topo, states, failed_links=frozenset(), failed_switches=frozenset(), pairs=None):
    """[(src, dst, why)] of the physically connected pairs (or of ``pairs``)
    that the installed state does not deliver."""
    forward = installed_forward(topo, states, failed_links, failed_switches)
    unrouted = []
    for src, dst in (connected_pairs(topo, failed_links, failed_switches) if pairs is None else pairs):
        try:
            walk(topo, forward, src, dst)
        except RoutingError as error:
            unrouted.append((src, dst, str(error)))
    return unrouted


def expected_rules_and_groups(topo, table):
    """A switch's computed state as the default fat-tree app installs it:
    its compiled routing table and its ARP responder."""
    rules, groups = compile_table(table)
    return rules + arp_responder_rules(topo, table.switch), groups


def table_mismatch(topo, table, state):
    """None if a switch's installed state equals its computed table, or
    what differs: {'missing': n, 'unexpected': n, 'groups_differ': bool}."""
    rules, groups = expected_rules_and_groups(topo, table)
    want = {ofctl_dump.comparable_rule(r) for r in rules}
    have = {ofctl_dump.comparable_read(r) for r in state.rules}
    want_groups = {ofctl_dump.comparable_group(g) for g in groups}
    have_groups = {ofctl_dump.comparable_group(g) for g in state.groups.values()}
    if want == have and want_groups == have_groups:
        return None
    return {'missing': len(want - have), 'unexpected': len(have - want),
            'groups_differ': want_groups != have_groups}
