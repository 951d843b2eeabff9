"""Fat-tree fault tolerance (Al-Fares et al. 3.8) as pure functions of the
set of failed links: which switch avoids which up-port for which
destinations, and the two-level tables that result.

The paper's failure broadcast, per failed link:

* lower-upper (e, a) in pod p, subnet S = e's /24:
  e stops using the link for everything (/0); a tells the other lower switches
  of pod p, which avoid a for S; a tells its core switches, which tell the
  upper switches of the other pods, which avoid that core for S.
* upper-core (a, c), a in pod p:
  a stops using the link for everything (/0); c tells the upper switches of
  the other pods it connects to, which avoid c for pod p (10.p.0.0/16).
* a failed switch is the failure of all its links.

One step beyond the paper's text: in a fat-tree every core switch that
reaches a's row of pod p reaches the subnet S only through a, so an upper
switch of another pod told to avoid "the affected core" for S is told so by
*all* its cores and has no alternative left. Such a switch passes the tag
down the same way a does: its lower switches avoid it for S. Without that
step, traffic from other pods to S would still be hashed onto the dead row.
Likewise an upper switch that has lost all its core links is avoided by its
lower switches for traffic to every other pod.

Avoidance becomes routing state the paper's way: a specific first-level
prefix (S or the pod's /16) pointing to its own second-level table whose
host-ID suffixes skip the avoided ports. Recomputing from the failure set
makes recovery exact: with no failures every table equals the original.

The broadcast is meant for single failures. Under several, some pairs can
only be joined by paths no up-down table expresses (down into another
pod's lower switch and up again); ``detours`` finds the switches where the
broadcast's tables fail a destination that is still reachable and gives
them per-subnet entries along shortest paths (see ``routing``).

Finding those switches means knowing, for every switch and destination,
whether every choice the tables leave delivers: at k=48, 2,880 switches by
1,152 subnets. Walking each pair took over a minute per recompute; ``_Delivery``
finds all of them at once as bitmasks over the subnets. The controller keeps
a ``FailureRouting``, which recomputes after a change only what the change
touches (the switches whose tags or links changed, and the delivery sets
while they change) and always equals the full recompute.
"""
import functools
import operator

from controller.fattree.twolevel import left_mask, prefix_entry, right_mask, suffix_entry, switch_table
from topologies.addressing import ip_to_int
from topologies.walk import walk

ALL = ('0.0.0.0', 0)


def link_key(a, b):
    """Failed links are unordered switch-name pairs."""
    return frozenset((a, b))


def _subnet_of(topo, edge):
    pod, z = topo.node(edge).coords
    return ('10.%d.%d.0' % (pod, z), 24)


def _pod_prefix(pod):
    return ('10.%d.0.0' % pod, 16)


def expand_failures(topo, failed_links=(), failed_switches=()):
    """Failed links as link keys; a failed switch fails all its switch links."""
    links = {link_key(a, b) for a, b in failed_links}
    for switch in failed_switches:
        topo.node(switch)
        for port in topo.ports(switch):
            peer, _ = topo.peer(switch, port)
            if not topo.nodes[peer].is_host:
                links.add(link_key(switch, peer))
    return frozenset(links)


