"""Max-min fair rates by progressive filling, vectorised over a sparse
flows x resources incidence matrix: every flow that is not yet frozen
grows at the same pace until some resource (a directed link, a host NIC)
is full; the flows crossing it freeze at that level; repeat. Each round is
two sparse products, and there are as many rounds as distinct bottleneck
levels (tens at k=48), not one per flow.
"""
import numpy
from scipy import sparse

# A resource counts as full once less than this fraction of it is left:
# float noise of the repeated subtractions, far below any real share.
FULL = 1e-9


def incidence_matrix(paths, n_resources):
    """Flows x resources CSR matrix of ones from ``paths`` (each a sequence
    of resource indices, no repeats)."""
    lengths = numpy.fromiter((len(p) for p in paths), dtype=numpy.int64, count=len(paths))
    columns = numpy.fromiter((r for p in paths for r in p), dtype=numpy.int64, count=int(lengths.sum()))
    rows = numpy.repeat(numpy.arange(len(paths)), lengths)
    return sparse.csr_matrix((numpy.ones(len(columns)), (rows, columns)), shape=(len(paths), n_resources))


def max_min_rates(incidence, capacity):
    """Each flow's max-min fair rate (numpy array, the units of
    ``capacity``) for flows over resources as ``incidence`` (flows x
    resources, ones where a flow uses a resource) and ``capacity`` (one
    per resource). A flow that uses no resource gets 0 (nothing carries it)."""
    incidence = sparse.csr_matrix(incidence, dtype=float)
    capacity = numpy.asarray(capacity, dtype=float)
    by_resource = incidence.T.tocsr()
    rates = numpy.zeros(incidence.shape[0])
    residual = capacity.copy()
    active = numpy.asarray(incidence.sum(axis=1)).ravel() > 0
    while active.any():
        users = by_resource @ active.astype(float)
        shared = users > 0
        step = numpy.min(residual[shared] / users[shared])
        rates[active] += step
        residual -= users * step
        full = shared & (residual <= FULL * capacity)
        frozen = (incidence @ full.astype(float)) > 0
        active &= ~frozen
    return rates
