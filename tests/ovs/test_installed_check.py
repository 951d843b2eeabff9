"""The fault campaign's independent checks (scripts.fattree.installed_check)
on real Open vSwitch dumps: the computed k=4 tables installed into bridges
read back equal to what was computed and deliver every pair; a missing rule,
a stale table under a failure and a dead port are each found, exactly."""
import itertools
import subprocess

import pytest

from controller.fattree.failover import link_key, tables_with_failures
from controller.fattree.pipeline import arp_responder_rules, compile_table
from controller.fattree.twolevel import all_tables
from scripts.fattree import installed_check
from scripts.fattree.installed_check import InstalledState, table_mismatch, unrouted_pairs
from tests.ovs.ovs_fabric import OvsFabric
from topologies.fattree import FatTree
from topologies.walk import walk

FAILED = frozenset({link_key('e0_0', 'a0_2')})


@pytest.fixture
def k4(require_ovs):
    topo = FatTree(4)
    with OvsFabric(topo, 'ic') as fabric:
        yield topo, fabric


def install(fabric, topo, tables):
    for name, table in tables.items():
        rules, groups = compile_table(table)
        fabric.install(name, rules + arp_responder_rules(topo, name), groups)


def read(fabric, topo):
    return {s.name: InstalledState(fabric.dump_flows(s.name), fabric.dump_groups(s.name)) for s in topo.switches}


def test_installed_tables_read_back_equal_to_computed_and_deliver_every_pair(k4):
    topo, fabric = k4
    tables = all_tables(topo)
    install(fabric, topo, tables)
    states = read(fabric, topo)
    assert {name: table_mismatch(topo, tables[name], state) for name, state in states.items()} == \
        {s.name: None for s in topo.switches}
    assert unrouted_pairs(topo, states) == []
    assert len(installed_check.connected_pairs(topo, frozenset(), frozenset())) == 16 * 15


def test_a_deleted_host_route_is_a_mismatch_and_unroutes_exactly_its_host(k4):
    topo, fabric = k4
    tables = all_tables(topo)
    install(fabric, topo, tables)
    subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', '--strict', 'del-flows', fabric.bridge('e0_0'),
                    'table=1,priority=1032,ip,nw_dst=10.0.0.2'], check=True, timeout=30)
    states = read(fabric, topo)
    assert table_mismatch(topo, tables['e0_0'], states['e0_0']) == \
        {'missing': 1, 'unexpected': 0, 'groups_differ': False}
    unrouted = unrouted_pairs(topo, states)
    assert sorted((src, dst) for src, dst, _ in unrouted) == \
        sorted((h.name, 'h0_0_2') for h in topo.hosts if h.name != 'h0_0_2')
    assert all('e0_0' in why for _, _, why in unrouted)  # dropped there, or looped back to it


def test_stale_tables_under_a_failure_differ_where_the_computed_ones_change(k4):
    topo, fabric = k4
    before, after = all_tables(topo), tables_with_failures(topo, FAILED)
    install(fabric, topo, before)
    states = read(fabric, topo)
    changed = {name for name in after if compile_table(after[name]) != compile_table(before[name])}
    assert changed  # the failure changes some tables
    assert {name for name, state in states.items() if table_mismatch(topo, after[name], state)} == changed
    # the dead link's port is not live: what still points down it is unrouted
    stale = unrouted_pairs(topo, states, FAILED)
    assert stale and all(dst in ('h0_0_2', 'h0_0_3') for _, dst, _ in stale)
    install(fabric, topo, after)
    assert unrouted_pairs(topo, read(fabric, topo), FAILED) == []


def test_a_failed_switch_disconnects_its_hosts_and_the_walk_agrees_with_the_model(k4):
    topo, fabric = k4
    dead = frozenset({'e0_0'})
    links = frozenset(link_key('e0_0', peer) for peer in ('a0_2', 'a0_3'))
    tables = tables_with_failures(topo, links)
    install(fabric, topo, tables)
    states = read(fabric, topo)
    connected = installed_check.connected_pairs(topo, links, dead)
    assert len(connected) == 14 * 13
    assert unrouted_pairs(topo, states, links, dead) == []
    # the walk over the dumps takes the model's own path for every pair
    forward = installed_check.installed_forward(topo, states, links, dead)
    for src, dst in itertools.islice(connected, 0, None, 7):
        assert walk(topo, forward, src, dst) == walk(topo, lambda sw, _in, ip: tables[sw].lookup(ip), src, dst)
