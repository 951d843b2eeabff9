"""Max-min fair rates by progressive filling (scripts.flow.max_min): hand
computed cases, and the same rates as the controller's own water-filling
(controller.fattree.fair_share) on random paths."""
import random

import numpy
import pytest

from controller.fattree import fair_share
from scripts.flow.max_min import incidence_matrix, max_min_rates


def rates(paths, capacity):
    return max_min_rates(incidence_matrix(paths, len(capacity)), capacity)


def test_two_links_shared_by_a_long_flow():
    # A crosses both links; B only the first, C only the second: 1/2 each.
    assert rates([[0, 1], [0], [1]], [1.0, 1.0]) == pytest.approx([0.5, 0.5, 0.5])


def test_a_flow_frozen_early_leaves_its_share_to_others():
    # Link 0 (capacity 1) splits A and B at 0.5; C then takes all link 1 leaves (2 - 0.5).
    assert rates([[0, 1], [0], [1]], [1.0, 2.0]) == pytest.approx([0.5, 0.5, 1.5])


def test_three_levels():
    # Link 0 (cap 3): A, B, C; link 1 (cap 1): C, D; link 2 (cap 10): D, E.
    # Link 1 first: C = D = 0.5; then link 0: A = B = (3 - 0.5) / 2; then E = 10 - 0.5.
    assert rates([[0], [0], [0, 1], [1, 2], [2]], [3.0, 1.0, 10.0]) == \
        pytest.approx([1.25, 1.25, 0.5, 0.5, 9.5])


def test_a_flow_without_resources_gets_nothing():
    assert rates([[0], []], [4.0]) == pytest.approx([4.0, 0.0])


def test_no_flows():
    assert len(rates([], [1.0])) == 0


@pytest.mark.parametrize('seed', range(5))
def test_same_rates_as_the_controllers_water_filling(seed):
    draw = random.Random(seed)
    n_links = 30
    paths = [draw.sample(range(n_links), draw.randint(1, 5)) for _ in range(80)]
    expected = fair_share.max_min_rates([set(p) for p in paths])
    assert rates(paths, numpy.ones(n_links)) == pytest.approx(expected, abs=1e-9)
