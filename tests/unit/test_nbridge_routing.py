"""Dimension-order routing and leaf-fault misrouting (seed 003 section 4),
checked by walking the compiled FlowRules hop by hop (topologies.walk over
run_pipeline), never by trusting the generator."""
import collections
import functools
import itertools

import pytest

from controller.openflow.rules import IN_PORT, TABLE_PREFIX
from controller.nbridge.routing import NBridgeRouting, ShieldError
from controller.openflow.diff import ADD_FLOW, DELETE_FLOW, ordered_diff
from topologies.walk import walk
from topologies.nbridge import NBridge

SHAPES = [((4,), 1, 1), ((4, 3), 1, 1), ((3, 4), 2, 2), ((3, 3, 3), 1, 1), ((2, 3, 4), 2, 1)]


def expected_leaf_path(topo, x, y):
    """Leaves a packet visits from LSW(x) to LSW(y): fix coordinates highest dimension first."""
    path, here = [x], x
    for dim in range(topo.n - 1, -1, -1):
        if topo.coord(here, dim) != topo.coord(y, dim):
            here = topo.leaf_on_line(topo.line_of(here, dim), dim, topo.coord(y, dim))
            path.append(here)
    return path


def switches(hops):
    return [switch for switch, _ in hops]


def host_pairs(topo):
    return itertools.permutations([h.name for h in topo.hosts], 2)


@pytest.mark.parametrize('shape,q,h', SHAPES)
def test_every_host_pair_takes_the_dimension_order_path(shape, q, h):
    topo = NBridge(shape, q, h)
    routing = NBridgeRouting(topo)
    roots_used = collections.Counter()
    for src, dst in host_pairs(topo):
        hops = walk(topo, routing.forward, src, dst)
        x, y = topo.leaf_of(src), topo.leaf_of(dst)
        dst_node = topo.node(dst)
        leaves = expected_leaf_path(topo, x, y)
        p = (topo.coord(y, 0) * h + dst_node.coords[-1]) % q  # D-mod-Q on (y_0, host)
        expected = [topo.leaf_name(leaves[0])]
        for here, there in zip(leaves, leaves[1:]):
            (dim,) = [d for d in range(topo.n) if topo.coord(here, d) != topo.coord(there, d)]
            expected += [topo.root_of(here, dim, p), topo.leaf_name(there)]
        assert switches(hops) == expected, (src, dst)
        assert len(hops) == 2 * (len(leaves) - 1) + 1  # TTL drops by this much
        roots_used.update(s for s in expected if topo.node(s).role == 'root')
    assert set(roots_used) == {s.name for s in topo.switches if s.role == 'root'}  # D-mod-Q reaches every root


def test_hosts_of_the_same_leaf_meet_at_the_leaf():
    topo = NBridge((3, 4), 2, 2)
    assert walk(topo, NBridgeRouting(topo).forward, 'nh1_2_0', 'nh1_2_1') == [('nl1_2', 1)]


def test_no_two_rules_of_a_switch_tie():
    """OpenFlow leaves overlapping same-priority matches undefined: every
    pair sharing table and priority must differ in one exactly matched field
    or in a value under the same mask."""
    topo = NBridge((3, 3, 3), 2, 2)
    routing = NBridgeRouting(topo)
    routing.shield((1, 1, 1))
    for switch in topo.switches:
        by_slot = collections.defaultdict(list)
        for rule in routing.rules_for(switch.name):
            by_slot[(rule.table, rule.priority)].append(dict(rule.match))
        for matches in by_slot.values():
            for a, b in itertools.combinations(matches, 2):
                assert any(f in b and a[f] != b[f] and (not isinstance(a[f], tuple) or a[f][1] == b[f][1])
                           for f in a), (switch.name, a, b)


def transit_leaves(topo, x, y):
    return expected_leaf_path(topo, x, y)[1:-1]


