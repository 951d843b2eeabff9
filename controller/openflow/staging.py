"""In which order to update several switches so that no packet meets a
switch that has not yet got the forwarding an updated switch sends it to
(pure: no Ryu).

Each switch's own diff is make-before-break (controller.openflow.diff);
across switches the rule is downstream first: when switch X's forwarding
toward destination d changes and its new forwarding sends d's packets to
switch Y, whose forwarding toward d changes too, Y is updated (and has
confirmed it) before X. Switches with no such dependency between them form
one stage, sent together; each stage waits for the previous one's
barriers. Dependencies that form a cycle (X waits for Y for one
destination, Y for X for another) put the cycle's switches in one stage.

Forwarding is read from the rules and groups themselves
(controller.openflow.lookup), for every host address of the model: an
output port leads to its peer, a group to every bucket's.
"""
import bisect

from controller.openflow.lookup import match_terms, matches, pipeline, tables_walked
from controller.openflow.rules import ETH_TYPE_IP
from topologies.addressing import ip_to_int
from topologies.model import model_port


def _forwarding(lookup, groups, destination):
    """(the entries a packet to ``destination`` meets, the groups it may leave by, its output ports)."""
    hit = lookup.hit(destination)
    actions = hit[-1].actions if hit[-1] is not None else ()
    used = tuple(groups.get(a[1]) for a in actions if a[0] == 'group')
    ports = [a[1] for a in actions if a[0] == 'output']
    ports += [a[1] for group in used if group is not None for _, bucket in group.buckets
              for a in bucket if a[0] == 'output']
    return hit, used, ports


class _DestinationLookup:
    """What controller.openflow.lookup.rules_hit gives for IPv4 packets to
    many destinations through one switch's rules, each table's answer kept
    per (metadata, the destination's bits its masked entries read): at k=48
    a switch's 27,648 host addresses fall into about a thousand classes per
    table, where looking each up costs 0.7 s a switch. Entries on one whole
    address are found by it."""

    def __init__(self, rules):
        self.tables = {}
        for table, entries in pipeline(rules).items():
            exact, masked_bits = {}, 0
            for index, (terms, _) in enumerate(entries):
                for name, value, mask in terms:
                    if name == 'ipv4_dst':
                        if mask == 0xffffffff:
                            exact.setdefault(value, []).append(index)
                        else:
                            masked_bits |= mask
            self.tables[table] = (entries, exact, masked_bits, {})

    def hit(self, destination):
        packet = {'eth_type': ETH_TYPE_IP, 'ipv4_dst': destination, 'metadata': 0}
        return tuple(tables_walked(self._first, packet))

    def _first(self, table, packet):
        if table not in self.tables:
            return None
        entries, exact, masked_bits, memo = self.tables[table]
        key = (packet['metadata'], packet['ipv4_dst'] & masked_bits)
        if key not in memo:
            memo[key] = next((i for i, (terms, _) in enumerate(entries)
                              if not _on_one_address(terms) and matches(terms, packet)), None)
        found = [i for i in exact.get(packet['ipv4_dst'], ()) if matches(entries[i][0], packet)]
        if memo[key] is not None:
            found.append(memo[key])
        return entries[min(found)][1] if found else None


def _on_one_address(terms):
    return any(name == 'ipv4_dst' and mask == 0xffffffff for name, _, mask in terms)


def forwarding_changes(topo, switch, old, new):
    """{destination: the switches ``switch``'s new forwarding sends it to},
    for every host address whose forwarding differs between the states
    ``old`` and ``new`` (each (rules, groups)) of the switch.

    Only the destinations some added or removed rule matches can differ
    (an entry a packet meets, or one that now outranks it, is among them;
    group and second-level table ids derive from content, so a changed
    group or table is a changed rule too): they alone are looked up, which
    at k=48 is a few hundred of 27,648 addresses. A group changed in place
    (same id, other buckets) can change any destination: then all are."""
    before = (_DestinationLookup(old[0]), {g.group_id: g for g in old[1]})
    after = (_DestinationLookup(new[0]), {g.group_id: g for g in new[1]})
    changes = {}
    for destination in _candidates(topo, old, new, before[1], after[1]):
        was, now = _forwarding(*before, destination), _forwarding(*after, destination)
        if was[:2] != now[:2]:
            peers = (topo.peer(switch, model_port(port)) for port in now[2])
            changes[destination] = {peer[0] for peer in peers if peer is not None}
    return changes


