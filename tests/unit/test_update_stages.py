"""Updates across switches, downstream first (controller.openflow.staging).

For every single switch-link failure and recovery at k=4, the changed
switches are moved stage by stage as the plan says. In every state on
the way (the stages before done, the later ones not begun, and the current
one partly done: each one switch, and all but each one), every host pair
that the old state and the new state both deliver is delivered: no update
order makes a packet meet a switch that lacks what an updated switch sends
it to. Without the order such states exist: a link's recovery done at an
edge switch before the aggregation switch it sends to drops packets."""
import itertools

import pytest

from controller.fattree.failover import expand_failures, link_key, tables_with_failures
from controller.fattree.pipeline import compile_table
from controller.openflow.lookup import pipeline, rules_hit
from controller.openflow.staging import dependencies, forwarding_changes, stages
from topologies.addressing import ip_to_int
from topologies.model import model_port
from topologies.fattree import FatTree
from topologies.walk import RoutingError, walk

TOPO = FatTree(4)
PAIRS = list(itertools.permutations([h.name for h in TOPO.hosts], 2))
HEALTHY = tables_with_failures(TOPO, frozenset())


def delivered(tables_of, down):
    """The host pairs that reach each other when switch s forwards by ``tables_of(s)`` with links ``down`` cut."""
    def forward(switch, _in_port, ip):
        port = tables_of(switch).lookup(ip)
        if port is None or link_key(switch, TOPO.peer(switch, port)[0]) in down:
            return None
        return port
    reached = set()
    for src, dst in PAIRS:
        try:
            walk(TOPO, forward, src, dst)
            reached.add((src, dst))
        except RoutingError:
            pass
    return reached


def transitions():
    """(name, old tables, new tables, links down during the update) for every link's failure and recovery."""
    for link in TOPO.switch_links():
        failed = expand_failures(TOPO, [(link.node_a, link.node_b)])
        broken = tables_with_failures(TOPO, failed)
        name = '%s-%s' % (link.node_a, link.node_b)
        yield 'fail ' + name, HEALTHY, broken, failed
        yield 'recover ' + name, broken, HEALTHY, frozenset()


def plan(old, new):
    compiled_old = {name: compile_table(table) for name, table in old.items()}
    compiled_new = {name: compile_table(table) for name, table in new.items()}
    changed = {name: state for name, state in compiled_new.items() if state != compiled_old[name]}
    return stages(dependencies({name: forwarding_changes(TOPO, name, compiled_old[name], state)
                                for name, state in changed.items()}))


@pytest.mark.parametrize('name, old, new, down', list(transitions()), ids=lambda v: v if isinstance(v, str) else '')
def test_every_state_on_the_way_delivers_what_old_and_new_both_deliver(name, old, new, down):
    both = delivered(old.get, down) & delivered(new.get, down)
    plan_stages = plan(old, new)
    for index, stage in enumerate(plan_stages):
        done = set().union(*plan_stages[:index])
        partial = [{switch} for switch in stage] + [set(stage) - {switch} for switch in stage] + [set(stage)]
        for part in partial:
            updated = done | part
            lost = both - delivered(lambda s: new[s] if s in updated else old[s], down)
            assert not lost, '%s: stage %d of %s with %s done loses %s' % (
                name, index, plan_stages, sorted(part), sorted(lost)[:4])


def test_a_recovery_needs_the_order_and_the_plan_has_it():
    failed = expand_failures(TOPO, [('e0_0', 'a0_2')])
    old, new = tables_with_failures(TOPO, failed), HEALTHY
    both = delivered(old.get, frozenset()) & delivered(new.get, frozenset())
    edge_first = delivered(lambda s: new[s] if s == 'e1_0' else old[s], frozenset())
    assert ('h1_0_2', 'h0_0_2') in both - edge_first  # e1_0 sends to a1_2 before a1_2 knows the way
    order = {switch: index for index, stage in enumerate(plan(old, new)) for switch in stage}
    assert order['a1_2'] < order['e1_0']


def test_stages_follow_dependencies_and_put_a_cycle_in_one_stage():
    assert stages({'e': {'a'}, 'a': {'c'}, 'c': set(), 'x': set()}) == [['c', 'x'], ['a'], ['e']]
    assert stages({'p': {'q'}, 'q': {'p'}, 'r': {'p'}, 's': set()}) == [['p', 'q', 's'], ['r']]
    assert stages({}) == []


def _every_destination_changes(switch, old, new):
    """forwarding_changes' answer found by looking every host address up."""
    states = [(pipeline(rules), {g.group_id: g for g in groups}) for rules, groups in (old, new)]
    changes = {}
    for host in TOPO.hosts:
        seen = []
        for tables, groups in states:
            hit = tuple(rules_hit(tables, {'eth_type': 0x0800, 'ipv4_dst': ip_to_int(host.ip), 'metadata': 0}))
            actions = hit[-1].actions if hit[-1] is not None else ()
            seen.append((hit, tuple(groups.get(a[1]) for a in actions if a[0] == 'group'), actions))
        if seen[0][:2] != seen[1][:2]:
            hit, used, actions = seen[1]
            ports = [a[1] for a in actions if a[0] == 'output'] + [
                a[1] for group in used if group is not None for _, bucket in group.buckets for a in bucket
                if a[0] == 'output']
            changes[ip_to_int(host.ip)] = {TOPO.peer(switch, model_port(p))[0] for p in ports}
    return changes


@pytest.mark.parametrize('name,old,new,down', list(transitions()), ids=lambda v: v if isinstance(v, str) else '')
def test_only_destinations_a_changed_rule_matches_are_looked_up_and_none_is_missed(name, old, new, down):
    for switch in old:
        before, after = compile_table(old[switch]), compile_table(new[switch])
        if before != after:
            assert forwarding_changes(TOPO, switch, before, after) == _every_destination_changes(switch, before, after)
