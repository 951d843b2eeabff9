"""The compiled two-level rules in real OVS bridges: every k=4 host pair
traced hop by hop with ovs-appctl ofproto/trace against the model's walk;
a failure pushed by the ordered diff leaves what a fresh install leaves."""
import itertools

import pytest

from controller.fattree.failover import link_key, tables_with_failures
from controller.fattree.pipeline import arp_responder_rules, compile_table
from controller.openflow.diff import ordered_diff
from controller.fattree.twolevel import all_tables
from topologies.walk import walk
from topologies.fattree import FatTree
from tests.ovs.ovs_fabric import OvsFabric


@pytest.fixture(scope='module')
def k4_bridges(require_ovs):
    topo = FatTree(4)
    tables = all_tables(topo)
    with OvsFabric(topo, 'tf') as fabric:
        for name, table in tables.items():
            rules, groups = compile_table(table)
            fabric.install(name, rules + arp_responder_rules(topo, name), groups)
        yield topo, tables, fabric


def test_every_k4_pair_follows_the_tables_hop_by_hop(k4_bridges):
    topo, tables, fabric = k4_bridges
    for src, dst in itertools.permutations([h.name for h in topo.hosts], 2):
        expected = walk(topo, lambda sw, _in, ip: tables[sw].lookup(ip), src, dst)
        hops, ttl = fabric.trace(src, dst)
        assert hops == expected, (src, dst)
        assert ttl == 64 - len(hops)


def test_unrouted_and_ttl_expired_packets_are_dropped(k4_bridges):
    topo, _, fabric = k4_bridges
    hops, _ = fabric.trace('h0_0_2', 'h3_1_3', ttl=2)
    assert len(hops) == 2  # the third switch's dec_ttl drops it
    hops, _ = fabric.trace('h0_0_2', 'h3_1_3', raw='ipv6')
    assert hops == [('e0_0', None)]  # not IPv4: table 0's counted miss drop
    flows = fabric.dump_flows('e0_0')
    assert flows.count('priority=0 actions=drop') == 6  # tables 0-2 and the ARP tables 3-5
    assert 'FLOOD' not in flows and 'NORMAL' not in flows and 'ALL' not in flows


def test_lower_switches_answer_arp_for_fabric_hosts_only(k4_bridges):
    topo, _, fabric = k4_bridges
    asker = topo.node('h0_0_2')
    for target in topo.hosts:
        reply, hops = fabric.arp_request('h0_0_2', target.ip)
        assert hops == ['e0_0', 'in_port'], target.name  # answered at the first switch
        fields = ('arp_op', 'dl_src', 'dl_dst', 'arp_spa', 'arp_tpa', 'arp_sha', 'arp_tha')
        assert {f: reply[f] for f in fields} == {
            'arp_op': '2', 'dl_src': target.mac, 'dl_dst': asker.mac, 'arp_spa': target.ip,
            'arp_tpa': asker.ip, 'arp_sha': target.mac, 'arp_tha': asker.mac}, target.name
    # a switch address, a pod, subnet and host ID beyond the fabric: no reply
    for unknown in ('10.0.0.1', '10.4.0.2', '10.0.2.2', '10.0.0.4', '10.4.1.1', '192.168.0.1'):
        reply, hops = fabric.arp_request('h0_0_2', unknown)
        assert reply is None and hops == ['e0_0'], unknown
    for switch in topo.switches:
        assert 'CONTROLLER' not in fabric.dump_flows(switch.name)


def test_a_failure_pushed_by_the_ordered_diff_equals_a_fresh_install(require_ovs):
    topo = FatTree(4)
    healthy = {name: compile_table(table) for name, table in all_tables(topo).items()}
    failed = {name: compile_table(table) for name, table in
              tables_with_failures(topo, frozenset({link_key('e0_0', 'a0_2')})).items()}
    changed = sorted(name for name in failed if failed[name] != healthy[name])
    assert 'e0_0' in changed

    def tables(fabric):
        return {name: (sorted(fabric.dump_flows(name).splitlines()),
                       sorted(fabric.dump_groups(name).splitlines())) for name in changed}

    with OvsFabric(topo, 'td') as fabric:
        for before, after in ((healthy, failed), (failed, healthy)):
            for name in changed:
                fabric.install(name, *after[name])
            fresh = tables(fabric)
            for name in changed:
                (old_rules, old_groups), (new_rules, new_groups) = before[name], after[name]
                fabric.install(name, old_rules, old_groups)
                fabric.apply(name, ordered_diff(old_rules, new_rules, old_groups, new_groups))
            assert tables(fabric) == fresh
