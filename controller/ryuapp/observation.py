"""What the controller has seen of a running fabric, as plain data: the live
web view (controller.ryuapp.web) and the Prometheus metrics
(controller.ryuapp.metrics) both read it. No Ryu here: the Ryu side feeds it
port descriptions, port counters, table sizes and message counts.

Ports here are OpenFlow port numbers (what the switch reports and what
FAUCET-style metrics label); the model is asked for the cabling.
"""
from collections import deque
from dataclasses import dataclass

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
class PortState:
    carrier: bool
    live: bool  # OFPPS_LIVE: carrier and, where enabled, BFD


@dataclass(frozen=True)
class PortCounters:
    rx_bytes: int
    tx_bytes: int
    rx_packets: int
    tx_packets: int


def end_state(state):
    """'up', 'carrier_down', 'bfd_down' (carrier up, not live) or 'unknown'."""
    if state is None:
        return 'unknown'
    if not state.carrier:
        return 'carrier_down'
    return 'up' if state.live else 'bfd_down'


_SEVERITY = ('up', 'unknown', 'bfd_down', 'carrier_down')


def link_state(state_a, state_b):
    """A link is as bad as its worse end. Host ends report nothing: a link
    with one switch end is that end's state."""
    known = [s for s in (state_a, state_b) if s is not None]
    if not known:
        return 'unknown'
    return max((end_state(s) for s in known), key=_SEVERITY.index)


class FabricObservation:
    """Port states and counters, table sizes, OpenFlow message counts and
    an event log of one fabric, keyed by the model's switch names."""

    def __init__(self, topo, clock):
        self.topo, self.clock = topo, clock
        self.ports = {}     # (switch, OpenFlow port) -> PortState
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

    def port_desc(self, switch, port, carrier, live):
        """A port description (connect, poll or port-status); logs what changed."""
        new, old = PortState(carrier, live), self.ports.get((switch, port))
        self.ports[(switch, port)] = new
        if old is None or old == new:
            return
        where = self._peer_text(switch, port)
        if old.carrier != new.carrier:
            self.log('recovery' if carrier else 'failure',
                     '%s: carrier %s' % (where, 'up' if carrier else 'down'))
        elif old.live != new.live:
            self.live_changes[(switch, port)] = self.live_changes.get((switch, port), 0) + 1
            self.log('recovery' if live else 'failure', '%s: %s' % (where, 'live' if live else 'not live'))

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

    def _end(self, name, port):
        return None if self.topo.nodes[name].is_host else self.ports.get((name, ofport(port)))

    def failed_links(self):
        """Switch-to-switch links with an end that is not live, as (a, b) pairs."""
        return [(l.node_a, l.node_b) for l in self.topo.switch_links()
                if link_state(self._end(l.node_a, l.port_a), self._end(l.node_b, l.port_b))
                in ('bfd_down', 'carrier_down')]

    def links(self):
        """Every link's id, state and load in each direction (bit/s, from
        the switch ends' port counters; None until two readings exist)."""
        rows = []
        for link in self.topo.links:
            a_rates = self.rates.get((link.node_a, ofport(link.port_a)))
            b_rates = self.rates.get((link.node_b, ofport(link.port_b)))
            # a -> b is what a transmits, or else what b receives (a host end has no counters)
            a_to_b = a_rates[1] if a_rates else (b_rates[0] if b_rates else None)
            b_to_a = b_rates[1] if b_rates else (a_rates[0] if a_rates else None)
            rows.append({'id': link_id(link),
                         'state': link_state(self._end(link.node_a, link.port_a),
                                             self._end(link.node_b, link.port_b)),
                         'a_to_b_bps': a_to_b, 'b_to_a_bps': b_to_a})
        return rows
