"""The controller-rounds benchmark's flows and rendering."""
from scripts.flow.benchmarks.controller_rounds import markdown, random_permutation
from topologies.fattree import FatTree


def test_every_host_sends_one_flow_and_receives_one():
    for seed in range(20):
        flows = random_permutation(4, seed)
        hosts = sorted(h.name for h in FatTree(4).hosts)
        assert sorted(s for s, _ in flows) == hosts and sorted(d for _, d in flows) == hosts
        assert all(s != d for s, d in flows)
    assert random_permutation(4, 3) == random_permutation(4, 3)
    assert random_permutation(4, 3) != random_permutation(4, 4)


def test_rendering_names_skipped_cases_and_shares_of_the_reference():
    case = {'k': 16, 'flows': 1024, 'aggregate_mbps': 960.0, 'first_round_cpu_s': 2.5,
            'max_later_round_cpu_s': 0.25, 'rounds_over_period': 1, 'wall_s': 12.0}
    text = markdown({'cases': [dict(case, scheme='nonblocking', aggregate_mbps=1000.0),
                               dict(case, scheme='scheduler'),
                               {'k': 32, 'scheme': 'scheduler', 'skipped': 'a round at k=16 took 70 CPU s'}]})
    assert '| 16 | 1024 | scheduler | 2.500 | 0.250 | 1 | 12.0 | 96.0 |' in text
    assert 'skipped: a round at k=16 took 70 CPU s' in text
