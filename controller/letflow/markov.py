"""The Markov chain of section 4.2 of the LetFlow paper, computed exactly.

n flows share two paths of capacities C1 and C2; the state is n1, the number
of flows on path 1 (n2 = n - n1).  One step is one arrival of a packet (or,
with burst size b > 1, of a burst of b packets).  Flows on a path share it
equally, so a flow on path j sends packets at rate lambda_j = C_j / n_j, and
the next arrival comes from path j with probability C_j / (C1 + C2) (only
paths that carry flows send).  Arrivals are Poisson, so that packet starts a
new flowlet when its flow's gap exceeds Delta, with probability
exp(-lambda_j * Delta / b), and the new flowlet picks each path with
probability 1/2: a move happens half of those times.  For Delta -> 0 the move
probability tends to C_j / (2 (C1 + C2)); for Delta -> infinity to 0.
"""

from dataclasses import dataclass

import numpy as np

DEFAULT_PACKET_BYTES = 1500


@dataclass(frozen=True)
class TwoPathModel:
    flows: int
    c1_bps: float
    c2_bps: float
    delta_s: float
    burst_packets: float = 1
    packet_bytes: int = DEFAULT_PACKET_BYTES

    def __post_init__(self):
        if self.flows < 1:
            raise ValueError(f"need at least one flow, got {self.flows}")
        if self.c1_bps <= 0 or self.c2_bps <= 0:
            raise ValueError("path capacities must be positive")
        if self.delta_s <= 0:
            raise ValueError(f"flowlet timeout must be positive, got {self.delta_s}")
        if self.burst_packets < 1:
            raise ValueError(f"burst size must be at least one packet, got {self.burst_packets}")
        if self.packet_bytes <= 0:
            raise ValueError("packet size must be positive")

    @property
    def ideal_n1(self) -> float:
        """n1 with C1/n1 = C2/n2: every flow gets the same rate."""
        return self.flows * self.c1_bps / (self.c1_bps + self.c2_bps)

    def log_move_probabilities(self):
        """(log p1, log p2) arrays over n1 = 0..n, where p1 is the probability
        that the next step moves a flow from path 1 to path 2 and p2 from path
        2 to path 1 (-inf where the path carries no flow).  Logs, because for
        a few flows on a fast path exp(-lambda Delta) underflows."""
        n1 = np.arange(self.flows + 1, dtype=float)
        n2 = self.flows - n1
        cap = np.array([self.c1_bps, self.c2_bps]) / (8 * self.packet_bytes)  # packets/s
        sending = cap[0] * (n1 > 0) + cap[1] * (n2 > 0)
        logs = []
        with np.errstate(divide="ignore"):
            for j, nj in enumerate((n1, n2)):
                busy = nj > 0
                rate = cap[j] / np.maximum(nj, 1)
                log_p = (np.log(cap[j] / sending) - rate * self.delta_s / self.burst_packets
                         - np.log(2))
                logs.append(np.where(busy, log_p, -np.inf))
        return logs[0], logs[1]

    def move_probabilities(self):
        log_p1, log_p2 = self.log_move_probabilities()
        return np.exp(log_p1), np.exp(log_p2)

    def transition_matrix(self) -> np.ndarray:
        p1, p2 = self.move_probabilities()
        size = self.flows + 1
        matrix = np.zeros((size, size))
        idx = np.arange(size)
        matrix[idx[1:], idx[1:] - 1] = p1[1:]      # n1 -> n1 - 1
        matrix[idx[:-1], idx[:-1] + 1] = p2[:-1]   # n1 -> n1 + 1
        matrix[idx, idx] = 1 - p1 - p2
        return matrix

    def distribution_after(self, steps: int, start_n1: int) -> np.ndarray:
        """Exact distribution of n1 after `steps` steps from `start_n1`, by
        repeated squaring of the transition matrix (rows renormalised after
        each product so rounding cannot drift the total mass)."""
        if not 0 <= start_n1 <= self.flows:
            raise ValueError(f"start state n1={start_n1} outside 0..{self.flows}")
        if steps < 0:
            raise ValueError("step count must be non-negative")
        dist = np.zeros(self.flows + 1)
        dist[start_n1] = 1.0
        power = self.transition_matrix()
        remaining = int(steps)
        while remaining:
            if remaining & 1:
                dist = dist @ power
                dist /= dist.sum()
            remaining >>= 1
            if remaining:
                power = power @ power
                power /= power.sum(axis=1, keepdims=True)
        return dist

    def stationary(self) -> np.ndarray:
        """Stationary distribution of the birth-death chain by detailed balance,
        pi(n1 + 1) / pi(n1) = p2(n1) / p1(n1 + 1), summed in log space because
        the ratios span hundreds of orders of magnitude."""
        log_p1, log_p2 = self.log_move_probabilities()
        log_pi = np.concatenate([[0.0], np.cumsum(log_p2[:-1] - log_p1[1:])])
        pi = np.exp(log_pi - log_pi.max())
        return pi / pi.sum()


def mass_near_ideal(model: TwoPathModel, dist: np.ndarray, tolerance_fraction: float) -> float:
    """Probability that n1 is within max(1, tolerance_fraction * n) flows of the ideal."""
    tolerance = max(1.0, tolerance_fraction * model.flows)
    n1 = np.arange(model.flows + 1)
    return float(dist[np.abs(n1 - model.ideal_n1) <= tolerance].sum())


def balancing_delta_range(flows: int, c1_bps: float, c2_bps: float, deltas_s, steps: int,
                          burst_packets: float, tolerance_fraction: float = 0.05,
                          min_mass: float = 0.8):
    """(Delta_min, Delta_max) among `deltas_s` for which the distribution after
    `steps` steps from an even split puts at least `min_mass` within the
    tolerance of the ideal split; (None, None) if no Delta does."""
    good = []
    for delta in sorted(deltas_s):
        model = TwoPathModel(flows, c1_bps, c2_bps, delta, burst_packets)
        dist = model.distribution_after(steps, flows // 2)
        if mass_near_ideal(model, dist, tolerance_fraction) >= min_mass:
            good.append(delta)
    return (good[0], good[-1]) if good else (None, None)
