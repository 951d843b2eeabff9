"""Updates across switches, downstream first (controller.openflow.staging).

A transition (one switch link or one switch failing, or coming back) moves
the changed switches stage by stage as the plan says. While a stage is
being sent, any of its switches may have its new state and any not yet:
for each destination, every switch of the stage is given both its old and
its new next hop at once, the stages before their new one, the later ones
their old one, and every path a packet can take from a lower switch that
the old and the new state both deliver from must reach the destination's
host: no dead end (no entry, no live port), no loop, no other host.
That covers every mix of the stage's switches in one walk. Forwarding is
read from the compiled rules and groups by controller.openflow.lookup's
rules_hit, not by the staging's own walk, with fast-failover groups
skipping buckets whose link is down.

k=4: every single-link and single-switch transition, every destination.
k=8 and k=16: a seeded sample of transitions of every kind, and of the
classes of destinations the transition changes (the addresses alike in
every changed switch's changes), one address standing for each."""
import functools
import itertools
import operator
import random

import pytest

from controller.fattree.failover import expand_failures, link_key, tables_with_failures
from controller.fattree.pipeline import compile_table
from controller.openflow.lookup import pipeline, rules_hit
from controller.openflow.rules import ETH_TYPE_IP
from controller.openflow.staging import (
    ModelIndex, dependencies, forwarding_changes, forwarding_classes, stages, update_stages)
from topologies.addressing import ip_to_int
from topologies.fattree import FatTree
from topologies.model import model_port


@functools.lru_cache(maxsize=None)
def fat_tree(k):
    return FatTree(k)


@functools.lru_cache(maxsize=None)
def compiled(k, failed):
    """{switch: (rules, groups)} under a failure set."""
    return {name: compile_table(table) for name, table in tables_with_failures(fat_tree(k), failed).items()}


@functools.lru_cache(maxsize=None)
def prepared(k, failed):
    """{switch: (rules_hit tables, {group id: group})} under a failure set."""
    return {name: (pipeline(rules), {g.group_id: g for g in groups})
            for name, (rules, groups) in compiled(k, failed).items()}


def transition(k, kind, element):
    """(name, failure set before, after, links down meanwhile) of one
    element's failure ('fail') or recovery ('recover')."""
    topo = fat_tree(k)
    failed = (expand_failures(topo, [element]) if isinstance(element, tuple)
              else expand_failures(topo, failed_switches=[element]))
    name = '%s %s' % (kind, '-'.join(element) if isinstance(element, tuple) else element)
    return (name, frozenset(), failed, failed) if kind == 'fail' else (name, failed, frozenset(), frozenset())


def every_transition(k):
    topo = fat_tree(k)
    elements = [(l.node_a, l.node_b) for l in topo.switch_links()] + [s.name for s in topo.switches]
    return [transition(k, kind, element) for element in elements for kind in ('fail', 'recover')]


def sampled_transitions(k, seed, per_kind):
    """Failures and recoveries of ``per_kind`` links of each kind and switches of each role."""
    topo, draw = fat_tree(k), random.Random(seed)
    kinds = {}
    for link in topo.switch_links():
        roles = tuple(sorted(topo.node(n).role for n in (link.node_a, link.node_b)))
        kinds.setdefault(roles, []).append((link.node_a, link.node_b))
    for switch in topo.switches:
        kinds.setdefault(switch.role, []).append(switch.name)
    return [transition(k, kind, element) for _, members in sorted(kinds.items(), key=str)
            for element in draw.sample(members, per_kind) for kind in ('fail', 'recover')]


def plan(k, old, new):
    """(the app's stages, {switch: forwarding_changes}) from state ``old`` to ``new`` (failure sets)."""
    before, after = compiled(k, old), compiled(k, new)
    changed = {name: state for name, state in after.items() if state != before[name]}
    changes = {name: forwarding_changes(fat_tree(k), name, before[name], state) for name, state in changed.items()}
    return update_stages(fat_tree(k), before, changed), changes