class _Cabling:
    """What failure handling asks of the model, asked once per switch and
    kept: one failure at k=48 asks it hundreds of thousands of times."""

    def __init__(self, topo):
        self.topo = topo
        self.edges = [sw.name for sw in topo.switches_of_role('edge')]
        self.pods = {topo.pod_of(edge) for edge in self.edges}
        self._up, self._down, self._above, self._below, self._port_to = {}, {}, {}, {}, {}
        self.peers = None  # see wired

    def role(self, name):
        return self.topo.node(name).role

    def pod(self, name):
        return self.topo.pod_of(name)

    def up_ports(self, name):
        if name not in self._up:
            self._up[name] = tuple(self.topo.up_ports(name))
        return self._up[name]

    def down_ports(self, name):
        if name not in self._down:
            self._down[name] = tuple(self.topo.down_ports(name))
        return self._down[name]

    def above(self, name):
        """The switches on ``name``'s up-ports, in port order."""
        if name not in self._above:
            self._above[name] = [self.topo.peer(name, port)[0] for port in self.up_ports(name)]
        return self._above[name]

    def below(self, name):
        """The nodes on ``name``'s down-ports, in port order."""
        if name not in self._below:
            self._below[name] = [self.topo.peer(name, port)[0] for port in self.down_ports(name)]
        return self._below[name]

    def first_host(self, edge):
        """The host on a lower switch's first down-port (its down-ports are
        its host ports): the one that stands for its subnet."""
        topo = self.topo
        return next(topo.nodes[peer] for port in topo.ports(edge) for peer, _ in [topo.peer(edge, port)]
                    if topo.nodes[peer].is_host)

    def port_to(self, name, neighbour):
        """``name``'s (lowest) port to ``neighbour``."""
        if name not in self._port_to:
            ports = self._port_to[name] = {}
            for port, peer in self.wired().peers.get(name, {}).items():
                if ports.get(peer, port) >= port:
                    ports[peer] = port
        port = self._port_to[name].get(neighbour)
        return self.topo.port_to(name, neighbour) if port is None else port  # a host, or not a neighbour

    def wired(self):
        """This, with ``peers`` ({switch: {port: the switch on it}}; host
        ports are absent) filled in: all at once from the links, as asking
        port by port takes several times longer."""
        if self.peers is None:
            hosts = {name for name, node in self.topo.nodes.items() if node.is_host}
            self.peers = {name: {} for name in self.topo.nodes if name not in hosts}
            for link in self.topo.links:
                a, b = link.node_a, link.node_b
                if a not in hosts and b not in hosts:
                    self.peers[a][link.port_a] = b
                    self.peers[b][link.port_b] = a
        return self

    def live_neighbours(self, name, failed):
        """[(port, neighbour switch)] of ``name`` over links not in ``failed``."""
        return [(port, peer) for port, peer in self.wired().peers.get(name, {}).items()
                if link_key(name, peer) not in failed]


def broadcast(topo, failed):
    """{switch: {(network, length): set of avoided up-ports}} for a set of
    failed links (link keys), following the paper's broadcast described above."""
    return _broadcast(_Cabling(topo), failed)


def _broadcast(cabling, failed):
    avoid = {}

    def tag(switch, prefix, port):
        avoid.setdefault(switch, {}).setdefault(prefix, set()).add(port)

    for link in failed:
        a, b = sorted(link, key=lambda n: ('edge', 'aggregation', 'core').index(cabling.role(n)))
        pod = cabling.pod(a)
        tag(a, ALL, cabling.port_to(a, b))
        if cabling.role(a) == 'edge':
            subnet = _subnet_of(cabling.topo, a)
            for other in cabling.below(b):
                if other != a:
                    tag(other, subnet, cabling.port_to(other, b))
            far_prefix, cores = subnet, cabling.above(b)
        else:
            far_prefix, cores = _pod_prefix(pod), [b]
        for core in cores:
            for far_upper in cabling.below(core):
                if cabling.pod(far_upper) != pod:
                    tag(far_upper, far_prefix, cabling.port_to(far_upper, core))

    # An upper switch left with no usable up-port for a prefix passes the tag
    # to its lower switches (see the module docstring). One that lost every
    # core link (say, while its links come back one by one) is avoided by its
    # lower switches for every other pod, and still used inside its own pod.
    for switch, tags in list(avoid.items()):
        if cabling.role(switch) != 'aggregation':
            continue
        pod = cabling.pod(switch)
        up_ports = set(cabling.up_ports(switch))
        dead_up = up_ports <= tags.get(ALL, set())
        for prefix, ports in list(tags.items()):
            if prefix == ALL and dead_up:
                passed = [_pod_prefix(q) for q in sorted(cabling.pods - {pod})]
            elif prefix != ALL and (dead_up or up_ports <= ports):
                passed = [prefix]
            else:
                continue
            for edge in cabling.below(switch):
                for tagged in passed:
                    tag(edge, tagged, cabling.port_to(edge, switch))
    return avoid