def detour_extra_hops(topo, x, y, failed):
    """Extra switch hops of the detour around transit leaf ``failed``, from
    following the strategy by hand.

    One lap (all of 2-D): the failed leaf is the transit where dimension z
    gets fixed; the detour goes to the next leaf in z, down a dimension z-1
    root to the next leaf there, back up dimension z: +4 switch hops, or +2
    when that next leaf already has the destination's coordinate z-1 (the
    detour then skips the normal dimension z-1 hop).

    Two laps (3-D and up): if the failed leaf was reached in dimension z >= 2
    and the destination agrees with it in dimension z-1 as well, the detour
    comes back to the failed leaf's dimension z-1 line one leaf over and
    heads for the failed leaf's dimension z-1 coordinate again, through a
    root attached to the failed leaf that is shielded too. It U-turns the
    packet and a second lap in dimensions z-1/z-2 follows: 2 + 2 for the
    turn, + 4 (or + 2) for the lap = +10, or +8 when the second lap meets
    the destination's coordinate z-2.
    """
    # the failed leaf agrees with x below z and with y from z up
    z = min(d for d in range(topo.n) if topo.coord(x, d) != topo.coord(failed, d))

    def meets(dim):
        return (topo.coord(x, dim) + 1) % topo.k(dim) == topo.coord(y, dim)

    if z >= 2 and topo.coord(y, z - 1) == topo.coord(failed, z - 1):
        return 8 if meets(z - 2) else 10
    return 2 if meets(z - 1) else 4


@functools.lru_cache(maxsize=None)
def detours(shape, q=1, h=1):
    """{(src, dst, failed leaf): (normal hops, detour hops)} for every leaf
    and every pair of hosts not on it (cached: two tests read 3x3x3)."""
    topo = NBridge(shape, q, h)
    routing = NBridgeRouting(topo)
    normal = {pair: walk(topo, routing.forward, *pair) for pair in host_pairs(topo)}
    result = {}
    for failed in topo.all_coords():
        name = topo.leaf_name(failed)
        routing.shield(failed)
        for (src, dst), hops in normal.items():
            if failed in (topo.leaf_of(src), topo.leaf_of(dst)):
                continue
            result[(src, dst, failed)] = (hops, walk(topo, routing.forward, src, dst))  # raises on loop/drop
            assert name not in switches(result[(src, dst, failed)][1]), (src, dst, failed)
        routing.renew(failed)
    return result


@pytest.mark.parametrize('shape,q,h', SHAPES)
def test_detours_around_every_failed_leaf(shape, q, h):
    topo = NBridge(shape, q, h)
    extra = collections.Counter()
    for (src, dst, failed), (normal, detour) in detours(shape, q, h).items():
        x, y = topo.leaf_of(src), topo.leaf_of(dst)
        if failed not in transit_leaves(topo, x, y):
            assert detour == normal, (src, dst, failed)  # a shield moves only transit traffic
            continue
        assert len(detour) - len(normal) == detour_extra_hops(topo, x, y, failed), (src, dst, failed)
        extra[len(detour) - len(normal)] += 1
        if topo.n == 2:
            assert len(detour) - len(normal) in (2, 4)
    if topo.n == 1:
        assert not extra  # one dimension has no transit leaves


def test_pinned_detour_distribution_3x3x3():
    """(src, dst, failed transit leaf) cases by extra switch hops in a 3x3x3
    fabric. Per failed leaf F: reached in dimension 1 (sources (*, !=F1, F0),
    destinations (F2, F1, !=F0)): 12 one-lap cases; reached in dimension 2
    with the destination off F's dimension-1 coordinate (sources (!=F2, F1,
    F0), destinations (F2, !=F1, *)): 12 one-lap cases; reached in dimension 2
    with the destination on it ((F2, F1, !=F0)): 4 two-lap cases. Half of
    each meets the destination's coordinate one hop early: 27 leaves x
    (12 + 12) / 2 = 324 of +2 and of +4, 27 x 4 / 2 = 54 of +8 and of +10."""
    topo = NBridge((3, 3, 3))
    extra = collections.Counter(
        len(detour) - len(normal) for (src, dst, failed), (normal, detour) in detours((3, 3, 3), 1, 1).items()
        if failed in transit_leaves(topo, topo.leaf_of(src), topo.leaf_of(dst)))
    assert extra == {2: 324, 4: 324, 8: 54, 10: 54}