def next_node(k, switch, state, address, down):
    """The node ``switch`` sends a packet to ``address`` to under ``state``
    (prepared) with links ``down``; None where it drops it."""
    topo = fat_tree(k)
    tables, groups = state
    hit = rules_hit(tables, {'eth_type': ETH_TYPE_IP, 'ipv4_dst': address, 'metadata': 0})
    if hit[-1] is None:
        return None
    for action in hit[-1].actions:
        if action[0] == 'output':
            ports = [action[1]]
        elif action[0] == 'group':
            assert groups[action[1]].kind == 'fast_failover'
            ports = [watch for watch, _ in groups[action[1]].buckets]
        else:
            continue
        for port in ports:  # a fast-failover group's first live bucket
            peer = topo.peer(switch, model_port(port))[0]
            if topo.nodes[peer].is_host or link_key(switch, peer) not in down:
                return peer
        return None
    return None


def unsafe_sources(k, choices, host):
    """The lower switches from which some path over ``choices`` ({switch:
    set of next nodes}) does not end at ``host``."""
    topo, verdict = fat_tree(k), {}

    def delivers(node, visiting):
        if node is None or node in visiting:
            return False  # a dead end, or a loop
        if topo.nodes[node].is_host:
            return node == host
        if node not in verdict:
            verdict[node] = all(delivers(peer, visiting | {node}) for peer in choices[node])
        return verdict[node]
    return {s.name for s in topo.switches_of_role('edge') if not delivers(s.name, frozenset())}


def check_transition(k, old, new, down, addresses, plan_stages):
    """[(address, stage index, lower switches it loses from)] over every
    stage of ``plan_stages`` (any mix of the stage's switches)."""
    topo, before, after = fat_tree(k), prepared(k, old), prepared(k, new)
    changed = {name for name in before if compiled(k, old)[name] != compiled(k, new)[name]}
    assert changed == set(itertools.chain(*plan_stages))
    lost = []
    for address in addresses:
        host = topo.by_ip('%d.%d.%d.%d' % tuple(address >> s & 0xff for s in (24, 16, 8, 0))).name
        was = {name: next_node(k, name, before[name], address, down) for name in before}
        now = {name: next_node(k, name, after[name], address, down) if name in changed else was[name]
               for name in before}
        unsafe_both = (unsafe_sources(k, {n: {was[n]} for n in was}, host)
                       | unsafe_sources(k, {n: {now[n]} for n in now}, host))
        for index, stage in enumerate(plan_stages):
            done = set(itertools.chain(*plan_stages[:index]))
            choices = {name: {now[name]} if name in done else {was[name], now[name]} if name in stage
                       else {was[name]} for name in was}
            losing = unsafe_sources(k, choices, host) - unsafe_both
            if losing:
                lost.append((address, index, sorted(losing)))
    return lost