def _covers(outer, inner):
    """Whether prefix ``outer`` contains prefix ``inner``."""
    return (outer[1] <= inner[1]
            and ip_to_int(inner[0]) & left_mask(outer[1]) == ip_to_int(outer[0]))


def avoided_for(tags, ip):
    """The up-ports a switch with avoidance ``tags`` (one switch's entry of
    ``avoidance``) must not use towards ``ip``: every tagged prefix holding
    it counts, the /0 of its own dead links included."""
    avoided = set()
    for prefix, ports in tags.items():
        if _covers(prefix, (ip, 32)):
            avoided |= ports
    return avoided


def usable_port(base, avoided, up_ports):
    """The up-port a host-ID suffix uses: its Algorithm 1 port ``base``, or
    the next of ``up_ports`` (cyclically) that is not avoided; None if every
    up-port is."""
    start = up_ports.index(base)
    for port in up_ports[start:] + up_ports[:start]:
        if port not in avoided:
            return port
    return None


def table_with_failures(topo, switch, avoid_tags):
    """The switch's two-level table under its avoidance tags.

    The /0 suffix table skips the /0-avoided ports; each more specific tagged
    prefix gets its own suffix table skipping everything avoided for it or for
    any prefix that contains it. Every suffix table also lists the usable
    up-ports in order (``failover``), for local fast failover.
    """
    table = switch_table(topo, switch)
    if topo.node(switch).role == 'core' or not avoid_tags:
        return table  # refilling its suffix tables with nothing avoided changes nothing
    return _avoiding(table, tuple(topo.up_ports(switch)), avoid_tags)


def _suffixes_avoiding(base, avoided, up_ports):
    """(host-ID suffixes, usable up-ports) of a suffix table whose Algorithm
    1 ports are ``base`` ((value, port) pairs) when ``avoided`` are not to
    be used."""
    suffixes = []
    for value, port in base:
        chosen = usable_port(port, avoided, list(up_ports))
        if chosen is not None:
            suffixes.append(suffix_entry(value, 8, chosen))
    return tuple(suffixes), tuple(p for p in up_ports if p not in avoided)


@functools.lru_cache(maxsize=1 << 12)
def _avoiding_entries(base, up_ports, tags):
    """What avoidance ``tags`` ((prefix, avoided ports) pairs) make of a pod
    switch's table whose /0 suffixes are ``base`` ((value, port) pairs):
    (the specific prefixes, in order, [(suffix table, its suffixes, its
    usable up-ports)] starting with the /0's). Cached: a failure tags the
    switches of one position in every pod alike."""
    tags = dict(tags)
    tables = [('hostid',) + _suffixes_avoiding(base, tags.get(ALL, frozenset()), up_ports)]
    specific = sorted((p for p in tags if p != ALL), key=lambda p: (p[1], p[0]))
    # the tags containing a prefix are those equal to it cut to their length
    by_network = {(ip_to_int(network), length): ports for (network, length), ports in tags.items()}
    lengths = sorted({length for _, length in tags})
    prefixes = []
    for prefix in specific:
        network, avoided = ip_to_int(prefix[0]), set()
        for length in lengths:
            if length > prefix[1]:
                break
            avoided |= by_network.get((network & left_mask(length), length), set())
        name = 'avoid-%s/%d' % prefix
        tables.append((name,) + _suffixes_avoiding(base, frozenset(avoided), up_ports))
        prefixes.append(prefix_entry(prefix[0], prefix[1], suffix_table=name))
    return tuple(prefixes), tuple(tables)


