"""One measured run of the bisection experiment: every (source,
destination) pair sends one long-lived iperf3 TCP flow, all at once, while
the CPU is sampled."""
from scripts.emulator import traffic
from scripts.emulator.cpu_sample import CpuSample

IPERF_PORT = 5201


def measure(net, host_of, pairs, config):
    """(per-flow receiver Mbit/s after the first config['omit'] seconds, in
    pair order; the CPU sample of the run). ``host_of`` maps the pattern's
    fat-tree host names to the network's Mininet names."""
    sample = CpuSample().start()
    reports = traffic.iperf3_flows(net, [(host_of[s], host_of[d]) for s, d in pairs],
                                   config['duration'], config['omit'], IPERF_PORT)
    return [traffic.received_mbps(report) for report in reports], sample.stop()