def address_classes(k, old, new, changes, sample, seed):
    """Addresses to check a transition for: one of each of ``sample``
    classes of the destinations whose forwarding changes (a class: alike in
    every changed switch's old and new forwarding), drawn seeded, and a
    quarter as many destinations whose forwarding changes nowhere."""
    index, draw = ModelIndex.of(fat_tree(k)), random.Random(seed)
    changed = functools.reduce(operator.or_, (bits for by_hops in changes.values() for bits in by_hops.values()), 0)
    told_apart = {bits & changed for name in changes
                  for rules, groups in (compiled(k, old)[name], compiled(k, new)[name])
                  for bits, _ in forwarding_classes(rules, {g.group_id: g for g in groups}, changed, index).values()}
    picked, left = [], changed
    while left and len(picked) < sample:  # an address, then none of its class again
        address = draw.choice(index.listed(left))
        bit = 1 << index.position[address]
        left &= ~functools.reduce(operator.and_, (bits for bits in told_apart if bits & bit), changed)
        picked.append(address)
    unchanged = index.listed(index.every & ~changed)
    return sorted(picked + draw.sample(unchanged, min(sample // 4, len(unchanged))))


@pytest.mark.parametrize('name, old, new, down', every_transition(4), ids=[t[0] for t in every_transition(4)])
def test_k4_every_mix_of_every_stage_delivers_to_every_destination(name, old, new, down):
    plan_stages, _ = plan(4, old, new)
    addresses = [ip_to_int(h.ip) for h in fat_tree(4).hosts]
    assert check_transition(4, old, new, down, addresses, plan_stages) == []


@pytest.mark.parametrize('k, seed, per_kind, classes', [(8, 8, 3, 16), (16, 16, 2, 12)])
def test_sampled_transitions_and_destination_classes_at_k8_and_k16(k, seed, per_kind, classes):
    for name, old, new, down in sampled_transitions(k, seed, per_kind):
        plan_stages, changes = plan(k, old, new)
        addresses = address_classes(k, old, new, changes, classes, seed)
        assert any(a in ModelIndex.of(fat_tree(k)).listed(bits) for by_hops in changes.values()
                   for bits in by_hops.values() for a in addresses), name
        assert check_transition(k, old, new, down, addresses, plan_stages) == [], name


def test_the_check_fails_a_plan_without_the_order():
    """Every changed switch in one stage loses pairs in the recovery of a
    lower-upper link (e1_0 goes back to a1_2 before a1_2 knows the way down)."""
    name, old, new, down = transition(4, 'recover', ('e0_0', 'a0_2'))
    plan_stages, _ = plan(4, old, new)
    assert len(plan_stages) > 1
    addresses = [ip_to_int(h.ip) for h in fat_tree(4).hosts]
    lost = check_transition(4, old, new, down, addresses, [sorted(itertools.chain(*plan_stages))])
    assert (ip_to_int('10.0.0.2'), 0) in {(address, stage) for address, stage, _ in lost}
    assert any('e1_0' in sources for _, _, sources in lost)
    order = {switch: index for index, stage in enumerate(plan_stages) for switch in stage}
    assert order['a1_2'] < order['e1_0']


def test_update_stages_orders_the_changes_and_yields_after_each_switch():
    """The recovery of a lower-upper link: the stages its switches'
    dependencies give, ``between`` called once per changed switch."""
    _, old, new, _ = transition(4, 'recover', ('e0_0', 'a0_2'))
    before, after = compiled(4, old), compiled(4, new)
    changed = {name: state for name, state in after.items() if state != before[name]}
    calls = []
    found = update_stages(fat_tree(4), before, changed, between=lambda: calls.append(len(calls)))
    assert found == stages(dependencies({name: forwarding_changes(fat_tree(4), name, before[name], state)
                                         for name, state in changed.items()}))
    assert len(found) > 1 and sorted(itertools.chain(*found)) == sorted(changed)
    assert len(calls) == len(changed)


def test_stages_follow_dependencies_and_put_a_cycle_in_one_stage():
    assert stages({'e': {'a'}, 'a': {'c'}, 'c': set(), 'x': set()}) == [['c', 'x'], ['a'], ['e']]
    assert stages({'p': {'q'}, 'q': {'p'}, 'r': {'p'}, 's': set()}) == [['p', 'q', 's'], ['r']]
    assert stages({}) == []


def test_dependencies_join_switches_only_over_a_destination_both_change():
    changes = {'e': {frozenset({'a'}): 0b0110}, 'a': {frozenset({'c'}): 0b0100}, 'c': {frozenset({'h'}): 0b1000},
               'x': {frozenset({'c', 'x'}): 0b0001}}
    assert dependencies(changes) == {'e': {'a'}, 'a': set(), 'c': set(), 'x': set()}


def _every_destination_changes(k, switch, old, new):
    """forwarding_changes' answer found by looking every host address up with rules_hit."""
    topo = fat_tree(k)
    states = [(pipeline(rules), {g.group_id: g for g in groups}) for rules, groups in (old, new)]
    changes = {}
    for host in topo.hosts:
        seen = []
        for tables, groups in states:
            hit = tuple(rules_hit(tables, {'eth_type': ETH_TYPE_IP, 'ipv4_dst': ip_to_int(host.ip), 'metadata': 0}))
            actions = hit[-1].actions if hit[-1] is not None else ()
            seen.append((hit, tuple(groups.get(a[1]) for a in actions if a[0] == 'group'), actions))
        if seen[0][:2] != seen[1][:2]:
            hit, used, actions = seen[1]
            ports = [a[1] for a in actions if a[0] == 'output'] + [
                a[1] for group in used if group is not None for _, bucket in group.buckets for a in bucket
                if a[0] == 'output']
            changes[ip_to_int(host.ip)] = {topo.peer(switch, model_port(p))[0] for p in ports}
    return changes


@pytest.mark.parametrize('name, old, new, down', every_transition(4), ids=[t[0] for t in every_transition(4)])
def test_changes_by_class_equal_looking_every_address_up(name, old, new, down):
    index = ModelIndex.of(fat_tree(4))
    before, after = compiled(4, old), compiled(4, new)
    for switch in before:
        if before[switch] != after[switch]:
            by_address = {address: set(hops) for hops, bits in forwarding_changes(
                fat_tree(4), switch, before[switch], after[switch]).items() for address in index.listed(bits)}
            assert by_address == _every_destination_changes(4, switch, before[switch], after[switch])


@pytest.mark.parametrize('k, seed, per_kind, looked_up', [(8, 8, 3, 12), (16, 16, 2, 3)])
def test_changes_shared_by_alike_switches_equal_each_switch_s_own(k, seed, per_kind, looked_up):
    """The switches of one update share the classes of the rules they hold
    alike (``alike``): each one's changes equal those it gets alone, and
    those found by looking every address up (a seeded sample of switches)."""
    topo, draw, shared_somewhere = fat_tree(k), random.Random(seed), False
    index = ModelIndex.of(topo)
    for name, old, new, down in sampled_transitions(k, seed, per_kind):
        before, after = compiled(k, old), compiled(k, new)
        changed = sorted(switch for switch in before if before[switch] != after[switch])
        alike = {}
        shared = {switch: forwarding_changes(topo, switch, before[switch], after[switch], alike) for switch in changed}
        assert shared == {switch: forwarding_changes(topo, switch, before[switch], after[switch])
                          for switch in changed}, name
        shared_somewhere |= len(alike) < len(changed)
        for switch in draw.sample(changed, min(looked_up, len(changed))):
            by_address = {address: set(hops) for hops, bits in shared[switch].items()
                          for address in index.listed(bits)}
            assert by_address == _every_destination_changes(k, switch, before[switch], after[switch]), (name, switch)
    assert shared_somewhere


def test_a_group_changed_in_place_makes_every_destination_a_candidate():
    """Same group id, other buckets: every destination that outputs through
    it changes, although no rule did."""
    before = compiled(4, frozenset())['e0_0']
    group = before[1][0]
    moved = type(group)(group.group_id, group.kind, group.buckets[::-1])
    after = (before[0], [moved] + list(before[1][1:]))
    found = forwarding_changes(fat_tree(4), 'e0_0', before, after)
    assert found and _every_destination_changes(4, 'e0_0', before, after).keys() == set(
        ModelIndex.of(fat_tree(4)).listed(sum(found.values())))


def test_model_index_bits_of_prefix_suffix_and_whole_addresses():
    index = ModelIndex.of(fat_tree(4))
    listed = lambda value, mask: index.listed(index.matching(ip_to_int(value), ip_to_int(mask)))
    assert listed('10.1.0.0', '255.255.255.0') == [ip_to_int('10.1.0.2'), ip_to_int('10.1.0.3')]
    assert listed('0.0.0.3', '0.0.0.255') == sorted(ip_to_int('10.%d.%d.3' % (p, z)) for p in range(4) for z in range(2))
    assert listed('10.2.1.3', '255.255.255.255') == [ip_to_int('10.2.1.3')]
    assert listed('10.2.1.9', '255.255.255.255') == []
    assert listed('0.0.1.0', '0.0.255.0') == sorted(ip_to_int('10.%d.1.%d' % (p, i)) for p in range(4) for i in (2, 3))
    assert index.listed(index.every) == sorted(ip_to_int(h.ip) for h in fat_tree(4).hosts)
