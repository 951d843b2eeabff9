"""The C++ flowlet table (scripts/sim/ns3/flowlet_table.h) under a controlled clock."""

import subprocess

import numpy as np
import pytest
from scipy import stats

from scripts.letflow.ns3 import build

DELTA_NS = 1000


@pytest.fixture(scope="module")
def trace_tool():
    try:
        return build.trace_tool()
    except build.BuildError as error:  # setup builds it: its absence is a failure, not a skip
        pytest.fail(str(error), pytrace=False)


def run_trace(tool, packets, weights=(1, 1), table_size=1024, seed=7, delta_ns=DELTA_NS):
    """packets: [(time_ns, hash)] -> [(port, new_flowlet)]"""
    text = f"{table_size} {delta_ns} {seed} {' '.join(map(str, weights))}\n"
    text += "".join(f"{t} {h}\n" for t, h in packets)
    done = subprocess.run([str(tool)], input=text, capture_output=True, text=True, check=True, timeout=120)
    return [(int(p), n == "1") for p, n in (line.split() for line in done.stdout.splitlines())]


def test_packets_inside_a_flowlet_keep_the_port(trace_tool):
    packets = [(t, 42) for t in range(0, 30 * DELTA_NS, DELTA_NS // 2)]
    out = run_trace(trace_tool, packets, weights=(1, 1, 1, 1))
    assert out[0][1] is True
    assert all(not new for _, new in out[1:])
    assert len({port for port, _ in out}) == 1


@pytest.mark.parametrize("first,second,expect_new", [
    (999, 1999, False),    # gap = delta, one checker tick (age bit only)
    (999, 2000, True),     # gap just over delta spanning two ticks: expired
    (1001, 2999, False),   # gap just under 2*delta, one tick in between
    (1001, 3000, True),    # second tick reached
    (0, 1500, False),
])
def test_flowlet_ends_after_delta_to_two_delta_of_silence(trace_tool, first, second, expect_new):
    out = run_trace(trace_tool, [(first, 5), (second, 5)])
    assert out[1][1] is expect_new


def test_timeout_bounds_over_random_gaps(trace_tool):
    rng = np.random.default_rng(3)
    gaps = rng.integers(1, 3 * DELTA_NS, 2000)
    times = np.cumsum(gaps)
    out = run_trace(trace_tool, [(int(t), 9) for t in times])
    for prev, now, gap, (_, new) in zip(times, times[1:], gaps[1:], out[1:]):
        ticks = now // DELTA_NS - prev // DELTA_NS  # checker runs in (prev, now]
        assert new == (ticks >= 2)
        if gap < DELTA_NS:
            assert not new
        if gap >= 2 * DELTA_NS:
            assert new


def test_new_flowlet_after_timeout_may_change_port(trace_tool):
    # One packet every 3 delta: each is a new flowlet with a fresh random choice.
    out = run_trace(trace_tool, [(3 * DELTA_NS * i, 11) for i in range(200)])
    assert all(new for _, new in out)
    assert {port for port, _ in out} == {0, 1}


def test_colliding_flows_share_an_entry_like_hardware(trace_tool):
    size = 64
    a, b, other = 3, 3 + size, 4  # a and b hash to the same index
    out = run_trace(trace_tool, [(0, a), (100, b), (200, other)]
                    + [(t, b) for t in range(500, 6000, 500)] + [(6100, a)],
                    weights=(1, 1, 1, 1, 1, 1, 1, 1), table_size=size)
    assert out[0][1] and not out[1][1]         # b joins a's flowlet, no new choice
    assert out[1][0] == out[0][0]
    assert out[2][1]                           # a different index is its own flowlet
    assert not out[-1][1]                      # b's packets kept a's entry alive
    assert out[-1][0] == out[0][0]


def test_choice_frequencies_match_weights(trace_tool):
    weights = (1, 3, 6)
    count = 30000
    out = run_trace(trace_tool, [(0, h) for h in range(count)], weights=weights,
                    table_size=1 << 20, seed=12345)
    assert all(new for _, new in out)
    observed = np.bincount([p for p, _ in out], minlength=3)
    expected = np.array(weights) / sum(weights) * count
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_zero_weight_port_is_never_chosen(trace_tool):
    out = run_trace(trace_tool, [(0, h) for h in range(2000)], weights=(0, 1), table_size=4096)
    assert {p for p, _ in out} == {1}


@pytest.mark.parametrize("header,problem", [
    ("1024 1000 1 0 0", "weights sum to zero"),
    ("1024 1000 1 1 -1", "negative"),
    ("0 1000 1 1 1", "table size must be positive"),
    ("1024 0 1 1 1", "delta_ns(>0)"),
])
def test_bad_configuration_is_rejected_by_name(trace_tool, header, problem):
    done = subprocess.run([str(trace_tool)], input=header + "\n0 1\n", capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert problem in done.stderr
