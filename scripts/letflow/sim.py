"""Build scenario files for the ns-3 simulator, run it, and summarise a run."""

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from scripts.letflow import build

SCHEMES = ("ecmp", "wcmp", "spray", "letflow")
# What the paper calls the decision granularity of each scheme.
GRANULARITY = {"ecmp": "per-flow", "wcmp": "per-flow", "spray": "per-packet",
               "letflow": "flowlet"}
ACK_BYTES = 64  # an IP+TCP ACK with options, for the base RTT estimate


@dataclass(frozen=True)
class SimFlow:
    src_leaf: int
    src_host: int
    dst_leaf: int
    dst_host: int
    start_s: float
    bytes: int  # 0 = long-lived


@dataclass
class Scenario:
    leaves: int
    spines: int
    links_gbps: Dict[Tuple[int, int], float]  # (leaf, spine) -> rate; absent link = failed
    flows: List[SimFlow]
    stop_s: float
    scheme: str = "letflow"
    spine_weights: Optional[Sequence[float]] = None  # None = equal
    seed: int = 1
    flowlet_timeout_us: float = 500
    flowlet_table_size: int = 65536
    hosts_per_leaf: int = 8
    host_rate_gbps: float = 1
    link_delay_us: float = 10
    queue_packets: int = 100
    min_rto_us: float = 5000
    tcp_window_bytes: int = 0
    sample_interval_us: float = 1000
    labels: Dict[str, object] = field(default_factory=dict)  # carried into the result

    def validate(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"unknown scheme {self.scheme!r}; choose from {', '.join(SCHEMES)}")
        weights = self.weights()
        if len(weights) != self.spines:
            raise ValueError(f"need {self.spines} spine weights, got {len(weights)}")
        if any(w < 0 for w in weights) or sum(weights) <= 0:
            raise ValueError(f"spine weights must be non-negative with a positive sum: {weights}")
        if self.flowlet_timeout_us <= 0:
            raise ValueError("flowlet timeout must be positive")
        if self.flowlet_table_size < 1:
            raise ValueError("flowlet table size must be positive")
        if any(g <= 0 for g in self.links_gbps.values()) or self.host_rate_gbps <= 0:
            raise ValueError("link rates must be positive")
        if self.stop_s <= 0:
            raise ValueError("stop time must be positive")

    def weights(self) -> List[float]:
        return list(self.spine_weights) if self.spine_weights is not None else [1.0] * self.spines

    def base_rtt_us(self) -> float:
        """Propagation plus one serialisation per hop of a full data packet on
        the way out and an ACK on the way back, along the fastest path."""
        fabric = max(self.links_gbps.values())
        per_bit_us = 2 / (self.host_rate_gbps * 1e3) + 2 / (fabric * 1e3)
        return 8 * self.link_delay_us + (1500 + ACK_BYTES) * 8 * per_bit_us

    def to_text(self) -> str:
        lines = [f"seed {self.seed}", f"scheme {self.scheme}",
                 f"flowlet_timeout_us {self.flowlet_timeout_us}",
                 f"flowlet_table_size {self.flowlet_table_size}",
                 f"leaves {self.leaves}", f"spines {self.spines}",
                 f"hosts_per_leaf {self.hosts_per_leaf}",
                 f"host_rate_gbps {self.host_rate_gbps}", f"link_delay_us {self.link_delay_us}",
                 f"queue_packets {self.queue_packets}", f"min_rto_us {self.min_rto_us}",
                 f"tcp_window_bytes {self.tcp_window_bytes}", f"stop_s {self.stop_s}",
                 f"sample_interval_us {self.sample_interval_us}",
                 "weights " + " ".join(repr(float(w)) for w in self.weights())]
        lines += [f"link {l} {s} {g}" for (l, s), g in sorted(self.links_gbps.items())]
        lines += [f"flow {i} {f.src_leaf} {f.src_host} {f.dst_leaf} {f.dst_host} "
                  f"{f.start_s!r} {f.bytes}" for i, f in enumerate(self.flows)]
        return "\n".join(lines) + "\n"


def run(scenario: Scenario) -> dict:
    """Run the simulator on one scenario; returns its JSON plus the labels."""
    scenario.validate()
    binary = build.simulator()
    with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="letflow-") as spec:
        spec.write(scenario.to_text())
        spec.flush()
        done = subprocess.run([str(binary), spec.name], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"letflow_sim failed ({done.returncode}): {done.stderr.strip()}")
    result = json.loads(done.stdout)
    result["labels"] = dict(scenario.labels)
    result["base_rtt_us"] = scenario.base_rtt_us()
    return result


def summarise(result: dict, stop_s: float, source_leaf: int) -> dict:
    """Mean FCT (unfinished flows counted at their lower bound, stop - start),
    and per-spine bytes, flowlets and mean flowlet size at `source_leaf`."""
    flows = [f for f in result["flows"] if f["bytes"] > 0]
    fcts = [f["fct_s"] if f["fct_s"] is not None else stop_s - f["start_s"] for f in flows]
    unfinished = sum(f["fct_s"] is None for f in flows)
    paths = {p["spine"]: p for p in result["paths"] if p["leaf"] == source_leaf}
    per_spine = {}
    for spine, p in sorted(paths.items()):
        per_spine[spine] = {
            "data_bytes": p["data_bytes"], "flowlets": p["flowlets"],
            "mean_flowlet_bytes": p["data_bytes"] / p["flowlets"] if p["flowlets"] else None}
    return {"flows": len(flows), "unfinished": unfinished,
            "mean_fct_s": sum(fcts) / len(fcts) if fcts else None, "per_spine": per_spine}
