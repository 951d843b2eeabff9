"""LetFlow experiments on ns-3 and the section 4.2 Markov model.

    python -m scripts.letflow.ns3_experiments fig1a|weights|elasticity|delta|load|markov|all
        [--seeds 1 2 3 | --reps N --seed-base B] [--jobs N | --dask ADDRESS] [--out DIR]
        [--duration S]
    python -m scripts.letflow.ns3_experiments SWEEP --resume DIR

Topologies follow Fig. 1 of the LetFlow paper, scaled to this machine
(scripts/letflow/ns3/scenarios.py): every link rate and every flow size is
divided by 10 (40 Gbps fabric links become 4 Gbps, servers get 1 Gbps, a
30 MB web-search flow becomes 3 MB), with 10 us per link.  Scaling sizes with
rates keeps the paper's time scales (flow durations, arrivals per second, the
500 us flowlet timeout) and offered loads, at a tenth of the packets.  FCTs
are measured on the flows that start in a window after a warm-up, while
arrivals go on until they finish.  The elasticity experiment (section 4.1)
runs at the paper's own rates.

Each simulated sweep is a plan of runs, one per scenario, that the runner
(scripts/runner) executes on the leaf-spine backend
(scripts/letflow/ns3/letflow_backend.py): in this process, on --jobs N local
processes or on the Dask cluster at --dask ADDRESS.  The plan (plan.json)
and each finished run's record (runs/NNNNN.json) are kept in
--out/<experiment>/; an interrupted sweep resumes with --resume DIR, which
runs only the runs without a record.  Each experiment then writes
results.json, results.csv and PNG plots there and prints its table; every
point runs once per seed, and the seeds are recorded in the files and named
in every plot.
"""

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np

from controller.letflow import markov
from scripts.workloads.flow_sizes import workload
from scripts.letflow import plots
from scripts.letflow.ns3 import build, scenarios
from scripts.letflow.ns3.scenarios import HOSTS_PER_LEAF
from scripts.letflow.ns3.sim import GRANULARITY
from scripts.argtypes import add_seed_options, seeds_of
from scripts.runner import options as runner_options, records

FIG3_WEIGHTS = (0.02, 0.1, 0.2, 0.35, 0.5, 0.66, 0.8, 0.95, 0.98)
FLOW_SCHEMES = ("wcmp", "spray", "letflow")  # per-flow, per-packet, flowlet granularity
EXPERIMENT = "letflow"   # the runner's name for these sweeps' runs: scripts/letflow/ns3/letflow_backend.py
BACKEND = "leafspine"    # LetFlow's ns-3 leaf-spine simulator (scripts/runner/backends.py)
# What the runner adds to a run's record beside the simulator's result; results.json leaves it out.
RUNNER_KEYS = ("id", "scenario", "ran_on", "schema")


# ---------------------------------------------------------------- running

def _settings(args) -> dict:
    """The options every run of a sweep is built and reported with: the
    plan's config keeps them, so that --resume goes on with them."""
    return {"seeds": seeds_of(args), "workload": args.workload, "duration": args.duration,
            "warmup": args.warmup, "hosts_per_leaf": args.hosts_per_leaf, "load": args.load,
            "load_scale": args.load_scale, "delta_us": args.delta_us,
            "delta_multiples": list(args.delta_multiples), "schemes": list(args.schemes),
            "elastic_s": args.elastic_s}


def _sweep_dir(args, name: str) -> Path:
    return Path(args.resume) if args.resume else args.out / name


def _resumed(args):
    """``args`` with the settings of the plan in --resume DIR, which must be
    a plan of the sweep named."""
    experiment, backend, config, _ = records.load_plan(args.resume)
    if (experiment, backend) != (EXPERIMENT, BACKEND) or config.get("sweep") != args.experiment:
        raise ValueError(f"{args.resume} holds a plan of the {config.get('sweep') or experiment} "
                         f"experiment, not LetFlow's {args.experiment}")
    return argparse.Namespace(**{**vars(args), **config["settings"], "reps": None, "seed_base": None})