def _avoiding(table, up_ports, avoid_tags):
    """``table`` (a pod switch's Algorithm 1 table, changed in place) under
    its avoidance tags (see table_with_failures)."""
    base = tuple((s.value, s.port) for s in table.suffix_tables['hostid'])
    prefixes, tables = _avoiding_entries(
        base, up_ports, frozenset((prefix, frozenset(ports)) for prefix, ports in avoid_tags.items()))
    for name, suffixes, usable in tables:
        table.suffix_tables[name], table.failover[name] = list(suffixes), usable
    # before the /0 entry: a specific prefix must win
    table.prefixes[len(table.prefixes) - 1:len(table.prefixes) - 1] = prefixes
    return table


class PortChoices:
    """Every port a table may send a destination out of: a terminating
    prefix's port, or the matching suffix's port and the other usable
    up-ports of its table (where fast failover or an ECMP hash may send it);
    () if none. Masks are precomputed: the detour search and the model
    check ask this for every switch and host under every failure set."""

    def __init__(self, table):
        self.prefixes = sorted(((p.length, ip_to_int(p.network), left_mask(p.length), p)
                                for p in table.prefixes), key=lambda e: -e[0])
        self.suffixes = {name: sorted(((s.length, ip_to_int(s.value), right_mask(s.length), s.port)
                                       for s in suffixes), key=lambda e: -e[0])
                         for name, suffixes in table.suffix_tables.items()}
        self.failover = table.failover

    def __call__(self, ip):
        address = ip_to_int(ip)
        prefix = next((p for _, net, mask, p in self.prefixes if address & mask == net), None)
        if prefix is None:
            return ()
        if prefix.terminating:
            return (prefix.port,)
        port = next((port for _, value, mask, port in self.suffixes[prefix.suffix_table]
                     if address & mask == value), None)
        if port is None:
            return ()
        usable = self.failover.get(prefix.suffix_table, ())
        return usable if port in usable else (port,)


def live_neighbours(topo, failed):
    """{switch: [(port, neighbour switch)]} over the links that have not failed."""
    return {sw.name: [(port, peer) for port in topo.ports(sw.name)
                      for peer in [topo.peer(sw.name, port)[0]]
                      if not topo.nodes[peer].is_host and link_key(sw.name, peer) not in failed]
            for sw in topo.switches}


def hop_distances(neighbours, target):
    """Switch hops from every switch to ``target`` over ``neighbours``
    (live_neighbours); switches cut off from it are absent."""
    distance, frontier = {target: 0}, [target]
    while frontier:
        following = []
        for switch in frontier:
            for _, peer in neighbours[switch]:
                if peer not in distance:
                    distance[peer] = distance[switch] + 1
                    following.append(peer)
        frontier = following
    return distance


_length = operator.attrgetter('length')


