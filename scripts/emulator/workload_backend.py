"""The workload experiment's runs on the emulator: the bisection's fabrics
(scripts/emulator/bisection_backend.py), the config's failed links down for
the whole session, and one run (``run_one``): its flows through the hosts'
request/response generator (scripts/emulator/flowgen.py), each flow's FCT
beside its ideal on the idle fabric (scripts/emulator/shaping.py)."""
import contextlib

from scripts.emulator import bisection_backend
from scripts.emulator.fidelity import FidelityMonitor, idle_rtt_ms, verdict
from scripts.emulator.shaping import ideal_fct_s
from topologies.fattree import FatTree

SPEED_BASIS = 'each run its arrivals and drain, and about %d s of restarts and checks (k=4)' % (
    bisection_backend.RUN_OVERHEAD_S)


def estimate_s(config, run):
    return config['seconds'] + run['drain_s'] / 2 + bisection_backend.RUN_OVERHEAD_S


def failed_links(config):
    """The config's failed links ('A-B') as pairs of switch names."""
    return [tuple(link.split('-')) for link in config['fail']]


@contextlib.contextmanager
def session(config, progress):
    """The fabrics up for every run of the block, the failed links down."""
    from scripts.emulator import faults, traffic
    with bisection_backend.session(config, progress) as fabrics:
        if config['fail'] and fabrics.fattree:
            prefix = bisection_backend.MININET_PREFIX
            for a, b in failed_links(config):
                progress('failing fat-tree link %s-%s (carrier down)' % (a, b))
                faults.fail(fabrics.fattree.model, ('link', prefix + a, prefix + b), sites=fabrics.fattree.sites)
            traffic.wait_all_pairs(fabrics.fattree.net, sorted(fabrics.ft_hosts.values()), progress=progress)
        yield fabrics


def base_rtts_s(net, host_of, topo, reference):
    """{switches on the path: idle ping RTT (s)}: one host pair per path length."""
    hosts = [h.name for h in topo.hosts]
    first = hosts[0]
    pairs = {1: (first, hosts[-1])} if reference else {}
    if not reference:
        for other in hosts[1:]:
            pairs.setdefault(topo.switches_between(first, other), (first, other))
    rtts = {}
    for switches, (a, b) in pairs.items():
        rtt = idle_rtt_ms(net.get(host_of[a]), net.get(host_of[b]).IP())
        if rtt is None:
            raise RuntimeError('no ping reply %s -> %s on an idle fabric' % (a, b))
        rtts[switches] = rtt / 1000
    return rtts


def measure(net, host_of, topo, flows, scheme, config, drain_s, progress):
    """(the generator's result per flow id, each flow's ideal FCT (s) by
    id, fidelity figures) of one run."""
    from scripts.emulator.flowgen import run_flows
    reference = scheme == 'nonblocking'
    rtts = base_rtts_s(net, host_of, topo, reference)

    def switches_of(flow):
        return 1 if reference else topo.switches_between(flow['src'], flow['dst'])
    ideal = {f['id']: ideal_fct_s(f['size'], config['bw'], rtts[switches_of(f)], switches_of(f)) for f in flows}
    first, last = host_of[topo.hosts[0].name], host_of[topo.hosts[-1].name]
    monitor = FidelityMonitor(probe=(net.get(first), net.get(last).IP()), idle_rtt_ms=round(max(rtts.values()) * 1000, 3))
    monitor.start()
    try:
        results = run_flows(net, [dict(f, src=host_of[f['src']], dst=host_of[f['dst']]) for f in flows],
                            config['seconds'], drain_s, progress=progress)
    finally:
        figures = monitor.stop()
    return results, ideal, dict(figures, base_rtt_ms={str(s): round(r * 1000, 3) for s, r in rtts.items()})


def run_one(config, run, progress):
    """One workload run's record: every flow's FCT (None: it did not
    finish), its start as the generator saw it and its ideal FCT, and the
    fidelity verdict."""
    if bisection_backend.active() is None:
        with session(dict(config, schemes=[run['scheme']]), progress):
            return run_one(config, run, progress)
    net, host_of = bisection_backend.active().use(run['scheme'])
    results, ideal, figures = measure(net, host_of, FatTree(config['k']), run['flows'], run['scheme'], config,
                                      run['drain_s'], progress)
    return {'scheme': run['scheme'], 'seed': run['seed'], 'load': run['load'],
            'flows': [{'id': f['id'], 'fct_s': results.get(f['id'], {}).get('fct_s'),
                       'start_s': results.get(f['id'], {}).get('start_s'), 'ideal_fct_s': ideal[f['id']]}
                      for f in run['flows']],
            'fidelity': verdict(figures)}
