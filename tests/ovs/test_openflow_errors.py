"""Confirmed updates through the real path: ryu-manager with the fat-tree
app programs real OVS bridges (a k=4 fabric of patch ports, no Mininet).
The plain app gets every switch to confirm its tables and says ready; with
one rule Open vSwitch rejects, the error is logged with the rejected rule,
counted in /metrics, shown in /view/state, and "ready" is withheld, naming
the one switch whose tables are not confirmed."""
import json
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from controller.fattree import APP, READY_PATH
from controller.openflow.rules import ETH_TYPE_IP, TABLE_SUFFIX, FlowRule, to_ofctl
from scripts.emulator.controller_process import Controller
from tests.conftest import free_port
from tests.ovs.ovs_fabric import OvsFabric
from topologies.fattree import FatTree

# tests.ovs.invalid_rule_app adds this rule to this switch: it sends packets
# to a group the switch does not have, which Open vSwitch rejects (the
# mistake the ordered diff's groups-first order exists to avoid)
REJECTED_ON = 'e0_0'
INVALID_RULE = FlowRule(TABLE_SUFFIX, 1, (('eth_type', ETH_TYPE_IP), ('ipv4_dst', ('0.0.0.3', '0.0.0.255'))),
                        (('group', 4242),))
BAD_OUT_GROUP = 'OFPET_BAD_ACTION(2)/OFPBAC_BAD_OUT_GROUP(9)'


def get(controller, path):
    with urllib.request.urlopen('http://127.0.0.1:%d%s' % (controller.rest_port, path), timeout=5) as reply:
        return reply.read().decode()


def programmed(app):
    """A controller running ``app`` and the k=4 bridges it programs; the
    patch ports are live at once, so no port waits for BFD."""
    controller = Controller(app, {'k': 4, 'bfd_grace_s': 1}, ofp_port=free_port(), rest_port=free_port(),
                            ready_path=READY_PATH, stats_period=0.5)
    return controller, OvsFabric(FatTree(4), 'oe', controller='tcp:127.0.0.1:%d' % controller.ofp_port)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_every_switch_confirms_its_tables_and_the_fabric_is_ready(require_ovs):
    controller, bridges = programmed(APP)
    controller.start()
    try:
        with bridges:
            state = controller.wait_ready(30)
            assert state['programmed'] == 20 and state['outstanding_errors'] == 0 and state['unconfirmed'] == []
    finally:
        controller.stop()


def test_a_rejected_rule_is_reported_with_the_rule_and_ready_is_withheld(require_ovs):
    controller, bridges = programmed('tests.ovs.invalid_rule_app')
    controller.start()
    try:
        with bridges:
            state = wait_for(lambda: (lambda s: s if s and s['programmed'] == 19 and s['errors'] else None)(
                controller.readiness()), 30, 'the other 19 switches never confirmed, or no error came')
            time.sleep(1)  # withheld for good, not just not yet
            state = controller.readiness()
            assert state['ready'] is False and state['unconfirmed'] == [REJECTED_ON], state
            assert state['ports_waiting_for_bfd'] == 0 and not state['recompute_pending']
            (error,) = state['errors']
            assert (error['switch'], error['error']) == (REJECTED_ON, BAD_OUT_GROUP)
            assert error['message'] == 'add_flow ' + to_ofctl(INVALID_RULE)
            # the rest of e0_0's tables went in: only the rejected entry is missing
            flows = bridges.dump_flows(REJECTED_ON)
            assert 'group:4242' not in flows and 'table=2, priority=1008' in flows

            metrics = {(s.name, s.labels.get('dp_name'), s.labels.get('error')): s.value
                       for family in text_string_to_metric_families(get(controller, '/metrics'))
                       for s in family.samples}
            assert metrics[('of_errors_total', REJECTED_ON, BAD_OUT_GROUP)] == 1
            assert metrics[('dcfabric_outstanding_errors', None, None)] == 1
            assert metrics[('dcfabric_switch_confirmed', REJECTED_ON, None)] == 0
            assert metrics[('dcfabric_switch_confirmed', 'e0_1', None)] == 1

            view = json.loads(get(controller, '/view/state'))
            assert view['unconfirmed'] == [REJECTED_ON] and view['outstanding_errors'] == 1
            assert [e['message'] for e in view['openflow_errors']] == [error['message']]
            assert any(e['kind'] == 'error' and REJECTED_ON in e['text'] for e in view['events'])
            with open(controller.log_path) as log:
                assert '%s rejected xid %d with %s: %s' % (REJECTED_ON, error['xid'], BAD_OUT_GROUP,
                                                           error['message']) in log.read()
    finally:
        controller.stop()