def _start_afresh(target: Path) -> None:
    """A new sweep's records replace those of a finished plan in ``target``
    (runs of the same id would otherwise count as done); an unfinished plan
    there is left for --resume."""
    try:
        _, _, _, plan = records.load_plan(str(target))
    except records.RecordError:
        return
    missing = len(plan) - len(records.finished(str(target), plan))
    if missing:
        raise ValueError(f"{target} holds a plan with {missing} of its {len(plan)} runs unfinished: "
                         f"--resume {target} runs them; remove it to start afresh")
    records.discard(str(target), plan)


def _run_plan(args, name: str, plan: list) -> list:
    """The results of ``plan``'s runs, in its order, each run by the runner
    and its record kept in the sweep's directory as it finishes."""
    target = _sweep_dir(args, name)
    config = {"experiment": EXPERIMENT, "backend": BACKEND, "sweep": name, "settings": _settings(args)}
    if args.resume:
        _, _, saved_config, saved_plan = records.load_plan(args.resume)
        if [saved_config, saved_plan] != json.loads(json.dumps([config, plan])):
            raise ValueError(f"the plan in {args.resume} is not the one its settings make now (the "
                             f"sweep changed since it ran?): run the {name} sweep afresh")
    else:
        _start_afresh(target)
    build.simulator()  # built once, before runs in several processes race to build it
    finished = {}
    runner_options.run_plan(args, EXPERIMENT, config, plan, str(target), _describe, finished.update)
    return [{k: v for k, v in finished[run["id"]].items() if k not in RUNNER_KEYS} for run in plan]


def _run(run_id: str, topology: str, **params) -> dict:
    """A plan entry: the run's id and what the backend rebuilds its Scenario from."""
    return {"id": run_id, "scenario": scenarios.entry(topology, **params)}


def _describe(record: dict) -> str:
    s = record["summary"]
    fct = f"{s['mean_fct_s'] * 1e3:.2f} ms" if s["mean_fct_s"] is not None else "-"
    labels = " ".join(f"{k}={v}" for k, v in record["labels"].items() if k != "source_leaf")
    return (f"{labels}: mean FCT {fct}, {s['unfinished']} of {s['flows']} unfinished, "
            f"{record['cpu_s']:.1f} CPU-s")


