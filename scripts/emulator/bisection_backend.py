"""The bisection and workload experiments' runs on the emulator: the
non-blocking reference and the fat-tree in Mininet, the fat-tree's
controller per scheme; one bisection run (``run_one``) on them.

Consecutive runs in one ``session`` share the two fabrics; a run outside
one (on a Dask worker) starts and stops them itself.
"""
import contextlib
import json
import time
import urllib.request

from controller.fattree.scheme_parameters import refuse_simulator_only
from controller.fattree.scheme_strategies import DYNAMIC_SCHEMES
from scripts.emulator.ovs import daemon_policy
from scripts.emulator.bisection_measure import measure
from scripts.emulator.fidelity import verdict
from scripts.emulator.ports import free_port
from scripts.emulator.traffic import TransferError
from topologies.fattree import FatTree

FLOW_IDLE_S = 5  # per-flow entries' idle timeout
RUN_ATTEMPTS = 3
MININET_PREFIX = 'bx'  # fat-tree node names in Mininet: bxe0_0, bxh0_0_2, ...
# A run's time beside its flows: the controller's restart and the all-pairs check, iperf3's start and end
# (measured: 6-12 s at k=4), and the fabrics' start once per session.
RUN_OVERHEAD_S = 10
SPEED_BASIS = 'each run its flows\' seconds and about %d s of restarts and checks (k=4)' % RUN_OVERHEAD_S


def daemons_config(k, bw, asked=None):
    """The entries of an experiment's config that name the fat-tree's
    ovs-vswitchd daemons: the count asked for, or the daemon policy's for
    this machine (scripts/emulator/ovs/daemon_policy.py), and why."""
    choice = daemon_policy.choose_for(FatTree(k), bw, asked)
    return {'ovs_instances': choice.count, 'ovs_instances_reason': choice.reason}


def daemons_of(config):
    """The fat-tree's daemons as its config names them."""
    count = config['ovs_instances']
    return daemon_policy.DaemonChoice(count, config.get('ovs_instances_reason') or daemon_policy.asked(count).reason)


class Fabrics:
    """The non-blocking reference and the fat-tree, both up for the whole
    experiment, so that every scheme of one pattern is measured within a
    few minutes (machine load from other work drifts over longer spans).
    The fat-tree changes scheme by restarting its controller, which clears
    and reinstalls every switch on connect. It runs in Mininet under
    prefixed names (topologies.renamed), so that it can share the machine
    with another fat-tree emulation."""

    def __init__(self, config, progress):
        for scheme in config['schemes']:  # before any fabric starts
            refuse_simulator_only(scheme)
        self.config, self.progress = config, progress
        self.k, self.bw = config['k'], config['bw']
        self.hosts = [h.name for h in FatTree(self.k).hosts]
        self.nonblocking = self.fattree = None
        self.scheme = None  # the fat-tree controller's scheme
        self.used = False  # whether a run has used the fat-tree's controller

    def params(self, scheme):
        return {'k': self.k, 'scheme': scheme, 'link_mbps': self.bw, 'flow_idle': FLOW_IDLE_S}

    def __enter__(self):
        from scripts.emulator.fabric import Fabric, KernelBridgeFabric
        from topologies.nonblocking import NonBlocking, host_name
        from topologies.renamed import renamed
        schemes = self.config['schemes']
        try:
            if 'nonblocking' in schemes:
                self.nonblocking = KernelBridgeFabric(NonBlocking(self.k), bw=self.bw).__enter__()
                self.nb_hosts = {h: host_name(i) for i, h in enumerate(self.hosts)}
                self._ready(self.nonblocking, self.nb_hosts)
            first = next((s for s in schemes if s != 'nonblocking'), None)
            if first:
                self.fattree = Fabric(renamed(FatTree(self.k), MININET_PREFIX), 'controller.fattree.routing_app',
                                      self.params(first), ofp_port=free_port(), rest_port=free_port(),
                                      bw=self.bw, ovs_instances=daemons_of(self.config)).__enter__()
                self.ft_hosts = {h: MININET_PREFIX + h for h in self.hosts}
                self.scheme = first
                self._ready(self.fattree, self.ft_hosts)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _ready(self, fabric, host_of):
        from scripts.emulator import traffic
        traffic.limit_queues(fabric.net, self.config['queue'])
        traffic.wait_all_pairs(fabric.net, sorted(host_of.values()), progress=self.progress)

    def __exit__(self, *exc):
        for fabric in (self.fattree, self.nonblocking):
            if fabric is not None:
                fabric.stop()

    def use(self, scheme):
        """(Mininet net, fat-tree host -> Mininet host) ready for a run of
        ``scheme``: the fat-tree's controller runs ``scheme`` and, for a
        scheme with per-flow state, has run nothing before."""
        if scheme == 'nonblocking':
            return self.nonblocking.net, self.nb_hosts
        if scheme != self.scheme or (scheme in DYNAMIC_SCHEMES and self.used):
            self.restart(scheme)
        self.used = True
        return self.fattree.net, self.ft_hosts

    def restart(self, scheme):
        """A new controller running ``scheme``: it deletes every switch's
        flows (the previous controller's per-flow entries with them) and
        installs its own as each reconnects."""
        controller = self.fattree.controller
        controller.stop()
        controller.params = self.params(scheme)
        controller.start()
        self.scheme, self.used = scheme, False
        self._wait_installed(controller)
        self._ready(self.fattree, self.ft_hosts)

    def decisions(self):
        """The per-flow decisions the fat-tree's controller has logged
        (classifier moves, scheduler placements and releases): since its
        last restart, so for a scheme with per-flow state exactly those of
        the run just measured."""
        return logged_decisions(self.fattree.controller.log_path)

    def _wait_installed(self, controller, timeout=60):
        """Until every switch is back on the new controller (which replaced
        its rules on connect): its REST view lists the connected switches."""
        wanted = len(FatTree(self.k).switches)
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                url = 'http://127.0.0.1:%d/fattree/state/switches' % controller.rest_port
                with urllib.request.urlopen(url, timeout=5) as answer:
                    if len(json.loads(answer.read())) == wanted:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise TimeoutError('fat-tree switches did not all reconnect within %ds' % timeout)