class _Delivery:
    """Per switch, the destinations to which it delivers: those for which
    every port its table may choose (as PortChoices sees it: fast failover,
    ECMP hashing), and every choice after it, brings packets to the
    destination's lower switch with no drop and no loop. A destination is a
    lower switch's subnet, stood for by its first host (outside its own
    lower switch the tables choose among the same ports for every host of a
    subnet); a set of them is a bitmask over the lower switches.

    A switch's set is the least fixpoint of: its own subnet (a lower
    switch), and, for each class of destinations its table sends alike (one
    longest-matching prefix and suffix), the class where every chosen port's
    link is up and leads to a switch delivering them. One pass over the
    switches computes every destination at once, where checking switch by
    destination (k=48: 2,880 switches by 1,152 subnets) took minutes; after
    a change only the switches whose table or links changed are evaluated
    again, and their neighbours only while sets change. The tables this is
    kept over (the broadcast's) send a destination up until a terminating
    prefix sends it down, never up again: no loop, so the fixpoint is
    unique and reached from the previous one.
    """

    def __init__(self, cabling, tables, failed, delivering_all=False):
        self.cabling = cabling
        self.peers = cabling.wired().peers
        self.bit = {edge: 1 << i for i, edge in enumerate(cabling.edges)}
        self.everything = (1 << len(cabling.edges)) - 1
        self.address = [ip_to_int(cabling.first_host(edge).ip) for edge in cabling.edges]
        # low-order bits all the first hosts share: suffixes no longer than
        # that match every destination alike
        differing = 0
        for address in self.address:
            differing |= address ^ self.address[0]
        self.shared_bits = (differing & -differing).bit_length() - 1 if differing else 32
        self._covered = {}  # prefix length -> {network: destinations}
        self._covered_by = {}  # id(prefix) -> (prefix, the destinations it holds)
        self.set_failed(failed)
        self.tables = tables
        # switch -> (table, its classes, {neighbour: destinations sent to it})
        # for its latest table and for its table here (the one it returns to)
        self._initial = dict(tables)
        self._current, self._first = {}, {}
        # with nothing failed every switch delivers everywhere (Algorithms 1-2)
        self.sets = {name: self.everything if delivering_all else self.bit.get(name, 0) for name in tables}
        if not delivering_all:
            self.settle(tables)

    def set_failed(self, failed):
        self.dead = {}  # switch -> its neighbours over failed links
        for link in failed:
            a, b = tuple(link)
            self.dead.setdefault(a, set()).add(b)
            self.dead.setdefault(b, set()).add(a)

    def covered(self, network, length):
        """The destinations whose address ``network/length`` holds."""
        if length not in self._covered:
            mask, by_network = left_mask(length), {}
            for i, address in enumerate(self.address):
                by_network[address & mask] = by_network.get(address & mask, 0) | 1 << i
            self._covered[length] = by_network
        return self._covered[length].get(ip_to_int(network), 0)

    def table_classes(self, table):
        """[(destinations, ports)]: the ports ``table`` may choose for each
        class of destinations it sends alike (PortChoices over classes, those
        with the same ports merged); destinations it has no port for are in
        no class."""
        merged, remaining, covered = {}, self.everything, self._covered_by
        for prefix in sorted(table.prefixes, key=_length, reverse=True):  # stable, as PortChoices
            known = covered.get(id(prefix))  # entries are shared: most are known
            if known is None or known[0] is not prefix:
                known = covered[id(prefix)] = (prefix, self.covered(prefix.network, prefix.length))
            alike = known[1] & remaining
            if not alike:
                continue
            remaining ^= alike
            if prefix.suffix_table is None:  # terminating
                merged[(prefix.port,)] = merged.get((prefix.port,), 0) | alike
                continue
            suffixes = sorted(table.suffix_tables[prefix.suffix_table], key=_length, reverse=True)
            usable = tuple(table.failover.get(prefix.suffix_table, ()))
            for group, address in self._by_suffix(alike, suffixes):
                port = next((s.port for s in suffixes
                             if address & right_mask(s.length) == ip_to_int(s.value)), None)
                ports = () if port is None else usable if port in usable else (port,)
                if ports:
                    merged[ports] = merged.get(ports, 0) | group
            if not remaining:
                break
        return [(alike, ports) for ports, alike in merged.items()]

    def _by_suffix(self, alike, suffixes):
        """(destinations, an address of theirs) per group of ``alike`` that
        ``suffixes`` (longest first) cannot tell apart."""
        if not suffixes or suffixes[0].length <= self.shared_bits:
            yield alike, self.address[(alike & -alike).bit_length() - 1]
            return
        groups = {}
        longest = right_mask(suffixes[0].length)
        while alike:
            low = alike & -alike
            alike ^= low
            address = self.address[low.bit_length() - 1]
            key = address & longest
            groups[key] = (groups.get(key, (0, address))[0] | low, address)
        yield from groups.values()

    def evaluate(self, switch):
        sets, dead = self.sets, self.dead.get(switch, ())
        delivered = self.bit.get(switch, 0)
        for alike, hops in self._classes(switch)[1]:
            for peer in hops:
                if peer is None or peer in dead:  # None: a host or no cable
                    alike = 0
                else:
                    alike &= sets[peer]
                if not alike:
                    break
            delivered |= alike
        return delivered

    # Upper layers settle first, a layer at a time: a lower switch waits for
    # the switches above it, so it is evaluated with their final sets, and a
    # layer's switches are all evaluated before the one above them looks
    # again (not once per switch below that changed).
    SETTLE_ORDER = ('core', 'aggregation', 'edge')

    def settle(self, switches):
        """Evaluate ``switches`` again, and every switch whose choices lead
        to one whose set changed, until no set changes."""
        order = {role: rank for rank, role in enumerate(self.SETTLE_ORDER)}
        queued = set()
        layers = [[] for _ in range(len(order) + 1)]

        def enqueue(switch):
            if switch not in queued:
                queued.add(switch)
                layers[order.get(self.cabling.role(switch), len(order))].append(switch)

        for switch in switches:
            enqueue(switch)
        while queued:
            rank = next(r for r, layer in enumerate(layers) if layer)
            batch, layers[rank] = layers[rank], []
            for switch in batch:
                queued.discard(switch)
                delivered = self.evaluate(switch)
                changed = delivered ^ self.sets[switch]
                if changed:
                    self.sets[switch] = delivered
                    for peer in self.peers.get(switch, {}).values():
                        if self._sent_to(peer).get(switch, 0) & changed:
                            enqueue(peer)

    def _classes(self, switch):
        """[table, [(destinations, next hops)], {neighbour: destinations sent
        to it} or None until asked] of the switch's current table; a next
        hop is the neighbour switch on a chosen port, None for a host or no
        cable."""
        kept = self._current.get(switch)
        if kept is not None:
            return kept
        table = self.tables[switch]
        hop = self.peers.get(switch, {}).get
        kept = self._current[switch] = [
            table, [(alike, tuple(map(hop, ports))) for alike, ports in self.table_classes(table)], None]
        if table is self._initial.get(switch):
            self._first[switch] = kept
        return kept

    def table_changed(self, switch):
        """``switch`` has a new table: its classes are found again (kept for
        the table it started with)."""
        first = self._first.get(switch)
        self._current[switch] = first if first is not None and first[0] is self.tables[switch] else None

    def _sent_to(self, switch):
        kept = self._classes(switch)
        if kept[2] is None:
            kept[2] = {}
            for alike, hops in kept[1]:
                for peer in hops:
                    kept[2][peer] = kept[2].get(peer, 0) | alike
        return kept[2]

    def lacking(self):
        """{destination (lower switch): [lower switches not delivering to it]}."""
        edges, lacking = self.cabling.edges, {}
        for edge in edges:
            missing = self.everything & ~self.sets[edge]
            while missing:
                low = missing & -missing
                missing ^= low
                lacking.setdefault(edges[low.bit_length() - 1], []).append(edge)
        return lacking

    def detours(self, neighbours):
        """{destination: {switch: port}}: the detours (see ``detours``) of
        every destination some connected lower switch is not delivered to;
        ``neighbours()`` gives live_neighbours when first needed."""
        lacking = self.lacking()
        if not lacking:
            return {}
        live = neighbours()
        component, found = {}, {}
        for edge, undelivered in lacking.items():
            if edge not in component:
                for switch in hop_distances(live, edge):
                    component[switch] = edge
            if any(component.get(switch) == component[edge] for switch in undelivered):
                found[edge] = self._destination_detours(live, edge, undelivered)
        return found

    def _destination_detours(self, live, edge, undelivered):
        """From every connected lower switch not delivering to ``edge``, the
        switches that do not either, each given the port one hop nearer."""
        bit, sets = self.bit[edge], self.sets
        distance = hop_distances(live, edge)
        todo, seen, entries = [e for e in undelivered if e in distance], set(), {}
        while todo:
            switch = todo.pop()
            if switch in seen or sets[switch] & bit:
                continue
            seen.add(switch)
            port, peer = min((port, peer) for port, peer in live[switch]
                             if distance.get(peer) == distance[switch] - 1)
            entries[switch] = port
            todo.append(peer)
        return entries


