"""The section 4.2 Markov chain (controller/letflow/markov.py)."""

import numpy as np
import pytest

from controller.letflow.markov import TwoPathModel, balancing_delta_range, mass_near_ideal

C1, C2 = 40e9, 10e9


def model(delta_s, flows=100, burst=1):
    return TwoPathModel(flows, C1, C2, delta_s, burst)


@pytest.mark.parametrize("delta_s", [1e-9, 30e-6, 500e-6, 1.0])
def test_transition_rows_sum_to_one_and_only_move_one_flow(delta_s):
    p = model(delta_s).transition_matrix()
    assert np.allclose(p.sum(axis=1), 1, atol=1e-12)
    assert (p >= 0).all()
    assert np.count_nonzero(np.triu(p, 2)) == 0 and np.count_nonzero(np.tril(p, -2)) == 0


def test_boundary_states_cannot_leave_the_range():
    p1, p2 = model(300e-6).move_probabilities()
    assert p1[0] == 0 and p2[-1] == 0


def test_tiny_delta_moves_with_probability_c_over_twice_total():
    p1, p2 = model(1e-12).move_probabilities()
    assert p1[50] == pytest.approx(C1 / (2 * (C1 + C2)), rel=1e-6)
    assert p2[50] == pytest.approx(C2 / (2 * (C1 + C2)), rel=1e-6)


def test_slower_flows_are_likelier_to_move():
    # At (50, 50) a path-2 flow gets 0.2 Gbps and a path-1 flow 0.8 Gbps.
    p1, p2 = model(300e-6).move_probabilities()
    per_flow_1 = p1[50] / (C1 / (C1 + C2))
    per_flow_2 = p2[50] / (C2 / (C1 + C2))
    assert per_flow_2 > 1000 * per_flow_1


@pytest.mark.parametrize("delta_s", [300e-6, 500e-6])
def test_moderate_delta_moves_toward_equal_per_flow_rates(delta_s):
    m = model(delta_s)
    dist = m.distribution_after(10**11, 50)
    assert dist.sum() == pytest.approx(1)
    assert abs(int(dist.argmax()) - 80) <= 2
    assert mass_near_ideal(m, dist, 0.05) > 0.99
    n1 = int(m.stationary().argmax())
    assert C1 / n1 == pytest.approx(C2 / (100 - n1), rel=0.15)


def test_huge_delta_means_no_movement():
    dist = model(1.0).distribution_after(10**11, 50)
    assert dist[50] > 0.999


def test_tiny_delta_ignores_rates_and_drifts_away_from_ideal():
    dist = model(1e-9).distribution_after(10**8, 50)
    assert (dist @ np.arange(101)) < 10  # moves go 4:1 towards path 2 regardless of rates


def test_bursts_scale_the_timeout():
    a = model(500e-6, burst=10).transition_matrix()
    b = model(50e-6, burst=1).transition_matrix()
    assert np.allclose(a, b)


def test_distribution_after_zero_steps_is_the_start():
    dist = model(300e-6).distribution_after(0, 37)
    assert dist[37] == 1


def test_balancing_range_shrinks_with_faster_flows():
    deltas = np.logspace(-5, -1.5, 30)
    slow = balancing_delta_range(100, C1, C2, deltas, 10**11, 10)
    fast = balancing_delta_range(10, C1, C2, deltas, 10**11, 10)
    assert None not in slow and None not in fast
    assert fast[1] < slow[1] and fast[0] < slow[0]


@pytest.mark.parametrize("kwargs,problem", [
    (dict(flows=0, c1_bps=C1, c2_bps=C2, delta_s=1e-4), "at least one flow"),
    (dict(flows=10, c1_bps=-1, c2_bps=C2, delta_s=1e-4), "capacities must be positive"),
    (dict(flows=10, c1_bps=C1, c2_bps=C2, delta_s=0), "timeout must be positive"),
    (dict(flows=10, c1_bps=C1, c2_bps=C2, delta_s=1e-4, burst_packets=0.5), "burst size"),
])
def test_bad_parameters_are_named(kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        TwoPathModel(**kwargs)


def test_start_state_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="outside 0..100"):
        model(1e-4).distribution_after(10, 101)
