"""Flow-size CDFs, CDF files and Poisson arrivals (scripts/workloads/)."""

import numpy as np
import pytest

from scripts.workloads.arrivals import host_flows, poisson_flows, sample_sizes
from scripts.workloads.flow_sizes import (DATA_MINING, WEB_SEARCH, CdfError, FlowSizeCdf, cdf_of, check_load,
                                          load_cdf, workload)


def test_web_search_mean_is_exact():
    # Point mass .15 at 10 KB, then uniform within each segment.
    expected = 10000 * .15 + sum(
        (pb - pa) * (sa + sb) / 2 for (sa, pa), (sb, pb) in zip(WEB_SEARCH.points,
                                                               WEB_SEARCH.points[1:]))
    assert WEB_SEARCH.mean_bytes() == pytest.approx(expected)
    assert WEB_SEARCH.mean_bytes() == pytest.approx(1_712_000)


@pytest.mark.parametrize("cdf", [WEB_SEARCH, DATA_MINING])
def test_samples_follow_the_cdf(cdf):
    sizes = sample_sizes(cdf, np.random.default_rng(1), 200_000)
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


def test_names_with_and_without_hyphen():
    assert workload("websearch") is WEB_SEARCH and workload("data-mining") is DATA_MINING
    assert cdf_of("datamining") is DATA_MINING


HKUST_DCTCP = """# DCTCP web search, as HKUST TrafficGenerator ships it
0     0
10000 0.15
20000 0.2
30000 0.3
50000 0.4
80000 0.53
200000 0.6
1000000 0.7
2000000 0.8
5000000 0.9
10000000 0.97
30000000 1
"""


def test_a_cdf_file_in_the_generators_format_loads(tmp_path):
    path = tmp_path / "dctcp.txt"
    path.write_text(HKUST_DCTCP)
    cdf = cdf_of(str(path))
    assert cdf.points[0] == (0, 0) and cdf.points[-1] == (3e7, 1)
    # uniform below 10 KB instead of a point mass there: 750 bytes less on average
    assert cdf.mean_bytes() == pytest.approx(WEB_SEARCH.mean_bytes() - .15 * 5000)
    sizes = sample_sizes(cdf, np.random.default_rng(4), 100_000)
    assert np.mean(sizes <= 5000) == pytest.approx(.075, abs=0.005)


@pytest.mark.parametrize("text,problem", [
    ("100 0.5\n200 x\n", "line 2: '200 x' is not 'SIZE_BYTES CUMULATIVE_PROBABILITY'"),
    ("100 0.5\n200 0.7 9\n300 1\n", "line 2: '200 0.7 9' is not"),
    ("# sizes\n100 0.5\n\n50 1\n", "line 4: '50 1': sizes must increase (the point before is 100 bytes)"),
    ("100 0.5\n200 0.4\n300 1\n", "line 2: '200 0.4': probabilities must not decrease"),
    ("100 1.5\n", "line 1: '100 1.5': a probability must be in [0, 1]"),
    ("-5 0.1\n10 1\n", "line 1: '-5 0.1': a size must be positive"),
    ("100 0.5\n200 0.9\n", "must end at probability 1"),
    ("", "needs at least two points"),
])
def test_a_bad_cdf_file_is_named_with_its_line(tmp_path, text, problem):
    path = tmp_path / "bad.cdf"
    path.write_text(text)
    with pytest.raises(CdfError) as error:
        load_cdf(str(path))
    assert str(path) in str(error.value) and problem in str(error.value)


def test_a_missing_cdf_file_or_unknown_name():
    with pytest.raises(CdfError, match="cannot read CDF file /nonexistent/x.cdf"):
        cdf_of("/nonexistent/x.cdf")
    with pytest.raises(ValueError, match="unknown workload 'webserch'"):
        cdf_of("webserch")


@pytest.mark.parametrize("load", [0, -0.1, 1.01, 2])
def test_a_load_outside_0_1_is_refused(load):
    with pytest.raises(ValueError, match=r"load must be in \(0, 1\]"):
        check_load(load)
    with pytest.raises(ValueError, match=r"load must be in \(0, 1\]"):
        host_flows(WEB_SEARCH, load, 1e9, 1, 4, lambda i, rng: 0, np.random.default_rng(0))


def test_host_flows_offer_the_load_of_every_host():
    rng = np.random.default_rng(6)
    load, link, seconds, hosts = 0.4, 10e9, 20.0, 8
    flows = host_flows(WEB_SEARCH, load, link, seconds, hosts, lambda i, rng: (i + 1) % hosts, rng)
    per_host = load * link * seconds / (8 * WEB_SEARCH.mean_bytes())
    for host in range(hosts):
        mine = [f for f in flows if f.src_host == host]
        assert len(mine) == pytest.approx(per_host, rel=0.15)
        assert all(f.dst_host == (host + 1) % hosts for f in mine)
    assert check_load(1) == 1
