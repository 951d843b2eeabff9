"""Flow classification with dynamic port reassignment (Al-Fares et al. 3.6,
heuristic of 4.2) as pure logic: no Ryu, no Mininet, no clock of its own.

A flow is the paper's subset of header fields: source IP, destination IP and
destination transport port (plus the IP protocol, without which OpenFlow
cannot match a transport port). Each pod switch keeps every known flow on one
upward port (so a flow's packets are not reordered between rebalances), puts
a new flow on the least-loaded upward port, and every t seconds moves the
fewest flows needed to even out its upward ports: between the most and the
least loaded port, difference D, move the largest flow smaller than D; repeat
a bounded number of times.

Rates are in bit/s; they come from the switches' per-flow byte counters
through ``RateMeter``.

Failures (section 3.8): a per-flow entry names its output port and so
overrides the two-level tables and their failure broadcast. Each switch
therefore takes the broadcast's avoidance tags (controller.fattree.failover): a flow
is only ever on an upward port that is not avoided for its destination; when
the tags change, flows on a port that became avoided move to the least
loaded allowed one, or to the two-level tables (``None``) when no port is
allowed; rebalancing runs over the live ports only.
"""
from dataclasses import dataclass

from controller.fattree.failover import ALL, avoided_for

PROTOCOLS = {6: 'tcp', 17: 'udp'}


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


@dataclass(frozen=True)
class Move:
    """A flow reassigned from one upward port of ``switch`` to another
    (``new_port`` None: to the two-level tables, no upward port allowed)."""
    switch: str
    flow: FlowKey
    old_port: int
    new_port: int


class PortBalancer:
    """One pod switch's flow -> upward port assignment and per-flow rates."""

    def __init__(self, switch, ports):
        if not ports:
            raise ValueError('%s has no upward ports to balance' % switch)
        self.switch = switch
        self.ports = tuple(sorted(ports))
        self.port_of = {}  # flow -> port
        self.rate = {}  # flow -> bit/s (0 until measured)
        self.unmeasured = set()  # assigned since the last measurement
        self.avoid = {}  # the failure broadcast's tags: {(network, length): ports}

    def allowed(self, flow):
        """The upward ports the flow may use under the current failures."""
        avoided = avoided_for(self.avoid, flow.dst)
        return [p for p in self.ports if p not in avoided]

    def live_ports(self):
        return [p for p in self.ports if p not in self.avoid.get(ALL, ())]

    def loads(self):
        """{port: aggregate bit/s of its flows} for every upward port."""
        loads = dict.fromkeys(self.ports, 0.0)
        for flow, port in self.port_of.items():
            loads[port] += self.rate.get(flow, 0.0)
        return loads

    def assign(self, flow):
        """The flow's port: its existing one, else the least-loaded allowed
        port (ties: fewest flows, then lowest port) -- new flows have no
        measured rate yet, so a burst of them is spread by count. None (not
        tracked) when failures leave the flow no allowed port."""
        if flow in self.port_of:
            return self.port_of[flow]
        allowed = self.allowed(flow)
        if not allowed:
            return None
        loads = self.loads()
        counts = dict.fromkeys(self.ports, 0)
        for port in self.port_of.values():
            counts[port] += 1
        port = min(allowed, key=lambda p: (loads[p], counts[p], p))
        self.port_of[flow] = port
        self.rate[flow] = 0.0
        self.unmeasured.add(flow)
        return port

    def set_avoided(self, tags):
        """New avoidance tags; returns the Moves of the flows whose port
        they forbid (in flow order, each to the then least-loaded allowed
        port)."""
        self.avoid = {prefix: frozenset(ports) for prefix, ports in tags.items()}
        moves = []
        for flow, port in sorted(self.port_of.items()):
            if port not in self.allowed(flow):
                rate = self.rate.pop(flow)
                del self.port_of[flow]
                self.unmeasured.discard(flow)
                new_port = self.assign(flow)
                if new_port is not None:
                    self.rate[flow] = rate
                moves.append(Move(self.switch, flow, port, new_port))
        return moves

    def update(self, rates):
        """New measurements {flow: bit/s} of the flows on the switch; a
        flow absent from them has expired and is dropped -- unless it was
        assigned since the last measurement, which its entry may have missed."""
        self.port_of = {f: p for f, p in self.port_of.items() if f in rates or f in self.unmeasured}
        self.rate = {f: float(rates.get(f, 0.0)) for f in self.port_of}
        self.unmeasured = set()

    def rebalance(self, max_moves, tolerance=0.0):
        """The paper's heuristic, at most ``max_moves`` times: D = load(pmax)
        - load(pmin); move the largest flow on pmax with rate < D to pmin.
        Moving a flow of rate r < D strictly lowers the max-min spread, so the
        loop never undoes itself. Flows at or below ``tolerance`` (ACK
        streams, measurement noise) are never moved -- reordering them buys
        nothing -- and the loop stops when D <= tolerance or no flow fits."""
        moves = []
        live = self.live_ports()
        for _ in range(max_moves if len(live) > 1 else 0):
            loads = self.loads()
            pmax = max(live, key=lambda p: (loads[p], -p))
            pmin = min(live, key=lambda p: (loads[p], p))
            spread = loads[pmax] - loads[pmin]
            if spread <= tolerance:
                break
            candidates = [f for f, p in self.port_of.items()
                          if p == pmax and tolerance < self.rate[f] < spread
                          and pmin in self.allowed(f)]
            if not candidates:
                break
            flow = max(candidates, key=lambda f: (self.rate[f], f))
            self.port_of[flow] = pmin
            moves.append(Move(self.switch, flow, pmax, pmin))
        return moves

    def state(self):
        return {'ports': {str(p): load for p, load in self.loads().items()},
                'flows': [{'flow': str(f), 'port': p, 'rate_bps': self.rate[f]}
                          for f, p in sorted(self.port_of.items())]}


class FlowClassifier:
    """Every pod switch's PortBalancer over a fat-tree model, on the upward
    ports the model cables (the paper's k/2..k-1)."""

    def __init__(self, topo, max_moves=3, tolerance=0.0):
        if max_moves < 1:
            raise ValueError('max_moves must be at least 1, got %r' % (max_moves,))
        self.topo = topo
        self.max_moves = max_moves
        self.tolerance = tolerance
        self.switches = {s.name: PortBalancer(s.name, topo.up_ports(s.name))
                         for s in topo.switches if s.role in ('edge', 'aggregation')}

    def balancer(self, switch):
        try:
            return self.switches[switch]
        except KeyError:
            raise ValueError('%s is not a pod switch of %s' % (switch, self.topo.name)) from None

    def assign(self, switch, flow):
        return self.balancer(switch).assign(flow)

    def update(self, switch, rates):
        self.balancer(switch).update(rates)

    def set_failures(self, avoid):
        """The failure broadcast's tags for every switch (controller.fattree.failover.
        avoidance); returns the Moves they force, in switch-name order."""
        moves = []
        for name in sorted(self.switches):
            moves += self.switches[name].set_avoided(avoid.get(name, {}))
        return moves

    def rebalance(self):
        """Moves for every pod switch, in switch-name order."""
        moves = []
        for name in sorted(self.switches):
            moves += self.switches[name].rebalance(self.max_moves, self.tolerance)
        return moves

    def state(self):
        return {name: b.state() for name, b in sorted(self.switches.items()) if b.port_of}