def _by_switch(cabling, found):
    """{switch: {subnet: port}} from {destination: {switch: port}}."""
    entries = {}
    for edge, ports in found.items():
        subnet = _subnet_of(cabling.topo, edge)
        for switch, port in ports.items():
            entries.setdefault(switch, {})[subnet] = port
    return entries


def detours(topo, failed, tables):
    """{switch: {subnet: port}}: per-destination entries where the
    broadcast's tables cannot deliver to a subnet although a path exists.

    For each lower switch, every switch its subnet's packets can reach from
    a lower switch is checked over every choice the tables leave (fast
    failover, ECMP hashing); a switch from which some choice drops or loops
    gets a terminating /24 towards a neighbour one hop nearer the subnet's
    lower switch, and that neighbour is checked in turn. Switches from which
    every choice delivers keep their entries, so the result delivers along
    strictly shorter distances wherever it differs. One host stands for its
    subnet: outside its own lower switch the broadcast's tables choose among
    the same ports for every host of a subnet (a second-level table's
    suffixes differ only in which of its usable ports comes first).
    """
    cabling = _Cabling(topo)
    delivery = _Delivery(cabling, tables, failed)
    return _by_switch(cabling, delivery.detours(lambda: live_neighbours(topo, failed)))


def _add_detours(table, entries):
    """Terminating entries replace whatever the table had for their prefix;
    second-level tables nothing points to any more go."""
    for (network, length), port in sorted(entries.items(), key=lambda e: (e[0][1], e[0][0])):
        table.prefixes = [p for p in table.prefixes if (p.network, p.length) != (network, length)]
        at = len(table.prefixes) - 1 if table.prefixes and table.prefixes[-1].length == 0 \
            else len(table.prefixes)
        table.prefixes.insert(at, prefix_entry(network, length, port=port))
    used = {p.suffix_table for p in table.prefixes}
    for name in [n for n in table.suffix_tables if n not in used]:
        del table.suffix_tables[name]
        table.failover.pop(name, None)
    return table


