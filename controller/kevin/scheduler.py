"""Centralised DA-link scheduling for Kevin (seed 002, Algorithms 2 and 3).

Every period rho the scheduler takes a demand matrix D (ToR pair -> byte rate,
measured from switch counters by ``DemandMeter``), sorts it by decreasing
demand and tries to add one DA link per demand:

  BFS-DA-links (Algorithm 2): follow the static greedy path from s towards t
    to the first ToR x with an available DA transmit port; the spines of those
    ports are ``switches``. A destination-based BFS from t (over the static
    de Bruijn in-edges) finds the nearest y with an available receive port on
    one of ``switches``; the shortcut x -> y is set if the greedy path with it
    is equal to or shorter than the current greedy path (static + DA).
  Greedy-DA-links (Algorithm 3): connect s -> t directly if both have an
    available port on the same DA spine.

Timing: a new DA link is usable only delta after it is decided
(reconfiguration), and it is reserved for r after that decision before its
ports may be given to another link. Links are never torn down proactively:
an expired link stays until a new link needs its port.

Two choices the seed leaves open, made explicit here:
  * a demand already served in at most one hop is skipped, and the DA links
    on the current path of a demand processed earlier in the round are kept
    for the round, so a smaller demand never takes the ports of a larger one;
  * the algorithms plan on the topology with every decided link, including
    links still within delta, since they will exist when the plan is in force.

Everything is pure: time is passed in (``now``), nothing touches a switch.
"""
from collections import deque
from dataclasses import dataclass, field

from controller.kevin.routing import KevinRouting
from topologies.kevin import KevinParameterError, address_str

ALGORITHMS = ('bfs', 'greedy')


@dataclass(frozen=True)
class DaLink:
    spine: int          # DA spine number j (ToR port kevin.da_port(j))
    source: tuple
    destination: tuple
    decided_at: float
    usable_at: float    # decided_at + delta
    reserved_until: float  # decided_at + r

    def __str__(self):
        return 'DA%d:%s->%s' % (self.spine, address_str(self.source), address_str(self.destination))


@dataclass
class Plan:
    """One scheduling round: links to tear down, then links to set."""
    removed: list = field(default_factory=list)
    added: list = field(default_factory=list)


def sorted_demands(demand, threshold=0):
    """[(s, t, rate)] by decreasing rate (ties by addresses): demands above
    ``threshold`` only (pings and ARP-level chatter must not grab DA ports),
    no self demands."""
    return sorted(((s, t, rate) for (s, t), rate in demand.items()
                   if rate > threshold and s != t),
                  key=lambda item: (-item[2], item[0], item[1]))


class DaCircuits:
    """The decided DA links of the k_d DA spines (directed matchings)."""

    def __init__(self, kevin):
        self.kevin = kevin
        self.by_tx = {}  # (spine, source) -> DaLink
        self.by_rx = {}  # (spine, destination) -> DaLink

    def links(self):
        return sorted(self.by_tx.values(), key=lambda l: (l.spine, l.source))

    def add(self, link):
        if (link.spine, link.source) in self.by_tx or (link.spine, link.destination) in self.by_rx:
            raise AssertionError('%s reuses a busy DA port' % link)
        self.by_tx[(link.spine, link.source)] = link
        self.by_rx[(link.spine, link.destination)] = link

    def remove(self, link):
        del self.by_tx[(link.spine, link.source)]
        del self.by_rx[(link.spine, link.destination)]

    def blocking(self, spine, source, destination):
        """The links holding the transmit port of ``source`` or the receive
        port of ``destination`` on ``spine``."""
        found = [self.by_tx.get((spine, source)), self.by_rx.get((spine, destination))]
        return [l for i, l in enumerate(found) if l is not None and l not in found[:i]]

    def routing(self):
        """Greedy routing over static links plus every decided DA link."""
        routing = KevinRouting(self.kevin)
        for link in self.by_tx.values():
            routing.add_da_link(link.spine, link.source, link.destination)
        return routing


class _Round:
    """State of one scheduling round shared by both algorithms."""

    def __init__(self, circuits, now, delta, reservation):
        self.circuits, self.now = circuits, now
        self.delta, self.reservation = delta, reservation
        self.routing = circuits.routing()
        self.kept = set()  # links carrying a demand already processed this round
        self.plan = Plan()

    def replaceable(self, link):
        return link is None or (self.now >= link.reserved_until and link not in self.kept)

    def tx_free(self, spine, source):
        return self.replaceable(self.circuits.by_tx.get((spine, source)))

    def rx_free(self, spine, destination):
        return self.replaceable(self.circuits.by_rx.get((spine, destination)))

    def keep_path(self, path):
        for here, there in zip(path, path[1:]):
            for spine in range(self.circuits.kevin.k_d):
                link = self.circuits.by_tx.get((spine, here))
                if link is not None and link.destination == there:
                    self.kept.add(link)

    def hops_with(self, spine, source, destination, s, t):
        """Greedy hops s -> t if source -> destination were set on ``spine``:
        tried on the round's routing and undone (only source tables change)."""
        blocking = self.circuits.blocking(spine, source, destination)
        for link in blocking:
            self.routing.remove_da_link(link.spine, link.source)
        self.routing.add_da_link(spine, source, destination)
        hops = self.routing.hops(s, t)
        self.routing.remove_da_link(spine, source)
        for link in blocking:
            self.routing.add_da_link(link.spine, link.source, link.destination)
        return hops

    def set_link(self, spine, source, destination):
        for link in self.circuits.blocking(spine, source, destination):
            self.circuits.remove(link)
            self.routing.remove_da_link(link.spine, link.source)
            self.plan.removed.append(link)
        link = DaLink(spine, source, destination, self.now, self.now + self.delta,
                      self.now + self.reservation)
        self.circuits.add(link)
        self.routing.add_da_link(spine, source, destination)
        self.plan.added.append(link)
        self.kept.add(link)


