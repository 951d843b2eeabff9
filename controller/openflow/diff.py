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
     through to its new one, never to another old one);
  4. deletes (DELETE_GROUP) of groups the new state no longer has, once no
     rule uses them.

Every op changes one entry, so a packet meets, table by table, either the
entry the old state gives it or the one the new state does (adds: a more
specific new entry is in before a less specific one; deletes: the reverse).
Across tables this needs entries that name another table's entries by id
(metadata, group ids) to name them by content, so that an id's entries are
the same in both states (controller.fattree.pipeline.suffix_table_ids,
group_id): a changed target is a new id, added before and deleted after
what points at it. A changed rule or group is replaced by one ADD_FLOW or
MODIFY_GROUP, which a switch applies atomically.
"""
ADD_GROUP = 'add_group'
MODIFY_GROUP = 'modify_group'
ADD_FLOW = 'add_flow'
DELETE_FLOW = 'delete_flow'
DELETE_GROUP = 'delete_group'


def rule_key(rule):
    """What identifies a flow entry in a switch (replace by add, strict delete)."""
    return (rule.table, rule.priority, rule.match)


def _by_key(rules, what):
    by_key = {}
    for rule in rules:
        if by_key.setdefault(rule_key(rule), rule) != rule:
            raise ValueError('%s state has two rules for table %d, priority %d, match %r'
                             % ((what,) + rule_key(rule)))
    return by_key


def _by_id(groups, what):
    by_id = {}
    for group in groups:
        if by_id.setdefault(group.group_id, group) != group:
            raise ValueError('%s state has two groups with id %d' % (what, group.group_id))
    return by_id


def ordered_diff(old_rules, new_rules, old_groups=(), new_groups=()):
    """[(operation, FlowRule or Group)] turning switch state old into new,
    in the order of the module docstring; empty when nothing changed."""
    old_by_key, new_by_key = _by_key(old_rules, 'old'), _by_key(new_rules, 'new')
    old_by_id, new_by_id = _by_id(old_groups, 'old'), _by_id(new_groups, 'new')
    ops = []
    for group_id, group in new_by_id.items():
        if group_id not in old_by_id:
            ops.append((ADD_GROUP, group))
        elif old_by_id[group_id] != group:
            ops.append((MODIFY_GROUP, group))
    added = [rule for key, rule in new_by_key.items() if old_by_key.get(key) != rule]
    ops += [(ADD_FLOW, rule) for rule in sorted(added, key=lambda r: (-r.table, -r.priority))]
    gone = [rule for key, rule in old_by_key.items() if key not in new_by_key]
    ops += [(DELETE_FLOW, rule) for rule in sorted(gone, key=lambda r: (r.table, r.priority))]
    ops += [(DELETE_GROUP, group) for group_id, group in old_by_id.items() if group_id not in new_by_id]
    return ops


def count(ops, operation):
    """How many ops of an ordered diff are ``operation`` (for logs and replies)."""
    return sum(1 for kind, _ in ops if kind == operation)
