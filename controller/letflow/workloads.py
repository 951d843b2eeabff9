"""Flow-size distributions and Poisson flow arrivals for the LetFlow experiments."""

from dataclasses import dataclass
from typing import List, Sequence, Tuple

import numpy as np


@dataclass(frozen=True)
class FlowSizeCdf:
    """An empirical flow-size CDF given as (bytes, cumulative probability) points.

    Between points the CDF is linear in bytes (the usual reading of these
    tables); the probability of the first point is a point mass at its size,
    since the tables say nothing about smaller flows.
    """

    name: str
    points: Tuple[Tuple[float, float], ...]

    def __post_init__(self):
        sizes = [s for s, _ in self.points]
        probs = [p for _, p in self.points]
        if len(self.points) < 2:
            raise ValueError(f"CDF {self.name!r} needs at least two points")
        if any(s <= 0 for s in sizes) or any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise ValueError(f"CDF {self.name!r}: sizes must be positive and increasing")
        if any(b < a for a, b in zip(probs, probs[1:])) or not 0 < probs[0] <= 1:
            raise ValueError(f"CDF {self.name!r}: probabilities must be non-decreasing in (0, 1]")
        if probs[-1] != 1:
            raise ValueError(f"CDF {self.name!r} must end at probability 1, not {probs[-1]}")

    def mean_bytes(self) -> float:
        (s0, p0), rest = self.points[0], self.points[1:]
        mean = s0 * p0
        for (sa, pa), (sb, pb) in zip(self.points, rest):
            mean += (pb - pa) * (sa + sb) / 2  # uniform within a linear segment
        return mean

    def scaled(self, factor: float) -> "FlowSizeCdf":
        """The same distribution with every size multiplied by `factor`.

        Scaling flow sizes by the factor that scales link rates keeps every
        time scale (flow durations at line rate, arrivals per second at a given
        load) at the original's, with `factor` times fewer packets to simulate.
        """
        if factor <= 0:
            raise ValueError(f"scale factor must be positive, got {factor}")
        if factor == 1:
            return self
        return FlowSizeCdf(f"{self.name} x{factor:g}",
                           tuple((s * factor, p) for s, p in self.points))

    def sample(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """`count` flow sizes in whole bytes, by inverting the CDF."""
        sizes = np.array([s for s, _ in self.points], dtype=float)
        probs = np.array([p for _, p in self.points], dtype=float)
        u = rng.random(count)
        drawn = np.interp(u, probs, sizes)  # u below probs[0] maps to sizes[0]
        return np.maximum(1, np.round(drawn)).astype(np.int64)


WEB_SEARCH = FlowSizeCdf("web-search", (
    (10000, .15), (20000, .2), (30000, .3), (50000, .4), (80000, .53), (200000, .6),
    (1e6, .7), (2e6, .8), (5e6, .9), (1e7, .97), (3e7, 1)))

DATA_MINING = FlowSizeCdf("data-mining", (
    (180, .1), (216, .2), (560, .3), (900, .4), (1100, .5), (1870, .6), (3160, .7),
    (1e4, .8), (4e5, .9), (3.16e6, .95), (1e8, .98), (1e9, 1)))

WORKLOADS = {cdf.name: cdf for cdf in (WEB_SEARCH, DATA_MINING)}


def workload(name: str) -> FlowSizeCdf:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ValueError(f"unknown workload {name!r}; choose from {sorted(WORKLOADS)}") from None


@dataclass(frozen=True)
class Flow:
    start_s: float
    bytes: int
    src_host: int
    dst_host: int


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
    arrivals_per_s = rate_bps / (8 * cdf.mean_bytes())
    starts: List[float] = []
    t = rng.exponential(1 / arrivals_per_s)
    while t < duration_s:
        starts.append(t)
        t += rng.exponential(1 / arrivals_per_s)
    sizes = cdf.sample(rng, len(starts))
    src = rng.integers(0, hosts_src, len(starts))
    dst = rng.integers(0, hosts_dst, len(starts))
    return [Flow(float(s), int(b), int(a), int(d)) for s, b, a, d in zip(starts, sizes, src, dst)]


def offered_bytes(flows: Sequence[Flow]) -> int:
    return sum(f.bytes for f in flows)
