"""The emulated Kevin experiment: one fresh fabric per scheme and seed
(Mininet + the Ryu apps), elephants and mice on it, and what the
controller and the hosts' pings saw."""
import json
import os
import statistics
import time
import urllib.request

from controller.kevin.distda import DistDaAgent
from controller.kevin.scheduler import DaScheduler
from scripts.emulator import traffic
from scripts.emulator.cpu_sample import CpuSample
from scripts.emulator.fidelity import FidelityMonitor, describe, verdict
from scripts.kevin.emulation_stats import da_ready_s, ping_summary
from scripts.emulator.ports import free_port
from topologies.kevin import Kevin, KevinParameterError, address_str, host_name

SCHEMES = ('none', 'bfs', 'greedy', 'distda')
IPERF_PORT = 5201
MICE_INTERVAL_S, MICE_BYTES = 0.2, 1000  # 5 pings/s of 1000 B: ~5 kB/s, far below the threshold


def scheme_setup(scheme, args):
    """(controller app, its parameters) of a scheme, checked here (by
    building the pure scheduler or agent) so that a bad value is a clear
    error now rather than a controller that dies during start-up."""
    kevin = Kevin(args.n, args.k_s, args.k_d, hosts_per_tor=args.hosts)
    params = {'n': args.n, 'k_s': args.k_s, 'k_d': args.k_d, 'hosts': args.hosts}
    if scheme == 'none':
        return 'controller.kevin.app', dict(params, scheduler='none')
    timing = {'period': args.period, 'delta': args.delta, 'reservation': args.reservation,
              'threshold': args.threshold}
    if scheme == 'distda':
        if kevin.k_d == 0:
            raise KevinParameterError('%s has no DA spines for DistDA' % kevin.name)
        DistDaAgent(kevin, kevin.addresses[0], args.threshold, args.reservation, args.delta,
                    args.request_timeout)
        return 'controller.kevin.distda_app', dict(params, request_timeout=args.request_timeout, **timing)
    DaScheduler(kevin, scheme, **timing)
    return 'controller.kevin.app', dict(params, scheduler=scheme, **timing)


def controller_state(fabric):
    """The controller's /kevin/state (see controller.kevin.app)."""
    url = 'http://127.0.0.1:%d/kevin/state' % fabric.controller.rest_port
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def tors_on_path(net, source, destination):
    """ToRs that decremented the TTL on the source -> destination path (each
    ToR decrements once, spines never): the reply to a ping from the
    destination's host travels that path. None if the ping got no answer."""
    ttl = traffic.reply_ttl(net, host_name(destination, 0), host_name(source, 0))
    return None if ttl is None else 64 - ttl


def run_scheme(scheme, rep, seed, args, kevin, elephants, mice):
    """One fresh fabric with ``scheme``; the measurements of one run."""
    from scripts.emulator.fabric import Fabric
    from scripts.emulator.progress import progress
    app, params = scheme_setup(scheme, args)
    mice_host = min(1, args.hosts - 1)
    run = {'scheme': scheme, 'rep': rep, 'seed': seed, 'app': app, 'params': params,
           'loadavg_before': os.getloadavg()[0]}
    with Fabric(kevin, app, params, ofp_port=free_port(), rest_port=free_port(), bw=args.bw) as fabric:
        net = fabric.net
        traffic.limit_queues(net, args.queue)
        traffic.wait_all_pairs(net, [h.name for h in kevin.hosts], progress=progress)
        run['tors_before'] = [tors_on_path(net, s, t) for s, t in elephants]
        progress('%s: elephants cross %s ToRs; %d elephants and %d mice for %ds'
                 % (scheme, run['tors_before'], len(elephants), len(mice), args.duration))
        procs = []
        try:
            for i, (_, t) in enumerate(elephants):
                procs.append(net.get(host_name(t, 0)).popen(
                    ['iperf3', '-s', '-1', '-p', str(IPERF_PORT + i)]))
            time.sleep(1)  # servers listening
            cpu = CpuSample().start()
            monitor = FidelityMonitor(settle_s=1).start()  # as iperf3's first second, TCP's slow start
            started = time.monotonic()
            mice_hosts = [(host_name(s, mice_host), host_name(t, mice_host)) for s, t in mice]
            mice_procs = [traffic.start_ping(net, src, dst, ['-q', '-i', str(MICE_INTERVAL_S), '-s',
                                                             str(MICE_BYTES), '-w', str(args.duration)])
                          for src, dst in mice_hosts]
            procs += mice_procs
            clients = [net.get(host_name(s, 0)).popen(
                ['iperf3', '-c', net.get(host_name(t, 0)).IP(), '-p', str(IPERF_PORT + i),
                 '-t', str(args.duration), '-J']) for i, (s, t) in enumerate(elephants)]
            procs += clients
            run['probes'] = []
            # iperf3 can outlive -t when its peer stalls; its report then times out
            while any(c.poll() is None for c in clients) and \
                    time.monotonic() - started < args.duration + 30:
                at = time.monotonic() - started
                tors = [tors_on_path(net, s, t) for s, t in elephants]
                run['probes'].append({'t': round(at, 2), 'tors': tors})
                progress('%s t=%4.1fs: elephant paths %s ToRs' % (scheme, at, tors))
                time.sleep(max(0.0, at + 1 - (time.monotonic() - started)))
            reports = [traffic.iperf3_report(host_name(s, 0), host_name(t, 0), c, 30)
                       for (s, t), c in zip(elephants, clients)]
            mice_out = [traffic.ping_output(src, dst, proc, args.duration + 10)
                        for (src, dst), proc in zip(mice_hosts, mice_procs)]
            run['cpu'] = cpu.stop()
            run['fidelity'] = verdict(monitor.stop())
            progress('%s: %s' % (scheme, describe(run['fidelity'])))
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        time.sleep(0.5)
        run['tors_after'] = [tors_on_path(net, s, t) for s, t in elephants]
        state = controller_state(fabric)
    run['da_links'] = state['da_links']
    run['distda'] = state.get('distda')
    if run['distda']:
        del run['distda']['per_tor']  # kept in the controller; totals are what is compared
    second_half = args.duration / 2
    run['elephants'] = []
    for i, ((s, t), report) in enumerate(zip(elephants, reports)):
        model_tors, ready = da_ready_s(kevin, state, (s, t), started)
        late = [x['sum']['bits_per_second'] for x in report['intervals']
                if x['sum']['start'] >= second_half - 1e-6]
        run['elephants'].append({
            'source': address_str(s), 'destination': address_str(t),
            'tors_before': run['tors_before'][i], 'tors_after': run['tors_after'][i],
            'model_tors_after': model_tors, 'da_ready_s': ready,
            'mbps': traffic.received_mbps(report),
            'mbps_second_half': statistics.fmean(late) / 1e6 if late else None})
    run['mice'] = [dict(ping_summary(out), source=address_str(s), destination=address_str(t))
                   for (s, t), out in zip(mice, mice_out)]
    return run
