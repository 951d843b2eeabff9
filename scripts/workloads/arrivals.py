"""Flows drawn from a flow-size CDF (scripts/workloads/flow_sizes.py) with
Poisson arrivals: the flows of the workload experiment and of the LetFlow
simulator."""
from dataclasses import dataclass
from typing import Callable, List

import numpy as np

from scripts.workloads.flow_sizes import FlowSizeCdf, check_load


def sample_sizes(cdf: FlowSizeCdf, rng: np.random.Generator, count: int) -> np.ndarray:
    """`count` flow sizes of `cdf` in whole bytes, by inverting the CDF."""
    sizes = np.array([s for s, _ in cdf.points], dtype=float)
    probs = np.array([p for _, p in cdf.points], dtype=float)
    u = rng.random(count)
    drawn = np.interp(u, probs, sizes)  # u below probs[0] maps to sizes[0]
    return np.maximum(1, np.round(drawn)).astype(np.int64)


@dataclass(frozen=True)
class Flow:
    start_s: float
    bytes: int
    src_host: int
    dst_host: int


def _poisson_starts(arrivals_per_s: float, duration_s: float, rng: np.random.Generator) -> List[float]:
    starts: List[float] = []
    t = rng.exponential(1 / arrivals_per_s)
    while t < duration_s:
        starts.append(t)
        t += rng.exponential(1 / arrivals_per_s)
    return starts


def poisson_flows(cdf: FlowSizeCdf, rate_bps: float, duration_s: float, hosts_src: int,
                  hosts_dst: int, rng: np.random.Generator) -> List[Flow]:
    """Flows with Poisson arrivals offering `rate_bps` on average over `duration_s`.

    The arrival rate is rate / (8 * mean flow size); sources and destinations
    are drawn uniformly from the given host counts.
    """
    if rate_bps <= 0:
        raise ValueError(f"offered rate must be positive, got {rate_bps} bit/s")
    if duration_s <= 0:
        raise ValueError(f"duration must be positive, got {duration_s} s")
    if hosts_src < 1 or hosts_dst < 1:
        raise ValueError("need at least one source and one destination host")
    starts = _poisson_starts(rate_bps / (8 * cdf.mean_bytes()), duration_s, rng)
    sizes = sample_sizes(cdf, rng, len(starts))
    src = rng.integers(0, hosts_src, len(starts))
    dst = rng.integers(0, hosts_dst, len(starts))
    return [Flow(float(s), int(b), int(a), int(d)) for s, b, a, d in zip(starts, sizes, src, dst)]


def host_flows(cdf: FlowSizeCdf, load: float, link_bps: float, duration_s: float, hosts: int,
               peer_of: Callable[[int, np.random.Generator], int], rng: np.random.Generator) -> List[Flow]:
    """Every host sends flows with Poisson arrivals of its own, offering
    `load` of its `link_bps` over `duration_s`; each flow goes to
    `peer_of(host, rng)`. All hosts' flows in start order."""
    check_load(load)
    if link_bps <= 0 or duration_s <= 0 or hosts < 1:
        raise ValueError("link rate, duration and host count must be positive")
    flows = []
    for host in range(hosts):
        starts = _poisson_starts(load * link_bps / (8 * cdf.mean_bytes()), duration_s, rng)
        sizes = sample_sizes(cdf, rng, len(starts))
        flows += [Flow(float(s), int(b), host, int(peer_of(host, rng))) for s, b in zip(starts, sizes)]
    return sorted(flows, key=lambda f: f.start_s)
