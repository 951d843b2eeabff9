"""Reading ovs-ofctl's dumps back into rules (controller.openflow.ofctl_dump):
lines as Open vSwitch 3.1 prints them, read to the terms and actions they
mean, and compared with computed rules by meaning, not by spelling."""
import pytest

from controller.fattree.pipeline import arp_responder_rules, compile_table
from controller.fattree.twolevel import all_tables
from controller.openflow import ofctl_dump
from controller.openflow.rules import FlowRule, Group
from topologies.fattree import FatTree

ALL = 0xffffffffffffffff


def test_a_suffix_rule_reads_to_its_masked_terms_and_group():
    rule, terms = ofctl_dump.parse_flow(
        ' cookie=0xdcfab00000000001, table=2, priority=1008,ip,metadata=0x5f3c,nw_dst=0.0.0.2/0.0.0.255 '
        'actions=group:123')
    assert rule == FlowRule(2, 1008, (), (('group', 123),), None, None)
    assert terms == (('eth_type', 0x800, ALL), ('ipv4_dst', 2, 0xff), ('metadata', 0x5f3c, ALL))


def test_a_prefix_rule_reads_its_cidr_mask_metadata_write_and_goto():
    rule, terms = ofctl_dump.parse_flow(
        ' cookie=0xdcfab00000000001, table=1, priority=1016,ip,nw_dst=10.2.0.0/16 '
        'actions=write_metadata:0x5f3c/0xffffffff,goto_table:2')
    assert rule == FlowRule(1, 1016, (), (), (0x5f3c, 0xffffffff), 2)
    assert terms == (('eth_type', 0x800, ALL), ('ipv4_dst', 0x0a020000, 0xffff0000))


def test_table_zero_drop_and_counters_are_read_without_the_counters():
    rule, terms = ofctl_dump.parse_flow(
        ' cookie=0x1, duration=3.2s, table=0, n_packets=5, n_bytes=300, priority=0 actions=drop')
    assert rule == FlowRule(0, 0, (), (), None, None) and terms == ()
    rule, _ = ofctl_dump.parse_flow(' priority=1024,ip,nw_dst=10.0.0.2 actions=dec_ttl,output:1')
    assert rule.actions == (('dec_ttl',), ('output', 1))


def test_a_fast_failover_group_reads_its_watched_buckets_in_order():
    group = ofctl_dump.parse_group(
        ' group_id=77,type=ff,bucket=watch_port:3,actions=dec_ttl,output:3,'
        'bucket=watch_port:4,actions=dec_ttl,output:4')
    assert group == Group(77, 'ff', ((3, (('dec_ttl',), ('output', 3))), (4, (('dec_ttl',), ('output', 4)))))
    assert ofctl_dump.comparable_group(group) == ofctl_dump.comparable_group(
        Group(77, 'fast_failover', ((3, (('dec_ttl',), ('output', 3))), (4, (('dec_ttl',), ('output', 4))))))


def test_unknown_fields_and_lines_without_actions_are_refused_by_name():
    with pytest.raises(ofctl_dump.DumpError, match='vlan_tci'):
        ofctl_dump.parse_flow(' priority=5,vlan_tci=0x1000/0x1000 actions=drop')
    with pytest.raises(ofctl_dump.DumpError, match='no actions'):
        ofctl_dump.parse_flow(' priority=5,ip')


def test_computed_rules_compare_by_meaning():
    topo = FatTree(4)
    table = all_tables(topo)['e0_0']
    rules, _ = compile_table(table)
    rules = rules + arp_responder_rules(topo, 'e0_0')
    comparable = {ofctl_dump.comparable_rule(r) for r in rules}
    assert len(comparable) == len(rules)  # no two rules mean the same
    host_route = next(r for r in rules if r.table == 1 and r.priority == 1032)
    assert ofctl_dump.comparable_rule(host_route) == ofctl_dump.comparable_read(
        ofctl_dump.parse_flow(' cookie=0xdcfab00000000001, table=1, priority=1032,ip,nw_dst=%s '
                              'actions=dec_ttl,output:%d' % (host_route.match_dict['ipv4_dst'][0],
                                                             host_route.actions[1][1])))
