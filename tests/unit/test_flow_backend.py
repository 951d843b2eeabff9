"""The flow-level backend end to end at k=4 (scripts.flow.bisection_backend.run_one)."""
import pytest

from controller.fattree.fair_share import max_min_rates, path_links
from controller.fattree.twolevel import all_tables
from scripts.flow.bisection_backend import flow_ports, run_one
from topologies.fattree import FatTree
from topologies.walk import walk

CONFIG = {'k': 4, 'bw': 1000.0, 'duration': 3.0, 'omit': 2.0, 'period_s': 1.0}
# Two hosts of e0_0 sending to host ID 2 of other pods: their two-level
# paths share e0_0's upward port (the suffix picks it), so they split it.
COLLIDING = [['h0_0_2', 'h1_0_2'], ['h0_0_3', 'h2_0_2']]
PERMUTATION = [['h0_0_2', 'h1_0_2'], ['h0_0_3', 'h2_0_2'], ['h1_0_2', 'h3_1_3'], ['h1_0_3', 'h0_1_2'],
               ['h2_0_2', 'h0_0_3'], ['h3_1_3', 'h0_0_2'], ['h0_1_2', 'h2_1_2'], ['h2_1_2', 'h1_0_3']]


def run(scheme, flows, **config):
    return run_one(dict(CONFIG, **config), {'scheme': scheme, 'pattern': 'test', 'seed': 7, 'rep': 0,
                                            'flows': flows}, lambda line: None)


def test_colliding_flows_split_a_link_until_the_scheduler_moves_one():
    twolevel = run('twolevel', COLLIDING)
    assert [f['mbps'] for f in twolevel['flows']] == [500.0, 500.0]
    assert twolevel['simulation']['backend'] == 'flow'
    scheduled = run('scheduler', COLLIDING)  # placed in the round at 1 s, measured from 2 s
    assert [f['mbps'] for f in scheduled['flows']] == [1000.0, 1000.0]
    assert scheduled['aggregate_mbps'] == 2000.0
    assert scheduled['simulation']['rounds'] == 4  # polls at 1, 2, 3 and 4 s of a 5 s run
    assert scheduled['simulation']['packet_ins'] == 2


def test_the_measured_mean_counts_a_move_inside_the_interval():
    # Measured from 0.5 s: 0.5 s at 500 Mbit/s before the move at 1 s (plus
    # the 1 ms control delay), then 1000 Mbit/s until 3.5 s.
    scheduled = run('scheduler', COLLIDING, omit=0.5)
    assert scheduled['flows'][0]['mbps'] == pytest.approx((0.501 * 500 + 2.499 * 1000) / 3, abs=0.01)


def test_nonblocking_gives_every_flow_of_a_permutation_the_link():
    record = run('nonblocking', PERMUTATION)
    assert [f['mbps'] for f in record['flows']] == [1000.0] * len(PERMUTATION)
    assert [(f['src'], f['dst']) for f in record['flows']] == [tuple(p) for p in PERMUTATION]


def test_twolevel_rates_are_max_min_over_the_two_level_paths():
    topo, tables = FatTree(4), all_tables(FatTree(4))
    paths = [path_links(topo, s, walk(topo, lambda sw, _, ip: tables[sw].lookup(ip), s, d))
             for s, d in PERMUTATION]
    record = run('twolevel', PERMUTATION)
    assert [f['mbps'] for f in record['flows']] == pytest.approx([1000.0 * r for r in max_min_rates(paths)])


def test_dynamic_schemes_do_no_worse_than_two_level():
    twolevel = run('twolevel', PERMUTATION)['aggregate_mbps']
    for scheme in ('scheduler', 'classifier'):
        assert run(scheme, PERMUTATION)['aggregate_mbps'] >= twolevel - 1e-6
    assert run('ecmp', PERMUTATION)['aggregate_mbps'] > 0


def test_source_ports_are_the_packet_level_backends():
    starts, dports = flow_ports([('a', 'b'), ('c', 'b'), ('b', 'a')], 3)
    assert dports == [5201, 5202, 5201]
    assert all(32768 <= port <= 60999 for _, port in starts)
    assert flow_ports([('a', 'b')], 3)[0] == starts[:1]


def test_letflow_is_refused_with_the_reason():
    with pytest.raises(ValueError, match='flowlets'):
        run('letflow', COLLIDING)
