"""Flow classification with dynamic port reassignment (Al-Fares et al. 3.6,
heuristic of 4.2) as pure logic: no Ryu, no Mininet, no clock of its own.

A flow is the paper's subset of header fields: source IP, destination IP and
destination transport port (plus the IP protocol, without which OpenFlow
cannot match a transport port). Each pod switch keeps every known flow on one
upward port (so a flow's packets are not reordered between rebalances), puts
a new flow on its two-level port unless that port carries more than the
tolerance above the least-loaded upward port (then on that one), and every t
seconds moves the fewest flows needed to even out its upward ports: between
the most and the least loaded port, difference D, move the largest flow
smaller than D; repeat a bounded number of times.

Never below two-level routing. The classifier refines the
two-level tables, so it must not do worse than them. Its controller sees the
whole fabric, so every rebalancing round models it: the data streams above
the tolerance (or not yet measured), on the paths their per-flow entries and the
two-level tables give them, shared max-min fairly (controller.fattree.
fair_share). A round first moves flows back to their two-level ports, in flow
order, until the model is at least what the same flows get on their two-level
paths (flows that ended or arrived since the last round can leave it below),
then makes only the heuristic's moves that strictly raise the model (a move
that leaves it equal gains nothing and reorders the moved flow's packets, a
TCP loss signal). So after every round the modelled placement is at or above
two-level routing's.

Rates are in bit/s; they come from the switches' per-flow byte counters
through ``RateMeter``.

Data streams only. A TCP connection is two flows here: its data and, the
other way, the receiver's ACKs, a few percent of the data's bytes. Moving
an ACK stream gains nothing, and modelling it as a long flow makes moving
the data flows beside it look like a gain. Pairing the two halves is out of
reach: an entry matches the destination port only, so the data's source
port (the ACKs' destination port) is never seen, and comparing the rates of
two host-pair directions read at different switches and moments is not
exact enough (ACK streams, a few percent of link rate at most, were read
above the 10%-of-link tolerance in the bisection runs). One entry's own
counters, read together, do tell: a pure ACK carries no payload, so its
frame is at most ``ACK_FRAME_BYTES``, while data travels in segments of up
to the MTU. A TCP flow whose frames average no more (``ack_streams``) is an
ACK stream: rebalancing never moves it (a failure still moves it off a dead
port), and it counts in no port load and not in the model. Before its first
reading nothing tells which half of a connection a TCP flow is, so one
whose opposite direction is tracked is not modelled until measured.

Failures (section 3.8): a per-flow entry names its output port and so
overrides the two-level tables and their failure broadcast. Each switch
therefore takes the broadcast's avoidance tags (controller.fattree.failover): a flow
is only ever on an upward port that is not avoided for its destination; when
the tags change, flows on a port that became avoided are placed again as new
flows (their two-level port if allowed and not busier, else the least loaded
allowed one), or to the two-level tables (``None``) when no port is
allowed; rebalancing runs over the live ports only.
"""
from dataclasses import dataclass

from controller.fattree.fair_share import max_min_share, path_links
from controller.fattree.failover import ALL, avoided_for
from controller.fattree.twolevel import all_tables
from topologies.walk import walk

TCP = 6
PROTOCOLS = {TCP: 'tcp', 17: 'udp'}
# The largest frame of a TCP segment without payload: Ethernet, IPv4 and a
# TCP header full of options (timestamps, SACK blocks).
ACK_FRAME_BYTES = 14 + 20 + 60


@dataclass(frozen=True, order=True)
class FlowKey:
    """The paper's flow: (source IP, destination IP, destination port), with
    the IP protocol (6 TCP, 17 UDP) that names which port field it is."""
    src: str
    dst: str
    proto: int
    dport: int

    def __post_init__(self):
        if self.proto not in PROTOCOLS:
            raise ValueError('flow protocol must be one of %s, got %r' % (sorted(PROTOCOLS), self.proto))
        if not 0 <= self.dport <= 0xffff:
            raise ValueError('destination port out of range: %r' % (self.dport,))

    def __str__(self):
        return '%s->%s %s/%d' % (self.src, self.dst, PROTOCOLS[self.proto], self.dport)


