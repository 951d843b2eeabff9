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
order strands about 2 of 16 flows of a random permutation at k=4 with no
free path, although a k=4 fat-tree can carry every permutation on
link-disjoint paths (an exhaustive search finds one every time). So a flow
with no free path may displace reserved flows, which are re-placed the same
way in turn (a chain), with at most ``rearrange`` flows moved, fewest
first; each moved flow again ends on a path of free links. ``rearrange=0``
is the paper's scheduler. A flow that still finds no path is rejected
cleanly: nothing is reserved or moved, it stays on its current path, and
the next report tries again.

Links can be reported down from outside (``link_down``/``link_up``, for the
BFD failure handling of 3.8): a down link disqualifies every path through
it, and each reservation through it is re-placed or released.
"""
from dataclasses import dataclass

from controller.fattree.twolevel import all_tables
from topologies.walk import walk


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


# Search nodes one rearrangement may visit over all its budgets: bounds the
# time a report can take on a large, full fabric (a k=4 chain takes dozens).
SEARCH_NODE_LIMIT = 5000


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
        self._orders = {}  # flow -> its search order (computed once per flow)
        self._order_runs = {}  # flow -> its search order as runs (_runs)
        self._core_ports = {}  # (core, pod) -> its port there: candidates ask it (k/2)^2 times a flow
        self._up_port_lists = {}  # pod switch -> its upward ports (the model scans every port for them)
        self._unique_vias = self._vias_name_paths()
        # The search is a function of the reservations and the down links
        # alone: a flow whose search failed fails again until they change
        # (a rejected flow is reported every period, and a failing
        # rearrangement searches thousands of nodes).
        self._version = 0  # bumped whenever reservations or down links change
        self._failed_at = {}  # flow -> _version when its search last failed

    # -- paths ----------------------------------------------------------

    def _host(self, ip):
        node = self.topo.by_ip(ip)
        if node is None or not node.is_host:
            raise ValueError('%s is not a host of %s' % (ip, self.topo.name))
        return node

    def _choices(self, flow):
        """(source lower switch, destination lower switch, [(its upward
        port, the upper switch's upward ports, or [None] within the pod)...])
        in the paper's order; no choices when both ends share a lower switch."""
        topo = self.topo
        edge_s, _ = topo.host_attachment(self._host(flow.src).name)
        edge_d, _ = topo.host_attachment(self._host(flow.dst).name)
        if edge_s == edge_d:
            return edge_s, edge_d, []
        intra_pod = topo.pod_of(edge_s) == topo.pod_of(edge_d)
        return edge_s, edge_d, [(edge_port, [None] if intra_pod else self._up_ports(topo.peer(edge_s, edge_port)[0]))
                                for edge_port in self._up_ports(edge_s)]

    def _candidate(self, edge_s, edge_port, agg_port, edge_d):
        """One candidate (via, links, ports): up ``edge_port`` of the source
        lower switch, then ``agg_port`` (None: down to ``edge_d`` in the pod)."""
        topo = self.topo
        agg_s, _ = topo.peer(edge_s, edge_port)
        if agg_port is None:
            return agg_s, ((edge_s, agg_s), (agg_s, edge_d)), ((edge_s, edge_port),)
        core, _ = topo.peer(agg_s, agg_port)
        dst_pod = topo.pod_of(edge_d)
        core_port = self._core_ports.get((core, dst_pod))
        if core_port is None:
            core_port = self._core_ports[(core, dst_pod)] = topo.port_to_pod(core, dst_pod)
        agg_d, _ = topo.peer(core, core_port)
        return (core, ((edge_s, agg_s), (agg_s, core), (core, agg_d), (agg_d, edge_d)),
                ((edge_s, edge_port), (agg_s, agg_port)))

    def candidates(self, flow):
        """[(via, links, ports)] in the paper's linear search order, from
        c1_1 (or the pod's first upper switch); empty when source and
        destination share a lower switch (no choice)."""
        edge_s, edge_d, choices = self._choices(flow)
        return [self._candidate(edge_s, edge_port, agg_port, edge_d)
                for edge_port, agg_ports in choices for agg_port in agg_ports]

    def _vias_name_paths(self):
        """Whether every candidate of a flow has a via of its own: each
        lower switch's upper switches distinct, and the cores above one
        pod's upper switches distinct. Then the via on a flow's two-level
        path is the one at the ports that path takes."""
        topo = self.topo
        for pod in {topo.pod_of(n.name) for n in topo.switches if n.role == 'edge'}:
            edges = [n.name for n in topo.switches if n.role == 'edge' and topo.pod_of(n.name) == pod]
            uppers = set()
            for edge in edges:
                above = [topo.peer(edge, port)[0] for port in self._up_ports(edge)]
                if len(set(above)) != len(above):
                    return False
                uppers.update(above)
            cores = [topo.peer(upper, port)[0] for upper in uppers for port in self._up_ports(upper)]
            if len(set(cores)) != len(cores):
                return False
        return True

    def _placement_order(self, flow):
        """search_order's candidates one by one, each built when asked for:
        a placement mostly takes one of the first, and the first round
        places every flow of the fabric (building all (k/2)^2 candidates
        of each of them took 142 s at k=48)."""
        if flow in self._orders or not self._unique_vias:
            yield from self.search_order(flow)
            return
        edge_s, edge_d, choices = self._choices(flow)
        if not choices:
            return
        src, dst = self._host(flow.src), self._host(flow.dst)
        hops = dict(walk(self.topo, lambda switch, _, ip: self.tables[switch].lookup(ip), src.name, dst.name))
        width = len(choices[0][1])
        if any(len(agg_ports) != width for _, agg_ports in choices):
            yield from self.search_order(flow)
            return
        edge_ports = [edge_port for edge_port, _ in choices]
        first = edge_ports.index(hops[edge_s])
        start = first * width + (0 if choices[0][1] == [None] else
                                 choices[first][1].index(hops[self.topo.peer(edge_s, hops[edge_s])[0]]))
        for n in range(len(choices) * width):
            row, column = divmod((start + n) % (len(choices) * width), width)
            edge_port, agg_ports = choices[row]
            yield self._candidate(edge_s, edge_port, agg_ports[column], edge_d)

    def _up_ports(self, switch):
        ports = self._up_port_lists.get(switch)
        if ports is None:
            ports = self._up_port_lists[switch] = self.topo.up_ports(switch)
        return ports

    def two_level_via(self, flow, candidates=None):
        """The core (inter-pod) or upper switch (intra-pod) of the flow's
        two-level path; None when it has no choice. ``candidates``: the
        flow's, if already known."""
        src, dst = self._host(flow.src), self._host(flow.dst)
        hops = walk(self.topo, lambda switch, _, ip: self.tables[switch].lookup(ip),
                    src.name, dst.name)
        on_path = {switch for switch, _ in hops}
        if candidates is None:
            candidates = self.candidates(flow)
        return next((via for via, _, _ in candidates if via in on_path), None)

    def search_order(self, flow):
        """The candidates from the flow's two-level path on, cyclically."""
        if flow not in self._orders:
            candidates = self.candidates(flow)
            vias = [via for via, _, _ in candidates]
            start = vias.index(self.two_level_via(flow, candidates)) if candidates else 0
            self._orders[flow] = candidates[start:] + candidates[:start]
        return self._orders[flow]

    def _usable(self, link):
        return link not in self.reserved and link not in self.down

    def _reserve(self, placement):
        for link in placement.links:
            if link in self.reserved:  # unreachable by construction; guards the invariant
                raise RuntimeError('%s->%s would be reserved twice' % link)
            self.reserved[link] = placement.flow
        self.placements[placement.flow] = placement

    def _place(self, flow):
        for via, links, ports in self._placement_order(flow):
            if all(self._usable(link) for link in links):
                placement = Placement(flow, via, links, ports)
                self._reserve(placement)
                return placement
        return None

    def _release(self, flow):
        placement = self.placements.pop(flow)
        for link in placement.links:
            del self.reserved[link]
        return placement

    def _runs(self, flow):
        """The search order as runs of consecutive candidates through the
        same lower switch, which share their first and last links:
        [((first, last), [(the other links, candidate)...])...]."""
        runs = self._order_runs.get(flow)
        if runs is None:
            runs = self._order_runs[flow] = []
            for candidate in self.search_order(flow):
                links = candidate[1]
                ends = (links[0], links[-1])
                if not runs or runs[-1][0] != ends:
                    runs.append((ends, []))
                runs[-1][1].append((links[1:-1], candidate))
        return runs

    def _chain(self, pending, budget, settled, visits, original):
        """Place every flow of ``pending`` (the first on a path whose holders
        go to the back of ``pending``), displacing at most ``budget`` flows
        in all and none of ``settled`` (already placed in this chain).
        Depth-first in search order; on failure every change is undone.
        ``original`` gains each displaced flow's Placement before its first
        displacement."""
        if not pending:
            return True
        visits[0] += 1
        if visits[0] > SEARCH_NODE_LIMIT:
            return False
        flow, rest = pending[0], pending[1:]
        reserved, down = self.reserved, self.down
        # A run's shared links are judged once: what rules them out rules
        # out the whole run (a failed step below undoes itself, so their
        # holders stay the same through the loop).
        for ends, members in self._runs(flow):
            if down and (ends[0] in down or ends[1] in down):
                continue
            end_holders = {reserved[link] for link in ends if link in reserved}
            if len(end_holders) > budget or not settled.isdisjoint(end_holders):
                continue
            for middle, (via, links, ports) in members:
                if down and any(link in down for link in middle):
                    continue
                holders = end_holders.union([reserved[link] for link in middle if link in reserved])
                if len(holders) > budget or not settled.isdisjoint(holders):
                    continue
                holders = sorted(holders)
                displaced = [self._release(holder) for holder in holders]
                for placement in displaced:
                    original.setdefault(placement.flow, placement)
                self._reserve(Placement(flow, via, links, ports))
                if self._chain(holders + rest, budget - len(holders), settled | {flow}, visits, original):
                    return True
                self._release(flow)
                for placement in displaced:
                    self._reserve(placement)
        return False

    def _rearrange(self, flow):
        """Make room for ``flow`` by moving the fewest reserved flows (at
        most ``rearrange``): [its Placement, then each moved flow's new
        one], or [] with nothing changed."""
        original, visits = {}, [0]
        for budget in range(1, self.rearrange + 1):
            if self._chain([flow], budget, frozenset(), visits, original):
                moved = sorted(f for f, p in original.items() if self.placements[f] != p)
                self.previous = {f: original[f] for f in moved}
                return [self.placements[flow]] + [self.placements[f] for f in moved]
        return []

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
        if flow in self.placements or not any(agg_ports for _, agg_ports in self._choices(flow)[2]):
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
            self._orders.pop(flow, None)
            self._order_runs.pop(flow, None)
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
        self._version += 1
        hit = sorted(f for f, p in self.placements.items() if failed & set(p.links))
        for flow in hit:
            self._release(flow)
        return [Change(flow, self._place(flow)) for flow in hit]

    def link_up(self, a, b):
        """The link a-b is usable again (new placements may use it)."""
        self.down -= self._directed(a, b)
        self._version += 1

    def state(self):
        return {
            'placements': [p.state() for _, p in sorted(self.placements.items())],
            'rejected': sorted(str(f) for f in self.rejected),
            'reserved_links': {'%s->%s' % link: str(flow)
                               for link, flow in sorted(self.reserved.items())},
            'down_links': sorted('%s->%s' % link for link in self.down),
        }