def broadcast_tables(topo, failed, avoid=None):
    """Every switch's table under a set of failed links (link keys), from the
    paper's broadcast alone (``avoid``: its result, when already known)."""
    avoid = broadcast(topo, failed) if avoid is None else avoid
    return {sw.name: table_with_failures(topo, sw.name, avoid.get(sw.name, {}))
            for sw in topo.switches}


def _avoid_detoured(cabling, avoid, entries):
    """A detour allows only its own port: ``avoid`` gets the rest of a pod
    switch's up-ports for each detoured prefix."""
    for switch, ports in entries.items():
        if cabling.role(switch) != 'core':
            for prefix, port in ports.items():
                avoid.setdefault(switch, {})[prefix] = set(cabling.up_ports(switch)) - {port}
    return avoid


def routing(topo, failed):
    """(tables, avoidance) under a set of failed links: the broadcast's
    tables with their detours, and per switch the up-ports each tagged or
    detoured prefix must not use (a detour allows only its own port), for
    the schemes that pick upward ports themselves."""
    cabling = _Cabling(topo)
    avoid = _broadcast(cabling, failed)
    tables = broadcast_tables(topo, failed, avoid)
    # with nothing failed the two-level tables route every pair (Algorithms 1-2)
    entries = _by_switch(cabling, _Delivery(cabling, tables, failed).detours(
        lambda: live_neighbours(topo, failed))) if failed else {}
    for switch, ports in entries.items():
        _add_detours(tables[switch], ports)
    return tables, _avoid_detoured(cabling, avoid, entries)


def tables_with_failures(topo, failed):
    """Every switch's table under a set of failed links (link keys)."""
    return routing(topo, failed)[0]


def avoidance(topo, failed):
    """The up-ports each pod switch must not use, per prefix (see routing)."""
    return routing(topo, failed)[1]