def logged_decisions(log_path):
    """The lines of a controller log that record a dynamic scheme's
    decision (controller.fattree.scheme_strategies logs each as 'SCHEME: ...')."""
    with open(log_path) as log:
        return [line.rstrip('\n') for line in log if line.startswith(tuple(s + ': ' for s in DYNAMIC_SCHEMES))]


def run_once(fabrics, scheme, pairs, config, progress):
    """(per-flow Mbit/s, CPU sample) of one run of ``scheme``. A run whose
    iperf3 lost its control connection (it happens on a loaded machine)
    is run again, on a fresh controller for a scheme with per-flow state."""
    for attempt in range(1, RUN_ATTEMPTS + 1):
        net, host_of = fabrics.use(scheme)
        try:
            return measure(net, host_of, pairs, config)
        except TransferError as err:
            if attempt == RUN_ATTEMPTS:
                raise
            progress('%s; again' % err)
            time.sleep(2)  # the killed flows' packets leave the queues


_open = None  # the fabrics of the session this process holds


@contextlib.contextmanager
def session(config, progress):
    """The fabrics up for every run of the block, in this process."""
    global _open
    with Fabrics(config, progress) as fabrics:
        _open = fabrics
        try:
            yield fabrics
        finally:
            _open = None


def active():
    """The fabrics of this process's session (None: no session)."""
    return _open


def estimate_s(config, run):
    return config['duration'] + config['omit'] + RUN_OVERHEAD_S


def run_one(config, run, progress):
    """One bisection run's record: every flow's received rate, the CPU
    sample and the fidelity verdict (judged without the reference's share,
    which the experiment adds), and for a dynamic scheme what its
    controller decided."""
    if _open is None:
        with session(dict(config, schemes=[run['scheme']]), progress):
            return run_one(config, run, progress)
    pairs = [tuple(pair) for pair in run['flows']]
    rates, cpu, figures = run_once(_open, run['scheme'], pairs, config, progress)
    record = {'scheme': run['scheme'], 'pattern': run['pattern'], 'rep': run['rep'], 'seed': run['seed'],
              'flows': [{'src': s, 'dst': d, 'mbps': round(r, 3)} for (s, d), r in zip(pairs, rates)],
              'aggregate_mbps': round(sum(rates), 3), **cpu, 'fidelity': verdict(figures)}
    if run['scheme'] in DYNAMIC_SCHEMES:  # what the controller did to the flows, to explain a score
        record['controller_decisions'] = _open.decisions()
    return record
