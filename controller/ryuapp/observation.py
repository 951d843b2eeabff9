"""What the controller has seen of a running fabric, as plain data: the live
web view (controller.ryuapp.web) and the Prometheus metrics
(controller.ryuapp.metrics) both read it. No Ryu here: the Ryu side feeds it
port changes, port counters, table sizes and message counts; port and link
states are read from the app's one port-state tracker.

Ports here are OpenFlow port numbers (what the switch reports and what
FAUCET-style metrics label); the model is asked for the cabling.
"""
from collections import deque
from dataclasses import dataclass

from controller.fattree.failover import link_key
from topologies.model import model_port, ofport

# Rows of the drawing, top to bottom, by the model's roles: core/spines/roots
# above, hosts at the bottom. N-Bridge roots get one row per dimension.
ROLE_ROWS = {
    'core': 0, 'aggregation': 1, 'edge': 2,                # fat-tree
    'static_spine': 0, 'da_spine': 0, 'tor': 2,            # Kevin
    'switch': 0,                                           # non-blocking reference
    'leaf': 2,                                             # N-Bridge (roots: rows 0-1 by dimension)
    'host': 3,
}
WIDTH, ROW_HEIGHT, MARGIN = 1000, 120, 40
EVENT_LOG_SIZE = 200
# The counter polls send four requests per switch each period. Up to 80
# switches (k=8) that is every 2 s; larger fabrics poll less often so that
# the polls stay within this many requests per second (at k=16, 320 switches
# every 2 s kept a busy controller behind its port-status events).
DEFAULT_POLL_PERIOD_S = 2.0
POLL_REQUESTS_PER_SWITCH = 4
POLL_REQUESTS_PER_S = 160


def poll_period(requested, switches):
    """Seconds between counter polls: ``requested`` if given (0: none),
    else 2 s or longer for large fabrics (see POLL_REQUESTS_PER_S)."""
    if requested is not None:
        return requested
    return max(DEFAULT_POLL_PERIOD_S, POLL_REQUESTS_PER_SWITCH * switches / POLL_REQUESTS_PER_S)


def _row(node, topo):
    if node.role == 'root':  # coords (dim, line, p): highest dimension on top
        dimensions = len(topo.shape)
        return (dimensions - 1 - node.coords[0]) / (dimensions - 1) if dimensions > 1 else 1
    try:
        return ROLE_ROWS[node.role]
    except KeyError:
        raise ValueError('no drawing row for role %r of %s (known roles: %s)'
                         % (node.role, node.name, ', '.join(sorted(ROLE_ROWS)))) from None


def _order(node):
    # Kevin's static spines before its DA spines; otherwise by coordinates.
    return (node.role == 'da_spine', node.coords, node.name)


def layout(topo):
    """Positions of every node by role and coordinates, and every link with
    an id ``a-b`` (model end names): {'name', 'nodes': [...], 'links': [...]}."""
    rows = {}
    for node in topo.nodes.values():
        rows.setdefault(_row(node, topo), []).append(node)
    nodes = []
    for row, members in sorted(rows.items()):
        members.sort(key=_order)
        for index, node in enumerate(members):
            nodes.append({'name': node.name, 'role': node.role, 'switch': not node.is_host,
                          'x': round(MARGIN + (index + 0.5) * (WIDTH - 2 * MARGIN) / len(members), 1),
                          'y': MARGIN + row * ROW_HEIGHT})
    links, seen = [], set()
    for link in topo.links:
        if link_id(link) in seen:
            raise ValueError('two links between %s and %s: the view names links by their ends'
                             % (link.node_a, link.node_b))
        seen.add(link_id(link))
        links.append({'id': link_id(link), 'a': link.node_a, 'port_a': ofport(link.port_a),
                      'b': link.node_b, 'port_b': ofport(link.port_b)})
    return {'name': topo.name, 'width': WIDTH, 'height': 2 * MARGIN + 3 * ROW_HEIGHT,
            'nodes': nodes, 'links': links}


def link_id(link):
    return '%s-%s' % (link.node_a, link.node_b)


def overlay_view(topo, overlay):
    """An app's overlay (FabricViewMixin.observed_state: node-name pairs
    and triples) as the view draws it: link ids."""
    ids = {frozenset((l.node_a, l.node_b)): link_id(l) for l in topo.links}

    def linked(a, b):
        try:
            return ids[frozenset((a, b))]
        except KeyError:
            raise ValueError('%s and %s are not linked in %s' % (a, b, topo.name)) from None
    return {'avoided': sorted(linked(a, b) for a, b in overlay.get('avoided', ())),
            'reserved': [{'link': linked(a, b), 'from': a, 'to': b, 'label': label}
                         for a, b, label in overlay.get('reserved', ())],
            'da_links': [{'source': source, 'spine': spine, 'destination': destination,
                          'links': [linked(source, spine), linked(spine, destination)]}
                         for source, spine, destination in overlay.get('da_links', ())],
            'shielded': sorted(overlay.get('shielded', ()))}


@dataclass(frozen=True)
class PortCounters:
    rx_bytes: int
    tx_bytes: int
    rx_packets: int
    tx_packets: int


