"""Kevin's compiled rules in real userspace OVS bridges (ToRs and circuit
spines wired by patch ports), traced hop by hop with ofproto/trace against
the greedy model, before and after a DA link."""
import itertools
import re
import subprocess

import pytest

from controller.kevin.routing import KevinRouting
from controller.kevin.rules import (
    DISTDA_UDP_PORT, circuit_rule, spine_rules, static_circuits, tor_rules)
from controller.openflow.diff import ADD_FLOW, DELETE_FLOW, ordered_diff
from topologies.kevin import Kevin
from tests.ovs.ovs_fabric import OvsFabric


def A(text):
    return tuple(int(c) for c in text)


def install_all(fabric, kevin, routing, static):
    for v in kevin.addresses:
        rules, groups = tor_rules(kevin, routing.tables[v], static.tables[v])
        fabric.install(kevin.tor(v), rules, groups)
    for i in range(kevin.k):
        circuits = (static_circuits(kevin, i) if i < kevin.k_s else
                    {s: t for (j, s), t in routing.da_tx.items() if j == i - kevin.k_s})
        fabric.install(kevin.spine_name(i), spine_rules(kevin, circuits))


def tor_path(kevin, hops):
    return [kevin.node(sw).coords for sw, _ in hops if kevin.node(sw).role == 'tor']


@pytest.fixture(scope='module')
def db23(require_ovs):
    kevin = Kevin(8, 2, 1)
    with OvsFabric(kevin, 'o') as fabric:
        yield kevin, fabric


def trace_paths(kevin, fabric, routing, src, dst):
    """Every ToR path ofproto/trace finds from host src to host dst, with the
    TTL left. A select group ends a trace (OVS picks its bucket by dp_hash
    after recirculation, which the trace cannot follow), so each of the
    group's ports is traced on from the spine bridge behind it."""
    results, pending = [], [(fabric.trace(src.name, dst.name), [])]
    while pending:
        (hops, ttl), before = pending.pop()
        path = before + tor_path(kevin, hops)
        switch, port = hops[-1]
        if port is not None:
            results.append((path, ttl, hops[-1]))
            continue
        entry = routing.tables[kevin.node(switch).coords].lookup(dst.coords[:3])
        assert len(entry.ports) > 1, (src.name, dst.name, hops)  # stopped at a group
        for out in sorted(entry.ports):
            spine, spine_port = kevin.peer(switch, out)
            flow = 'in_port=%s,dl_src=%s,dl_dst=%s,tcp,nw_src=%s,nw_dst=%s,nw_ttl=%d' % (
                fabric.port_name(spine, spine_port), src.mac, dst.mac, src.ip, dst.ip, ttl)
            out_text = subprocess.run(['ovs-appctl', '--timeout=60', 'ofproto/trace', fabric.bridge(spine), flow],
                                      check=True, capture_output=True, text=True, timeout=120).stdout
            pending.append((_parse_trace(kevin, fabric, out_text, ttl), path))
    return results


def _parse_trace(kevin, fabric, text, ttl):
    hops = []
    for line in text.splitlines():
        bridge = re.match(r'^bridge\("(.+)"\)', line)
        if bridge:
            hops.append([fabric.bridges[bridge.group(1)], None])
        elif re.match(r'^\s+output:(\d+)', line):
            hops[-1][1] = int(line.split(':')[1]) - 1
        elif re.match(r'^\s+IN_PORT', line):
            hops[-1][1] = 'in_port'
        elif re.match(r'^\s+dec_ttl', line):
            ttl -= 1
    return [tuple(h) for h in hops], ttl


def check_all_pairs(kevin, fabric, routing):
    for src, dst in itertools.permutations(kevin.hosts, 2):
        expected = routing.paths(src.coords[:3], dst.coords[:3])
        found = trace_paths(kevin, fabric, routing, src, dst)
        assert sorted(p for p, _, _ in found) == sorted(expected), (src.name, dst.name)
        for path, ttl, last in found:
            assert last == (kevin.tor(dst.coords[:3]), kevin.host_port(0))
            assert ttl == 64 - len(path)  # one dec_ttl per ToR, none on spines


def test_every_pair_static_then_with_da_link_then_removed(db23):
    kevin, fabric = db23
    static = KevinRouting(kevin)
    routing = KevinRouting(kevin)
    install_all(fabric, kevin, routing, static)
    check_all_pairs(kevin, fabric, routing)
    hops, _ = fabric.trace('kvh011_0', 'kvh001_0')
    assert tor_path(kevin, hops) == [A('011'), A('110'), A('100'), A('001')]

    routing.add_da_link(0, A('011'), A('100'))
    install_all(fabric, kevin, routing, static)
    check_all_pairs(kevin, fabric, routing)
    hops, ttl = fabric.trace('kvh011_0', 'kvh001_0')
    assert tor_path(kevin, hops) == [A('011'), A('100'), A('001')] and ttl == 61
    assert ('kvd0', 4) in hops

    # DistDA messages ignore the DA link: static-only table 3.
    agent = kevin.node(kevin.tor(A('001'))).ip
    hops, _ = fabric.trace('kvh011_0', 'kvh001_0', raw='udp,nw_src=%s,nw_dst=%s,nw_ttl=64,'
                           'udp_src=%d,udp_dst=%d' % (kevin.node(kevin.tor(A('011'))).ip, agent,
                                                    DISTDA_UDP_PORT, DISTDA_UDP_PORT))
    assert tor_path(kevin, hops) == [A('011'), A('110'), A('100'), A('001')]
    assert hops[-1] == ('kvt001', None)  # punted to the controller at the destination

    routing.remove_da_link(0, A('011'))
    install_all(fabric, kevin, routing, static)
    check_all_pairs(kevin, fabric, routing)


def test_hairpin_through_the_same_spine_is_forwarded(db23):
    kevin, fabric = db23
    static = KevinRouting(kevin)
    install_all(fabric, kevin, static, static)
    # Find a ToR path u -> v -> w whose two hops use the same spine port at v.
    for src, dst in itertools.permutations(kevin.addresses, 2):
        hops, _ = fabric.trace('kvh%s_0' % ''.join(map(str, src)), 'kvh%s_0' % ''.join(map(str, dst)))
        if any(port == 'in_port' for _, port in hops):
            break
    else:
        pytest.fail('no same-spine two-hop route in DB(2,3): the hairpin rules are untested')
    assert tor_path(kevin, hops) == static.paths(src, dst)[0]


def test_rule_diff_touches_only_the_source_tor():
    kevin = Kevin(8, 2, 1)
    static = KevinRouting(kevin)
    routing = KevinRouting(kevin)
    before = {v: tor_rules(kevin, routing.tables[v], static.tables[v]) for v in kevin.addresses}
    routing.add_da_link(0, A('011'), A('100'))
    after = {v: tor_rules(kevin, routing.tables[v], static.tables[v]) for v in kevin.addresses}

    def diff(v):
        (old_rules, old_groups), (new_rules, new_groups) = before[v], after[v]
        return ordered_diff(old_rules, new_rules, old_groups, new_groups)
    changed = [v for v in kevin.addresses if diff(v)]
    assert changed == [A('011')]
    ops = diff(A('011'))
    added = [item for operation, item in ops if operation == ADD_FLOW]
    assert len(added) >= 2 and {item.table for operation, item in ops
                                if operation in (ADD_FLOW, DELETE_FLOW)} == {1, 3}  # LPM + group egress
    assert circuit_rule(kevin, A('011'), A('100')).match == (('in_port', 4),)
