"""Table-0 rules of the dynamic schemes: as data, and in real OVS bridges
traced hop by hop (scheduler placements, measured-only flows, ECMP).
Also the scheme parameters and the models the experiment adds."""
import re
import subprocess

import pytest

from controller.fattree.pipeline import compile_table
from controller.fattree.classifier import FlowKey
from controller.fattree.scheduler import FlowScheduler
from controller.fattree.scheme_table0_rules import (
    COOKIE_FLOW, PRIORITY_FLOW, bypass_rule, ecmp_rules_and_groups, flow_of_match, flow_rule,
    new_flow_rules)
from controller.openflow.rules import TABLE_PREFIX, to_ofctl
from controller.fattree.scheme_parameters import DEFAULTS, SchemeParameterError, scheme_config
from controller.fattree.twolevel import all_tables
from topologies.walk import walk
from topologies.fattree import FatTree
from topologies.nonblocking import NonBlocking
from topologies.renamed import renamed
from tests.ovs.ovs_fabric import OvsFabric

TOPO = FatTree(4)
F1 = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201)  # h0_0_2 -> h1_0_2
F2 = FlowKey('10.0.0.3', '10.2.1.2', 6, 5201)  # h0_0_3 -> h2_1_2: same uplinks as F1 (host ID 2)


def test_per_flow_rule_and_its_match_round_trip():
    rule = flow_rule(F1, 3)
    assert rule.priority == PRIORITY_FLOW and rule.cookie == COOKIE_FLOW
    assert to_ofctl(rule) == ('table=0,priority=500,cookie=0xdcfab0000000f001,dl_type=0x800,'
                              'nw_proto=0x6,nw_src=10.0.0.2,nw_dst=10.1.0.2,tcp_dst=0x1451,'
                              'actions=dec_ttl,output:4')
    assert flow_of_match(dict(rule.match)) == F1
    measured = flow_rule(FlowKey('10.0.0.2', '10.1.0.2', 17, 53), None)
    assert measured.actions == () and measured.goto_table == TABLE_PREFIX
    assert ('udp_dst', 53) in measured.match


def test_bypass_and_new_flow_rules():
    assert to_ofctl(bypass_rule(TOPO, 'e2_1')).endswith('nw_dst=10.2.1.0/255.255.255.0,actions=goto_table:1')
    assert to_ofctl(bypass_rule(TOPO, 'a2_3')).endswith('nw_dst=10.2.0.0/255.255.0.0,actions=goto_table:1')
    assert [to_ofctl(r).split(',', 3)[3] for r in new_flow_rules(to_table=True)] == [
        'dl_type=0x800,nw_proto=0x6,actions=CONTROLLER:65535,goto_table:1',
        'dl_type=0x800,nw_proto=0x11,actions=CONTROLLER:65535,goto_table:1']
    assert all(r.goto_table is None for r in new_flow_rules(to_table=False))


def test_scheme_parameters():
    assert scheme_config({'k': 4}) == DEFAULTS
    assert scheme_config({'scheme': 'scheduler', 'link_mbps': 2})['link_mbps'] == 2
    assert scheme_config({'rearrange': 0})['rearrange'] == 0  # the paper's plain search
    for params, message in [({'scheme': 'vl2'}, 'unknown scheme'), ({'period': 0}, 'period'),
                            ({'flow_idle': 1.5}, 'whole seconds'), ({'tolerance': 1}, 'tolerance'),
                            ({'threshold': True}, 'threshold'), ({'rearrange': -1}, 'rearrange'),
                            ({'rearrange': 2.5}, 'rearrange')]:
        with pytest.raises(SchemeParameterError, match=message):
            scheme_config(params)


def test_nonblocking_model_mirrors_the_fattree_hosts():
    nb = NonBlocking(4)
    assert [h.ip for h in nb.hosts] == [h.ip for h in TOPO.hosts]
    assert nb.host_attachment('nbh5') == ('nbsw', 5)


def test_renamed_model_keeps_addresses_dpids_and_ports():
    copy = renamed(TOPO, 'bx')
    assert copy.node('bxa0_2').dpid == TOPO.node('a0_2').dpid
    assert copy.peer('bxa0_2', 2) == ('bxc1_1', 0)
    assert copy.node('bxh1_0_3').ip == '10.1.0.3'


