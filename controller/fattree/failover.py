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
"""
from controller.fattree.twolevel import Prefix, left_mask, right_mask, switch_table
from topologies.fattree import ip_to_int
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


def _peers(topo, switch, ports):
    return [topo.peer(switch, port)[0] for port in ports]


def broadcast(topo, failed):
    """{switch: {(network, length): set of avoided up-ports}} for a set of
    failed links (link keys), following the paper's broadcast described above."""
    avoid = {}

    def tag(switch, prefix, port):
        avoid.setdefault(switch, {}).setdefault(prefix, set()).add(port)

    for link in failed:
        a, b = sorted(link, key=lambda n: ('edge', 'aggregation', 'core').index(topo.node(n).role))
        pod = topo.pod_of(a)
        tag(a, ALL, topo.port_to(a, b))
        if topo.node(a).role == 'edge':
            subnet = _subnet_of(topo, a)
            for other in _peers(topo, b, topo.down_ports(b)):
                if other != a:
                    tag(other, subnet, topo.port_to(other, b))
            far_prefix, cores = subnet, _peers(topo, b, topo.up_ports(b))
        else:
            far_prefix, cores = _pod_prefix(pod), [b]
        for core in cores:
            for far_upper in _peers(topo, core, topo.down_ports(core)):
                if topo.pod_of(far_upper) != pod:
                    tag(far_upper, far_prefix, topo.port_to(far_upper, core))

    # An upper switch left with no usable up-port for a prefix passes the tag
    # to its lower switches (see the module docstring). One that lost every
    # core link (say, while its links come back one by one) is avoided by its
    # lower switches for every other pod, and still used inside its own pod.
    pods = {topo.pod_of(n.name) for n in topo.switches_of_role('edge')}
    for switch, tags in list(avoid.items()):
        if topo.node(switch).role != 'aggregation':
            continue
        pod = topo.pod_of(switch)
        up_ports = set(topo.up_ports(switch))
        dead_up = up_ports <= tags.get(ALL, set())
        for prefix, ports in list(tags.items()):
            if prefix == ALL and dead_up:
                passed = [_pod_prefix(q) for q in sorted(pods - {pod})]
            elif prefix != ALL and (dead_up or up_ports <= ports):
                passed = [prefix]
            else:
                continue
            for edge in _peers(topo, switch, topo.down_ports(switch)):
                for tagged in passed:
                    tag(edge, tagged, topo.port_to(edge, switch))
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
    if topo.node(switch).role == 'core':
        return table
    up_ports = topo.up_ports(switch)
    base = {s.value: s.port for s in table.suffix_tables['hostid']}

    def fill(name, avoided):
        table.suffix_tables[name] = []
        for value, port in base.items():
            chosen = usable_port(port, avoided, up_ports)
            if chosen is not None:
                table.add_suffix(name, value, 8, chosen)
        table.failover[name] = tuple(p for p in up_ports if p not in avoided)

    fill('hostid', avoid_tags.get(ALL, set()))
    specific = sorted((p for p in avoid_tags if p != ALL), key=lambda p: (p[1], p[0]))
    for prefix in specific:
        avoided = set()
        for outer, ports in avoid_tags.items():
            if _covers(outer, prefix):
                avoided |= ports
        name = 'avoid-%s/%d' % prefix
        fill(name, avoided)
        # before the /0 entry: a specific prefix must win
        table.prefixes.insert(len(table.prefixes) - 1, Prefix(prefix[0], prefix[1], suffix_table=name))
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


def _delivery_check(topo, choices, failed, edge, ip):
    """A function switch -> whether every port the tables (as PortChoices)
    may choose for destination ``ip``, from that switch on, brings its
    packets to ``edge`` (no drop, no loop)."""
    verdict = {edge: True}

    def delivers(switch):
        if switch in verdict:
            return bool(verdict[switch])  # None: being explored, so a loop
        verdict[switch] = None
        ok = True
        for port in choices[switch](ip) or (None,):
            peer = topo.peer(switch, port) if port is not None else None
            if peer is None or topo.nodes[peer[0]].is_host or link_key(switch, peer[0]) in failed \
                    or not delivers(peer[0]):
                ok = False
                break
        verdict[switch] = ok
        return ok
    return delivers


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
    neighbours = live_neighbours(topo, failed)
    edges = [sw.name for sw in topo.switches_of_role('edge')]
    choices = {name: PortChoices(table) for name, table in tables.items()}
    entries = {}
    for edge in edges:
        distance = hop_distances(neighbours, edge)
        host = _peers(topo, edge, topo.down_ports(edge))[0]
        delivers = _delivery_check(topo, choices, failed, edge, topo.node(host).ip)
        todo, seen = [e for e in edges if e in distance], set()
        while todo:
            switch = todo.pop()
            if switch in seen or delivers(switch):
                continue
            seen.add(switch)
            port, peer = min((port, peer) for port, peer in neighbours[switch]
                             if distance.get(peer) == distance[switch] - 1)
            entries.setdefault(switch, {})[_subnet_of(topo, edge)] = port
            todo.append(peer)
    return entries


def _add_detours(table, entries):
    """Terminating entries replace whatever the table had for their prefix;
    second-level tables nothing points to any more go."""
    for (network, length), port in sorted(entries.items(), key=lambda e: (e[0][1], e[0][0])):
        table.prefixes = [p for p in table.prefixes if (p.network, p.length) != (network, length)]
        at = len(table.prefixes) - 1 if table.prefixes and table.prefixes[-1].length == 0 \
            else len(table.prefixes)
        table.prefixes.insert(at, Prefix(network, length, port=port))
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


def routing(topo, failed):
    """(tables, avoidance) under a set of failed links: the broadcast's
    tables with their detours, and per switch the up-ports each tagged or
    detoured prefix must not use (a detour allows only its own port), for
    the schemes that pick upward ports themselves."""
    avoid = broadcast(topo, failed)
    tables = broadcast_tables(topo, failed, avoid)
    # with nothing failed the two-level tables route every pair (Algorithms 1-2)
    for switch, entries in (detours(topo, failed, tables) if failed else {}).items():
        _add_detours(tables[switch], entries)
        if topo.node(switch).role != 'core':
            for prefix, port in entries.items():
                avoid.setdefault(switch, {})[prefix] = set(topo.up_ports(switch)) - {port}
    return tables, avoid


def tables_with_failures(topo, failed):
    """Every switch's table under a set of failed links (link keys)."""
    return routing(topo, failed)[0]


def avoidance(topo, failed):
    """The up-ports each pod switch must not use, per prefix (see routing)."""
    return routing(topo, failed)[1]


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
