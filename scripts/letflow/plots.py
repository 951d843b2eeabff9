"""The LetFlow experiments' plots, each drawn from the results.json its
experiment saved (scripts.letflow.ns3_experiments), so that the experiment
and the docs' renderer (scripts/docs.py) draw the same figure from the same
file. Pure: imports no simulator, no controller."""
import numpy as np


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def seeds_caption(seeds) -> str:
    return f"{len(seeds)} run(s) per point, seed(s) {' '.join(map(str, seeds))}"


def finish_plot(fig, ax, xlabel, ylabel, path, title):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    pyplot().close(fig)


def load_sweep(result, path):
    """Mean FCT against offered load, a line per scheme (the load experiment's rows)."""
    plt = pyplot()
    rows = result["rows"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        points = [r for r in rows if r["scheme"] == scheme]
        ax.errorbar([100 * r["load"] for r in points], [r["mean_fct_ms"] for r in points],
                    yerr=[2 * (r["se_ms"] or 0) for r in points], fmt="o-", capsize=3,
                    label=f"{points[0]['granularity']} (mean ± 2 s.e.)")
    ax.set_yscale("log")
    finish_plot(fig, ax, "offered load (% of the fabric's capacity)", "mean FCT (ms)", path,
            f"Fig. 1b, equal weights, {result['workload']}; {seeds_caption(result['seeds'])}")


def elasticity(result, path):
    """Flows on each path over time, one line per run (the elasticity experiment's runs)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for r in result["runs"]:
        s = np.array(r["flows_per_spine"])
        ax.step(s[:, 0] * 1e3, s[:, 1], where="post", color="C0", alpha=0.7)
        ax.step(s[:, 0] * 1e3, s[:, 2], where="post", color="C1", alpha=0.7)
    ax.plot([], [], color="C0", label="40 Gbps path")
    ax.plot([], [], color="C1", label="10 Gbps path")
    ax.axhline(20, color="C0", ls=":")
    ax.axhline(5, color="C1", ls=":")
    finish_plot(fig, ax, "time (ms)", "flows on path", path,
            f"25 flows, 40 / 10 Gbps paths; one line per run, {seeds_caption(result['seeds'])}")


def markov_distribution(result, path):
    """Fig. 7: the distribution of n1 for each Δ (the Markov experiment's fig7)."""
    plt = pyplot()
    fig7 = result["fig7"]
    fig, axes = plt.subplots(1, len(fig7), figsize=(13, 2.8), sharey=True)
    for ax, (delta_us, dist) in zip(axes, fig7.items()):
        ax.bar(range(len(dist)), dist, width=1)
        ax.axvline(80, color="red", ls=":")
        ax.set_title(f"Δ = {delta_us} µs")
        ax.set_xlabel("flows on path 1 (n1)")
    axes[0].set_ylabel("probability")
    fig.suptitle("exact Markov chain (no random seed)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markov_delta_range(result, path):
    """Fig. 8: the Δ range that balances against the mean flow rate (the Markov experiment's fig8)."""
    plt = pyplot()
    sweep = result["fig8"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for i, case in enumerate(("20/10", "40/10")):
        pts = [r for r in sweep if r["paths_gbps"] == case and r["delta_min_us"]]
        x = [r["mean_flow_rate_gbps"] for r in pts]
        ax.plot(x, [r["delta_min_us"] for r in pts], "v-", color=f"C{i}", label=f"{case} Δmin")
        ax.plot(x, [r["delta_max_us"] for r in pts], "^--", color=f"C{i}", label=f"{case} Δmax")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("mean flow rate (C1+C2)/n (Gbps)")
    ax.set_ylabel("flowlet timeout Δ (µs)")
    ax.set_title("exact Markov chain (no random seed)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