def _save(target: Path, payload: dict, rows, seeds) -> Path:
    """results.json (``payload`` and the seeds) and results.csv (``rows``,
    each with the seeds) in the directory ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    (target / "results.json").write_text(json.dumps(dict(payload, seeds=seeds), indent=1))
    if rows:
        rows = [dict(row, seeds=" ".join(map(str, seeds))) for row in rows]
        with open(target / "results.csv", "w", newline="") as f:
            fields = list(dict.fromkeys(k for row in rows for k in row))
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
    return target


# A run's per-flow list and time series: kept in its record (the sweep's
# runs/), left out of a results file that would otherwise be megabytes of
# what no table or plot reads.
RUN_SERIES = ("flows", "fabric_series", "links", "flows_per_spine")


def _run_record(result: dict) -> dict:
    """A run's result without RUN_SERIES: its labels, summary, per-path
    counts, drops and cost."""
    return {k: v for k, v in result.items() if k not in RUN_SERIES}


_seeds_caption = plots.seeds_caption


def _over_seeds(results, key_fields):
    """{key: (mean FCT over seeds, its standard error)}; the standard error
    comes from the arrival-batch means of all the key's runs (sim.summarise),
    so it exists with one seed and shrinks with more."""
    groups = {}
    for r in results:
        key = tuple(r["labels"][k] for k in key_fields)
        groups.setdefault(key, []).append(r["summary"])
    stats = {}
    for key, summaries in groups.items():
        batches = [b for s in summaries for b in s["batch_mean_fct_s"]]
        se = float(np.std(batches, ddof=1) / np.sqrt(len(batches))) if len(batches) > 1 else None
        stats[key] = (float(np.mean([s["mean_fct_s"] for s in summaries])), se)
    return stats


def _run_facts(runs, link):
    """Measured flows, unfinished ones, the utilisation of the fabric link
    (e.g. "L0->S1") that the experiment's weights can overload, and drops by
    node role, summed or averaged over `runs`."""
    facts = {"flows": sum(r["summary"]["flows"] for r in runs),
             "unfinished": sum(r["summary"]["unfinished"] for r in runs)}
    util = [r["summary"]["bottlenecks"]["fabric"][link]["utilisation"] for r in runs]
    if all(u is not None for u in util):
        facts[f"util_{link}"] = float(np.mean(util))
    for role in ("leaves", "servers"):
        facts[f"drops_{role}"] = int(np.mean([r["summary"]["bottlenecks"]["drops"][role]
                                              for r in runs]))
    return facts


def _fct_row(stats, best):
    mean, se = stats
    return {"mean_fct_ms": mean * 1e3, "se_ms": se * 1e3 if se is not None else None,
            "normalised": mean / best}


# ---------------------------------------------------------------- experiments

def exp_fig1a(args):
    """Fig. 2 of the paper on the Fig. 1a topology: equal weights and S1 weighted
    2.4:1, per-flow / per-packet / flowlet; FCT normalised to the best run
    (the paper normalises to CONGA, which dcfabric does not implement)."""
    settings = {"equal": [1.0, 1.0], "s1x2.4": [1.0, 2.4]}
    seeds = seeds_of(args)
    plan = [_run(f"fig1a/{name}/{scheme}/seed{seed}", "fig1a", scheme=scheme, weights=w,
                 weight_name=name, seed=seed, delta_us=args.delta_us)
            for name, w in settings.items() for scheme in args.schemes for seed in seeds]
    results = _run_plan(args, "fig1a", plan)
    stats = _over_seeds(results, ("weights", "scheme"))
    means = {k: v[0] for k, v in stats.items()}
    best = min(means.values())
    rows = [{"weights": w, "scheme": s, "granularity": GRANULARITY[s],
             **_fct_row(stats[(w, s)], best),
             **_run_facts([r for r in results
                           if (r["labels"]["weights"], r["labels"]["scheme"]) == (w, s)],
                          "S0->L2")}
            for (w, s) in stats]
    _print_rows("Fig 1a (paper Fig 2): mean FCT normalised to the best", rows)
    target = _save(_sweep_dir(args, "fig1a"), {"runs": results, "rows": rows}, rows, seeds)
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for i, scheme in enumerate(args.schemes):
        vals = [means[(w, scheme)] / best for w in settings]
        ax.bar(np.arange(len(settings)) + (i - 1) * 0.27, vals, 0.27, label=GRANULARITY[scheme])
    ax.set_xticks(range(len(settings)), ["equal weights", "S1 weight 2.4x"])
    ax.set_ylabel("mean FCT / best")
    ax.legend()
    ax.set_title(f"Fig. 1a topology (L0-S1 failed); {_seeds_caption(seeds)}", fontsize=9)
    fig.tight_layout()
    fig.savefig(target / "fig1a_fct.png", dpi=120)
    return rows


def exp_weights(args):
    """Figs. 3 and 4: sweep the S0 weight on the Fig. 1b topology (two leaves,
    S1 path at half the capacity of S0, load 93%)."""
    seeds = seeds_of(args)
    plan = [_run(f"weights/{w:g}/{scheme}/seed{seed}", "fig1b", scheme=scheme, weight_s0=w,
                 seed=seed, delta_us=args.delta_us, load=args.load)
            for w in FIG3_WEIGHTS for scheme in args.schemes for seed in seeds]
    results = _run_plan(args, "weights", plan)
    stats = _over_seeds(results, ("weight_s0", "scheme"))
    means = {k: v[0] for k, v in stats.items()}
    best = min(means.values())
    rows = []
    for w in FIG3_WEIGHTS:
        for scheme in args.schemes:
            runs = [r for r in results
                    if r["labels"]["weight_s0"] == w and r["labels"]["scheme"] == scheme]
            row = {"weight_s0": w, "scheme": scheme, "granularity": GRANULARITY[scheme],
                   **_fct_row(stats[(w, scheme)], best), **_run_facts(runs, "L0->S1")}
            if scheme == "letflow":  # Fig. 4: flowlet sizes and traffic share per path
                for spine in (0, 1):  # a record's per-spine keys are JSON's strings
                    data = sum(r["summary"]["per_spine"].get(str(spine), {}).get("data_bytes", 0)
                               for r in runs)
                    lets = sum(r["summary"]["per_spine"].get(str(spine), {}).get("flowlets", 0)
                               for r in runs)
                    row[f"s{spine}_mean_flowlet_kb"] = data / lets / 1e3 if lets else None
                    row[f"s{spine}_bytes"] = data
                total = row["s0_bytes"] + row["s1_bytes"]
                row["s0_traffic_share"] = row["s0_bytes"] / total if total else None
            rows.append(row)
    _print_rows("Fig 3/4: weight sweep on Fig 1b (FCT normalised to the best)", rows)
    target = _save(_sweep_dir(args, "weights"), {"runs": results, "rows": rows}, rows, seeds)
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for scheme in args.schemes:
        ax.plot([100 * w for w in FIG3_WEIGHTS],
                [means[(w, scheme)] / best for w in FIG3_WEIGHTS], "o-",
                label=GRANULARITY[scheme])
    ax.set_yscale("log")
    ax.set_xlabel("probability of the S0 path (%)")
    ax.set_ylabel("mean FCT / best")
    ax.axvline(66, color="grey", ls=":")
    ax.set_title(f"Fig. 1b, load {args.load:g}; {_seeds_caption(seeds)}", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(target / "fig3_weight_sweep.png", dpi=120)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    flowlet_rows = [r for r in rows if r["scheme"] == "letflow"]
    for spine in (0, 1):
        ax.plot([100 * r["weight_s0"] for r in flowlet_rows],
                [r[f"s{spine}_mean_flowlet_kb"] or np.nan for r in flowlet_rows], "o-",
                label=f"S{spine} path")
    ax.set_yscale("log")
    plots.finish_plot(fig, ax, "probability of the S0 path (%)", "mean flowlet size (KB)",
               target / "fig4_flowlet_sizes.png", f"LetFlow on Fig. 1b; {_seeds_caption(seeds)}")
    return rows


def exp_delta(args):
    """LetFlow (equal weights) on Fig. 1b with the flowlet timeout swept as a
    multiple of the base RTT, beside per-flow ECMP."""
    seeds = seeds_of(args)
    rtt = scenarios.fig1b(_settings(args), "letflow", 0.5, seeds[0], args.delta_us, args.load).base_rtt_us()
    multiples = args.delta_multiples
    plan = [_run(f"delta/{m:g}rtt/letflow/seed{seed}", "fig1b", scheme="letflow", weight_s0=0.5,
                 seed=seed, delta_us=m * rtt, load=args.load)
            for m in multiples for seed in seeds]
    plan += [_run(f"delta/ecmp/seed{seed}", "fig1b", scheme="ecmp", weight_s0=0.5, seed=seed,
                  delta_us=args.delta_us, load=args.load) for seed in seeds]
    results = _run_plan(args, "delta", plan)
    stats = _over_seeds(results, ("scheme", "delta_us"))
    ecmp = np.mean([v[0] for (s, _), v in stats.items() if s == "ecmp"])
    ecmp_runs = [r for r in results if r["labels"]["scheme"] == "ecmp"]
    rows = [{"delta_over_rtt": m, "delta_us": m * rtt,
             **_fct_row(stats[("letflow", m * rtt)], ecmp),
             **_run_facts([r for r in results if r["labels"]["scheme"] == "letflow"
                           and r["labels"]["delta_us"] == m * rtt], "L0->S1")}
            for m in multiples]
    rows.append({"delta_over_rtt": "ecmp", **_fct_row(stats[("ecmp", args.delta_us)], ecmp),
                 **_run_facts(ecmp_runs, "L0->S1")})
    _print_rows(f"Delta sweep (base RTT {rtt:.0f} us; normalised = mean FCT / per-flow ECMP's, "
                f"{ecmp * 1e3:.2f} ms)", rows)
    target = _save(_sweep_dir(args, "delta"), {"runs": results, "rows": rows, "base_rtt_us": rtt,
                                       "ecmp_mean_fct_ms": ecmp * 1e3}, rows, seeds)
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    letflow_rows = rows[:len(multiples)]
    ax.errorbar(multiples, [r["mean_fct_ms"] for r in letflow_rows],
                yerr=[2 * (r["se_ms"] or 0) for r in letflow_rows],
                fmt="o-", capsize=3, label="LetFlow (mean ± 2 s.e.)")
    ax.axhline(ecmp * 1e3, color="grey", ls="--", label="per-flow ECMP")
    ax.set_xscale("log")
    plots.finish_plot(fig, ax, f"flowlet timeout / base RTT ({rtt:.0f} us)", "mean FCT (ms)",
               target / "delta_sweep.png", f"Fig. 1b, equal weights; {_seeds_caption(seeds)}")
    return rows


LOADS = (0.1, 0.3, 0.5, 0.7, 0.9)
LOAD_SCHEMES = ("ecmp", "spray", "letflow")  # per-flow, per-packet, flowlet; all with equal weights


def exp_load(args):
    """Mean FCT against offered load on the asymmetric Fig. 1b topology (the
    S1 path at half the S0 path's capacity), every scheme with equal weights:
    per-flow ECMP, per-packet spraying and LetFlow, --workload's flow sizes."""
    seeds = seeds_of(args)
    plan = [_run(f"load/{load:g}/{scheme}/seed{seed}", "fig1b", scheme=scheme, weight_s0=0.5,
                 seed=seed, delta_us=args.delta_us, load=load)
            for load in LOADS for scheme in LOAD_SCHEMES for seed in seeds]
    results = _run_plan(args, "load", plan)
    stats = _over_seeds(results, ("load", "scheme"))
    rows = []
    for load in LOADS:
        ecmp = stats[(load, "ecmp")][0]
        for scheme in LOAD_SCHEMES:
            runs = [r for r in results if (r["labels"]["load"], r["labels"]["scheme"]) == (load, scheme)]
            rows.append({"load": load, "scheme": scheme, "granularity": GRANULARITY[scheme],
                         **_fct_row(stats[(load, scheme)], ecmp), **_run_facts(runs, "L0->S1")})
    _print_rows(f"Load sweep, {args.workload} (Fig 1b, equal weights; normalised = mean FCT / "
                "per-flow ECMP's at the same load)", rows)
    target = _save(_sweep_dir(args, "load"), {"runs": [_run_record(r) for r in results], "rows": rows,
                                      "workload": args.workload}, rows, seeds)
    plots.load_sweep(json.loads((target / "results.json").read_text()), target / "load_sweep.png")
    return rows


def exp_elasticity(args):
    """Section 4.1 / Fig. 5: 25 long-lived flows over a 40 and a 10 Gbps path,
    window 256 KB, Delta 200 us, base RTT ~50 us, buffers too large to drop."""
    seeds = seeds_of(args)
    results = _run_plan(args, "elasticity", [_run(f"elasticity/seed{seed}", "elasticity", seed=seed)
                                             for seed in seeds])
    rows = []
    for r in results:
        series = r["flows_per_spine"]
        tail = [p for p in series if p[0] >= series[-1][0] / 2]
        rows.append({"seed": r["labels"]["seed"], "base_rtt_us": r["base_rtt_us"],
                     "final_s0_flows": series[-1][1], "final_s1_flows": series[-1][2],
                     "mean_s0_flows_second_half": float(np.mean([p[1] for p in tail])),
                     "last_change_ms": _last_change_ms(series)})
    _print_rows("Elasticity (paper Fig 5: settles at 20 on 40G / 5 on 10G within ~30 ms)", rows)
    target = _save(_sweep_dir(args, "elasticity"), {"runs": results, "rows": rows}, rows, seeds)
    plots.elasticity(json.loads((target / "results.json").read_text()), target / "fig5_elasticity.png")
    return rows


def _last_change_ms(series):
    last = series[0][0]
    for before, after in zip(series, series[1:]):
        if before[1:] != after[1:]:
            last = after[0]
    return last * 1e3


def exp_markov(args):
    """Fig. 7 (distribution of n1 after the given steps from (50, 50)) and a
    Fig. 8-style sweep of the Delta range that balances versus mean flow rate."""
    steps = int(args.markov_steps)
    fig7 = {}
    rows = []
    for delta_us in (30, 50, 300, 500, 900):
        model = markov.TwoPathModel(100, 40e9, 10e9, delta_us * 1e-6)
        dist = model.distribution_after(steps, 50)
        fig7[delta_us] = dist.tolist()
        rows.append({"figure": "7", "delta_us": delta_us, "mode_n1": int(dist.argmax()),
                     # where the chain heads, however slowly it gets there
                     "stationary_mode_n1": int(model.stationary().argmax()),
                     "mean_n1": float(dist @ np.arange(101)),
                     "mass_within_5_of_80": markov.mass_near_ideal(model, dist, 0.05)})
    _print_rows(f"Markov Fig 7: n=100, 40/10 Gbps, {markov.DEFAULT_PACKET_BYTES} B packets, "
                f"{steps:.0e} steps from (50,50), ideal n1=80", rows)
    deltas = np.logspace(np.log10(10e-6), np.log10(50e-3), 49)
    sweep = []
    for c1 in (20e9, 40e9):
        for n in (6, 10, 15, 20, 30, 50, 75, 100, 150, 200):
            lo, hi = markov.balancing_delta_range(n, c1, 10e9, deltas, steps, args.burst)
            sweep.append({"paths_gbps": f"{c1 / 1e9:.0f}/10", "flows": n,
                          "mean_flow_rate_gbps": (c1 + 10e9) / n / 1e9,
                          "delta_min_us": lo * 1e6 if lo else None,
                          "delta_max_us": hi * 1e6 if hi else None})
    _print_rows(f"Markov Fig 8-style sweep: burst b={args.burst}, {steps:.0e} steps from an even "
                f"split, 'balanced' = >=80% of mass within 5% of n of the ideal split", sweep)
    target = _save(_sweep_dir(args, "markov"), {"steps": steps, "packet_bytes": markov.DEFAULT_PACKET_BYTES,
                                        "burst_fig8": args.burst, "fig7": fig7, "fig7_rows": rows,
                                        "fig8": sweep}, rows + sweep, [])
    saved = json.loads((target / "results.json").read_text())
    plots.markov_distribution(saved, target / "fig7_markov.png")
    plots.markov_delta_range(saved, target / "fig8_delta_range.png")
    return rows + sweep


def _print_rows(title, rows):
    print(f"\n{title}")
    if not rows:
        return
    keys = list(dict.fromkeys(k for r in rows for k in r))
    print("  " + "  ".join(f"{k:>14}" for k in keys))
    for r in rows:
        cells = []
        for k in keys:
            v = r.get(k)
            cells.append(f"{v:>14.4g}" if isinstance(v, float) else f"{str(v):>14}")
        print("  " + "  ".join(cells))
    sys.stdout.flush()


EXPERIMENTS = {"fig1a": exp_fig1a, "weights": exp_weights,
               "elasticity": exp_elasticity, "delta": exp_delta, "load": exp_load, "markov": exp_markov}


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Each simulated sweep is a plan the project's runner executes (--jobs, --dask): "
               "OUT/<experiment>/plan.json and a record per finished run in OUT/<experiment>/runs/; "
               "--resume OUT/<experiment> runs only an interrupted sweep's missing runs.")
    p.add_argument("experiment", choices=[*EXPERIMENTS, "all"])
    add_seed_options(p, reps=2, seed_base=1, per="independent run per point")
    runner_options.add_arguments(p)  # --jobs, --dask, --resume: the runner's (scripts/runner)
    p.add_argument("--out", type=Path, default=Path("results/letflow"),
                   help="each experiment's plan, run records (runs/) and results go to OUT/<experiment>; "
                        "a new sweep replaces a finished one's records there, and an unfinished one's "
                        "are kept for --resume OUT/<experiment>")
    p.add_argument("--workload", default="web-search", help="web-search or data-mining")
    p.add_argument("--duration", type=float, default=0.25,
                   help="seconds of Poisson arrivals whose flows are measured")
    p.add_argument("--warmup", type=float, default=0.05,
                   help="seconds of arrivals before the measured ones")
    p.add_argument("--hosts-per-leaf", type=int, default=HOSTS_PER_LEAF)
    p.add_argument("--load", type=float, default=0.93,
                   help="Fig 1b offered load as a fraction of the 3-link capacity")
    p.add_argument("--load-scale", type=float, default=1.0,
                   help="Fig 1a: multiplies the paper's 20 and 48 Gbps demands")
    p.add_argument("--delta-us", type=float, default=500, help="flowlet timeout (us)")
    p.add_argument("--delta-multiples", default=(0.5, 1, 2, 5, 10, 50, 200),
                   type=lambda text: tuple(float(m) for m in text.split(",")),
                   help="delta: flowlet timeouts swept, as multiples of the base RTT")
    p.add_argument("--schemes", type=lambda text: tuple(text.split(",")), default=FLOW_SCHEMES,
                   help="fig1a/weights: comma-separated subset of " + ",".join(FLOW_SCHEMES))
    p.add_argument("--elastic-s", type=float, default=0.1, help="elasticity run length (s)")
    p.add_argument("--markov-steps", type=float, default=1e11)
    p.add_argument("--burst", type=float, default=10, help="Fig 8 burst size b (packets)")
    args = p.parse_args(argv)
    problems = []
    try:
        seeds_of(args)
    except ValueError as error:
        problems.append(str(error))
    if args.resume and args.experiment in ("all", "markov"):
        problems.append("--resume DIR completes one simulated sweep's plan: name that sweep, "
                        "one of " + ", ".join(name for name in EXPERIMENTS if name != "markov"))
    if args.hosts_per_leaf < 1:
        problems.append("--hosts-per-leaf must be at least 1")
    if args.warmup < 0:
        problems.append("--warmup must not be negative")
    for name in ("duration", "load", "load_scale", "delta_us", "elastic_s", "markov_steps"):
        if getattr(args, name) <= 0:
            problems.append(f"--{name.replace('_', '-')} must be positive")
    if not args.delta_multiples or min(args.delta_multiples) <= 0:
        problems.append("--delta-multiples must be positive")
    if len(set(args.delta_multiples)) < len(args.delta_multiples):
        problems.append("--delta-multiples repeats a multiple")
    if len(set(args.schemes)) < len(args.schemes):
        problems.append("--schemes repeats a scheme")
    unknown = [s for s in args.schemes if s not in FLOW_SCHEMES]
    if unknown or not args.schemes:
        problems.append(f"--schemes must name some of {','.join(FLOW_SCHEMES)}, got {unknown}")
    if args.burst < 1:
        problems.append("--burst must be at least 1")
    try:
        workload(args.workload)
    except ValueError as error:
        problems.append(str(error))
    if problems:
        p.error("; ".join(problems))
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    names = list(EXPERIMENTS) if args.experiment == "all" else [args.experiment]
    try:
        if args.resume:
            args = _resumed(args)
        for name in names:
            print(f"== {name}: {EXPERIMENTS[name].__doc__.splitlines()[0]}", flush=True)
            EXPERIMENTS[name](args)
            print(f"   outputs in {_sweep_dir(args, name)}", flush=True)
    except (build.BuildError, ValueError) as error:  # a run left unfinished, a plan --resume cannot take
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
