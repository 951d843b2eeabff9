"""The bisection experiment's emulation: the non-blocking reference and the
fat-tree in Mininet, the fat-tree's controller per scheme, and the order of
the runs."""
import json
import time
import urllib.request

from controller.fattree.scheme_parameters import SIMULATOR_ONLY, refuse_simulator_only
from controller.fattree.scheme_strategies import DYNAMIC_SCHEMES
from scripts.argtypes import positive
from scripts.emulator.ovs import daemon_policy
from scripts.fattree.bisection_measure import measure
from scripts.fattree.patterns import label
from scripts.emulator.fidelity import describe, verdict
from scripts.emulator.ports import free_port
from scripts.emulator.traffic import TransferError
from topologies.fattree import FatTree

# Every scheme an experiment can run, in run order; the emulator refuses
# those only the simulator runs, and they are named, never defaults.
SCHEMES = ('nonblocking', 'twolevel', 'ecmp', 'classifier', 'scheduler', 'letflow')
DEFAULT_SCHEMES = tuple(s for s in SCHEMES if s not in SIMULATOR_ONLY)
FLOW_IDLE_S = 5  # per-flow entries' idle timeout
RUN_ATTEMPTS = 3
MININET_PREFIX = 'bx'  # fat-tree node names in Mininet: bxe0_0, bxh0_0_2, ...


def add_ovs_instances_argument(p):
    p.add_argument('--ovs-instances', type=positive(int), metavar='N',
                   help='private Open vSwitch daemons the fat-tree\'s switches are spread over (default: '
                        'by the machine\'s cores and the forwarding the link rate needs, printed at start; '
                        '1: the machine\'s own)')


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


def run_experiment(config, flows_of, record, progress):
    """For each seed (repetition) and pattern, every scheme in turn
    (fat-tree schemes in alternating order, saving a controller restart
    per pattern; the non-blocking reference first, so that every run's
    fidelity verdict knows what the reference carried)."""
    fattree_schemes = [s for s in config['schemes'] if s != 'nonblocking']
    line_rate = config['hosts'] * config['bw']
    reference_pct = {}  # (pattern, rep) -> the non-blocking reference's % of line rate
    with Fabrics(config, progress) as fabrics:
        for rep, seed in enumerate(config['seeds']):
            for index, pattern in enumerate(config['patterns']):
                order = fattree_schemes if index % 2 == 0 else fattree_schemes[::-1]
                if 'nonblocking' in config['schemes']:
                    order = ['nonblocking'] + order
                for scheme in order:
                    pairs = flows_of[(pattern, rep)]
                    rates, cpu, figures = run_once(fabrics, scheme, pairs, config, progress)
                    if scheme == 'nonblocking':
                        reference_pct[(pattern, rep)] = round(100.0 * sum(rates) / line_rate, 1)
                    fidelity = verdict(figures, reference_pct.get((pattern, rep)))
                    run = {'scheme': scheme, 'pattern': pattern, 'rep': rep, 'seed': seed,
                           'flows': [{'src': s, 'dst': d, 'mbps': round(r, 3)}
                                     for (s, d), r in zip(pairs, rates)],
                           'aggregate_mbps': round(sum(rates), 3), **cpu, 'fidelity': fidelity}
                    if scheme in DYNAMIC_SCHEMES:  # what the controller did to the flows, to explain a score
                        run['controller_decisions'] = fabrics.decisions()
                    record(run)
                    progress('%-12s %-26s seed %d: %7.1f Mbit/s aggregate, idle %s%%, '
                             'ovs-vswitchd %s%%, RTT %s ms (idle %s): %s'
                             % (scheme, label(pattern), seed, sum(rates), fidelity['idle_pct_median'],
                                fidelity['daemon_busy_pct_median'], fidelity['probe_rtt_ms_median'],
                                fidelity['idle_rtt_ms'], describe(fidelity)))
