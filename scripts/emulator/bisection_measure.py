"""One measured run of the bisection experiment: every (source,
destination) pair sends one long-lived iperf3 TCP flow, all at once, while
the CPU and the emulator's headroom are sampled."""
from scripts.emulator import traffic
from scripts.emulator.cpu_sample import CpuSample
from scripts.emulator.fidelity import FidelityMonitor, idle_rtt_ms

IPERF_PORT = 5201


def measure(net, host_of, pairs, config):
    """(per-flow receiver Mbit/s after the first config['omit'] seconds, in
    pair order; the CPU sample of the run; the fidelity figures of the
    measured seconds, scripts.emulator.fidelity). ``host_of`` maps the
    pattern's fat-tree host names to the network's Mininet names; the
    pattern's first pair is also the RTT probe's."""
    src, dst = net.get(host_of[pairs[0][0]]), net.get(host_of[pairs[0][1]])
    monitor = FidelityMonitor(probe=(src, dst.IP()), idle_rtt_ms=idle_rtt_ms(src, dst.IP()),
                              settle_s=config['omit'])
    sample = CpuSample().start()
    monitor.start()
    try:
        reports = traffic.iperf3_flows(net, [(host_of[s], host_of[d]) for s, d in pairs],
                                       config['duration'], config['omit'], IPERF_PORT)
    finally:
        fidelity = monitor.stop()
    return [traffic.received_mbps(report) for report in reports], sample.stop(), fidelity