def test_detour_with_u_turn_2d():
    """LSW(3,0) -> LSW(2,1) around LSW(2,0): the dimension-1 root's next leaf
    after 2 is 3, where the packet came from: back out of its ingress port."""
    topo = NBridge((4, 3))
    routing = NBridgeRouting(topo)
    routing.shield((2, 0))
    hops = walk(topo, routing.forward, 'nh3_0_0', 'nh2_1_0')
    assert switches(hops) == ['nl3_0', 'nr1_0_0', 'nl3_0', 'nr0_3_0', 'nl3_1', 'nr1_1_0', 'nl2_1']
    assert hops[1] == ('nr1_0_0', 3)  # out of the port it came in by
    assert any(IN_PORT in r.actions for r in routing.rules_for('nr1_0_0'))


def test_shielded_leafs_own_hosts_stay_reachable_until_power_off():
    topo = NBridge((3, 3, 3))
    routing = NBridgeRouting(topo)
    before = {src: walk(topo, routing.forward, src, 'nh1_1_1_0') for src in ('nh0_0_0_0', 'nh2_1_0_0')}
    routing.shield((1, 1, 1))
    assert {src: walk(topo, routing.forward, src, 'nh1_1_1_0') for src in before} == before


@pytest.mark.parametrize('shape,q,h', SHAPES)
def test_shield_and_renew_are_exactly_reversible(shape, q, h):
    topo = NBridge(shape, q, h)
    routing = NBridgeRouting(topo)
    pristine = {s.name: list(routing.rules_for(s.name)) for s in topo.switches}
    for leaf in topo.all_coords():
        shield = routing.shield(leaf)
        attached = set(routing.attached_roots(leaf))
        # only the attached roots of dimensions >= 1 carry transit traffic to change
        assert set(shield) == {r for r in attached if topo.node(r).coords[0] >= 1}
        for name, ops in shield.items():
            assert ops and {operation for operation, _ in ops} == {ADD_FLOW}
            assert ordered_diff(pristine[name], routing.rules_for(name)) == ops
        assert all(routing.rules_for(s.name) == pristine[s.name]
                   for s in topo.switches if s.name not in shield)
        renew = routing.renew(leaf)
        assert set(renew) == set(shield)
        for name, ops in renew.items():
            assert {rule.match for _, rule in ops} == {rule.match for _, rule in shield[name]}
        assert {s.name: routing.rules_for(s.name) for s in topo.switches} == pristine


def test_shield_state_errors_name_the_problem():
    topo = NBridge((4, 3))
    routing = NBridgeRouting(topo)
    with pytest.raises(ShieldError, match=r'LSW\(1,1\) is not shielded \(shielded: none\)'):
        routing.renew((1, 1))
    routing.shield((1, 1))
    with pytest.raises(ShieldError, match=r'LSW\(1,1\) is already shielded'):
        routing.shield((2, 2))
    with pytest.raises(ShieldError, match=r'LSW\(2,2\) is not shielded \(shielded: LSW\(1,1\)\)'):
        routing.renew((2, 2))
    with pytest.raises(ValueError, match=r'j_1 must be an integer in \[0, 3\]'):
        routing.shield((4, 0))
    with pytest.raises(ValueError, match='needs 2'):
        routing.renew((1,))
    with pytest.raises(ValueError, match='host, not a switch'):
        routing.rules_for('nh0_0_0')
    assert routing.renew((1, 1))


def test_root_misroute_entries_only_where_a_higher_dimension_exists():
    topo = NBridge((4, 3))
    routing = NBridgeRouting(topo)
    in_port_rules = {name: [r for r in routing.rules_for(name) if r.table == TABLE_PREFIX
                            and 'in_port' in r.match_dict] for name in ('nr0_0_0', 'nr1_0_0')}
    assert len(in_port_rules['nr0_0_0']) == 3   # one per leaf of the line: to the next leaf
    assert in_port_rules['nr1_0_0'] == []        # dimension N-1: every packet is normal there


def test_changes_are_applied_specific_first_and_deletes_last():
    topo = NBridge((4, 3))
    routing = NBridgeRouting(topo)
    for change in (routing.shield((2, 0)), routing.renew((2, 0))):
        (ops,) = change.values()
        kinds = [kind for kind, _ in ops]
        assert kinds == sorted(kinds, key=[ADD_FLOW, DELETE_FLOW].index)  # every add before any delete
        priorities = [r.priority for kind, r in ops if kind == ADD_FLOW]
        assert priorities == sorted(priorities, reverse=True)
