"""Build scenario files for the ns-3 simulator, run it, and summarise a run."""

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from scripts.letflow.ns3 import build

SCHEMES = ("ecmp", "wcmp", "spray", "letflow")
# What the paper calls the decision granularity of each scheme.
GRANULARITY = {"ecmp": "per-flow", "wcmp": "per-flow", "spray": "per-packet",
               "letflow": "flowlet"}
ACK_BYTES = 64  # an IP+TCP ACK with options, for the base RTT estimate
BATCHES = 5     # arrival batches per run for the standard error of a mean FCT


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
    # Flows starting inside this window are measured, and the run ends once
    # they have completed; None measures every flow.
    measure_window_s: Optional[Tuple[float, float]] = None
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
        if self.measure_window_s is not None and not (
                0 <= self.measure_window_s[0] <= self.measure_window_s[1]):
            raise ValueError(f"bad measurement window {self.measure_window_s}")

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
        if self.measure_window_s is not None:
            lines += [f"measure_from_s {self.measure_window_s[0]!r}",
                      f"measure_until_s {self.measure_window_s[1]!r}"]
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
        done = subprocess.run([str(binary), spec.name], capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"letflow_sim failed ({done.returncode}): {done.stderr.strip()}")
    result = json.loads(done.stdout)
    result["labels"] = dict(scenario.labels)
    result["base_rtt_us"] = scenario.base_rtt_us()
    return result


def measured_flows(result: dict, window: Optional[Tuple[float, float]] = None) -> List[dict]:
    """The finite flows that started inside `window` (all finite flows if None)."""
    lo, hi = window if window is not None else (0.0, float("inf"))
    return [f for f in result["flows"] if f["bytes"] > 0 and lo <= f["start_s"] <= hi]


def summarise(result: dict, stop_s: float, source_leaf: int,
              window: Optional[Tuple[float, float]] = None) -> dict:
    """Mean FCT of the measured flows (unfinished ones counted at their lower
    bound, end of run - start), and per-spine bytes, flowlets and mean flowlet
    size at `source_leaf`."""
    flows = sorted(measured_flows(result, window), key=lambda f: f["start_s"])
    end_s = result.get("end_s", stop_s)
    fcts = [f["fct_s"] if f["fct_s"] is not None else end_s - f["start_s"] for f in flows]
    # Mean FCT of consecutive arrival batches: their scatter gives a standard
    # error for the run's mean (batch means, as heavy-tailed FCTs of
    # overlapping flows are not independent).
    batches = [fcts[i * len(fcts) // BATCHES:(i + 1) * len(fcts) // BATCHES]
               for i in range(BATCHES)] if len(fcts) >= BATCHES else []
    unfinished = sum(f["fct_s"] is None for f in flows)
    paths = {p["spine"]: p for p in result["paths"] if p["leaf"] == source_leaf}
    per_spine = {}
    for spine, p in sorted(paths.items()):
        per_spine[spine] = {
            "data_bytes": p["data_bytes"], "flowlets": p["flowlets"],
            "mean_flowlet_bytes": p["data_bytes"] / p["flowlets"] if p["flowlets"] else None}
    return {"flows": len(flows), "unfinished": unfinished,
            "mean_fct_s": sum(fcts) / len(fcts) if fcts else None,
            "batch_mean_fct_s": [sum(b) / len(b) for b in batches], "per_spine": per_spine}


def bottlenecks(result: dict, scenario: Scenario) -> dict:
    """Where the load sits during the measurement window: per fabric link
    (leaf->spine and spine->leaf) its utilisation and mean queue (packets),
    the busiest server link's utilisation over the whole run, and drops by
    node role (a source leaf drops on its uplinks, a destination leaf on its
    server links, a server on its own NIC)."""
    lo, hi = scenario.measure_window_s or (0.0, result["end_s"])
    series = result["fabric_series"]
    names = series["links"]
    rows = [s for s in series["samples"] if lo < s[0] <= hi]
    fabric = {}
    for i, name in enumerate(names):  # "L0->S1" or "S1->L0"
        a, b = name.split("->")
        leaf, spine = (a, b) if a[0] == "L" else (b, a)
        gbps = scenario.links_gbps[(int(leaf[1:]), int(spine[1:]))]
        sent = sum(r[1 + i] for r in rows)
        span = len(rows) * scenario.sample_interval_us * 1e-6
        fabric[name] = {"utilisation": sent * 8 / (gbps * 1e9 * span) if span else None,
                        "mean_queue": (sum(r[1 + len(names) + i] for r in rows) / len(rows)
                                       if rows else None)}
    host_bytes = max((l["tx_bytes"] for l in result["links"] if l["kind"].startswith("host")),
                     default=0)
    drops = {"leaves": 0, "spines": 0, "servers": 0}
    for node, n in result["node_drops"].items():
        drops[{"L": "leaves", "S": "spines", "H": "servers"}[node[0]]] += n
    return {"fabric": fabric, "drops": drops,
            "busiest_server_link_utilisation":
                host_bytes * 8 / (scenario.host_rate_gbps * 1e9 * result["end_s"])}
