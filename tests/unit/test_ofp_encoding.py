"""Messages encoded once and sent to many switches (controller.ryuapp.ofp):
each batch's bytes equal Ryu's own encoding of every message with the xid
Datapath.set_xid would have given it, then a barrier."""
from ryu.ofproto import ofproto_v1_3 as ofproto
from ryu.ofproto import ofproto_v1_3_parser as parser

from controller.fattree.failover import FailureRouting, expand_failures
from controller.fattree.pipeline import ARP_REPLY_ACTIONS, arp_responder_rules, compile_table, fabric_arp_rules
from controller.openflow.diff import (
    ADD_FLOW, ADD_GROUP, DELETE_FLOW, DELETE_FLOWS, DELETE_GROUP, MODIFY_GROUP, ordered_diff)
from controller.openflow.rules import (
    DEC_TTL, ETH_TYPE_ARP, ETH_TYPE_IP, TABLE_PREFIX, TABLE_SUFFIX, TO_CONTROLLER, FlowRule, Group, output)
from controller.ryuapp import ofp
from topologies.fattree import FatTree, aggregation_name, edge_name

ROUTE = FlowRule(TABLE_PREFIX, 1024, (('eth_type', ETH_TYPE_IP), ('ipv4_dst', ('10.0.0.0', '255.255.255.0'))),
                 write_metadata=(0x355bbb44, 0xffffffff), goto_table=TABLE_SUFFIX)
SUFFIX = FlowRule(TABLE_SUFFIX, 1008, (('eth_type', ETH_TYPE_IP), ('metadata', (7, 0xffffffff)),
                                       ('ipv4_dst', ('0.0.0.2', '0.0.0.255'))), (('group', 12),))
ARP = FlowRule(5, 200, (('eth_type', ETH_TYPE_ARP), ('arp_op', 1), ('arp_tpa', ('0.0.0.3', '0.0.0.255'))),
               ARP_REPLY_ACTIONS)
TO_HOST = FlowRule(TABLE_PREFIX, 1032, (('eth_type', ETH_TYPE_IP), ('ipv4_dst', '10.0.0.2')), (DEC_TTL, output(1)))
PUNT = FlowRule(0, 200, (('eth_type', ETH_TYPE_ARP),), (TO_CONTROLLER,))
FAILOVER = Group(12, 'fast_failover', ((3, (DEC_TTL, output(3))), (4, (DEC_TTL, output(4)))))
SELECT = Group(13, 'select', ((None, (output(3),)), (4, (output(4),))))

SUFFIX_TABLE = FlowRule(TABLE_SUFFIX, 0, (('metadata', (7, 0xffffffff)),))

OPS = [(ADD_GROUP, FAILOVER), (MODIFY_GROUP, SELECT), (ADD_FLOW, ROUTE), (ADD_FLOW, SUFFIX), (ADD_FLOW, ARP),
       (ADD_FLOW, TO_HOST), (ADD_FLOW, PUNT), (DELETE_FLOW, ROUTE), (DELETE_FLOW, ARP), (DELETE_FLOWS, SUFFIX_TABLE),
       (DELETE_GROUP, SELECT)]


def ryu_message(datapath, operation, item):
    """The op as Ryu's own message, built afresh (no encoding shared)."""
    return {ADD_GROUP: ofp.group_add, MODIFY_GROUP: ofp.group_modify, ADD_FLOW: ofp.flow_add,
            DELETE_FLOW: ofp.flow_delete_strict, DELETE_FLOWS: ofp.flow_delete,
            DELETE_GROUP: lambda dp, group: ofp.group_delete(dp, group.group_id)}[operation](datapath, item)


def ryu_bytes(datapath, messages, first_xid):
    """Each message serialized by Ryu with consecutive xids from
    ``first_xid`` (as Datapath.set_xid numbers them), then a barrier."""
    out = b''
    for offset, message in enumerate(list(messages) + [parser.OFPBarrierRequest(datapath)]):
        message.set_xid((first_xid + offset) & ofproto.MAX_XID)
        message.serialize()
        out += bytes(message.buf)
    return out


def test_each_kind_of_op_encodes_as_ryu_does_with_the_xids_set_xid_gives():
    datapath = ofp.Unconnected()
    datapath.xid = 41
    buffer, kept, barrier_xid = ofp.encode_batch(datapath, ofp.diff_messages(OPS))
    assert bytes(buffer) == ryu_bytes(datapath, [ryu_message(datapath, *op) for op in OPS], 42)
    assert kept == [(42 + i, op) for i, op in enumerate(OPS)]
    assert barrier_xid == 42 + len(OPS) == datapath.xid


def test_bytes_reused_for_another_switch_carry_that_switch_s_xids():
    first, second = ofp.Unconnected(), ofp.Unconnected()
    first.xid, second.xid = 100, 5000
    ofp.encode_batch(first, ofp.diff_messages(OPS))
    buffer, _, _ = ofp.encode_batch(second, ofp.diff_messages(OPS))
    assert bytes(buffer) == ryu_bytes(second, [ryu_message(second, *op) for op in OPS], 5001)


def test_ryu_messages_and_encoded_ones_mix_in_one_batch_and_xids_wrap():
    datapath = ofp.Unconnected()
    datapath.xid = ofproto.MAX_XID - 2
    ops = ordered_diff((), [ROUTE, TO_HOST], (), [FAILOVER])
    buffer, kept, barrier_xid = ofp.encode_batch(datapath, ofp.whole_state_messages(datapath, ops))
    expected = [ofp.delete_all_flows(datapath), ofp.delete_all_groups(datapath)] + [
        ryu_message(datapath, *op) for op in ops]
    assert bytes(buffer) == ryu_bytes(datapath, expected, ofproto.MAX_XID - 1)
    assert [xid for xid, _ in kept] == [ofproto.MAX_XID - 1, ofproto.MAX_XID, 0, 1, 2]
    assert [what for _, what in kept[:2]] == ['delete every flow', 'delete every group']
    assert barrier_xid == 3 == datapath.xid


def test_flow_mod_flags_reads_each_message_of_a_buffer():
    buffer, _, _ = ofp.encode_batch(ofp.Unconnected(), ofp.diff_messages(OPS))
    assert ofp.flow_mod_flags(buffer) == [kind in (ADD_FLOW, DELETE_FLOW, DELETE_FLOWS) for kind, _ in OPS] + [False]


def test_a_failure_s_and_its_recovery_s_updates_encode_as_ryu_does_on_every_switch():
    topo = FatTree(4)
    routing = FailureRouting(topo)
    arp = fabric_arp_rules(topo)
    states = {name: compile_table(table) for name, table in routing.tables.items()}
    datapath = ofp.Unconnected()
    for failed in (expand_failures(topo, [(edge_name(0, 0), aggregation_name(0, 2))]), frozenset()):
        changed = routing.update(failed)
        assert changed
        for name, table in changed.items():
            (old_rules, old_groups), (rules, groups) = states[name], compile_table(table)
            ops = ordered_diff(old_rules + arp[name], rules + arp[name], old_groups, groups)
            first = datapath.xid + 1
            buffer, _, _ = ofp.encode_batch(datapath, ofp.diff_messages(ops))
            assert bytes(buffer) == ryu_bytes(datapath, [ryu_message(datapath, *op) for op in ops], first), name
            states[name] = (rules, groups)


def test_fabric_arp_rules_are_each_switch_s_arp_responder_rules():
    topo = FatTree(4)
    assert fabric_arp_rules(topo) == {s.name: arp_responder_rules(topo, s.name) for s in topo.switches}
