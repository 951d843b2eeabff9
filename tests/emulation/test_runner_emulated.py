"""An emulated bisection run through a Dask worker that holds the resource
fabric=1 (scripts/runner/loop.py), as docs/design.md starts one per
machine: the run is the worker's, in a process of its own, and its record
carries the emulator's fidelity verdict and the reference's flows' rates."""
import glob
import os

import pytest

from scripts.experiments import bisection
from scripts.runner import records
from tests.dask_cluster import DaskCluster

pytestmark = pytest.mark.emulation


def test_an_emulated_run_goes_through_a_worker_holding_a_fabric(require_ovs, tmp_path):
    cluster = DaskCluster(tmp_path, workers=1, resources='fabric=1')
    try:
        bisection.main(['--k', '4', '--bw', '5', '--seeds', '41', '--patterns', 'stride-4', '--schemes', 'nonblocking',
                        '--duration', '3', '--omit', '1', '--dask', cluster.address, '--out', str(tmp_path / 'out')])
    finally:
        cluster.close()
    (run_dir,) = glob.glob(str(tmp_path / 'out' / '*'))
    _, backend, config, plan = records.load_plan(run_dir)
    (record,) = records.finished(run_dir, plan).values()
    assert backend == 'emulator' and config['calibration']['key']
    assert record['ran_on']['pid'] != os.getpid() and 'ok' in record['fidelity']
    # the kernel bridge carried the 16 flows (this machine's reference: 77-92% of line rate at 5 Mbit/s)
    assert record['aggregate_mbps'] > 0.5 * 16 * 5
