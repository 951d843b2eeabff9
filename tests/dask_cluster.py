"""A Dask scheduler and workers started by their own command lines on
127.0.0.1, as docs/design.md starts them on servers, for the runner's tests."""
import os
import subprocess
import sys

from scripts.emulator.ports import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASK = os.path.join(os.path.dirname(sys.executable), 'dask')


class DaskCluster:
    """A Dask scheduler and workers started by their own command lines on
    127.0.0.1, as docs/design.md starts them on servers; a run is tried
    once, so a lost worker's runs fail instead of moving to another."""

    def __init__(self, tmp_path, workers=2, resources=None):
        self.port = free_port()
        self.address = 'tcp://127.0.0.1:%d' % self.port
        env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES='0')
        self.log = open(tmp_path / 'dask.log', 'w')
        self.scheduler = subprocess.Popen([DASK, 'scheduler', '--host', '127.0.0.1', '--port', str(self.port),
                                           '--no-dashboard'], cwd=ROOT, env=env, stdout=self.log, stderr=self.log)
        self.workers = [subprocess.Popen([DASK, 'worker', self.address, '--nworkers', '1', '--nthreads', '1',
                                          '--no-dashboard', '--name', 'w%d' % i]
                                         + (['--resources', resources] if resources else []), cwd=ROOT, env=env,
                                         stdout=self.log, stderr=self.log) for i in range(workers)]
        self.wait_for(workers)

    def wait_for(self, workers, timeout=60):
        from distributed import Client
        with Client(self.address, timeout='30s') as client:
            client.wait_for_workers(workers, timeout=timeout)

    def close(self):
        for proc in self.workers + [self.scheduler]:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.workers + [self.scheduler]:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.log.close()
