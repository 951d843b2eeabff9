"""Every fat-tree update is make-before-break, checked op by op.

For every single link failure and recovery, and every second failure and
its recovery with another link down, at k=4, each changed switch is moved
from its old state to its new one by the ordered diff
(controller.openflow.diff) applied one op at a time to a model switch (rules
by key, groups by id, the pipeline read by controller.openflow.lookup).
After every op every host address must meet exactly the entries (and group
buckets) it meets in the old state or in the new one: never a miss, never a
second-level table holding another prefix's entries, never a missing group.
"""
import itertools

import pytest

from controller.fattree import pipeline as fattree_pipeline
from controller.fattree.failover import expand_failures, tables_with_failures
from controller.fattree.pipeline import compile_table, suffix_table_ids
from controller.openflow.diff import (
    ADD_FLOW, ADD_GROUP, DELETE_FLOW, DELETE_FLOWS, DELETE_GROUP, MODIFY_GROUP, metadata_term, ordered_diff,
    rule_key)
from controller.openflow.lookup import pipeline, rules_hit
from controller.openflow.rules import ETH_TYPE_IP, TABLE_SUFFIX
from scripts.fattree.failure_check import link_sets
from topologies.addressing import ip_to_int
from topologies.fattree import FatTree

TOPO = FatTree(4)
DESTINATIONS = [ip_to_int(h.ip) for h in TOPO.hosts]


def loosely_matched(rule, delete):
    """Whether a non-strict delete of ``delete``'s table and metadata takes
    ``rule``: same table, and a metadata match at least as specific."""
    term, (value, mask) = metadata_term(rule), metadata_term(delete)
    return rule.table == delete.table and term is not None and term[1] & mask == mask and term[0] & mask == value


class ModelSwitch:
    """A switch's flow entries and groups, changed as OpenFlow 1.3 changes them."""

    def __init__(self, rules, groups):
        self.rules = {rule_key(r): r for r in rules}
        self.groups = {g.group_id: g for g in groups}
        self.tables = pipeline(self.rules.values())

    def apply(self, operation, item):
        if operation == ADD_FLOW:
            for action in item.actions:  # a switch refuses an output to a missing group
                assert action[0] != 'group' or action[1] in self.groups, item
            self.rules[rule_key(item)] = item
        elif operation == DELETE_FLOW:
            del self.rules[rule_key(item)]
        elif operation == DELETE_FLOWS:
            self.rules = {key: r for key, r in self.rules.items() if not loosely_matched(r, item)}
        elif operation in (ADD_GROUP, MODIFY_GROUP):
            assert (item.group_id in self.groups) == (operation == MODIFY_GROUP), item
            self.groups[item.group_id] = item
        else:
            assert operation == DELETE_GROUP
            # a switch would delete the rules still using it along with it
            assert not any(('group', item.group_id) in r.actions for r in self.rules.values()), item
            del self.groups[item.group_id]
        self.tables = pipeline(self.rules.values())

    def forwarding(self, dst):
        """The entries a packet to ``dst`` meets and the group buckets it may leave by."""
        hit = tuple(rules_hit(self.tables, {'eth_type': ETH_TYPE_IP, 'ipv4_dst': dst, 'metadata': 0}))
        groups = tuple(self.groups.get(a[1]) for a in (hit[-1].actions if hit[-1] else ()) if a[0] == 'group')
        return hit, groups


def unsound_states(old, new):
    """[(op index, op, destination)] where the switch, moved op by op from
    compiled state ``old`` to ``new``, forwards a destination neither as
    the old state nor as the new one does."""
    before, after = ModelSwitch(*old), ModelSwitch(*new)
    allowed = {dst: (before.forwarding(dst), after.forwarding(dst)) for dst in DESTINATIONS}
    switch, bad = ModelSwitch(*old), []
    for index, op in enumerate(ordered_diff(old[0], new[0], old[1], new[1])):
        switch.apply(*op)
        bad += [(index, op, dst) for dst in DESTINATIONS if switch.forwarding(dst) not in allowed[dst]]
    assert (switch.rules, switch.groups) == (after.rules, after.groups)
    return bad


