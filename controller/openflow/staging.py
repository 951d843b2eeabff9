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

Forwarding is read from the rules and groups themselves, for every host
address of the model (an output port leads to its peer, a group to every
bucket's), but never address by address: a set of addresses is a bitmask
over the model's hosts (``ModelIndex``), and a switch's rules are walked
once per state with the set of addresses still undecided, each entry
taking the addresses it matches from it (the addresses its rules cannot
tell apart go together). At k=48 that is a few hundred bitmask operations
per switch where looking 27,648 addresses up took a quarter of a second.
And the switches of one update mostly hold the rules that matter alike (a
failure changes the 1,151 other lower switches of k=48 the same way): what
is worked out from rules and groups alone is worked out once per update.
"""
import bisect
import functools
import heapq

from controller.openflow.diff import metadata_term, shared_ends
from controller.openflow.lookup import ipv4_term, match_terms, matches
from controller.openflow.rules import ETH_TYPE_IP
from topologies.addressing import ip_to_int
from topologies.model import model_port


class ModelIndex:
    """What the plan asks of a model, kept: its host addresses as bit
    positions (ascending address order, so a left-handed mask is a run of
    bits; a set of addresses is an int), and where a switch's ports lead."""

    _cache = {}

    @classmethod
    def of(cls, topo):
        cached = cls._cache.get(id(topo))
        if cached is None or cached[0] is not topo:
            cached = cls._cache[id(topo)] = (topo, cls(topo))
        return cached[1]

    def __init__(self, topo):
        self.topo = topo
        self.addresses = sorted({ip_to_int(host.ip) for host in topo.hosts})
        self.position = {address: index for index, address in enumerate(self.addresses)}
        self.every = (1 << len(self.addresses)) - 1
        self._written = {}  # an ipv4_dst as a rule writes it -> its bits
        self._of_rule = {}  # id(rule) -> (the rule, the bits of its ipv4_dst)
        self._by_suffix = {}  # mask -> {low bits: bits}
        self._hops = {}  # (switch, tuple of ports) -> the nodes on them

    def of_match(self, want):
        """The addresses a rule's ipv4_dst match (as written in the rule) takes."""
        bits = self._written.get(want)
        if bits is None:
            bits = self._written[want] = self.matching(*ipv4_term(want))
        return bits

    def of_rule(self, rule):
        """The addresses a rule can match: those of its ipv4_dst, or all."""
        kept = self._of_rule.get(id(rule))  # by identity: hashing a rule costs a Python call
        if kept is None or kept[0] is not rule:
            kept = self._of_rule[id(rule)] = (rule, next(
                (self.of_match(want) for name, want in rule.match if name == 'ipv4_dst'), self.every))
        return kept[1]

    def matching(self, value, mask):
        """The addresses whose bits under ``mask`` are ``value``'s."""
        value &= mask
        if mask == 0xffffffff:
            return 1 << self.position[value] if value in self.position else 0
        inverted = ~mask & 0xffffffff
        if inverted & (inverted + 1) == 0:  # ones from the top: a prefix, a run of positions
            low = bisect.bisect_left(self.addresses, value)
            high = bisect.bisect_right(self.addresses, value | inverted)
            return ((1 << (high - low)) - 1) << low
        if mask & (mask + 1) == 0:  # ones from the bottom: a suffix
            table = self._by_suffix.get(mask)
            if table is None:
                table = self._by_suffix[mask] = self._group_by(lambda address: address & mask)
            return table.get(value, 0)
        return self._group_by(lambda address: address & mask).get(value, 0)

    def _group_by(self, key):
        """{key: bits of the addresses with that key}, built as binary digits
        (setting bit by bit in an int of 27,648 bits is quadratic)."""
        digits, last = {}, len(self.addresses) - 1
        for index, address in enumerate(self.addresses):
            digits.setdefault(key(address), bytearray(b'0' * len(self.addresses)))[last - index] = ord('1')
        return {k: int(d, 2) for k, d in digits.items()}

    def matching_rules(self, rules, candidates):
        """The rules of ``rules`` matching some of ``candidates`` (of_rule,
        inlined: a k=48 update asks it of hundreds of thousands of rules)."""
        kept, every, found = self._of_rule, self.every, []
        for rule in rules:
            entry = kept.get(id(rule))
            bits = entry[1] if entry is not None and entry[0] is rule else self.of_rule(rule)
            if bits is every or bits & candidates:  # a rule with no destination match: no 27,648 bits to AND
                found.append(rule)
        return found

    def hops(self, switch, ports):
        """The nodes on the other end of ``switch``'s OpenFlow ports ``ports``."""
        key = (switch, ports)
        found = self._hops.get(key)
        if found is None:
            peers = (self.topo.peer(switch, model_port(port)) for port in ports)
            found = self._hops[key] = frozenset(peer[0] for peer in peers if peer is not None)
        return found

    def listed(self, bits):
        """The addresses of ``bits``, ascending."""
        found = []
        while bits:
            low = bits & -bits
            found.append(self.addresses[low.bit_length() - 1])
            bits ^= low
        return found


def forwarding_classes(rules, groups, candidates, index, ids=None):
    """{(the entries a packet meets, the groups it may leave by): (the
    addresses of ``candidates`` that meet them, the output ports they
    may leave by)} for IPv4 packets through one switch holding ``rules``
    and ``groups`` ({id: Group}), as controller.openflow.lookup.rules_hit
    walks them (write-metadata applied, goto followed, a table nothing
    matches ending the entries with None). Each table's entries, highest
    priority first, take the addresses they match from those not yet
    taken. Entries and groups are named by numbers from ``ids`` ({rule or
    group: number}, shared by two states compared, so that equal ones get
    equal numbers: hashing rules again for every class took seconds when
    24 prefixes shared one second-level table at k=48)."""
    ids = {} if ids is None else ids
    by_table = {}
    for rule in rules:
        by_table.setdefault(rule.table, []).append(rule)
    tables, eligible, ends, found = {}, {}, {}, {}
    work = [(0, 0, candidates, ())]
    while work:
        table, metadata, undecided, met = work.pop()
        entries = eligible.get((table, metadata))
        if entries is None:  # the table's entries a packet with this metadata can match
            if table not in tables:  # only the tables a candidate reaches are read
                tables[table] = _table(by_table.get(table, ()), index, candidates)
            packet = {'eth_type': ETH_TYPE_IP, 'metadata': metadata}
            entries = eligible[(table, metadata)] = [
                (index.of_rule(rule), ids.setdefault(rule, len(ids)), rule)
                for rule in _reachable(tables[table], metadata) if matches(_terms_but_ipv4_dst(rule), packet)]
        for bits, number, rule in entries:
            taken = undecided & bits
            if not taken:
                continue
            undecided ^= taken
            if rule.goto_table is None:
                end = ends.get(number)
                if end is None:
                    used = tuple(groups.get(a[1]) for a in rule.actions if a[0] == 'group')
                    end = ends[number] = (tuple(ids.setdefault(g, len(ids)) for g in used), _ports(rule, used))
                key = (met + (number,), end[0])
                found[key] = (found.get(key, (0,))[0] | taken, end[1])
            else:
                written = metadata
                if rule.write_metadata is not None:
                    value, mask = rule.write_metadata
                    written = metadata & ~mask | value & mask
                work.append((rule.goto_table, written, taken, met + (number,)))
            if not undecided:
                break
        if undecided:
            key = (met + (None,), ())
            found[key] = (found.get(key, (0,))[0] | undecided, ())
    return found


def _table(rules, index, candidates):
    """(``rules`` without a metadata match, {metadata mask: {value: those
    matching metadata value under that mask}}), each list [(rank, rule)]
    highest priority first (lookup.pipeline's order), for the rules of one
    table that match some of ``candidates`` (one that matches none never
    takes one). A table chosen by metadata is then found without reading
    the others: a burst of failures at k=48 leaves dozens of them on one
    switch."""
    anything, by_mask = [], {}
    relevant = [rule for rule in rules if index.of_rule(rule) & candidates]
    for rank, rule in enumerate(sorted(relevant, key=_priority, reverse=True)):
        metadata = metadata_term(rule)
        if metadata is None:
            anything.append((rank, rule))
        else:
            by_mask.setdefault(metadata[1], {}).setdefault(metadata[0], []).append((rank, rule))
    return anything, by_mask


def _reachable(table, metadata):
    """The rules of ``table`` (from _table) a packet carrying ``metadata``
    can match, highest priority first."""
    anything, by_mask = table
    found = [anything] + [by_value[metadata & mask] for mask, by_value in by_mask.items()
                          if metadata & mask in by_value]
    return [rule for _, rule in (found[0] if len(found) == 1 else heapq.merge(*found))]


def _priority(rule):
    return rule.priority


@functools.lru_cache(maxsize=1 << 16)
def _terms_but_ipv4_dst(rule):
    """A rule's match terms but its destination's (ModelIndex.of_rule
    gives the addresses that one takes)."""
    return tuple(t for t in match_terms(rule) if t[0] != 'ipv4_dst')


@functools.lru_cache(maxsize=1 << 14)
def _ports(rule, used):
    """The output ports of an entry that outputs through the groups ``used``:
    its own outputs and every bucket's."""
    return tuple([a[1] for a in rule.actions if a[0] == 'output'] + [
        a[1] for group in used if group is not None for _, bucket in group.buckets for a in bucket
        if a[0] == 'output'])


def forwarding_changes(topo, switch, old, new, alike=None):
    """{the switches ``switch``'s new forwarding sends them to (frozenset):
    the destinations (ModelIndex bits) whose forwarding differs between
    the states ``old`` and ``new`` (each (rules, groups)) of the switch}.
    ``alike``: a dict the switches of one update share (see below).

    Only destinations some added or removed rule can match are walked
    (``candidates``): at k=48 a lower switch told to avoid one subnet walks
    that subnet's 24 addresses, not 27,648. And only the rules that match
    one of them: those are alike on most switches a failure changes (the
    1,151 lower switches of k=48 told to avoid one subnet hold the same
    ones), so their classes are worked out once per update (kept in
    ``alike``) and only the ports' peers are the switch's own."""
    index = ModelIndex.of(topo)
    alike = {} if alike is None else alike
    # Rules and groups are known by identity (compiled ones are shared
    # objects; a tuple of them hashed each rule again), each answer kept
    # beside what it was worked out from, so that no id is reused meanwhile.
    head, tail = shared_ends(old[0], new[0])
    middles = (old[0][head:len(old[0]) - tail], new[0][head:len(new[0]) - tail])
    candidates = _candidates(index, middles, old, new, alike)
    if not candidates:
        return {}
    first, last = (_matching(index, part, candidates, alike) for part in (old[0][:head], old[0][len(old[0]) - tail:]))
    states = [(first + _matching(index, middle, candidates, alike) + last, groups)
              for middle, (_, groups) in zip(middles, (old, new))]
    key = ('classes', candidates) + tuple(tuple(map(id, part)) for state in states for part in state)
    kept = alike.get(key)
    if kept is None:
        kept = alike[key] = (_ports_changed(candidates, *states, index), states)
    by_ports = kept[0]
    changes = {}
    for ports, bits in by_ports.items():
        hops = index.hops(switch, ports)
        changes[hops] = changes.get(hops, 0) | bits
    return changes


def _matching(index, rules, candidates, alike):
    """ModelIndex.matching_rules, kept in ``alike`` for the same rules: the
    switches of one update hold most of theirs alike (at k=48 a lower
    switch's own are 24 of 153)."""
    key = ('matching', candidates, tuple(map(id, rules)))
    kept = alike.get(key)
    if kept is None:
        kept = alike[key] = (index.matching_rules(rules, candidates), rules)
    return kept[0]


def _ports_changed(candidates, old, new, index):
    """{output ports (sorted, each once): the destinations of ``candidates``
    whose forwarding differs between states ``old`` and ``new`` and that
    leave by them}. Joined by ports, not by their order: each switch finds
    the peers of a handful of port sets, not of a hundred groups' buckets."""
    ids = {}
    before = forwarding_classes(old[0], {g.group_id: g for g in old[1]}, candidates, index, ids)
    changed = {}
    for forwarding, (bits, ports) in forwarding_classes(
            new[0], {g.group_id: g for g in new[1]}, candidates, index, ids).items():
        bits ^= bits & before.get(forwarding, (0,))[0]
        if bits:
            ports = tuple(sorted(set(ports)))
            changed[ports] = changed.get(ports, 0) | bits
    return changed


def _candidates(index, middles, old, new, alike):
    """The destinations whose forwarding may differ between states ``old``
    and ``new`` (rules, groups), whose rules differ only in ``middles``
    (the old rules and the new between their shared ends): those an added
    or removed rule matches. Group and second-level table ids derive from
    content, so a changed group or table is a changed rule too; a group
    changed in place (same id, other buckets) can change any destination.
    A second-level entry is met only by the destinations of the entries
    that write its metadata: where every writer of either state writes the
    bits it matches, it adds only those (a new /24's table: 24 addresses,
    not its suffixes' 1,152 each at k=48). Kept in ``alike`` by the
    middles and the writers: switches told the same share them."""
    groups_after = {g.group_id: g for g in new[1]}
    if any((after := groups_after.get(group.group_id, group)) is not group and after != group for group in old[1]):
        return index.every
    writers = [rule for rules in (old[0], new[0]) for rule in rules if rule.write_metadata is not None]
    key = ('candidates',) + tuple(tuple(map(id, part)) for part in middles + (writers,))
    kept = alike.get(key)
    if kept is None:
        kept = alike[key] = (_changed_destinations(index, *middles, writers), middles, writers)
    return kept[0]


def _changed_destinations(index, old_rules, new_rules, writers):
    """_candidates' destinations of the rules in one list but not the other."""
    by_metadata = {}  # a table's entries share their writers: joined first, restricted once
    for rule in set(old_rules).symmetric_difference(new_rules):
        metadata = metadata_term(rule)
        by_metadata[metadata] = by_metadata.get(metadata, 0) | index.of_rule(rule)
    found = by_metadata.pop(None, 0)
    for metadata, bits in by_metadata.items():
        found |= bits & _written_by(index, writers, *metadata)
    return found


def _written_by(index, writers, value, mask):
    """The destinations that can reach a table with metadata ``value`` under
    ``mask``: those of its writers, when each writer writes every bit of
    ``mask`` (else, and for a value 0 that no writer is needed for, all)."""
    if value == 0 or any(w.write_metadata[1] & mask != mask for w in writers):
        return index.every
    bits = 0
    for writer in writers:
        if writer.write_metadata[0] & mask == value:
            bits |= index.of_rule(writer)
    return bits


def update_stages(topo, installed, new, between=None):
    """The stages that move the switches of ``new`` ({switch: (rules,
    groups)}, each differing from its ``installed`` state) to it, downstream
    first. ``between()``, when given, is called after each switch's changes
    are worked out (the app lets its other events run there)."""
    alike, changes = {}, {}
    for switch, state in new.items():
        changes[switch] = forwarding_changes(topo, switch, installed[switch], state, alike)
        if between is not None:
            between()
    return stages(dependencies(changes))


def dependencies(changes):
    """{switch: the switches that must be updated before it}, from every
    switch's ``forwarding_changes``."""
    changed = {}
    for switch, by_hops in changes.items():
        for bits in by_hops.values():
            changed[switch] = changed.get(switch, 0) | bits
    return {switch: {hop for hops, bits in by_hops.items() for hop in hops
                     if hop != switch and bits & changed.get(hop, 0)}
            for switch, by_hops in changes.items()}


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
