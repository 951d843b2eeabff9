"""The central flow scheduler of Al-Fares et al. 3.7 as pure logic: no Ryu,
no Mininet; time comes from an injected clock.

Edge switches start every flow on its default (two-level) path, measure it,
and report the data streams whose rate is past a threshold
(``reported_flows``): an ACK stream (controller.fattree.classifier.
ack_streams) is never reported, so it never holds a reservation. The
scheduler keeps a boolean reserved/free state for every directed switch-to-
switch link (links are full duplex: a flow reserves the direction it uses),
and for a newly reported flow searches linearly:

  inter-pod: the (k/2)^2 core switches in order c1_1, c1_2, ... -- each one
             fixes the whole path source edge -> aggregation -> core ->
             destination aggregation -> destination edge;
  intra-pod: the source pod's k/2 aggregation switches.

The search starts at the flow's current path -- its two-level one -- and
goes on cyclically from there (the paper does not say where it starts):
a flow whose own path is free keeps it, since every move reorders a TCP
flow and costs it a window. The first candidate whose links are all free
(and up) is reserved, and the
choice is returned as the output ports to install on the source pod's lower
(and, inter-pod, upper) switch; the rest of the path is fixed by the
two-level tables. A flow not reported for ``gc_timeout`` seconds is
garbage-collected and its links freed.

Beyond the paper, when no candidate is free: first-fit placement in report
order strands about 2 of 16 flows of a random permutation at k=4, and 17%
of them at k=16, with no free path, although a fat-tree can carry every
permutation on link-disjoint paths. A fat-tree's two choices are colours:
the source lower switch's upward port picks a plane (the upper switch of
that index in the pod, and the down link of the same index into the
destination lower switch), and the upper switch's upward port a core of
that plane (the same index at the destination pod's upper switch). A flow
is an edge between its lower switches coloured by its plane, and, within
the plane, an edge between its pods' upper switches coloured by its core:
two bipartite graphs, and a placement a proper edge colouring of both
(König). So a flow with no free path is placed as an edge is added to a
bipartite edge colouring (Paull's rearrangement of a Clos network): with a
colour a free at one end and b at the other, the a/b alternating path from
the other end swaps its colours, which frees a at both; a plane swap moves
each flow on the path to the other plane, where it is placed again the
same way. The path is the shortest over the free colours of both ends, and
at most ``rearrange`` flows move; each moved flow again ends on a path of
free links. ``rearrange=0`` is the paper's scheduler. A flow that still
finds no path is rejected cleanly: nothing is reserved or moved, it stays
on its current path, and the next report tries again. Each step reads a
link's holder, so a report costs the path's length, not a search: a
k=48 round with every host's flow placed fits the polling period.

Links can be reported down from outside (``link_down``/``link_up``, for the
BFD failure handling of 3.8): a down link disqualifies every path through
it, and each reservation through it is re-placed or released.
"""
from dataclasses import dataclass

from controller.fattree.twolevel import all_tables


@dataclass(frozen=True)
class Placement:
    """A large flow's reserved path: ``via`` is the core switch (inter-pod)
    or aggregation switch (intra-pod) that names it, ``links`` the directed
    (from, to) links reserved, ``ports`` the (switch, model port) choices to
    install in the source pod, lower switch first."""
    flow: object
    via: str
    links: tuple
    ports: tuple

    def state(self):
        return {'flow': str(self.flow), 'via': self.via,
                'links': ['%s->%s' % link for link in self.links],
                'ports': {switch: port for switch, port in self.ports}}


@dataclass(frozen=True)
class Change:
    """What a link failure did to a placed flow: re-placed on ``placement``,
    or released (``placement`` None: it falls back to two-level routing)."""
    flow: object
    placement: Placement = None


def large_flows(rates, threshold):
    """The edge switch's detection: flows whose rate (bit/s) exceeds threshold."""
    return sorted(flow for flow, rate in rates.items() if rate > threshold)


def reported_flows(rates, threshold, placed, acks=frozenset()):
    """What an edge switch reports each period: its large data streams, and
    the placed ones still sending at any rate -- a TCP flow backing off
    after a loss stays the same elephant, and dropping its reservation would
    let another flow onto its path and move it again when it recovers. The
    ACK streams ``acks`` are never reported, whatever their measured rate."""
    data = {flow: rate for flow, rate in rates.items() if flow not in acks}
    return sorted(set(large_flows(data, threshold))
                  | {flow for flow, rate in data.items() if rate > 0 and flow in placed})


# Rearrangements tried for one report, shortest first: each costs its path's
# length, and a report near a full fabric has few free colours to pair.
MAX_ATTEMPTS = 16