def transitions():
    """(failed before, failed after) for every single link failure and
    recovery, and every second failure and its recovery while another link
    is down."""
    singles = [frozenset(expand_failures(TOPO, links)) for links, _ in link_sets(TOPO, 1)]
    pairs = [(frozenset(), s) for s in singles]
    for a, b in itertools.permutations(singles, 2):
        pairs.append((a, a | b))
    return pairs + [(after, before) for before, after in pairs]


def changed_states(pairs, compiled):
    """The distinct (old, new) compiled states of a switch over ``pairs``."""
    states = set()
    for before, after in pairs:
        for switch in compiled(before):
            old, new = compiled(before)[switch], compiled(after)[switch]
            if old != new:
                states.add((old, new))
    return states


def compiler():
    cache = {}

    def compiled(failed):
        if failed not in cache:
            cache[failed] = {name: tuple(tuple(part) for part in compile_table(table))
                             for name, table in tables_with_failures(TOPO, failed).items()}
        return cache[failed]
    return compiled


@pytest.fixture(scope='module')
def all_changes():
    return changed_states(transitions(), compiler())


def test_every_intermediate_state_of_every_single_and_double_failure_update_is_sound(all_changes):
    assert len(transitions()) == 2 * (32 + 32 * 31)
    assert len(all_changes) > 100  # switch states the updates move between
    unsound = {(old, new): bad for old, new in all_changes for bad in [unsound_states(old, new)] if bad}
    assert not unsound, next(iter(unsound.values()))[:3]


def test_no_second_level_entry_is_rewritten_in_place(all_changes):
    for old, new in all_changes:
        old_keys = {rule_key(r) for r in old[0]}
        rewritten = [rule for operation, rule in ordered_diff(old[0], new[0], old[1], new[1])
                     if operation == ADD_FLOW and rule.table == TABLE_SUFFIX and rule_key(rule) in old_keys]
        assert rewritten == []


ISSUE_FAILED = expand_failures(TOPO, [('e2_0', 'a2_2'), ('e1_0', 'a1_3')])
ISSUE_RECOVERED = expand_failures(TOPO, [('e2_0', 'a2_2')])


def test_recovery_keeps_the_unchanged_table_id():
    # a regression: recovering e1_0-a1_3 with e2_0-a2_2 still down renumbered
    # e0_0's table for 10.2.0.0/24 and rewrote its entries in place
    def ids(failed):
        table = tables_with_failures(TOPO, failed)['e0_0']
        return {p.network: suffix_table_ids(table)[p.suffix_table] for p in table.prefixes if p.suffix_table}
    both, one = ids(ISSUE_FAILED), ids(ISSUE_RECOVERED)
    assert set(both) == {'0.0.0.0', '10.1.0.0', '10.2.0.0'} and set(one) == {'0.0.0.0', '10.2.0.0'}
    assert one['10.2.0.0'] == both['10.2.0.0']
    assert len(set(both.values())) == 3


def test_the_check_finds_the_definition_order_numbering_unsound(monkeypatch):
    # what the ids were before: 1, 2, ... in the order tables were defined
    monkeypatch.setattr(fattree_pipeline, 'suffix_table_ids',
                        lambda table: {name: i for i, name in enumerate(table.suffix_tables, 1)})
    compiled = compiler()
    old, new = compiled(ISSUE_RECOVERED)['e0_0'], compiled(ISSUE_FAILED)['e0_0']
    bad = unsound_states(old, new)
    # the second failure rewrites table 2 before the 10.2.0.0/24 prefix moves on
    assert {TOPO.node(h).ip for h in ('h2_0_2', 'h2_0_3')} <= {
        '%d.%d.%d.%d' % tuple(dst >> s & 255 for s in (24, 16, 8, 0)) for _, _, dst in bad}


def test_tables_alike_share_one_id_and_unlike_ones_with_one_id_are_refused(monkeypatch):
    table = tables_with_failures(TOPO, ISSUE_FAILED)['e0_0']
    table.suffix_tables['copy'] = list(table.suffix_tables['hostid'])
    table.failover['copy'] = table.failover['hostid']
    ids = suffix_table_ids(table)
    assert ids['copy'] == ids['hostid']
    rules, _ = compile_table(table)
    assert len({rule_key(r) for r in rules}) == len(rules)  # its entries once
    monkeypatch.setattr(fattree_pipeline, 'content_id', lambda content: 7)
    with pytest.raises(ValueError, match='e0_0: suffix table .* has the id 7 of another table'):
        suffix_table_ids(table)
