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
"""
from controller.fattree.twolevel import Prefix, left_mask, switch_table
from topologies.fattree import ip_to_int

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


def avoidance(topo, failed):
    """{switch: {(network, length): set of avoided up-ports}} for a set of
    failed links (link keys), following the broadcast described above."""
    half = topo.half
    avoid = {}

    def tag(switch, prefix, port):
        avoid.setdefault(switch, {}).setdefault(prefix, set()).add(port)

    for link in failed:
        a, b = sorted(link, key=lambda n: ('edge', 'aggregation', 'core').index(topo.node(n).role))
        lower = topo.node(a)
        tag(a, ALL, topo.port_to(a, b))
        if lower.role == 'edge':
            pod = lower.coords[0]
            subnet = _subnet_of(topo, a)
            for z in range(half):
                other = 'e%d_%d' % (pod, z)
                if other != a:
                    tag(other, subnet, topo.port_to(other, b))
            for core_port in range(half, topo.k):
                core, _ = topo.peer(b, core_port)
                for q in range(topo.k):
                    if q != pod:
                        far_upper, _ = topo.peer(core, q)
                        tag(far_upper, subnet, topo.port_to(far_upper, core))
        else:
            pod = lower.coords[0]
            for q in range(topo.k):
                if q != pod:
                    far_upper, _ = topo.peer(b, q)
                    tag(far_upper, _pod_prefix(pod), topo.port_to(far_upper, b))

    # An upper switch left with no usable up-port for a prefix passes the tag
    # to its lower switches (see the module docstring). One that lost every
    # core link (say, while its links come back one by one) is avoided by its
    # lower switches for every other pod, and still used inside its own pod.
    up_ports = set(range(half, topo.k))
    for switch, tags in list(avoid.items()):
        if topo.node(switch).role != 'aggregation':
            continue
        pod = topo.node(switch).coords[0]
        dead_up = up_ports <= tags.get(ALL, set())
        for prefix, ports in list(tags.items()):
            if prefix == ALL and dead_up:
                passed = [_pod_prefix(q) for q in range(topo.k) if q != pod]
            elif prefix != ALL and (dead_up or up_ports <= ports):
                passed = [prefix]
            else:
                continue
            for z in range(half):
                edge = 'e%d_%d' % (pod, z)
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


def usable_port(base, avoided, half):
    """The up-port a host-ID suffix uses: its Algorithm 1 port, or the next
    one (cyclically) that is not avoided; None if every up-port is."""
    for step in range(half):
        port = half + (base - half + step) % half
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
    node = topo.node(switch)
    if node.role == 'core':
        return table
    half, k = topo.half, topo.k
    base = {s.value: s.port for s in table.suffix_tables['hostid']}

    def fill(name, avoided):
        table.suffix_tables[name] = []
        for value, port in base.items():
            chosen = usable_port(port, avoided, half)
            if chosen is not None:
                table.add_suffix(name, value, 8, chosen)
        table.failover[name] = tuple(p for p in range(half, k) if p not in avoided)

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


def tables_with_failures(topo, failed):
    """Every switch's table under a set of failed links (link keys)."""
    avoid = avoidance(topo, failed)
    return {sw.name: table_with_failures(topo, sw.name, avoid.get(sw.name, {}))
            for sw in topo.switches}
