"""Flow-size distributions: the empirical CDFs of the workload experiment
(`dcfabric workload`, scripts/experiments/workload.py) and of the LetFlow
simulator (scripts/letflow/); sampling them and drawing arrivals is
scripts/workloads/arrivals.py (numpy), so that reading or checking a CDF
needs no numeric library.

The two built-in CDFs are the published ones, as the usual generators ship
them (HKUST-SING TrafficGenerator, conf/DCTCP_CDF.txt and conf/VL2_CDF.txt;
pFabric's and LetFlow's simulations use the same points):

* web-search: DCTCP (Alizadeh et al., SIGCOMM 2010, Fig. 3b, query and
  background traffic of a production web-search cluster);
* data-mining: VL2 (Greenberg et al., SIGCOMM 2009, Fig. 2, flow sizes in
  a data-mining cluster).

Those files start with a "0 0" line (uniform below the first size); the
built-ins here read the first point's probability as a point mass at its
size, as the LetFlow runs always did (the means differ by under 0.1%). A
file given by path is read as written, "0 0" included.

A CDF file has one point per line, ``SIZE_BYTES CUMULATIVE_PROBABILITY``
(blank lines and ``#`` comments are skipped): sizes increasing,
probabilities non-decreasing, the last 1.
"""


from dataclasses import dataclass
from typing import List, Tuple


class CdfError(ValueError):
    """A CDF (or a CDF file) that is not a flow-size distribution: the message says where."""


@dataclass(frozen=True)
class FlowSizeCdf:
    """An empirical flow-size CDF given as (bytes, cumulative probability) points.

    Between points the CDF is linear in bytes (the usual reading of these
    tables); the probability of the first point is a point mass at its size,
    since the tables say nothing about smaller flows (a first point of
    probability 0, as in "0 0", has none).
    """

    name: str
    points: Tuple[Tuple[float, float], ...]

    def __post_init__(self):
        problem = _problem(self.points)
        if problem:
            raise CdfError(f"CDF {self.name!r}: {problem}")

    def mean_bytes(self) -> float:
        (s0, p0), rest = self.points[0], self.points[1:]
        mean = s0 * p0
        for (sa, pa), (sb, pb) in zip(self.points, rest):
            mean += (pb - pa) * (sa + sb) / 2  # uniform within a linear segment
        return mean

    def largest_bytes(self) -> float:
        return self.points[-1][0]

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

def _problem(points) -> str:
    """What makes `points` no flow-size CDF ('' when nothing does)."""
    if len(points) < 2:
        return "needs at least two points"
    sizes = [s for s, _ in points]
    probs = [p for _, p in points]
    if sizes[0] < 0 or (sizes[0] == 0 and probs[0] != 0) or any(b <= a for a, b in zip(sizes, sizes[1:])):
        return "sizes must be positive and increasing"
    if any(b < a for a, b in zip(probs, probs[1:])) or not 0 <= probs[0] <= 1:
        return "probabilities must be non-decreasing in [0, 1]"
    if probs[-1] != 1:
        return f"must end at probability 1, not {probs[-1]}"
    return ""


WEB_SEARCH = FlowSizeCdf("web-search", (
    (10000, .15), (20000, .2), (30000, .3), (50000, .4), (80000, .53), (200000, .6),
    (1e6, .7), (2e6, .8), (5e6, .9), (1e7, .97), (3e7, 1)))

DATA_MINING = FlowSizeCdf("data-mining", (
    (180, .1), (216, .2), (560, .3), (900, .4), (1100, .5), (1870, .6), (3160, .7),
    (1e4, .8), (4e5, .9), (3.16e6, .95), (1e8, .98), (1e9, 1)))

WORKLOADS = {cdf.name: cdf for cdf in (WEB_SEARCH, DATA_MINING)}


def workload(name: str) -> FlowSizeCdf:
    """A built-in CDF by name: web-search or data-mining (websearch, datamining too)."""
    for known, cdf in WORKLOADS.items():
        if name in (known, known.replace("-", "")):
            return cdf
    raise ValueError(f"unknown workload {name!r}; choose from {sorted(WORKLOADS)}") from None


def load_cdf(path: str) -> FlowSizeCdf:
    """The CDF in file `path` (the format in this module's docstring);
    CdfError naming the file and the line that is wrong."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as error:
        raise CdfError(f"cannot read CDF file {path}: {error.strerror}") from None
    points: List[Tuple[float, float]] = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        try:
            if len(fields) != 2:
                raise ValueError
            point = (float(fields[0]), float(fields[1]))
        except ValueError:
            raise CdfError(f"{path} line {number}: {line.strip()!r} is not "
                           "'SIZE_BYTES CUMULATIVE_PROBABILITY'") from None
        problem = _point_problem(points[-1] if points else None, point)
        if problem:
            raise CdfError(f"{path} line {number}: {line.strip()!r}: {problem}")
        points.append(point)
    if len(points) < 2 or points[-1][1] != 1:
        raise CdfError(f"{path}: {_problem(points) or 'must end at probability 1'} "
                       f"({len(points)} point(s) read)")
    return FlowSizeCdf(path, tuple(points))


def _point_problem(previous, point) -> str:
    size, prob = point
    if size < 0 or (size == 0 and prob != 0):
        return "a size must be positive (or 0 with probability 0)"
    if not 0 <= prob <= 1:
        return "a probability must be in [0, 1]"
    if previous and size <= previous[0]:
        return f"sizes must increase (the point before is {previous[0]:g} bytes)"
    if previous and prob < previous[1]:
        return f"probabilities must not decrease (the point before has {previous[1]:g})"
    return ""


def cdf_of(name_or_path: str) -> FlowSizeCdf:
    """A built-in CDF by name, else the CDF file at that path."""
    try:
        return workload(name_or_path)
    except ValueError:
        pass
    if "/" in name_or_path or "." in name_or_path:
        return load_cdf(name_or_path)
    raise ValueError(f"unknown workload {name_or_path!r}: name a built-in ({', '.join(sorted(WORKLOADS))}) "
                     "or a CDF file")


def check_load(load: float) -> float:
    """`load` as a fraction of link rate; ValueError unless in (0, 1]."""
    if not 0 < load <= 1:
        raise ValueError(f"load must be in (0, 1] (a fraction of the link rate), got {load:g}")
    return load
