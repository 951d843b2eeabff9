"""The one place that turns dcfabric's plain-data FlowRules into Ryu
OpenFlow 1.3 messages (the FAUCET valve_of.py role), and messages into the
bytes a switch is sent.

An update sends the same messages to many switches (at k=48 one link
failure sends 55,000 flow- and group-mods to 1,199 switches, of which a
few hundred differ): diff_messages encodes each distinct one once, by Ryu,
and encode_batch sends a switch its batch as one buffer of those bytes with
only the xids written in.
"""
import functools
import struct

from ryu.ofproto import ofproto_v1_3 as ofp
from ryu.ofproto import ofproto_v1_3_parser as parser

from controller.openflow.diff import ADD_FLOW, ADD_GROUP, DELETE_FLOW, DELETE_FLOWS, DELETE_GROUP, MODIFY_GROUP


# Widths of the fields dcfabric moves whole.
_FIELD_BITS = {'eth_src': 48, 'eth_dst': 48, 'arp_sha': 48, 'arp_tha': 48,
               'arp_spa': 32, 'arp_tpa': 32, 'reg0': 32}


def _action(action):
    kind = action[0]
    if kind == 'output':
        return parser.OFPActionOutput(action[1])
    if kind == 'dec_ttl':
        return parser.OFPActionDecNwTtl()
    if kind == 'controller':
        return parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)
    if kind == 'in_port':
        return parser.OFPActionOutput(ofp.OFPP_IN_PORT)
    if kind == 'group':
        return parser.OFPActionGroup(action[1])
    if kind == 'set_field':
        return parser.OFPActionSetField(**{action[1]: action[2]})
    if kind == 'move':
        _, src, dst, n_bits = action
        return parser.NXActionRegMove(src_field=src, dst_field=dst,
                                      n_bits=n_bits or _FIELD_BITS[src])
    raise ValueError('unknown action %r' % (action,))


def instructions(rule):
    result = []
    if rule.actions:
        result.append(parser.OFPInstructionActions(
            ofp.OFPIT_APPLY_ACTIONS, [_action(a) for a in rule.actions]))
    if rule.write_metadata is not None:
        result.append(parser.OFPInstructionWriteMetadata(*rule.write_metadata))
    if rule.goto_table is not None:
        result.append(parser.OFPInstructionGotoTable(rule.goto_table))
    return result


def flow_add(datapath, rule, idle_timeout=0, hard_timeout=0, flags=0):
    return parser.OFPFlowMod(
        datapath, cookie=rule.cookie, table_id=rule.table, command=ofp.OFPFC_ADD,
        idle_timeout=idle_timeout, hard_timeout=hard_timeout, priority=rule.priority,
        flags=flags, match=parser.OFPMatch(**rule.match_dict), instructions=instructions(rule))


def flow_delete_strict(datapath, rule):
    return parser.OFPFlowMod(
        datapath, table_id=rule.table, command=ofp.OFPFC_DELETE_STRICT, priority=rule.priority,
        out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY, match=parser.OFPMatch(**rule.match_dict))


def flow_delete(datapath, rule):
    """Every entry of the rule's table whose match has the rule's match
    fields (non-strict: priority, actions and cookie are not compared)."""
    return parser.OFPFlowMod(
        datapath, table_id=rule.table, command=ofp.OFPFC_DELETE, out_port=ofp.OFPP_ANY,
        out_group=ofp.OFPG_ANY, match=parser.OFPMatch(**rule.match_dict))


def delete_all_flows(datapath):
    return parser.OFPFlowMod(datapath, table_id=ofp.OFPTT_ALL, command=ofp.OFPFC_DELETE,
                             out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY, match=parser.OFPMatch())


def delete_all_groups(datapath):
    return parser.OFPGroupMod(datapath, command=ofp.OFPGC_DELETE, group_id=ofp.OFPG_ALL)


_GROUP_TYPES = {'select': ofp.OFPGT_SELECT, 'fast_failover': ofp.OFPGT_FF, 'all': ofp.OFPGT_ALL}


def _group_mod(datapath, group, command):
    buckets = [parser.OFPBucket(weight=1 if group.kind == 'select' else 0,
                                watch_port=ofp.OFPP_ANY if watch is None else watch,
                                watch_group=ofp.OFPG_ANY, actions=[_action(a) for a in actions])
               for watch, actions in group.buckets]
    return parser.OFPGroupMod(datapath, command=command, type_=_GROUP_TYPES[group.kind],
                              group_id=group.group_id, buckets=buckets)


def group_add(datapath, group):
    return _group_mod(datapath, group, ofp.OFPGC_ADD)


def group_modify(datapath, group):
    return _group_mod(datapath, group, ofp.OFPGC_MODIFY)


def group_delete(datapath, group_id):
    return parser.OFPGroupMod(datapath, command=ofp.OFPGC_DELETE, group_id=group_id)


class Unconnected:
    """A datapath with no switch behind it: what a Ryu message asks of its
    datapath to encode itself (messages encoded once serve every switch),
    and an xid counter for encode_batch (a benchmark's stand-in switch)."""
    ofproto = ofp
    ofproto_parser = parser
    xid = 0


_HEADER = struct.Struct('!BBHI')  # version, type, length, xid
_XID = struct.Struct('!I')
_XID_OFFSET = 4