class FabricObservation:
    """Port counters, table sizes, OpenFlow message counts and an event log
    of one fabric, keyed by the model's switch names; port and link states
    are those of ``ports``, the app's one port-state tracker
    (controller.openflow.port_states.PortStates), which routing reads too."""

    def __init__(self, topo, clock, ports):
        self.topo, self.clock, self.ports = topo, clock, ports
        self.counters = {}  # (switch, OpenFlow port) -> PortCounters
        self.rates = {}     # (switch, OpenFlow port) -> (rx bit/s, tx bit/s)
        self._sampled = {}  # (switch, OpenFlow port) -> time of the counters
        self.flows = {}     # switch -> flow entries the switch reported
        self.groups = {}    # switch -> groups the switch reported
        self.sent = {}      # (switch, 'flow' | 'other') -> messages sent
        self.received = {}  # (switch, message type) -> messages received
        self.packet_ins = {}  # switch -> packet-ins
        # (switch, OpenFlow port) -> OFPPS_LIVE changes with carrier up: BFD going down
        # or up where BFD runs; OVS also reports a pulled cable as not live just before
        # its carrier goes
        self.live_changes = {}
        self.events = deque(maxlen=EVENT_LOG_SIZE)
        self._next_seq = 0

    def log(self, kind, text):
        """Add an event (kind: 'failure', 'recovery', 'broadcast', ...)."""
        self.events.append({'seq': self._next_seq, 'time': self.clock(), 'kind': kind, 'text': text})
        self._next_seq += 1

    def events_since(self, seq):
        """Events with a sequence number >= ``seq``, oldest first."""
        return [e for e in self.events if e['seq'] >= seq]

    def _peer_text(self, switch, port):
        peer = self.topo.peer(switch, model_port(port))
        return '%s port %d%s' % (switch, port, ' (to %s)' % peer[0] if peer else '')

    def port_changed(self, switch, port, before):
        """The tracker took a new state of ``switch``'s port ``port``, which
        was ``before`` ({'carrier', 'live'}, None when first heard of): logs
        what changed."""
        new = self.ports.state(switch, model_port(port))
        if before is None or before == new:
            return
        where, key = self._peer_text(switch, port), (switch, port)
        if before['carrier'] != new['carrier']:
            self.log('recovery' if new['carrier'] else 'failure',
                     '%s: carrier %s' % (where, 'up' if new['carrier'] else 'down'))
        elif before['live'] != new['live']:
            self.live_changes[key] = self.live_changes.get(key, 0) + 1
            self.log('recovery' if new['live'] else 'failure',
                     '%s: %s' % (where, 'live' if new['live'] else 'not live'))

    def port_states(self):
        """Every reported port: {(switch, OpenFlow port): {'carrier', 'live'}}."""
        return {(switch, ofport(port)): state for (switch, port), state in self.ports.reported().items()}

    def port_stats(self, switch, port, counters, now):
        """Counters of one port at ``now`` (s, monotonic); rates from the previous reading."""
        key = (switch, port)
        before, then = self.counters.get(key), self._sampled.get(key)
        if before is not None and now > then and counters.rx_bytes >= before.rx_bytes \
                and counters.tx_bytes >= before.tx_bytes:
            elapsed = now - then
            self.rates[key] = (8.0 * (counters.rx_bytes - before.rx_bytes) / elapsed,
                               8.0 * (counters.tx_bytes - before.tx_bytes) / elapsed)
        else:  # first reading, or the counters restarted (port re-created)
            self.rates.pop(key, None)
        self.counters[key], self._sampled[key] = counters, now

    def table_sizes(self, switch, flows=None, groups=None):
        if flows is not None:
            self.flows[switch] = flows
        if groups is not None:
            self.groups[switch] = groups

    def message_sent(self, switch, is_flow_mod):
        key = (switch, 'flow' if is_flow_mod else 'other')
        self.sent[key] = self.sent.get(key, 0) + 1

    def message_received(self, switch, msg_type):
        key = (switch, msg_type)
        self.received[key] = self.received.get(key, 0) + 1
        if msg_type == 'OFPPacketIn':
            self.packet_ins[switch] = self.packet_ins.get(switch, 0) + 1

    def failed_links(self):
        """The switch-to-switch links routing avoids (the tracker's), as (a, b) pairs in model order."""
        failed = self.ports.failed_links(self.clock())
        return [(l.node_a, l.node_b) for l in self.topo.switch_links() if link_key(l.node_a, l.node_b) in failed]

    def links(self):
        """Every link's id, state (controller.openflow.port_states.CONDITIONS)
        and load in each direction (bit/s, from the switch ends' port
        counters; None until two readings exist)."""
        rows, now = [], self.clock()
        for link in self.topo.links:
            a_rates = self.rates.get((link.node_a, ofport(link.port_a)))
            b_rates = self.rates.get((link.node_b, ofport(link.port_b)))
            # a -> b is what a transmits, or else what b receives (a host end has no counters)
            a_to_b = a_rates[1] if a_rates else (b_rates[0] if b_rates else None)
            b_to_a = b_rates[1] if b_rates else (a_rates[0] if a_rates else None)
            rows.append({'id': link_id(link), 'state': self.ports.link_condition(link, now),
                         'a_to_b_bps': a_to_b, 'b_to_a_bps': b_to_a})
        return rows
