"""What switches confirmed and rejected (controller.openflow.confirmations):
batches kept by xid until their barrier's reply, errors matched to the
message they reject, and when a switch's state counts."""
from controller.openflow.confirmations import Confirmations, describe
from controller.openflow.diff import ADD_FLOW, ADD_GROUP, DELETE_FLOW, DELETE_GROUP
from controller.openflow.rules import FlowRule, Group, output

BAD_RULE = FlowRule(2, 1001, (('eth_type', 0x0800), ('ipv4_dst', ('10.2.0.3', '0.0.0.255'))), (output(3),))
BAD_MATCH = 'OFPET_BAD_MATCH(4)/OFPBMC_BAD_WILDCARDS(5)'


def tracker():
    clock = iter(range(100, 200))
    return Confirmations(lambda: next(clock))


def test_a_switch_counts_once_its_install_is_answered_and_each_later_batch_too():
    confirmations = tracker()
    assert not confirmations.confirmed('e0_0')  # never sent anything
    confirmations.sent('e0_0', [(1, 'delete every flow'), (2, (ADD_FLOW, BAD_RULE))], 3, whole_state=True)
    assert not confirmations.confirmed('e0_0') and confirmations.awaiting('e0_0') == 2
    assert confirmations.barrier_reply('e0_0', 3) is True
    assert confirmations.confirmed('e0_0') and confirmations.awaiting('e0_0') == 0
    confirmations.sent('e0_0', [(4, (DELETE_FLOW, BAD_RULE))], 5)  # a later push
    confirmations.sent('e0_0', [(6, (ADD_FLOW, BAD_RULE))], 7)
    assert not confirmations.confirmed('e0_0')
    confirmations.barrier_reply('e0_0', 5)
    assert not confirmations.confirmed('e0_0') and confirmations.awaiting('e0_0') == 1
    assert confirmations.barrier_reply('e0_0', 99) is False  # not one of ours (nothing changes)
    confirmations.barrier_reply('e0_0', 7)
    assert confirmations.confirmed('e0_0')


def test_a_barrier_answers_every_batch_sent_before_it():
    confirmations = tracker()
    confirmations.sent('e0_0', [(1, 'a')], 2, whole_state=True)
    confirmations.sent('e0_0', [(3, 'b')], 4)
    confirmations.barrier_reply('e0_0', 4)  # OpenFlow: everything before the barrier is processed
    assert confirmations.confirmed('e0_0') and confirmations.awaiting('e0_0') == 0


def test_an_error_is_reported_with_the_message_it_rejects_and_withholds_the_switch():
    confirmations = tracker()
    confirmations.sent('e0_0', [(1, 'delete every flow'), (2, (ADD_FLOW, BAD_RULE))], 3, whole_state=True)
    confirmations.sent('c1_1', [(2, 'delete every flow')], 3, whole_state=True)  # xids are per switch
    record = confirmations.error('e0_0', 2, BAD_MATCH)
    assert record == {'time': 100, 'switch': 'e0_0', 'xid': 2, 'error': BAD_MATCH,
                      'message': 'add_flow table=2,priority=1001,cookie=0xdcfab00000000001,'
                                 'dl_type=0x800,nw_dst=10.2.0.3/0.0.0.255,actions=output:3'}
    confirmations.barrier_reply('e0_0', 3)
    confirmations.barrier_reply('c1_1', 3)
    assert not confirmations.confirmed('e0_0') and confirmations.confirmed('c1_1')
    assert confirmations.outstanding_errors() == [record]
    assert list(confirmations.recent) == [record] and confirmations.counts == {('e0_0', BAD_MATCH): 1}
    # later pushes do not clear it: they assume the rejected entry is in place
    confirmations.sent('e0_0', [(4, (DELETE_FLOW, BAD_RULE))], 5)
    confirmations.barrier_reply('e0_0', 5)
    assert not confirmations.confirmed('e0_0')
    # the switch reconnects and is sent its whole state again: that one is judged afresh
    confirmations.disconnected('e0_0')
    assert not confirmations.confirmed('e0_0')
    confirmations.sent('e0_0', [(1, 'delete every flow')], 2, whole_state=True)
    assert confirmations.outstanding_errors() == [] and not confirmations.confirmed('e0_0')
    confirmations.barrier_reply('e0_0', 2)
    assert confirmations.confirmed('e0_0')
    assert list(confirmations.recent) == [record]  # the history stays


def test_an_error_about_a_message_not_awaiting_a_barrier_is_counted_not_outstanding():
    confirmations = tracker()
    confirmations.sent('e0_0', [(1, 'delete every flow')], 2, whole_state=True)
    confirmations.barrier_reply('e0_0', 2)
    record = confirmations.error('e0_0', 1, 'OFPET_BAD_REQUEST(1)/OFPBRC_BAD_STAT(2)')  # answered already
    assert record['message'] is None
    assert confirmations.confirmed('e0_0') and confirmations.outstanding_errors() == []
    assert confirmations.counts == {('e0_0', 'OFPET_BAD_REQUEST(1)/OFPBRC_BAD_STAT(2)'): 1}


def test_a_disconnected_switch_waits_for_nothing_and_counts_for_nothing():
    confirmations = tracker()
    confirmations.sent('e0_0', [(1, 'a')], 2, whole_state=True)
    confirmations.disconnected('e0_0')
    assert confirmations.awaiting('e0_0') == 0 and not confirmations.confirmed('e0_0')
    assert confirmations.barrier_reply('e0_0', 2) is False


def test_messages_are_described_in_ovs_ofctl_syntax():
    group = Group(7, 'fast_failover', ((3, (output(3),)), (4, (output(4),))))
    assert describe((ADD_GROUP, group)) == \
        'add_group group_id=7,type=fast_failover,bucket=watch_port:3,actions=output:3,' \
        'bucket=watch_port:4,actions=output:4'
    assert describe((DELETE_GROUP, group)) == 'delete_group group_id=7'
    assert describe('delete every flow') == 'delete every flow'