class RateMeter:
    """Per-flow rates (bit/s) from successive byte counters of one switch.

    A flow seen for the first time gets bytes / age of its entry; a counter
    that went backwards (the entry was replaced) restarts the same way. A
    flow missing from a reading is forgotten: its entry is gone."""

    def __init__(self):
        self._last = {}  # key -> (time, bytes)

    def update(self, now, counters):
        """counters: {key: (byte_count, entry age in s)} -> {key: bit/s}."""
        rates = {}
        for key, (count, age) in counters.items():
            previous = self._last.get(key)
            if previous is not None and count >= previous[1] and now > previous[0]:
                rates[key] = 8.0 * (count - previous[1]) / (now - previous[0])
            else:
                rates[key] = 8.0 * count / age if age > 0 else 0.0
        self._last = {key: (now, count) for key, (count, _) in counters.items()}
        return rates


def ack_streams(counters):
    """The ACK streams among one switch's per-flow counters
    {flow: (bytes, packets, entry age in s)}: the TCP flows whose frames
    average at most ``ACK_FRAME_BYTES`` (module docstring). A data flow's
    few header-only packets (handshake, ACKs of its reverse traffic) weigh
    little against its segments once it sends."""
    return frozenset(flow for flow, (count, packets, _) in counters.items()
                     if flow.proto == TCP and packets and count <= ACK_FRAME_BYTES * packets)


@dataclass(frozen=True)
class Move:
    """A flow reassigned from one upward port of ``switch`` to another
    (``new_port`` None: to the two-level tables, no upward port allowed;
    ``old_port`` None: a moved flow's entry placed ahead of it on the next
    switch of its new path)."""
    switch: str
    flow: FlowKey
    old_port: int
    new_port: int


def accept_any(move):
    return True


