"""The one ordered rule diff (controller.openflow.diff), exactly."""
import pytest

from controller.openflow.diff import (
    ADD_FLOW, ADD_GROUP, DELETE_FLOW, DELETE_FLOWS, DELETE_GROUP, MODIFY_GROUP, count, ordered_diff, rule_key)
from controller.openflow.rules import FlowRule, Group, output

IP = (('eth_type', 0x0800),)


def rule(table, priority, dst, port):
    return FlowRule(table, priority, IP + (('ipv4_dst', dst),), (output(port),))


def group(group_id, *ports):
    return Group(group_id, 'fast_failover', tuple((p, (output(p),)) for p in ports))


KEPT = rule(1, 1008, '10.0.0.0', 1)
CHANGED_OLD, CHANGED_NEW = rule(1, 1016, '10.1.0.0', 1), rule(1, 1016, '10.1.0.0', 2)
GONE = rule(1, 1024, '10.2.0.0', 3)
NEW_T1_LOW, NEW_T1_HIGH = rule(1, 1001, '10.3.0.0', 4), rule(1, 1032, '10.3.0.1', 4)
NEW_T2 = rule(2, 1000, '0.0.0.2', 5)
NEW_T0 = FlowRule(0, 100, IP, goto_table=1)
G_KEPT, G_OLD, G_NEW, G_GONE, G_ADDED = group(1, 1, 2), group(2, 1, 2), group(2, 2, 1), group(3, 3), group(4, 4)


def test_make_before_break_order():
    old_rules, old_groups = [GONE, KEPT, CHANGED_OLD], [G_KEPT, G_OLD, G_GONE]
    new_rules = [NEW_T1_LOW, KEPT, NEW_T0, CHANGED_NEW, NEW_T2, NEW_T1_HIGH]
    new_groups = [G_ADDED, G_KEPT, G_NEW]
    assert ordered_diff(old_rules, new_rules, old_groups, new_groups) == [
        (ADD_GROUP, G_ADDED), (MODIFY_GROUP, G_NEW),
        # deepest table first, highest priority first within a table
        (ADD_FLOW, NEW_T2), (ADD_FLOW, NEW_T1_HIGH), (ADD_FLOW, CHANGED_NEW), (ADD_FLOW, NEW_T1_LOW),
        (ADD_FLOW, NEW_T0),
        (DELETE_FLOW, GONE),
        (DELETE_GROUP, G_GONE)]


def test_changed_rule_is_replaced_by_add_not_deleted():
    ops = ordered_diff([CHANGED_OLD], [CHANGED_NEW])
    assert ops == [(ADD_FLOW, CHANGED_NEW)]
    assert rule_key(CHANGED_OLD) == rule_key(CHANGED_NEW)


def test_same_state_needs_nothing_and_order_of_input_does_not_matter():
    assert ordered_diff([KEPT, GONE], [GONE, KEPT], [G_KEPT], [G_KEPT]) == []
    assert ordered_diff([], []) == []


def test_from_nothing_is_a_full_install_in_order():
    assert ordered_diff([], [NEW_T0, NEW_T2], [], [G_KEPT]) == [
        (ADD_GROUP, G_KEPT), (ADD_FLOW, NEW_T2), (ADD_FLOW, NEW_T0)]
    assert ordered_diff([NEW_T0, NEW_T2], [], [G_KEPT], []) == [
        (DELETE_FLOW, NEW_T0), (DELETE_FLOW, NEW_T2), (DELETE_GROUP, G_KEPT)]


def test_conflicting_state_is_rejected():
    with pytest.raises(ValueError, match='new state has two rules for table 1, priority 1016'):
        ordered_diff([], [CHANGED_OLD, CHANGED_NEW])
    with pytest.raises(ValueError, match='old state has two groups with id 2'):
        ordered_diff([], [], [G_OLD, G_NEW], [])
    assert ordered_diff([], [KEPT, KEPT]) == [(ADD_FLOW, KEPT)]  # the same rule twice is one entry


def test_deletes_go_shallowest_table_first_then_lowest_priority_first():
    # a prefix goes before the entries it leads to; a packet whose specific
    # entry goes falls through to its new one, not to another old one
    assert ordered_diff([NEW_T2, NEW_T1_HIGH, GONE, NEW_T0, NEW_T1_LOW], [KEPT]) == [
        (ADD_FLOW, KEPT), (DELETE_FLOW, NEW_T0), (DELETE_FLOW, NEW_T1_LOW), (DELETE_FLOW, GONE),
        (DELETE_FLOW, NEW_T1_HIGH), (DELETE_FLOW, NEW_T2)]


def test_count():
    ops = ordered_diff([GONE, CHANGED_OLD], [CHANGED_NEW, NEW_T0])
    assert (count(ops, ADD_FLOW), count(ops, DELETE_FLOW), count(ops, ADD_GROUP)) == (2, 1, 0)


def test_rules_kept_at_both_ends_are_left_alone_and_a_clash_with_them_is_rejected():
    old = [KEPT, CHANGED_OLD, GONE, NEW_T0]
    assert ordered_diff(old, [KEPT, CHANGED_NEW, NEW_T2, NEW_T0]) == ordered_diff(
        [CHANGED_OLD, GONE], [CHANGED_NEW, NEW_T2])
    assert ordered_diff(old, list(old)) == []
    with pytest.raises(ValueError, match='new state has two rules for table 1, priority 1016'):
        ordered_diff([CHANGED_OLD, NEW_T0], [CHANGED_OLD, NEW_T2, CHANGED_NEW, NEW_T0])
    # the same rule twice is one entry
    assert ordered_diff([KEPT, NEW_T0], [KEPT, KEPT, NEW_T0]) == ordered_diff([KEPT, KEPT, NEW_T0], [KEPT, NEW_T0]) == []


def suffix(table_id, host, port):
    return FlowRule(2, 1008, IP + (('metadata', (table_id, 0xffffffff)), ('ipv4_dst', ('0.0.0.%d' % host, '0.0.0.255'))),
                    (output(port),))


def test_a_table_chosen_by_metadata_that_goes_whole_goes_by_one_non_strict_delete():
    writer = FlowRule(1, 1024, IP + (('ipv4_dst', ('10.0.0.0', '255.255.255.0')),),
                      write_metadata=(7, 0xffffffff), goto_table=2)
    avoid = [suffix(7, host, 5) for host in (2, 3, 4)]
    hostid = [suffix(9, host, host) for host in (2, 3, 4)]
    assert ordered_diff([writer, KEPT] + hostid + avoid, [KEPT] + hostid) == [
        (DELETE_FLOW, writer), (DELETE_FLOWS, FlowRule(2, 0, (('metadata', (7, 0xffffffff)),)))]
    # some of its entries stay, or the new state has another entry there with that metadata: one by one
    assert ordered_diff(avoid, avoid[:1]) == [(DELETE_FLOW, avoid[1]), (DELETE_FLOW, avoid[2])]
    assert ordered_diff(avoid, [suffix(7, 9, 5)]) == [(ADD_FLOW, suffix(7, 9, 5))] + [
        (DELETE_FLOW, r) for r in avoid]
    assert count(ordered_diff(avoid[:1], []), DELETE_FLOWS) == 0  # one entry: its own strict delete
