"""One run of LetFlow's ns-3 sweeps (scripts/letflow/ns3_experiments.py) on
the leaf-spine simulator, as the runner (scripts/runner) calls it: the
run's Scenario rebuilt from its plan entry and the sweep's settings, run,
and summarised."""

import json
import resource
import time

from scripts.letflow.ns3 import scenarios
from scripts.letflow.ns3.sim import bottlenecks, run, summarise

# Measured on the load sweep's runs (web-search, Fig. 1b): 5.6 s of wall time
# per simulated Gbit at 10% load, 9.3 s at 90%, where queues are long.
WALL_S_PER_GBIT = 8.0
SPEED_BASIS = "the leaf-spine simulator's measured %g s per Gbit the flows send" % WALL_S_PER_GBIT


def _gbit(scenario) -> float:
    """What the run's flows send: a sized flow its bytes, a long-lived one
    its share of the source leaf's uplinks over the whole run."""
    sized = sum(f.bytes for f in scenario.flows) * 8 / 1e9
    long_lived = sum(1 for f in scenario.flows if not f.bytes)
    if not long_lived:
        return sized
    source = scenario.flows[0].src_leaf
    uplinks = sum(g for (leaf, _), g in scenario.links_gbps.items() if leaf == source)
    return sized + uplinks * scenario.stop_s


def estimate_s(config, run_spec) -> float:
    return WALL_S_PER_GBIT * _gbit(scenarios.build(config["settings"], run_spec["scenario"]))


def run_one(config, run_spec, progress) -> dict:
    """The simulator's result for the run (per-flow list, per-path counters,
    time series), its labels, summary and bottlenecks, and its wall and CPU
    seconds; as JSON holds it, so that a record read back from disk and one
    just made are the same."""
    scenario = scenarios.build(config["settings"], run_spec["scenario"])
    started = time.monotonic()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run(scenario)
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["summary"] = summarise(result, scenario.stop_s, scenario.labels["source_leaf"],
                                  scenario.measure_window_s)
    if result["flows"] and "fabric_series" in result:
        result["summary"]["bottlenecks"] = bottlenecks(result, scenario)
    result["wall_s"] = time.monotonic() - started
    result["cpu_s"] = (cpu_after.ru_utime + cpu_after.ru_stime
                       - cpu_before.ru_utime - cpu_before.ru_stime)
    return json.loads(json.dumps(result))