class PortBalancer:
    """One pod switch's flow -> upward port assignment and per-flow rates.
    ``tolerance`` (bit/s): the load difference left alone, and the rate up to
    which a flow (mice, noise) is never moved. ACK streams (``acks``, from
    the counters) are never rebalanced and count in no load."""

    def __init__(self, switch, ports, tolerance=0.0):
        if not ports:
            raise ValueError('%s has no upward ports to balance' % switch)
        self.switch = switch
        self.ports = tuple(sorted(ports))
        self.tolerance = tolerance
        self.port_of = {}  # flow -> port
        self.home = {}  # flow -> its two-level port
        self.rate = {}  # flow -> bit/s (0 until measured)
        self.unmeasured = set()  # assigned since the last measurement
        self.acks = set()  # flows the last measurement found to be ACK streams
        self.avoid = {}  # the failure broadcast's tags: {(network, length): ports}

    def allowed(self, flow):
        """The upward ports the flow may use under the current failures."""
        avoided = avoided_for(self.avoid, flow.dst)
        return [p for p in self.ports if p not in avoided]

    def live_ports(self):
        return [p for p in self.ports if p not in self.avoid.get(ALL, ())]

    def data_streams(self):
        """{flow: port} of the flows not known to be ACK streams."""
        return {f: p for f, p in self.port_of.items() if f not in self.acks}

    def loads(self):
        """{port: aggregate bit/s of its data streams} for every upward port."""
        loads = dict.fromkeys(self.ports, 0.0)
        for flow, port in self.data_streams().items():
            loads[port] += self.rate.get(flow, 0.0)
        return loads

    def choose(self, flow, home):
        """The port a new flow would get (see ``assign``), nothing recorded."""
        if home not in self.ports:
            raise ValueError('%s: two-level port %r of %s is not an upward port %s'
                             % (self.switch, home, flow, self.ports))
        allowed = self.allowed(flow)
        if not allowed:
            return None
        loads = self.loads()
        if home in allowed and loads[home] - min(loads[p] for p in allowed) <= self.tolerance:
            return home
        counts = dict.fromkeys(self.ports, 0)
        for placed in self.data_streams().values():
            counts[placed] += 1
        return min(allowed, key=lambda p: (loads[p], counts[p], p))

    def assign(self, flow, home):
        """The flow's port: its existing one; else ``home``, its two-level
        port, when allowed and at most ``tolerance`` busier than the least
        loaded allowed port; else that least-loaded port (ties: fewest
        flows, then lowest port). None (not tracked) when failures leave the
        flow no allowed port."""
        if flow in self.port_of:
            return self.port_of[flow]
        port = self.choose(flow, home)
        if port is not None:
            self.port_of[flow] = port
            self.home[flow] = home
            self.rate[flow] = 0.0
            self.unmeasured.add(flow)
        return port

    def _forget(self, flow):
        del self.port_of[flow]
        self.unmeasured.discard(flow)
        return self.rate.pop(flow), self.home.pop(flow)

    def set_avoided(self, tags):
        """New avoidance tags; returns the Moves of the flows whose port
        they forbid (in flow order, each placed again as by ``assign``)."""
        self.avoid = {prefix: frozenset(ports) for prefix, ports in tags.items()}
        moves = []
        for flow, port in sorted(self.port_of.items()):
            if port not in self.allowed(flow):
                rate, home = self._forget(flow)
                new_port = self.assign(flow, home)
                if new_port is None:
                    self.acks.discard(flow)
                else:
                    self.rate[flow] = rate
                moves.append(Move(self.switch, flow, port, new_port))
        return moves

    def update(self, rates, acks=frozenset()):
        """New measurements {flow: bit/s} of the flows on the switch, and
        which of them are ACK streams; a flow absent from them has expired
        and is dropped -- unless it was assigned since the last measurement,
        which its entry may have missed."""
        self.port_of = {f: p for f, p in self.port_of.items() if f in rates or f in self.unmeasured}
        self.home = {f: self.home[f] for f in self.port_of}
        self.rate = {f: float(rates.get(f, 0.0)) for f in self.port_of}
        self.acks = {f for f in acks if f in self.port_of}
        self.unmeasured = set()

    def send_home(self, flow):
        """Put the flow back on its two-level port; the Move, or None when
        it is there already or failures forbid that port."""
        port, home = self.port_of[flow], self.home[flow]
        if port == home or home not in self.allowed(flow):
            return None
        self.port_of[flow] = home
        return Move(self.switch, flow, port, home)

    def rebalance(self, max_moves, accept=accept_any):
        """The paper's heuristic, at most ``max_moves`` times: D = load(pmax)
        - load(pmin); move the largest flow on pmax with rate < D to pmin.
        Moving a flow of rate r < D strictly lowers the max-min spread, so the
        loop never undoes itself. Flows at or below the tolerance are never
        moved, nor are ACK streams, and the loop stops when D <= tolerance or
        no flow fits.
        ``accept(move)``, asked with the flow already moved, may refuse the
        move: the next largest flow is tried instead."""
        moves = []
        live = self.live_ports()
        for _ in range(max_moves if len(live) > 1 else 0):
            loads = self.loads()
            pmax = max(live, key=lambda p: (loads[p], -p))
            pmin = min(live, key=lambda p: (loads[p], p))
            spread = loads[pmax] - loads[pmin]
            if spread <= self.tolerance:
                break
            candidates = sorted((f for f, p in self.data_streams().items()
                                 if p == pmax and self.tolerance < self.rate[f] < spread
                                 and pmin in self.allowed(f)),
                                key=lambda f: (self.rate[f], f), reverse=True)
            for flow in candidates:
                self.port_of[flow] = pmin
                move = Move(self.switch, flow, pmax, pmin)
                if accept(move):
                    moves.append(move)
                    break
                self.port_of[flow] = pmax
            else:
                break
        return moves

    def state(self):
        return {'ports': {str(p): load for p, load in self.loads().items()},
                'flows': [{'flow': str(f), 'port': p, 'two_level_port': self.home[f], 'rate_bps': self.rate[f],
                           'ack_stream': f in self.acks}
                          for f, p in sorted(self.port_of.items())]}