def encode(message):
    """The bytes of a Ryu message with xid 0 (encode_batch writes the xid)."""
    message.xid = 0
    message.serialize()
    return bytes(message.buf)


_DIFF_MESSAGES = {
    ADD_GROUP: group_add,
    MODIFY_GROUP: group_modify,
    ADD_FLOW: flow_add,
    DELETE_FLOW: flow_delete_strict,
    DELETE_FLOWS: flow_delete,
    DELETE_GROUP: lambda datapath, group: group_delete(datapath, group.group_id),
}


@functools.lru_cache(maxsize=1 << 16)
def _diff_message(operation, item):
    return encode(_DIFF_MESSAGES[operation](Unconnected, item))


def diff_messages(ops):
    """The flow- and group-mods of an ordered diff (controller.openflow.diff),
    in its order, each with the op it carries: [(its bytes, op)] for
    encode_batch. Ops alike are encoded once, whichever switch gets them."""
    return [(_diff_message(operation, item), (operation, item)) for operation, item in ops]


_BARRIER = encode(parser.OFPBarrierRequest(Unconnected))


def whole_state_messages(datapath, ops):
    """What replaces everything on a switch: delete every flow and group,
    then the ordered diff ``ops`` from nothing, as diff_messages gives it."""
    return [(delete_all_flows(datapath), 'delete every flow'),
            (delete_all_groups(datapath), 'delete every group')] + diff_messages(ops)


def encode_batch(datapath, items):
    """The messages of ``items`` [(Ryu message or diff_messages' bytes,
    what it carries)] and a barrier after them as one buffer, each with the
    next xid of the datapath's counter as Datapath.set_xid would give it:
    (buffer, [(xid, what it carries)], the barrier's xid). One buffer is one
    send: the switch reads the messages in order, and the app does not
    queue them one by one."""
    encoded = [m if isinstance(m, bytes) else encode(m) for m, _ in items]
    encoded.append(_BARRIER)
    first = datapath.xid + 1
    datapath.xid = (datapath.xid + len(encoded)) & ofp.MAX_XID
    buffer = bytearray().join(encoded)
    xids, offset = [], 0
    for index, message in enumerate(encoded):
        xid = (first + index) & ofp.MAX_XID
        _XID.pack_into(buffer, offset + _XID_OFFSET, xid)
        xids.append(xid)
        offset += len(message)
    return buffer, list(zip(xids, [what for _, what in items])), xids[-1]


def flow_mod_flags(buffer):
    """Whether each message of ``buffer`` (messages back to back, as sent)
    is a flow-mod, in order."""
    flags, offset = [], 0
    while offset + _HEADER.size <= len(buffer):
        _, message_type, length, _ = _HEADER.unpack_from(buffer, offset)
        flags.append(message_type == ofp.OFPT_FLOW_MOD)
        offset += max(length, _HEADER.size)
    return flags


def error_name(error_type, code):
    """An OpenFlow error's type and code by name, e.g. 'OFPET_BAD_MATCH(4)/OFPBMC_BAD_WILDCARDS(5)'."""
    return '%s/%s' % (ofp.ofp_error_type_to_str(error_type), ofp.ofp_error_code_to_str(error_type, code))


def port_desc_request(datapath):
    return parser.OFPPortDescStatsRequest(datapath, 0)


def barrier(datapath):
    return parser.OFPBarrierRequest(datapath)


def packet_out(datapath, port, data):
    return parser.OFPPacketOut(datapath, buffer_id=ofp.OFP_NO_BUFFER, in_port=ofp.OFPP_CONTROLLER,
                               actions=[parser.OFPActionOutput(port)], data=data)


def packet_out_table(datapath, data):
    """Send a packet back through the switch's own pipeline (table 0)."""
    return packet_out(datapath, ofp.OFPP_TABLE, data)


def flow_stats_request(datapath, table_id, cookie):
    """Per-entry counters of one table's entries carrying exactly ``cookie``."""
    return parser.OFPFlowStatsRequest(datapath, table_id=table_id, cookie=cookie,
                                      cookie_mask=0xffffffffffffffff)


def port_stats_request(datapath):
    return parser.OFPPortStatsRequest(datapath, 0, ofp.OFPP_ANY)


def is_switch_port(port_no):
    """A physical port number (not LOCAL, CONTROLLER, ... reserved ports)."""
    return port_no <= ofp.OFPP_MAX


def port_liveness(desc):
    """(carrier, live) of a port description: live is OFPPS_LIVE (carrier
    and, where enabled, BFD) with the carrier up."""
    carrier = not desc.state & ofp.OFPPS_LINK_DOWN
    return carrier, bool(desc.state & ofp.OFPPS_LIVE) and carrier


def more_replies_follow(msg):
    """A multipart reply whose body continues in the next message."""
    return bool(msg.flags & ofp.OFPMPF_REPLY_MORE)


def aggregate_stats_request(datapath):
    """The switch's flow count (and packet/byte totals) over every table."""
    return parser.OFPAggregateStatsRequest(datapath, 0, ofp.OFPTT_ALL, ofp.OFPP_ANY, ofp.OFPG_ANY,
                                           0, 0, parser.OFPMatch())


def group_desc_request(datapath):
    return parser.OFPGroupDescStatsRequest(datapath, 0)