def _candidates(topo, old, new, groups_before, groups_after):
    """The host addresses whose forwarding may differ between ``old`` and
    ``new``, in the model's host order."""
    addresses = _HostAddresses.of(topo)
    if any(groups_after.get(gid, group) != group for gid, group in groups_before.items()):
        return addresses.ordered
    found = set()
    for rule in set(old[0]).symmetric_difference(new[0]):
        terms = [(value, mask) for name, value, mask in match_terms(rule) if name == 'ipv4_dst']
        if not terms:
            return addresses.ordered  # a rule on every address changed
        found.update(addresses.matching(*terms[0]))
    return [address for address in addresses.ordered if address in found]


class _HostAddresses:
    """A model's host addresses, indexed for masked matches: a left-handed
    (prefix) mask is a range of the sorted addresses, a right-handed
    (suffix) mask a set by low bits; any other mask is scanned."""

    _cache = {}

    @classmethod
    def of(cls, topo):
        key = id(topo)
        cached = cls._cache.get(key)
        if cached is None or cached[0] is not topo:
            cached = cls._cache[key] = (topo, cls(topo))
        return cached[1]

    def __init__(self, topo):
        self.ordered = [ip_to_int(host.ip) for host in topo.hosts]
        self.sorted = sorted(self.ordered)
        self.by_suffix = {}  # mask -> {low bits: [addresses]}

    def matching(self, value, mask):
        if mask == 0:
            return self.sorted
        inverted = ~mask & 0xffffffff
        if inverted & (inverted + 1) == 0:  # ones from the top: a prefix
            low = value & mask
            return self.sorted[bisect.bisect_left(self.sorted, low):bisect.bisect_right(self.sorted, low | inverted)]
        if mask & (mask + 1) == 0:  # ones from the bottom: a suffix
            table = self.by_suffix.get(mask)
            if table is None:
                table = self.by_suffix[mask] = {}
                for address in self.sorted:
                    table.setdefault(address & mask, []).append(address)
            return table.get(value & mask, ())
        return [address for address in self.sorted if address & mask == value & mask]


def dependencies(changes):
    """{switch: the switches that must be updated before it}, from every
    switch's ``forwarding_changes`` ({switch: {destination: next hops}})."""
    return {switch: {hop for destination, hops in by_destination.items() for hop in hops
                     if hop != switch and destination in changes.get(hop, {})}
            for switch, by_destination in changes.items()}


def stages(after):
    """Stages [[switch]] from ``after`` ({switch: switches that go before it}):
    every switch after the stages of those it waits for; a cycle's
    switches share a stage. Sorted within a stage, for logs and tests."""
    components = _strongly_connected(after)
    component_of = {switch: index for index, members in enumerate(components) for switch in members}
    level = {}
    for index, members in enumerate(components):  # Tarjan's order: what a component waits for comes first
        level[index] = 1 + max((level[component_of[before]] for switch in members for before in after[switch]
                                if component_of[before] != index), default=-1)
    result = [[] for _ in range(1 + max(level.values(), default=-1))]
    for switch in after:
        result[level[component_of[switch]]].append(switch)
    return [sorted(stage) for stage in result]


def _strongly_connected(after):
    """Tarjan: the components of the graph switch -> what goes before it,
    each listed after every component it reaches."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for root in after:
        if root in index:
            continue
        work = [(root, iter(after[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(after[successor])))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components