def _lowest(bits):
    """The index of the lowest set bit of ``bits`` (> 0)."""
    return (bits & -bits).bit_length() - 1


def _indices(bits):
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


@dataclass(frozen=True)
class _Geometry:
    """What a flow's placement chooses between: its lower switches and pods,
    and the plane and core of its two-level path (None within a pod)."""
    edge_s: str
    edge_d: str
    pod_s: object
    pod_d: object
    plane: int
    column: object

    @property
    def inter_pod(self):
        return self.pod_s != self.pod_d


class FlowScheduler:

    def __init__(self, topo, gc_timeout, clock, rearrange=0):
        if gc_timeout <= 0:
            raise ValueError('gc_timeout must be positive, got %r' % (gc_timeout,))
        if isinstance(rearrange, bool) or not isinstance(rearrange, int) or rearrange < 0:
            raise ValueError('rearrange must be a non-negative integer, got %r' % (rearrange,))
        self.rearrange = rearrange
        self.topo = topo
        self.tables = all_tables(topo)  # where an unplaced flow runs now
        self.gc_timeout = gc_timeout
        self.clock = clock
        self.links = set()  # every directed switch-to-switch link
        for link in topo.switch_links():
            self.links.add((link.node_a, link.node_b))
            self.links.add((link.node_b, link.node_a))
        self.reserved = {}  # directed link -> flow holding it
        self.down = set()  # directed links reported down
        self.placements = {}  # flow -> Placement
        self.last_seen = {}  # flow -> time of the last report
        self.rejected = {}  # flow -> time of the last report that found no path
        self.previous = {}  # flow -> its Placement before the last notify moved it
        self._geometries = {}  # flow -> _Geometry
        self._up_port_lists = {}  # pod switch -> its upward ports (the model scans every port for them)
        self._colours()
        self._journal = None  # while a rearrangement is tried: what to undo
        # The search is a function of the reservations and the down links
        # alone: a flow whose search failed fails again until they change
        # (a rejected flow is reported every period).
        self._version = 0  # bumped whenever reservations or down links change
        self._failed_at = {}  # flow -> _version when its search last failed

    # -- the fabric as colours ------------------------------------------

    def _colours(self):
        """Each lower switch's planes (its upward ports in order, and the
        upper switch at each) and each upper switch's cores; the directed
        links of each colour at each switch, up and down; a busy bit (held
        or down) per link. Raises ValueError where the model is not a
        regular fat-tree: a plane is the same upper switch for every lower
        switch of a pod, and a core the same for every pod's upper switch
        of a plane, or colours would not name links."""
        topo = self.topo
        self._uppers, self._cores, self._upper_of = {}, {}, {}
        self._up_links, self._down_links, self._busy_up, self._busy_down = {}, {}, {}, {}
        self._bit_of = {}  # directed link -> (busy dict, switch, bit)
        cores_of_plane = {}
        for edge in (n.name for n in topo.switches if n.role == 'edge'):
            pod, uppers = topo.pod_of(edge), [topo.peer(edge, port)[0] for port in self._up_ports(edge)]
            for plane, upper in enumerate(uppers):
                if self._upper_of.setdefault((pod, plane), upper) != upper:
                    raise ValueError('%s: plane %d of pod %s is not one upper switch' % (topo.name, plane, pod))
                cores = [topo.peer(upper, port)[0] for port in self._up_ports(upper)]
                if cores_of_plane.setdefault(plane, cores) != cores or len(set(cores)) != len(cores):
                    raise ValueError('%s: the cores of plane %d differ between pods' % (topo.name, plane))
                self._cores[upper] = cores
            if len(set(uppers)) != len(uppers):
                raise ValueError('%s: %s reaches one upper switch twice' % (topo.name, edge))
            self._uppers[edge] = uppers
        for lower, above in list(self._uppers.items()) + list(self._cores.items()):
            self._up_links[lower] = [(lower, upper) for upper in above]
            self._down_links[lower] = [(upper, lower) for upper in above]
            self._busy_up[lower] = self._busy_down[lower] = 0
            for bit, (up, down) in enumerate(zip(self._up_links[lower], self._down_links[lower])):
                self._bit_of[up] = (self._busy_up, lower, 1 << bit)
                self._bit_of[down] = (self._busy_down, lower, 1 << bit)

    def _mark(self, link):
        busy, switch, bit = self._bit_of[link]
        if link in self.reserved or link in self.down:
            busy[switch] |= bit
        else:
            busy[switch] &= ~bit

    def _geometry(self, flow):
        """The flow's _Geometry (None when both ends share a lower switch)."""
        if flow in self._geometries:
            return self._geometries[flow]
        topo = self.topo
        edge_s, _ = topo.host_attachment(self._host(flow.src).name)
        edge_d, _ = topo.host_attachment(self._host(flow.dst).name)
        geometry = None
        if edge_s != edge_d:
            pod_s, pod_d = topo.pod_of(edge_s), topo.pod_of(edge_d)
            plane = self._up_ports(edge_s).index(self.tables[edge_s].lookup(flow.dst))
            upper = self._uppers[edge_s][plane]
            column = (self._up_ports(upper).index(self.tables[upper].lookup(flow.dst))
                      if pod_s != pod_d else None)
            geometry = _Geometry(edge_s, edge_d, pod_s, pod_d, plane, column)
        self._geometries[flow] = geometry
        return geometry

    def _free_columns(self, geometry, plane):
        """The cores of ``plane`` free up from the source pod and down into the destination pod."""
        upper_s, upper_d = self._upper_of[geometry.pod_s, plane], self._upper_of[geometry.pod_d, plane]
        width = len(self._cores[upper_s])
        return ~(self._busy_up[upper_s] | self._busy_down[upper_d]) & ((1 << width) - 1)

    def _placement(self, flow, geometry, plane, column):
        """The Placement of ``flow`` on ``plane`` and, inter-pod, ``column``."""
        edge_s, edge_d = geometry.edge_s, geometry.edge_d
        upper_s = self._uppers[edge_s][plane]
        edge_port = ((edge_s, self._up_ports(edge_s)[plane]),)
        if column is None:
            return Placement(flow, upper_s, ((edge_s, upper_s), (upper_s, edge_d)), edge_port)
        core, upper_d = self._cores[upper_s][column], self._upper_of[geometry.pod_d, plane]
        return Placement(flow, core, ((edge_s, upper_s), (upper_s, core), (core, upper_d), (upper_d, edge_d)),
                         edge_port + ((upper_s, self._up_ports(upper_s)[column]),))

    def _colour_of(self, placement):
        """(plane, core column or None) of a placement."""
        plane = _lowest(self._bit_of[placement.links[0]][2])
        return plane, (_lowest(self._bit_of[placement.links[1]][2]) if len(placement.links) == 4 else None)

    # -- paths ----------------------------------------------------------

    def _host(self, ip):
        node = self.topo.by_ip(ip)
        if node is None or not node.is_host:
            raise ValueError('%s is not a host of %s' % (ip, self.topo.name))
        return node

    def _in_order(self, flow, plane, column):
        """[Placement] of ``flow`` on every (plane, core) in the paper's
        linear order from ``plane`` and ``column`` on, cyclically; empty
        when both ends share a lower switch (no choice)."""
        geometry = self._geometry(flow)
        if geometry is None:
            return []
        planes = len(self._uppers[geometry.edge_s])
        width = len(self._cores[self._uppers[geometry.edge_s][0]]) if geometry.inter_pod else 1
        start = plane * width + (column or 0)
        return [self._placement(flow, geometry, n // width, n % width if geometry.inter_pod else None)
                for n in ((start + step) % (planes * width) for step in range(planes * width))]

    def candidates(self, flow):
        """[(via, links, ports)] in the paper's linear search order, from
        c1_1 (or the pod's first upper switch); empty when source and
        destination share a lower switch (no choice)."""
        return [(p.via, p.links, p.ports) for p in self._in_order(flow, 0, 0)]

    def _up_ports(self, switch):
        ports = self._up_port_lists.get(switch)
        if ports is None:
            ports = self._up_port_lists[switch] = self.topo.up_ports(switch)
        return ports

    def two_level_via(self, flow):
        """The core (inter-pod) or upper switch (intra-pod) of the flow's
        two-level path; None when it has no choice."""
        geometry = self._geometry(flow)
        return None if geometry is None else self._placement(flow, geometry, geometry.plane, geometry.column).via

    def search_order(self, flow):
        """The candidates from the flow's two-level path on, cyclically."""
        geometry = self._geometry(flow)
        if geometry is None:
            return []
        return [(p.via, p.links, p.ports) for p in self._in_order(flow, geometry.plane, geometry.column)]

    def _usable(self, link):
        return link not in self.reserved and link not in self.down

    def _reserve(self, placement):
        for link in placement.links:
            if link in self.reserved:  # unreachable by construction; guards the invariant
                raise RuntimeError('%s->%s would be reserved twice' % link)
            self.reserved[link] = placement.flow
            self._mark(link)
        self.placements[placement.flow] = placement
        if self._journal is not None:
            self._journal.append((True, placement))

    def _release(self, flow):
        placement = self.placements.pop(flow)
        for link in placement.links:
            del self.reserved[link]
            self._mark(link)
        if self._journal is not None:
            self._journal.append((False, placement))
        return placement

    def _free_path(self, geometry):
        """(plane, column) of the first candidate in search order whose
        links are all free and up, or None: the paper's linear search, a
        plane's cores judged at once from its busy bits."""
        planes = len(self._uppers[geometry.edge_s])
        taken = self._busy_up[geometry.edge_s] | self._busy_down[geometry.edge_d]
        for step in range(planes + 1):
            plane = (geometry.plane + step) % planes
            if taken >> plane & 1:
                continue
            if not geometry.inter_pod:
                return plane, None
            free = self._free_columns(geometry, plane)
            if step == 0:  # the two-level path's own plane: its core on first
                free &= -1 << geometry.column
            elif step == planes:  # back round to it: the cores before
                free &= (1 << geometry.column) - 1
            if free:
                return plane, _lowest(free)
        return None

    def _place(self, flow):
        found = self._free_path(self._geometry(flow))
        if found is None:
            return None
        placement = self._placement(flow, self._geometry(flow), *found)
        self._reserve(placement)
        return placement

    # -- rearrangement: Paull's alternating paths ------------------------

    def _alternating(self, start, up_side, first, second, limit):
        """The flows on the ``first``/``second`` alternating path from
        switch ``start`` (its upward links when ``up_side``, else its
        downward ones), in order; None when it runs past ``limit`` flows or
        ends on a down link (its last flow could not take it). Each flow
        leads to its other end: between lower switches (colours are planes)
        or between upper switches (colours are cores)."""
        path, switch, colour, other = [], start, first, second
        while True:
            link = (self._up_links if up_side else self._down_links)[switch][colour]
            holder = self.reserved.get(link)
            if holder is None:
                return None if link in self.down else path
            path.append(holder)
            if len(path) > limit:
                return None
            links = self.placements[holder].links
            if switch in self._uppers:  # a plane: the holder's lower switch at its other end
                switch = links[-1][1] if up_side else links[0][0]
            else:  # a core: the holder's upper switch at its other end
                switch = links[3][0] if up_side else links[1][0]
            up_side, colour, other = not up_side, other, colour

    def _swaps(self, low, high, free_low, free_high, limit):
        """[(path length, plane or core the new flow takes, the path's flows,
        the two colours)] between switches ``low`` (free colours ``free_low``
        upward) and ``high`` (``free_high`` downward): each pair of free
        colours, the path from either end; none longer than the shortest
        found before it (only the shortest are tried)."""
        options = []
        for a in _indices(free_low):
            for b in _indices(free_high):
                for start, up_side, first, second, taken in ((high, False, a, b, a), (low, True, b, a, b)):
                    path = self._alternating(start, up_side, first, second, limit)
                    if path is not None:
                        options.append((len(path), taken, path, (a, b)))
                        limit = len(path)
                        if not path:
                            return options
        return options

    def _recolour(self, flows, colours, level):
        """Move each of ``flows`` to the other of ``colours`` (a pair of
        planes at level 1, of cores at level 2), placing each anew; False
        if a flow moved to another plane finds no core there even by
        rearranging that plane's cores."""
        old = {flow: self._colour_of(self.placements[flow]) for flow in flows}
        for flow in flows:
            self._release(flow)
        a, b = colours
        for flow in flows:
            plane, column = old[flow]
            if level == 2:
                self._reserve(self._placement(flow, self._geometry(flow), plane, b if column == a else a))
            elif column is None:  # within a pod: the plane is the whole path
                self._reserve(self._placement(flow, self._geometry(flow), b if plane == a else a, None))
            elif not self._place_in_plane(flow, b if plane == a else a):
                return False
        return True

    def _place_in_plane(self, flow, plane):
        """Place ``flow`` (inter-pod) in ``plane``: on a free core, or by the
        shortest alternating path of that plane's cores. False if neither
        is possible."""
        geometry = self._geometry(flow)
        free = self._free_columns(geometry, plane)
        if free:
            self._reserve(self._placement(flow, geometry, plane, _lowest(free)))
            return True
        upper_s, upper_d = self._upper_of[geometry.pod_s, plane], self._upper_of[geometry.pod_d, plane]
        width = (1 << len(self._cores[upper_s])) - 1
        options = self._swaps(upper_s, upper_d, ~self._busy_up[upper_s] & width,
                              ~self._busy_down[upper_d] & width, self.rearrange)
        if not options:
            return False
        _, column, path, colours = min(options, key=lambda option: option[0])
        if not self._recolour(path, colours, 2):
            return False
        self._reserve(self._placement(flow, geometry, plane, column))
        return True

    def _rearrange(self, flow):
        """Make room for ``flow`` by moving at most ``rearrange`` placed
        flows along alternating paths, the shortest plane path first (a
        plane free at both lower switches is a path of none; its cores may
        then need one): [its Placement, then each moved flow's new one], or
        [] with nothing changed."""
        geometry = self._geometry(flow)
        width = (1 << len(self._uppers[geometry.edge_s])) - 1
        options = self._swaps(geometry.edge_s, geometry.edge_d, ~self._busy_up[geometry.edge_s] & width,
                              ~self._busy_down[geometry.edge_d] & width, self.rearrange)
        for _, plane, path, colours in sorted(options, key=lambda option: option[0])[:MAX_ATTEMPTS]:
            self._journal = []
            done = self._recolour(path, colours, 1)
            if done and geometry.inter_pod:
                done = self._place_in_plane(flow, plane)
            elif done:
                self._reserve(self._placement(flow, geometry, plane, None))
            before = {}
            for reserved, placement in self._journal:
                if not reserved:
                    before.setdefault(placement.flow, placement)
            moved = sorted(f for f, placement in before.items() if self.placements.get(f) != placement)
            if done and len(moved) <= self.rearrange:
                self._journal = None
                self.previous = {f: before[f] for f in moved}
                return [self.placements[flow]] + [self.placements[f] for f in moved]
            self._undo()
        return []

    def _undo(self):
        journal, self._journal = self._journal, None
        for reserved, placement in reversed(journal):
            if reserved:
                self._release(placement.flow)
            else:
                self._reserve(placement)

    # -- the edge switches' reports and garbage collection ---------------

    def notify(self, flow):
        """An edge switch reports ``flow`` as large. Returns the Placements
        to install: the flow's own first, then those of the flows moved to
        make room for it (their Placements before in ``previous``). Empty
        when nothing changes: already placed (its time is refreshed), no
        choice (same lower switch), or no path even by rearrangement
        (recorded in ``rejected``; the flow keeps its path)."""
        now = self.clock()
        self.last_seen[flow] = now
        self.previous = {}
        if flow in self.placements or self._geometry(flow) is None:
            return []
        if self._failed_at.get(flow) == self._version:
            self.rejected[flow] = now
            return []
        placement = self._place(flow)
        changes = [placement] if placement is not None else self._rearrange(flow)
        if changes:
            self.rejected.pop(flow, None)
            self._failed_at.pop(flow, None)
            self._version += 1
        else:
            self.rejected[flow] = now
            self._failed_at[flow] = self._version
        return changes

    def collect(self):
        """Garbage-collect flows not reported for gc_timeout seconds; returns
        the released Placements (their links are free again)."""
        cutoff = self.clock() - self.gc_timeout
        stale = sorted(f for f, seen in self.last_seen.items() if seen < cutoff)
        released = []
        for flow in stale:
            del self.last_seen[flow]
            self.rejected.pop(flow, None)
            self._geometries.pop(flow, None)
            self._failed_at.pop(flow, None)
            if flow in self.placements:
                released.append(self._release(flow))
        if released:
            self._version += 1
        return released

    # -- link state from outside (failure handling) ---------------------

    def _directed(self, a, b):
        if (a, b) not in self.links:
            raise ValueError('no switch link %s - %s in %s' % (a, b, self.topo.name))
        return {(a, b), (b, a)}

    def link_down(self, a, b):
        """Mark the link a-b (both directions) unavailable; every flow placed
        through it is re-placed on a path without it, or released. Returns
        the Changes, in flow order."""
        failed = self._directed(a, b)
        self.down |= failed
        for link in failed:
            self._mark(link)
        self._version += 1
        hit = sorted(f for f, p in self.placements.items() if failed & set(p.links))
        for flow in hit:
            self._release(flow)
        return [Change(flow, self._place(flow)) for flow in hit]

    def link_up(self, a, b):
        """The link a-b is usable again (new placements may use it)."""
        restored = self._directed(a, b)
        self.down -= restored
        for link in restored:
            self._mark(link)
        self._version += 1

    def state(self):
        return {
            'placements': [p.state() for _, p in sorted(self.placements.items())],
            'rejected': sorted(str(f) for f in self.rejected),
            'reserved_links': {'%s->%s' % link: str(flow)
                               for link, flow in sorted(self.reserved.items())},
            'down_links': sorted('%s->%s' % link for link in self.down),
        }
