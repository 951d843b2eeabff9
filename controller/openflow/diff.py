"""The one ordered diff between two states of a switch (rules and groups as
plain data, controller.openflow.rules): what to send, in an order that never
lets a packet meet a half-changed switch (make before break).

  1. groups that are new (ADD_GROUP) or changed (MODIFY_GROUP), so every
     rule that outputs to a group finds it in place;
  2. rules that are new or changed (ADD_FLOW; an add with the same table,
     priority and match replaces), deepest table first and, within a table,
     highest priority first: an entry that sends packets on (goto, a more
     specific redirect) never arrives before what it sends them to;
  3. strict deletes (DELETE_FLOW) of rules whose (table, priority, match)
     key is gone, once what replaces them is in place: shallowest table
     first (an entry goes before what it sends packets to) and, within a
     table, lowest priority first (a packet whose old entry goes falls
     through to its new one, never to another old one). The entries of a
     table that one metadata value chooses, when they all go and nothing
     of the new state in that table matches the value, go by one
     non-strict delete of that metadata (DELETE_FLOWS) where the first of
     them would: a recovery at k=48 deletes a 24-entry second-level table
     on 1,104 switches;
  4. deletes (DELETE_GROUP) of groups the new state no longer has, once no
     rule uses them.

Every op changes one entry (DELETE_FLOWS: a table's entries for one
metadata value at once), so a packet meets, table by table, either the
entry the old state gives it or the one the new state does (adds: a more
specific new entry is in before a less specific one; deletes: the reverse).
Across tables this needs entries that name another table's entries by id
(metadata, group ids) to name them by content, so that an id's entries are
the same in both states (controller.fattree.pipeline.suffix_table_ids,
group_id): a changed target is a new id, added before and deleted after
what points at it. A changed rule or group is replaced by one ADD_FLOW or
MODIFY_GROUP, which a switch applies atomically.
"""
import functools

from controller.openflow.rules import FlowRule

ADD_GROUP = 'add_group'
MODIFY_GROUP = 'modify_group'
ADD_FLOW = 'add_flow'
DELETE_FLOW = 'delete_flow'
DELETE_FLOWS = 'delete_flows'  # non-strict: every entry of the item's table whose match has its metadata
DELETE_GROUP = 'delete_group'


def rule_key(rule):
    """What identifies a flow entry in a switch (replace by add, strict delete)."""
    return rule.key


def _by_key(rules, what):
    by_key = {rule.key: rule for rule in rules}
    if len(by_key) != len(rules):  # a key twice: the same rule, or a state no switch can hold
        for rule in rules:
            if by_key[rule.key] != rule:
                raise ValueError('%s state has two rules for table %d, priority %d, match %r'
                                 % ((what,) + rule.key))
    return by_key


def _by_id(groups, what):
    by_id = {group.group_id: group for group in groups}
    if len(by_id) != len(groups):
        for group in groups:
            if by_id[group.group_id] != group:
                raise ValueError('%s state has two groups with id %d' % (what, group.group_id))
    return by_id


def shared_ends(old, new):
    """How many rules the two lists share, the very same objects in the same
    places, at their heads and at their tails."""
    shortest, head, tail = min(len(old), len(new)), 0, 0
    while head < shortest and old[head] is new[head]:
        head += 1
    while tail < shortest - head and old[-1 - tail] is new[-1 - tail]:
        tail += 1
    return head, tail


def ordered_diff(old_rules, new_rules, old_groups=(), new_groups=()):
    """[(operation, FlowRule or Group)] turning switch state old into new,
    in the order of the module docstring; empty when nothing changed.

    States compiled from the same memoised entries share most of their
    objects, often in runs at both ends (the housekeeping first, the ARP
    tables last): those are kept as they are, and only the rules between
    are compared, by key (checked not to clash with a kept rule's)."""
    head, tail = shared_ends(old_rules, new_rules)
    old_by_key = _by_key(old_rules[head:len(old_rules) - tail], 'old')
    new_by_key = _by_key(new_rules[head:len(new_rules) - tail], 'new')
    if head or tail:
        kept = _by_key(old_rules[:head] + old_rules[len(old_rules) - tail:], 'old')
        for what, by_key in (('old', old_by_key), ('new', new_by_key)):
            for key in kept.keys() & by_key.keys():  # a kept rule again, or a clash with one
                if by_key.pop(key) != kept[key]:
                    raise ValueError('%s state has two rules for table %d, priority %d, match %r'
                                     % ((what,) + key))
    old_by_id, new_by_id = _by_id(old_groups, 'old'), _by_id(new_groups, 'new')
    ops = []
    for group_id, group in new_by_id.items():
        old = old_by_id.get(group_id)
        if old is None:
            ops.append((ADD_GROUP, group))
        elif old is not group and old != group:
            ops.append((MODIFY_GROUP, group))
    added = [rule for key, rule in new_by_key.items()
             if (old := old_by_key.get(key)) is not rule and old != rule]
    ops += [(ADD_FLOW, rule) for rule in sorted(added, key=lambda r: (-r.table, -r.priority))]
    gone = [rule for key, rule in old_by_key.items() if key not in new_by_key]
    ops += [op for _, op in sorted(_deletes(gone, new_rules), key=lambda d: d[0])]
    ops += [(DELETE_GROUP, group) for group_id, group in old_by_id.items() if group_id not in new_by_id]
    return ops


_ALL_BITS = 0xffffffffffffffff


@functools.lru_cache(maxsize=1 << 16)
def metadata_term(rule):
    """(value, mask) of a rule's metadata match, None when it has none."""
    want = next((want for name, want in rule.match if name == 'metadata'), None)
    return want if want is None or isinstance(want, tuple) else (want, _ALL_BITS)


def _deletes(gone, new_rules):
    """[((table, priority), op)] deleting the ``gone`` rules: one
    DELETE_FLOWS per metadata value all of whose entries in a table go,
    one DELETE_FLOW per other rule."""
    by_table = {}
    for rule in gone:
        metadata = metadata_term(rule)
        if metadata is not None:
            by_table.setdefault((rule.table, metadata), []).append(rule)
    whole = {key for key, rules in by_table.items() if len(rules) > 1}
    if whole:
        tables = {table for table, _ in whole}
        for rule in new_rules:  # a non-strict delete would take what stays there too
            metadata = metadata_term(rule) if rule.table in tables else None
            if metadata is not None:
                whole = {(table, (value, mask)) for table, (value, mask) in whole
                         if table != rule.table or metadata[0] & mask != value}
    deletes = [((table, min(r.priority for r in by_table[(table, metadata)])),
                (DELETE_FLOWS, FlowRule(table, 0, (('metadata', metadata),)))) for table, metadata in whole]
    deleted = {id(rule) for key in whole for rule in by_table[key]}
    return deletes + [((rule.table, rule.priority), (DELETE_FLOW, rule)) for rule in gone if id(rule) not in deleted]


def count(ops, operation):
    """How many ops of an ordered diff are ``operation`` (for logs and replies)."""
    return sum(1 for kind, _ in ops if kind == operation)
