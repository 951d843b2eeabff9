"""ECMP's table-0 rules under failures: they mirror the first level of the
two-level tables, so the failure broadcast's avoidance and the detours
apply to ECMP as they do to the tables."""
import pytest

from controller.fattree.failover import PortChoices, expand_failures, tables_with_failures
from controller.fattree.scheme_table0_rules import ECMP_GROUP_BIT, PRIORITY_UPWARD, ecmp_rules_and_groups
from controller.openflow.rules import TABLE_PREFIX
from topologies.fattree import FatTree, ip_to_int
from topologies.model import model_port

TOPO = FatTree(4)


def ecmp_choice(rules, groups, ip):
    """What the switch does with ``ip`` in table 0: a set of model ports
    (select group) or 'table 1'."""
    def matches(rule):
        dst = rule.match_dict.get('ipv4_dst')
        return dst is None or ip_to_int(ip) & ip_to_int(dst[1]) == ip_to_int(dst[0])
    rule = max((r for r in rules if matches(r)), key=lambda r: r.priority)
    if rule.goto_table == TABLE_PREFIX:
        return 'table 1'
    group = {g.group_id: g for g in groups}[rule.actions[1][1]]
    return {model_port(port) for port, _ in group.buckets}


def test_no_failures_hash_over_every_upward_port_and_leave_own_hosts_to_table_1():
    tables = tables_with_failures(TOPO, frozenset())
    rules, groups = ecmp_rules_and_groups(TOPO, tables['e1_0'])
    assert [(r.priority, r.goto_table) for r in rules] == [
        (PRIORITY_UPWARD + 32, TABLE_PREFIX), (PRIORITY_UPWARD + 32, TABLE_PREFIX), (PRIORITY_UPWARD, None)]
    assert [[port for port, _ in g.buckets] for g in groups] == [[3, 4]]
    assert groups[0].kind == 'select' and groups[0].group_id & ECMP_GROUP_BIT
    _, groups = ecmp_rules_and_groups(TOPO, tables['a1_2'])
    assert [[port for port, _ in g.buckets] for g in groups] == [[3, 4, 4, 3]]  # digit-sum order


def test_remote_core_failure_steers_other_pods_off_that_core():
    # the case that broke it once: a0_2-c1_1 down; upper switches of other pods must
    # stop hashing traffic for pod 0 onto c1_1
    failed = expand_failures(TOPO, [('a0_2', 'c1_1')])
    tables = tables_with_failures(TOPO, failed)
    rules, groups = ecmp_rules_and_groups(TOPO, tables['a2_2'])
    assert ecmp_choice(rules, groups, '10.0.1.3') == {TOPO.port_to('a2_2', 'c1_2')}
    assert ecmp_choice(rules, groups, '10.1.1.3') == {TOPO.port_to('a2_2', 'c1_1'), TOPO.port_to('a2_2', 'c1_2')}
    assert ecmp_choice(rules, groups, '10.2.1.3') == 'table 1'  # own pod: down
    rules, groups = ecmp_rules_and_groups(TOPO, tables['a0_2'])
    assert ecmp_choice(rules, groups, '10.3.0.2') == {TOPO.port_to('a0_2', 'c1_2')}


@pytest.mark.parametrize('links, switches', [
    ((), ()), ((('a0_2', 'c1_1'),), ()), ((('e1_0', 'a1_3'),), ()), ((), ('c2_2',)),
    ((('e0_0', 'a0_2'), ('e0_1', 'a0_3')), ()),  # needs detours through another pod
    ((('e2_0', 'a2_2'), ('a1_3', 'c2_1')), ('e3_1',))])
def test_ecmp_choices_equal_the_tables_choices_everywhere(links, switches):
    """For every pod switch and destination: table 0 either defers to the
    tables or hashes over exactly the ports the tables may choose from."""
    failed = expand_failures(TOPO, links, switches)
    tables = tables_with_failures(TOPO, failed)
    for switch in TOPO.switches:
        if switch.role == 'core':
            continue
        rules, groups = ecmp_rules_and_groups(TOPO, tables[switch.name])
        for host in TOPO.hosts:
            choice = ecmp_choice(rules, groups, host.ip)
            table_ports = PortChoices(tables[switch.name])(host.ip)
            if choice == 'table 1':
                assert len(table_ports) <= 1 or set(table_ports) - set(TOPO.up_ports(switch.name))
            else:
                assert choice == set(table_ports), (switch.name, host.name)