def _greedy_candidate(rnd, s, t):
    """Algorithm 3: a DA spine with a free port at s (transmit) and t (receive)."""
    for spine in range(rnd.circuits.kevin.k_d):
        if rnd.tx_free(spine, s) and rnd.rx_free(spine, t):
            return spine, s, t
    return None


def _bfs_candidate(rnd, s, t, static_routing):
    """Algorithm 2: x on the static greedy path with a free DA transmit port,
    then the nearest y to t (destination-based BFS) free on one of x's spines."""
    kevin = rnd.circuits.kevin
    for x in static_routing.path(s, t)[:-1]:
        switches = [j for j in range(kevin.k_d) if rnd.tx_free(j, x)]
        if switches:
            break
    else:
        return None
    seen, queue = {t}, deque([t])
    while queue:
        y = queue.popleft()
        if y != x and y not in rnd.routing.tables[x].neighbours.values():
            for spine in switches:
                if rnd.rx_free(spine, y):
                    return spine, x, y
        # in-neighbours of y in DB(k_s, d): (a,) + y[:-1]
        for a in range(kevin.k_s):
            w = (a,) + y[:-1]
            if w not in seen:
                seen.add(w)
                queue.append(w)
    return None


class DaScheduler:
    """BFS-DA-links or Greedy-DA-links every ``period`` seconds with
    reconfiguration delay ``delta`` and reservation time ``reservation``, on
    demands above ``threshold`` (bytes/s).

    ``routing`` holds only usable links (static + DA links past delta); the
    Ryu app compiles ToR tables from it and spine circuits from ``circuits``."""

    def __init__(self, kevin, algorithm='bfs', period=1.0, delta=0.0, reservation=0.0,
                 threshold=0.0, now=0.0):
        if algorithm not in ALGORITHMS:
            raise KevinParameterError('DA scheduling algorithm must be one of %s, got %r'
                                      % (', '.join(ALGORITHMS), algorithm))
        for name, value in (('period', period), ('delta', delta), ('reservation', reservation),
                            ('threshold', threshold)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise KevinParameterError('DA scheduler %s must be a number >= 0, got %r'
                                          % (name, value))
        if period == 0:
            raise KevinParameterError('DA scheduler period must be > 0')
        if kevin.k_d == 0:
            raise KevinParameterError('%s has no DA spines to schedule' % kevin.name)
        self.kevin, self.algorithm = kevin, algorithm
        self.period, self.delta, self.reservation = period, delta, reservation
        self.threshold = threshold
        self.circuits = DaCircuits(kevin)
        self.routing = KevinRouting(kevin)
        self.static_routing = KevinRouting(kevin)
        self.next_run = now

    def due(self, now):
        return now >= self.next_run

    def schedule(self, demand, now):
        """Run one round on ``demand`` {(s, t): rate}; returns the Plan.
        Removed links leave ``routing`` at once (their sources stop using them
        before the circuit changes); added links join it in ``activate``."""
        rnd = _Round(self.circuits, now, self.delta, self.reservation)
        for s, t, _ in sorted_demands(demand, self.threshold):
            s, t = self.kevin.check_address(s), self.kevin.check_address(t)
            current = rnd.routing.path(s, t)
            rnd.keep_path(current)
            if len(current) <= 2:
                continue
            if self.algorithm == 'greedy':
                candidate = _greedy_candidate(rnd, s, t)
            else:
                candidate = _bfs_candidate(rnd, s, t, self.static_routing)
                if candidate is not None and rnd.hops_with(*candidate, s, t) > len(current) - 1:
                    candidate = None
            if candidate is not None:
                rnd.set_link(*candidate)
                rnd.keep_path(rnd.routing.path(s, t))
        for link in rnd.plan.removed:
            if self.routing.da_tx.get((link.spine, link.source)) == link.destination:
                self.routing.remove_da_link(link.spine, link.source)
        self.next_run = now + self.period
        return rnd.plan

    def activate(self, now):
        """Decided links whose reconfiguration delay is over join ``routing``;
        returns them (their sources' tables changed)."""
        ready = [l for l in self.circuits.links()
                 if l.usable_at <= now and self.routing.da_tx.get((l.spine, l.source)) != l.destination]
        for link in ready:
            self.routing.add_da_link(link.spine, link.source, link.destination)
        return ready


class DemandMeter:
    """Byte rates per ToR pair from cumulative byte counters. Each pair's rate
    is taken against that pair's own previous sample, so a counter missing
    from one poll (its switch's stats reply came too late, as happens on a
    loaded controller) yields its average over the longer interval when it
    returns, not its whole history as one spike that grabs a DA link."""

    def __init__(self):
        self._last = {}  # pair -> (time, bytes) of its latest sample

    def update(self, now, counters):
        """Rates {pair: bytes/s} of the pairs in ``counters`` sampled before
        (a pair's first sample gives none). A counter that went backwards (a
        reinstalled rule) counts from zero."""
        rates = {}
        for pair, value in counters.items():
            if pair in self._last:
                then, old = self._last[pair]
                if now > then:
                    rates[pair] = (value - old if value >= old else value) / (now - then)
            self._last[pair] = (now, value)
        return rates