class FlowClassifier:
    """Every pod switch's PortBalancer over a fat-tree model, and the
    fabric-wide model that keeps the placement at or above two-level
    routing's (module docstring)."""

    # float noise of two water-fillings of equally good placements
    EPSILON = 1e-9

    def __init__(self, topo, max_moves=3, tolerance=0.0):
        if max_moves < 1:
            raise ValueError('max_moves must be at least 1, got %r' % (max_moves,))
        self.topo = topo
        self.max_moves = max_moves
        self.tables = all_tables(topo)
        self.switches = {s.name: PortBalancer(s.name, topo.up_ports(s.name), tolerance)
                         for s in topo.switches if s.role in ('edge', 'aggregation')}

    def balancer(self, switch):
        try:
            return self.switches[switch]
        except KeyError:
            raise ValueError('%s is not a pod switch of %s' % (switch, self.topo.name)) from None

    def hosts(self, flow):
        """(source host, destination host) of a flow between the fabric's hosts."""
        ends = [self.topo.by_ip(ip) for ip in (flow.src, flow.dst)]
        if not all(node is not None and node.is_host for node in ends):
            raise ValueError('%s is not between two hosts of %s' % (flow, self.topo.name))
        return tuple(node.name for node in ends)

    def assign(self, switch, flow):
        balancer = self.balancer(switch)
        self.hosts(flow)
        return balancer.assign(flow, self.tables[switch].lookup(flow.dst))

    def update(self, switch, rates, acks=frozenset()):
        self.balancer(switch).update(rates, acks)

    def set_failures(self, avoid):
        """The failure broadcast's tags for every switch (controller.fattree.failover.
        avoidance); returns the Moves they force, in switch-name order."""
        moves = []
        for name in sorted(self.switches):
            moves += self.switches[name].set_avoided(avoid.get(name, {}))
        return moves

    def modelled_flows(self):
        """The flows the model shares links among, the data streams: those
        measured above the tolerance somewhere and not yet measured ones,
        less every flow a switch found to be an ACK stream and every TCP
        flow not yet measured whose opposite direction is tracked (either
        half of that connection may be the ACKs)."""
        balancers = self.switches.values()
        acks = set().union(*(b.acks for b in balancers))
        opposite_tracked = {(f.dst, f.src) for b in balancers for f in b.port_of if f.proto == TCP}
        modelled = {f for b in balancers for f in b.port_of
                    if b.rate[f] > b.tolerance
                    or (f in b.unmeasured and not (f.proto == TCP and (f.src, f.dst) in opposite_tracked))}
        return sorted(modelled - acks)

    def path(self, flow, two_level=False):
        """The directed links ``flow`` crosses: its per-flow entries; at an
        upward hop with none yet, the port its first packet would get there;
        elsewhere the two-level tables. With ``two_level``, its two-level port
        at every upward hop that failures do not forbid it."""
        def forward(switch, _, ip):
            home = self.tables[switch].lookup(ip)
            balancer = self.switches.get(switch)
            if balancer is None or home not in balancer.ports:
                return home
            if flow not in balancer.port_of:
                port = home if two_level else balancer.choose(flow, home)
                return home if port is None else port
            if two_level and home in balancer.allowed(flow):
                return home
            return balancer.port_of[flow]
        src, dst = self.hosts(flow)
        return path_links(self.topo, src, walk(self.topo, forward, src, dst))

    def share(self, flows, two_level=False):
        """max_min_share of ``flows`` on their paths (see ``path``)."""
        return max_min_share([self.path(f, two_level) for f in flows])

    def _ahead(self, move):
        """Place a moved flow on the pod switch its new port leads to, if
        that switch has no entry for it, as its first packet there would be
        placed: the entry is then in place before the flow arrives, and the
        model the move was judged by is what the fabric does. The Moves to
        install, this one before ``move``."""
        following = self.topo.peer(move.switch, move.new_port)[0]
        balancer = self.switches.get(following)
        home = self.tables[following].lookup(move.flow.dst) if balancer else None
        if balancer is None or home not in balancer.ports or move.flow in balancer.port_of:
            return [move]
        port = balancer.assign(move.flow, home)
        return [move] if port is None else [Move(following, move.flow, None, port), move]

    def rebalance(self):
        """Moves for every pod switch: first back to two-level ports until
        the model is at or above two-level routing's, then the heuristic's
        moves that strictly raise it, in switch-name order; each move preceded
        by its entry ahead (``_ahead``), if any."""
        flows = self.modelled_flows()
        floor = self.share(flows, two_level=True) - self.EPSILON
        current = self.share(flows)
        moves = []
        tracked = [(f, self.switches[name]) for f in flows for name in sorted(self.switches)
                   if f in self.switches[name].port_of]
        for flow, balancer in tracked:
            if current >= floor:
                break
            move = balancer.send_home(flow)
            if move is not None:
                moves += self._ahead(move)
                current = self.share(flows)

        def raises(move):
            nonlocal current
            moved = self.share(flows)
            if moved <= current + self.EPSILON:
                return False
            current = moved
            moves.extend(self._ahead(move))
            return True
        for name in sorted(self.switches):
            self.switches[name].rebalance(self.max_moves, raises)
        return moves

    def state(self):
        return {name: b.state() for name, b in sorted(self.switches.items()) if b.port_of}