@pytest.fixture(scope='module')
def bridges(require_ovs):
    with OvsFabric(TOPO, 'fq') as fabric:
        yield fabric


def install(fabric, extra_rules, extra_groups=lambda name: []):
    for name, table in all_tables(TOPO).items():
        rules, groups = compile_table(table)
        fabric.install(name, rules + extra_rules(name), groups + extra_groups(name))


def cores(hops):
    return [switch for switch, _ in hops if switch.startswith('c')]


def test_scheduler_placements_steer_colliding_flows_onto_disjoint_cores(bridges):
    tables = all_tables(TOPO)
    two_level = [walk(TOPO, lambda sw, _, ip: tables[sw].lookup(ip), s, d)
                 for s, d in (('h0_0_2', 'h1_0_2'), ('h0_0_3', 'h2_1_2'))]
    assert cores(two_level[0]) == cores(two_level[1]) == ['c1_1']  # they collide by default
    scheduler = FlowScheduler(TOPO, 3, lambda: 0.0)
    placed = {f: scheduler.notify(f)[0] for f in (F1, F2)}
    per_switch = {}
    for flow, placement in placed.items():
        for switch, port in placement.ports:
            per_switch.setdefault(switch, []).append(flow_rule(flow, port))

    def extra(name):
        scheme = [bypass_rule(TOPO, name)] + new_flow_rules(to_table=True) if name.startswith('e') else []
        return scheme + per_switch.get(name, [])
    install(bridges, extra)
    hops1, ttl1 = bridges.trace('h0_0_2', 'h1_0_2', fields='tcp,tp_src=40000,tp_dst=5201')
    hops2, ttl2 = bridges.trace('h0_0_3', 'h2_1_2', fields='tcp,tp_src=40000,tp_dst=5201')
    assert cores(hops1) == ['c1_1'] and cores(hops2) == ['c2_1']
    assert ttl1 == ttl2 == 59
    # a flow the scheduler has not placed (other port) stays on the two-level path
    hops, _ = bridges.trace('h0_0_3', 'h2_1_2', fields='tcp,tp_src=40000,tp_dst=9999')
    assert hops == two_level[1]


def test_ecmp_spreads_flows_over_upward_ports(bridges):
    """OVS selects a bucket by a datapath hash of the 5-tuple and
    recirculates: trace the first pass, then the second with each hash.
    Every hop sees the same hash; all four cores are used all the same."""
    ecmp = {name: ecmp_rules_and_groups(TOPO, table) for name, table in all_tables(TOPO).items()
            if name[0] in 'ea'}
    install(bridges, lambda name: ecmp.get(name, ([], []))[0], lambda name: ecmp.get(name, ([], []))[1])
    headers = 'tcp,nw_src=10.0.0.2,nw_dst=10.3.1.3,tp_src=40000,tp_dst=5201,nw_ttl=%d'
    switch, port = TOPO.host_attachment('h0_0_2')
    first = subprocess.run(
        ['ovs-appctl', '--timeout=60', 'ofproto/trace', bridges.bridge(switch), 'in_port=%s,dl_src=%s,dl_dst=%s,%s' % (
            bridges.port_name(switch, port), TOPO.node('h0_0_2').mac, TOPO.node('h3_1_3').mac,
            headers % 64)],
        capture_output=True, text=True, check=True, timeout=120).stdout
    recirc = re.search(r'recirc\((0x[0-9a-f]+)\)', first).group(1)
    seen = set()
    for dp_hash in range(1, 17):  # 0 reads as "no hash yet"
        hops, ttl = bridges.trace('h0_0_2', 'h3_1_3', ttl=63, raw='recirc_id=%s,dp_hash=%d,%s' % (
            recirc, dp_hash, headers % 63))
        assert hops[-1] == ("e3_1", 1) and ttl == 59, (dp_hash, hops)
        seen.add(tuple(cores(hops)))
    assert seen == {('c1_1',), ('c1_2',), ('c2_1',), ('c2_2',)}
    hops, _ = bridges.trace('h0_0_2', 'h0_0_3')
    assert hops == [('e0_0', 1)]  # own subnet: bypass, no group
