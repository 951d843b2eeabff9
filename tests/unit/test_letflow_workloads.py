"""Flow-size CDFs and Poisson arrivals (controller/letflow/workloads.py)."""

import numpy as np
import pytest

from controller.letflow.workloads import (DATA_MINING, WEB_SEARCH, FlowSizeCdf, poisson_flows,
                                          workload)


def test_web_search_mean_is_exact():
    # Point mass .15 at 10 KB, then uniform within each segment.
    expected = 10000 * .15 + sum(
        (pb - pa) * (sa + sb) / 2 for (sa, pa), (sb, pb) in zip(WEB_SEARCH.points,
                                                               WEB_SEARCH.points[1:]))
    assert WEB_SEARCH.mean_bytes() == pytest.approx(expected)
    assert WEB_SEARCH.mean_bytes() == pytest.approx(1_712_000)


@pytest.mark.parametrize("cdf", [WEB_SEARCH, DATA_MINING])
def test_samples_follow_the_cdf(cdf):
    sizes = cdf.sample(np.random.default_rng(1), 200_000)
    assert sizes.min() >= cdf.points[0][0] and sizes.max() <= cdf.points[-1][0]
    for size, prob in cdf.points[:-1]:
        assert np.mean(sizes <= size) == pytest.approx(prob, abs=0.005)


def test_poisson_arrivals_offer_the_requested_rate():
    rng = np.random.default_rng(2)
    rate, duration = 10e9, 20.0
    flows = poisson_flows(WEB_SEARCH, rate, duration, 16, 16, rng)
    expected = rate * duration / (8 * WEB_SEARCH.mean_bytes())
    assert len(flows) == pytest.approx(expected, rel=0.05)
    starts = np.array([f.start_s for f in flows])
    assert (np.diff(starts) > 0).all() and starts.max() < duration
    gaps = np.diff(starts)
    assert np.std(gaps) / np.mean(gaps) == pytest.approx(1, abs=0.05)  # exponential
    assert {f.src_host for f in flows} == set(range(16))


def test_unknown_workload_is_named():
    with pytest.raises(ValueError, match="unknown workload 'bogus'"):
        workload("bogus")


@pytest.mark.parametrize("rate,duration,problem", [
    (0, 1, "offered rate must be positive"), (1e9, -1, "duration must be positive")])
def test_bad_arrival_parameters(rate, duration, problem):
    with pytest.raises(ValueError, match=problem):
        poisson_flows(WEB_SEARCH, rate, duration, 1, 1, np.random.default_rng(0))


@pytest.mark.parametrize("points,problem", [
    (((10, .5), (5, 1)), "increasing"),
    (((10, .5), (20, .4), (30, 1)), "non-decreasing"),
    (((10, .5), (20, .9)), "must end at probability 1"),
])
def test_malformed_cdfs_are_rejected(points, problem):
    with pytest.raises(ValueError, match=problem):
        FlowSizeCdf("bad", points)


def test_scaled_cdf_keeps_probabilities_and_time_scales():
    # Sizes x0.1 with link rates x0.1: same flow durations, and at the same
    # load the same arrivals per second (rate / mean size is unchanged).
    small = WEB_SEARCH.scaled(0.1)
    assert [p for _, p in small.points] == [p for _, p in WEB_SEARCH.points]
    assert small.mean_bytes() == pytest.approx(WEB_SEARCH.mean_bytes() / 10)
    full = poisson_flows(WEB_SEARCH, 10e9, 2.0, 4, 4, np.random.default_rng(3))
    tenth = poisson_flows(small, 1e9, 2.0, 4, 4, np.random.default_rng(3))
    assert len(tenth) == len(full)
    assert WEB_SEARCH.scaled(1) is WEB_SEARCH
    with pytest.raises(ValueError, match="scale factor must be positive"):
        WEB_SEARCH.scaled(0)
