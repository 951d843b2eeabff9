"""The Scenario of one run of LetFlow's ns-3 sweeps, rebuilt from what a
plan entry says of it (its ``scenario``: the topology and the run's scheme,
weights, seed and flowlet timeout) and the sweep's settings (the options
that shape every run: arrival window, hosts per leaf, workload, ...), both
JSON, so that any process the runner starts builds the same flows.

Topologies follow Fig. 1 of the LetFlow paper, scaled to this machine: every
link rate and every flow size is divided by 10, with 10 us per link; the
elasticity experiment (section 4.1) runs at the paper's own rates."""

import numpy as np

from scripts.letflow.ns3.sim import Scenario, SimFlow
from scripts.workloads.arrivals import poisson_flows
from scripts.workloads.flow_sizes import workload

SCALE = 0.1                      # link rates and flow sizes relative to the paper
FABRIC_GBPS = 40 * SCALE
HOST_GBPS = 10 * SCALE
# Enough servers that a server link averages ~23% load at 93% fabric load;
# 16 per leaf ran each at 70%, and with equal weights server links and NICs
# dropped more packets than the asymmetric fabric did.
HOSTS_PER_LEAF = 48
# Simulated time after the measurement window during which arrivals continue
# and measured flows may still finish; measured flows unfinished by then (an
# overloaded path) count at their lower bound, end of run - start.
DRAIN_S = 0.15
ELASTIC_FLOWS = 25


def stop_s(settings) -> float:
    return settings["warmup"] + settings["duration"] + DRAIN_S


def _arrivals(settings, rate_bps, rng):
    """Poisson flows offering `rate_bps` from t = 0 to the end of the drain
    allowance, so the load stays on until the measured flows finish."""
    return poisson_flows(workload(settings["workload"]).scaled(SCALE), rate_bps, stop_s(settings),
                         settings["hosts_per_leaf"], settings["hosts_per_leaf"], rng)


def _fabric_scenario(settings, **params) -> Scenario:
    return Scenario(stop_s=stop_s(settings), hosts_per_leaf=settings["hosts_per_leaf"],
                    host_rate_gbps=HOST_GBPS,
                    measure_window_s=(settings["warmup"], settings["warmup"] + settings["duration"]),
                    **params)


def fig1b(settings, scheme, weight_s0, seed, delta_us, load) -> Scenario:
    """Fig. 1b: two leaves, the S1 path at half the capacity of the S0 path,
    leaf L0 sending to L1 at `load` (93%, 112 of 120 Gbps, in the paper) of the total."""
    links = {(0, 0): 2 * FABRIC_GBPS, (1, 0): 2 * FABRIC_GBPS,
             (0, 1): FABRIC_GBPS, (1, 1): FABRIC_GBPS}
    capacity_bps = 3 * FABRIC_GBPS * 1e9
    rng = np.random.default_rng(seed)
    flows = [SimFlow(0, f.src_host, 1, f.dst_host, f.start_s, f.bytes)
             for f in _arrivals(settings, load * capacity_bps, rng)]
    return _fabric_scenario(
        settings, leaves=2, spines=2, links_gbps=links, flows=flows, scheme=scheme,
        spine_weights=[weight_s0, 1 - weight_s0], seed=seed, flowlet_timeout_us=delta_us,
        labels={"scheme": scheme, "weight_s0": weight_s0, "seed": seed, "delta_us": delta_us,
                "load": load, "source_leaf": 0})


def fig1a(settings, scheme, weights, weight_name, seed, delta_us) -> Scenario:
    """Fig. 1a: leaves L0, L1, L2 under spines S0, S1 with the L0-S1 link failed;
    L0->L2 at 20 and L1->L2 at 48 (of 40 Gbps links) in the paper, scaled."""
    links = {(0, 0): FABRIC_GBPS, (1, 0): FABRIC_GBPS, (1, 1): FABRIC_GBPS,
             (2, 0): FABRIC_GBPS, (2, 1): FABRIC_GBPS}
    rng = np.random.default_rng(seed)
    flows = []
    for src_leaf, paper_gbps in ((0, 20), (1, 48)):
        for f in _arrivals(settings, paper_gbps * SCALE * 1e9 * settings["load_scale"], rng):
            flows.append(SimFlow(src_leaf, f.src_host, 2, f.dst_host, f.start_s, f.bytes))
    flows.sort(key=lambda f: f.start_s)
    return _fabric_scenario(
        settings, leaves=3, spines=2, links_gbps=links, flows=flows, scheme=scheme,
        spine_weights=weights, seed=seed, flowlet_timeout_us=delta_us,
        labels={"scheme": scheme, "weights": weight_name, "seed": seed, "source_leaf": 1})


def elasticity(settings, seed) -> Scenario:
    """Section 4.1 / Fig. 5: 25 long-lived flows over a 40 and a 10 Gbps path,
    window 256 KB, Delta 200 us, base RTT ~50 us, buffers too large to drop."""
    starts = np.random.default_rng(seed).uniform(0, 1e-3, ELASTIC_FLOWS)
    return Scenario(
        leaves=2, spines=2, links_gbps={(0, 0): 40, (1, 0): 40, (0, 1): 10, (1, 1): 10},
        flows=[SimFlow(0, i, 1, i, float(starts[i]), 0) for i in range(ELASTIC_FLOWS)],
        stop_s=settings["elastic_s"], scheme="letflow", seed=seed, flowlet_timeout_us=200,
        hosts_per_leaf=ELASTIC_FLOWS, host_rate_gbps=10, link_delay_us=5.5, queue_packets=100000,
        tcp_window_bytes=256 * 1024, sample_interval_us=500,
        labels={"scheme": "letflow", "seed": seed, "source_leaf": 0})


TOPOLOGIES = {"fig1a": fig1a, "fig1b": fig1b, "elasticity": elasticity}


def entry(topology, **params) -> dict:
    """A plan entry's ``scenario``: which builder, and its arguments."""
    if topology not in TOPOLOGIES:
        raise ValueError(f"unknown topology {topology!r}; choose from {', '.join(TOPOLOGIES)}")
    return {"topology": topology, **params}


def build(settings, scenario_entry) -> Scenario:
    """The Scenario a plan entry's ``scenario`` names, under the sweep's settings."""
    params = dict(scenario_entry)
    return TOPOLOGIES[params.pop("topology")](settings, **params)
