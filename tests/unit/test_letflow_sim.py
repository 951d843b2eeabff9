"""A small ns-3 run of the leaf-spine simulator (scripts/letflow/ns3/letflow_sim.cc)."""


import pytest

from scripts.letflow.ns3 import build
from scripts.argtypes import seeds_of
from scripts.letflow.ns3_experiments import _save, parse_args
from scripts.letflow.ns3.sim import Scenario, SimFlow, bottlenecks, run, summarise

ASYMMETRIC = {(0, 0): 2.0, (1, 0): 2.0, (0, 1): 1.0, (1, 1): 1.0}
SIZES = [30_000, 200_000, 1_000_000, 50_000, 600_000, 2_000_000]


def small_scenario(scheme="letflow", weights=None, **overrides):
    flows = [SimFlow(0, i % 4, 1, (i + 1) % 4, 0.0005 * i, size) for i, size in enumerate(SIZES)]
    params = dict(leaves=2, spines=2, links_gbps=ASYMMETRIC, flows=flows, stop_s=0.5,
                  scheme=scheme, spine_weights=weights, hosts_per_leaf=4,
                  queue_packets=10_000, flowlet_timeout_us=50, labels={"scheme": scheme})
    params.update(overrides)
    return Scenario(**params)


@pytest.fixture(scope="module", autouse=True)
def simulator():
    try:
        return build.simulator()
    except build.BuildError as error:
        pytest.fail(str(error))


@pytest.mark.parametrize("scheme", ["ecmp", "wcmp", "spray", "letflow"])
def test_all_flows_finish_and_path_counters_agree(scheme):
    result = run(small_scenario(scheme, [2, 1]))
    for flow, size in zip(result["flows"], SIZES):
        assert flow["received"] == size
        assert flow["fct_s"] is not None and flow["fct_s"] > 0
    # Every packet a leaf sent up through spine s, and only those, left spine s.
    for spine in (0, 1):
        chosen = sum(p["packets"] for p in result["paths"] if p["spine"] == spine)
        assert chosen == result["spine_tx_packets"][spine]
    # Buffers too large to drop: the source leaf forwards every payload byte,
    # and exactly once when a flow stays on one path; spraying reorders, and
    # TCP answers reordering with spurious retransmissions.
    data = sum(p["data_bytes"] for p in result["paths"] if p["leaf"] == 0)
    if scheme in ("ecmp", "wcmp"):
        assert data == sum(SIZES)
    else:
        assert sum(SIZES) <= data < 1.1 * sum(SIZES)
    assert all(p["data_bytes"] == 0 for p in result["paths"] if p["leaf"] == 1)
    summary = summarise(result, 0.5, 0)
    assert summary["unfinished"] == 0 and summary["flows"] == len(SIZES)


def test_weights_pin_traffic_to_one_spine():
    result = run(small_scenario("spray", [1, 0]))
    assert {p["spine"] for p in result["paths"]} == {0}
    assert result["spine_tx_packets"][1] == 0


def test_letflow_counts_flowlets_and_records_flows_per_path():
    result = run(small_scenario("letflow"))
    flowlets = sum(p["flowlets"] for p in result["paths"] if p["leaf"] == 0)
    assert flowlets >= len(SIZES)  # at least one flowlet per flow
    last = result["flows_per_spine"][-1]
    assert last[1] + last[2] == len(SIZES)


def test_per_flow_schemes_keep_each_flow_on_one_path():
    # ECMP hashes: with one flow, all its data crosses exactly one spine.
    scenario = small_scenario("ecmp", flows=[SimFlow(0, 0, 1, 0, 0.0, 500_000)])
    result = run(scenario)
    used = [p for p in result["paths"] if p["leaf"] == 0 and p["data_bytes"] > 0]
    assert len(used) == 1 and used[0]["data_bytes"] == 500_000


def test_run_ends_when_the_measured_flows_finish():
    # Only the first two flows (starts 0 and 0.5 ms) are measured; the run
    # stops 10 ms after they complete, long before stop_s, and the summary
    # counts only them.
    scenario = small_scenario("letflow", measure_window_s=(0.0, 0.0006),
                              flows=[SimFlow(0, 0, 1, 0, 0.0, 30_000),
                                     SimFlow(0, 1, 1, 1, 0.0005, 30_000),
                                     SimFlow(0, 2, 1, 2, 0.2, 30_000)])
    result = run(scenario)
    assert result["end_s"] < 0.1
    assert result["flows"][2]["fct_s"] is None  # started after the end
    summary = summarise(result, scenario.stop_s, 0, scenario.measure_window_s)
    assert summary["flows"] == 2 and summary["unfinished"] == 0


