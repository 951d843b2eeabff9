"""The central flow scheduler of Al-Fares et al. 3.7 as pure logic: no Ryu,
no Mininet; time comes from an injected clock.

Edge switches start every flow on its default (two-level) path, measure it,
and report the flows whose rate is past a threshold (``large_flows``). The
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
garbage-collected and its links freed. A flow that finds no free path is
rejected cleanly: nothing is reserved and it stays on its current path; the
next report tries again.

Links can be reported down from outside (``link_down``/``link_up``, for the
BFD failure handling of 3.8): a down link disqualifies every path through
it, and each reservation through it is re-placed or released.
"""
from dataclasses import dataclass

from controller.twolevel import all_tables
from controller.walk import walk
from topologies.fattree import aggregation_name, core_name, edge_name


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


def reported_flows(rates, threshold, placed):
    """What an edge switch reports each period: its large flows, and the
    placed flows still sending at any rate -- a TCP flow backing off after
    a loss stays the same elephant, and dropping its reservation would let
    another flow onto its path and move it again when it recovers."""
    return sorted(set(large_flows(rates, threshold))
                  | {flow for flow, rate in rates.items() if rate > 0 and flow in placed})


class FlowScheduler:

    def __init__(self, topo, gc_timeout, clock):
        if gc_timeout <= 0:
            raise ValueError('gc_timeout must be positive, got %r' % (gc_timeout,))
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

    # -- paths ----------------------------------------------------------

    def _host(self, ip):
        node = self.topo.by_ip(ip)
        if node is None or not node.is_host:
            raise ValueError('%s is not a host of %s' % (ip, self.topo.name))
        return node

    def candidates(self, flow):
        """[(via, links, ports)] in the paper's linear search order, from
        c1_1 (or the pod's first upper switch); empty when source and
        destination share a lower switch (no choice)."""
        topo, half = self.topo, self.topo.half
        src_pod, src_edge, _ = self._host(flow.src).coords
        dst_pod, dst_edge, _ = self._host(flow.dst).coords
        edge_s = edge_name(src_pod, src_edge)
        edge_d = edge_name(dst_pod, dst_edge)
        result = []
        if src_pod == dst_pod:
            if src_edge == dst_edge:
                return []
            for z in range(half, topo.k):
                agg = aggregation_name(src_pod, z)
                result.append((agg, ((edge_s, agg), (agg, edge_d)),
                               ((edge_s, topo.port_to(edge_s, agg)),)))
            return result
        for j in range(1, half + 1):
            agg_s = aggregation_name(src_pod, half + j - 1)
            agg_d = aggregation_name(dst_pod, half + j - 1)
            for i in range(1, half + 1):
                core = core_name(j, i)
                result.append((core, ((edge_s, agg_s), (agg_s, core), (core, agg_d), (agg_d, edge_d)),
                               ((edge_s, topo.port_to(edge_s, agg_s)),
                                (agg_s, topo.port_to(agg_s, core)))))
        return result

    def two_level_via(self, flow):
        """The core (inter-pod) or upper switch (intra-pod) of the flow's
        two-level path; None when it has no choice."""
        src, dst = self._host(flow.src), self._host(flow.dst)
        hops = walk(self.topo, lambda switch, _, ip: self.tables[switch].lookup(ip),
                    src.name, dst.name)
        on_path = {switch for switch, _ in hops}
        return next((via for via, _, _ in self.candidates(flow) if via in on_path), None)

    def search_order(self, flow):
        """The candidates from the flow's two-level path on, cyclically."""
        candidates = self.candidates(flow)
        vias = [via for via, _, _ in candidates]
        start = vias.index(self.two_level_via(flow)) if candidates else 0
        return candidates[start:] + candidates[:start]

    def _usable(self, link):
        return link not in self.reserved and link not in self.down

    def _place(self, flow):
        for via, links, ports in self.search_order(flow):
            if all(self._usable(link) for link in links):
                for link in links:
                    if link in self.reserved:  # unreachable by construction; guards the invariant
                        raise RuntimeError('%s->%s would be reserved twice' % link)
                    self.reserved[link] = flow
                placement = Placement(flow, via, links, ports)
                self.placements[flow] = placement
                return placement
        return None

    def _release(self, flow):
        placement = self.placements.pop(flow)
        for link in placement.links:
            del self.reserved[link]
        return placement

    # -- the edge switches' reports and garbage collection ---------------

    def notify(self, flow):
        """An edge switch reports ``flow`` as large. Returns the new Placement
        to install, or None when nothing changes: already placed (its time
        is refreshed), no choice (same lower switch), or no free path
        (recorded in ``rejected``; the flow keeps its path)."""
        now = self.clock()
        self.last_seen[flow] = now
        if flow in self.placements or not self.candidates(flow):
            return None
        placement = self._place(flow)
        if placement is None:
            self.rejected[flow] = now
        else:
            self.rejected.pop(flow, None)
        return placement

    def collect(self):
        """Garbage-collect flows not reported for gc_timeout seconds; returns
        the released Placements (their links are free again)."""
        cutoff = self.clock() - self.gc_timeout
        stale = sorted(f for f, seen in self.last_seen.items() if seen < cutoff)
        released = []
        for flow in stale:
            del self.last_seen[flow]
            self.rejected.pop(flow, None)
            if flow in self.placements:
                released.append(self._release(flow))
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
        hit = sorted(f for f, p in self.placements.items() if failed & set(p.links))
        for flow in hit:
            self._release(flow)
        return [Change(flow, self._place(flow)) for flow in hit]

    def link_up(self, a, b):
        """The link a-b is usable again (new placements may use it)."""
        self.down -= self._directed(a, b)

    def state(self):
        return {
            'placements': [p.state() for _, p in sorted(self.placements.items())],
            'rejected': sorted(str(f) for f in self.rejected),
            'reserved_links': {'%s->%s' % link: str(flow)
                               for link, flow in sorted(self.reserved.items())},
            'down_links': sorted('%s->%s' % link for link in self.down),
        }
