"""A run the emulator cannot carry is judged so: the non-blocking reference
(a kernel bridge) at a link rate far above what this machine's cores forward
(k=4, 16 flows of 1 Gbit/s each) falls short of its line rate, and the run's
fidelity object says ``ok: false`` and why, through the bisection
experiment's own runner."""
import pytest

from scripts.emulator.fidelity import verdict
from scripts.emulator.bisection_measure import measure
from scripts.emulator.bisection_backend import Fabrics
from scripts.experiments.patterns import seeded
from topologies.fattree import FatTree

pytestmark = pytest.mark.emulation

OVERLOAD_MBPS = 1000.0


def test_an_overloaded_run_is_judged_limited(require_ovs):
    topo = FatTree(4)
    config = {'k': 4, 'bw': OVERLOAD_MBPS, 'queue': 50, 'schemes': ['nonblocking']}
    pairs = seeded('stride-4', topo, 37)
    with Fabrics(config, progress=lambda message: None) as fabrics:
        net, host_of = fabrics.use('nonblocking')
        rates, _, figures = measure(net, host_of, pairs, {'duration': 4, 'omit': 1})
    reference_pct = 100.0 * sum(rates) / (len(pairs) * OVERLOAD_MBPS)
    fidelity = verdict(figures, reference_pct)
    assert reference_pct < 90.0, rates
    assert fidelity['ok'] is False
    assert any(reason.startswith('non-blocking reference') for reason in fidelity['limited_by'])
    # the figures behind the verdict were sampled each second of the measured window;
    # the reference forwards in the kernel, so no ovs-vswitchd thread was busy
    assert fidelity['seconds'] >= 3 and fidelity['idle_pct_median'] is not None
    assert fidelity['daemon_busy_pct_median'] < 1.0
    assert fidelity['idle_rtt_ms'] is not None and fidelity['probe_rtt_ms_median'] is not None