class FailureRouting:
    """Every switch's table under a set of failed links that changes, kept
    from one change to the next: ``update(failed)`` computes only what the
    change touches and returns {switch: table} for the switches whose table
    changed. ``tables`` always equals tables_with_failures(topo, failed)
    and ``avoidance()`` equals avoidance(topo, failed).

    A change runs the broadcast again (a few thousand tags at most), rebuilds
    the tables of the switches whose tags changed, evaluates their delivery
    sets (_Delivery) and those of the ends of the links that changed,
    spreading only while sets change, and searches detours only for the
    destinations some connected lower switch is not delivered to (none under
    a single failure). Under one link failure at k=48 that is milliseconds
    (upper-core) to tens of milliseconds (lower-upper: 1,199 tables change).

    The tables are shared with the caller: read them, never change them.
    """

    def __init__(self, topo):
        self.topo = topo
        self.failed = frozenset()
        self._cabling = _Cabling(topo)
        self._base = {sw.name: switch_table(topo, sw.name) for sw in topo.switches}
        self._paper = dict(self._base)  # the broadcast's tables, before detours
        self.tables = dict(self._base)
        self._tags = {}
        self._entries = {}  # {switch: {subnet: port}} of the detours
        self._delivery = _Delivery(self._cabling, self._paper, self.failed, delivering_all=True)
        self._live = None  # live_neighbours, once a detour is first searched for

    def update(self, failed):
        """Make ``failed`` (link keys) the failure set; {switch: new table}
        for every switch whose table changed."""
        failed = frozenset(failed)
        if failed == self.failed:
            return {}
        ends = sorted({name for link in failed ^ self.failed for name in link})
        tags = _broadcast(self._cabling, failed)
        retagged = [name for name in self.tables if tags.get(name) != self._tags.get(name)]
        for name in retagged:
            self._paper[name] = self._paper_table(name, tags.get(name))
            self._delivery.table_changed(name)
        self._delivery.set_failed(failed)
        self._delivery.settle(ends + retagged)
        if self._live is not None:
            for name in ends:
                self._live[name] = self._cabling.live_neighbours(name, failed)
        entries = _by_switch(self._cabling, self._delivery.detours(lambda: self._live_neighbours(failed)))
        touched = dict.fromkeys(retagged)
        touched.update(dict.fromkeys(sorted(name for name in set(entries) | set(self._entries)
                                            if entries.get(name) != self._entries.get(name))))
        changed = {}
        for name in touched:
            table = self._paper[name]
            if name in entries:
                table = _add_detours(table.copy(), entries[name])
            if table != self.tables[name]:
                changed[name] = self.tables[name] = table
        self.failed, self._tags, self._entries = failed, tags, entries
        return changed

    def avoidance(self):
        """The up-ports each pod switch must not use, per prefix (see routing)."""
        avoid = {switch: {prefix: set(ports) for prefix, ports in tags.items()}
                 for switch, tags in self._tags.items()}
        return _avoid_detoured(self._cabling, avoid, self._entries)

    def _paper_table(self, name, tags):
        base = self._base[name]
        if not tags or self._cabling.role(name) == 'core':
            return base
        # an Algorithm 1 table's /0 fails over to the switch's up-ports, in order
        return _avoiding(base.copy(), base.failover['hostid'], tags)

    def _live_neighbours(self, failed):
        if self._live is None:
            self._live = {name: self._cabling.live_neighbours(name, failed) for name in self.tables}
        return self._live


def repair_point(topo, failed, src, dst):
    """(switch, local?) for the src->dst path of the failure-free tables
    under a new failure: the first switch whose next hop failed repairs it
    locally if its fast-failover group has another port left; otherwise
    only the controller's broadcast can, by steering traffic earlier."""
    tables = tables_with_failures(topo, frozenset())
    dst_ip = topo.node(dst).ip
    for switch, port in walk(topo, lambda sw, _, ip: tables[sw].lookup(ip), src, dst):
        if link_key(switch, topo.peer(switch, port)[0]) in failed:
            return switch, any(link_key(switch, topo.peer(switch, p)[0]) not in failed
                               for p in PortChoices(tables[switch])(dst_ip))
    raise ValueError('%s -> %s does not cross the failure' % (src, dst))