def test_bottlenecks_show_drops_and_a_saturated_uplink():
    # Spraying six flows at 1 Gbps servers through a 1-spine, 1 Gbps fabric
    # with 8-packet queues: the source leaf's uplink saturates and drops.
    flows = [SimFlow(0, i, 1, i, 0.0, 300_000) for i in range(4)]
    tight = small_scenario("spray", [1, 0], flows=flows, queue_packets=8,
                           links_gbps={(0, 0): 1.0, (1, 0): 1.0, (0, 1): 1.0, (1, 1): 1.0})
    result = run(tight)
    found = bottlenecks(result, tight)
    assert found["drops"]["leaves"] > 0
    assert {l["name"]: l["max_queue"] for l in result["links"]}["L0->S0"] == 8
    # ~10 ms of transfer, then 10 ms of closing tail: about half busy.
    assert found["fabric"]["L0->S0"]["utilisation"] > 0.3
    assert found["fabric"]["L0->S1"]["utilisation"] == 0
    loose = small_scenario("spray", [1, 0], flows=flows)
    assert bottlenecks(run(loose), loose)["drops"] == {"leaves": 0, "spines": 0, "servers": 0}


@pytest.mark.parametrize("change,problem", [
    (dict(scheme="conga"), "unknown scheme 'conga'"),
    (dict(spine_weights=[0, 0]), "positive sum"),
    (dict(spine_weights=[1]), "need 2 spine weights"),
    (dict(flowlet_timeout_us=0), "flowlet timeout must be positive"),
])
def test_bad_scenarios_are_named(change, problem):
    with pytest.raises(ValueError, match=problem):
        run(small_scenario(**change))


@pytest.mark.parametrize("argv,problem", [
    (["weights", "--load", "-1"], "--load must be positive"),
    (["weights", "--workload", "cache"], "unknown workload"),
    (["delta", "--delta-multiples", "1,0"], "--delta-multiples must be positive"),
    (["weights", "--warmup", "-0.1"], "--warmup must not be negative"),
    (["bogus"], "invalid choice"),
    (["fig1a", "--seeds", "1", "--reps", "2"], "either --seeds or --reps/--seed-base"),
    (["fig1a", "--seeds", "2", "2"], "repeats a seed"),
])
def test_experiment_cli_rejects_bad_input(argv, problem, capsys):
    with pytest.raises(SystemExit):
        parse_args(argv)
    assert problem in capsys.readouterr().err


@pytest.mark.parametrize("argv,seeds", [
    (["weights"], [1, 2]), (["delta", "--seeds", "5", "9"], [5, 9]),
    (["elasticity", "--reps", "3", "--seed-base", "4"], [4, 5, 6])])
def test_experiment_seeds_are_a_list_or_counted_from_a_base(argv, seeds):
    assert seeds_of(parse_args(argv)) == seeds


def test_results_name_their_seeds(tmp_path):
    import csv
    import json
    target = _save(tmp_path / "fig1a", {"rows": [{"scheme": "letflow"}]}, [{"scheme": "letflow"}], [3, 4])
    assert json.loads((target / "results.json").read_text())["seeds"] == [3, 4]
    with open(target / "results.csv") as f:
        assert list(csv.DictReader(f)) == [{"scheme": "letflow", "seeds": "3 4"}]


def test_the_load_sweep_offers_each_load_of_the_fabrics_capacity():
    from scripts.letflow.ns3.scenarios import FABRIC_GBPS, fig1b, stop_s
    from scripts.letflow.ns3_experiments import _settings
    offered = {}
    for load in (0.1, 0.9):
        settings = _settings(parse_args(["load", "--seeds", "1"]))
        scenario = fig1b(settings, "ecmp", 0.5, 1, settings["delta_us"], load)
        assert scenario.labels["load"] == load
        offered[load] = sum(f.bytes for f in scenario.flows) * 8 / stop_s(settings) / (3 * FABRIC_GBPS * 1e9)
    # Poisson arrivals of heavy-tailed sizes: within a fifth of the load asked for
    assert offered[0.1] == pytest.approx(0.1, rel=0.2) and offered[0.9] == pytest.approx(0.9, rel=0.2)
