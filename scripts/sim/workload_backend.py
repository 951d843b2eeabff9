"""The workload experiment (scripts/fattree/workload.py) on the packet-level
simulator: the flows workload_report.draw_flows draws, each a sized TCP
transfer from its start time, run by scripts/sim/ns3/fattree_sim through the
bisection backend's ``simulate`` (the scheme's exported rules, the dynamic
schemes' controller in the loop, failed links down from the start or, with
``fail_at_s`` in the config, failing then and reaching the controller). Their
FCTs become workload_report's rows, files and plots.

A simulated flow connects at its start time and sends its bytes; the FCT
runs from the connect to the last byte at the receiver. Its ideal FCT is
what the simulated fabric gives it alone, computed from the link rate, the
propagation delay and the hops (``ideal_fct_s``): the simulator forwards a
packet the moment it arrives and has no other cost, so its idle RTT is the
frames' serialization and propagation, which a simulated ping would only
measure again. tests/unit/test_sim_workload.py checks the formula against
lone simulated flows.
"""
import math
import random

from scripts.fattree.workload_report import (
    default_drain_s, draw_flows, finished_line, flow_rows, run_counts, switches_between, tcp_setting)
from scripts.sim.bisection_backend import (
    EPHEMERAL_PORTS, scheme_network, scheme_params_of, simulate, simulation_record)
from scripts.sim.network import SimFailure, SimFlow, SimSettings, sender_queue_of

# ns-3's frames on a point-to-point link: PPP 2 bytes, IP 20, TCP 20 and its
# options: the timestamp on every segment (12 padded), window scale and
# SACK-permitted beside it on the SYN and SYN-ACK (16 padded).
SEGMENT_BYTES = 1448
SEGMENT_OVERHEAD_BYTES = 2 + 20 + 32
SYN_FRAME_BYTES = 2 + 20 + 36
ACK_FRAME_BYTES = SEGMENT_OVERHEAD_BYTES


def wire_s(frame_bytes, link_mbps):
    return frame_bytes * 8 / (link_mbps * 1e6)


def idle_rtt_s(switches, link_mbps, link_delay_us):
    """The handshake's round trip on an idle path through ``switches``
    switches: a SYN out and a SYN-ACK back over its links, each frame
    serialized and propagated on every one."""
    return 2 * (switches + 1) * (wire_s(SYN_FRAME_BYTES, link_mbps) + link_delay_us * 1e-6)


def ideal_fct_s(size_bytes, switches, link_mbps, link_delay_us):
    """A flow's FCT alone on the simulated fabric: the handshake's idle RTT,
    then the ACK that completes it and every data frame back to back on
    the first link (the initial window of 10 segments outlasts the idle
    path's round trip, so the sender never waits), the largest frame once
    more per further link (store and forward), and the propagation."""
    if size_bytes < 1:
        raise ValueError('a simulated flow needs at least a byte, got %r' % (size_bytes,))
    segments = math.ceil(size_bytes / SEGMENT_BYTES)
    frames = size_bytes + segments * SEGMENT_OVERHEAD_BYTES
    largest = min(size_bytes, SEGMENT_BYTES) + SEGMENT_OVERHEAD_BYTES
    links = switches + 1
    return (idle_rtt_s(switches, link_mbps, link_delay_us) + wire_s(ACK_FRAME_BYTES + frames, link_mbps)
            + (links - 1) * wire_s(largest, link_mbps) + links * link_delay_us * 1e-6)


def source_ports(flows, draw):
    """A Linux-like random ephemeral source port per flow (a select group
    hashes it), never the same twice on one host."""
    taken, ports = {}, []
    for flow in flows:
        used = taken.setdefault(flow['src'], set())
        if len(used) > EPHEMERAL_PORTS[1] - EPHEMERAL_PORTS[0]:
            raise ValueError('%s starts more flows than it has ephemeral ports' % flow['src'])
        port = draw.randint(*EPHEMERAL_PORTS)
        while port in used:
            port = draw.randint(*EPHEMERAL_PORTS)
        used.add(port)
        ports.append(port)
    return ports


def scenario_flows(flows, named, ports, stop_s):
    """The simulator's flows for draw_flows' ``flows``, their hosts as
    ``named`` (scheme_network) and their source ports: each sends its size
    from its start time, given until ``stop_s`` to finish."""
    return [SimFlow(src, dst, flow['start_s'], stop_s, bytes=flow['size'], src_port=port)
            for flow, (src, dst), port in zip(flows, named, ports)]


def fcts_of(result):
    """{flow id: {'fct_s'}} of the flows the simulator saw finish, in the
    shape workload_report.flow_rows takes the generator's results."""
    return {f['id']: {'fct_s': round(f['fct_s'], 6)} for f in result['flows'] if f['fct_s'] is not None}


def ideal_of(scheme, topo, config):
    """Each flow's ideal FCT function for a run of ``scheme`` (fat-tree
    host names on ``topo``): on the non-blocking reference every pair is
    one switch apart."""
    def ideal(flow):
        switches = 1 if scheme == 'nonblocking' else switches_between(topo, flow['src'], flow['dst'])
        return ideal_fct_s(flow['size'], switches, config['bw'], config['link_delay_us'])
    return ideal


def idle_rtts_ms(scheme, config):
    """{switches on a path: its idle RTT (ms)} of the fabric ``scheme`` runs
    on, as the emulator's runs record their pinged base RTTs."""
    lengths = (1,) if scheme == 'nonblocking' else (1, 3, 5)
    return {str(switches): round(idle_rtt_s(switches, config['bw'], config['link_delay_us']) * 1e3, 4)
            for switches in lengths}


def run_settings(config, seed, stop_s):
    return SimSettings(link_mbps=config['bw'], stop_s=stop_s, queue_packets=config['queue'],
                       link_delay_us=config['link_delay_us'], min_rto_ms=config['min_rto_ms'], tcp=config['tcp'],
                       ecn_threshold_packets=config['ecn_threshold_packets'], seed=seed,
                       sender_queue=sender_queue_of(config))


def failure_arguments(topo, scheme, config):
    """simulate's arguments for the config's failed links: down from the
    start (the rules computed for them) or, with ``fail_at_s``, failing
    then during the run. The non-blocking reference has none."""
    links = () if scheme == 'nonblocking' else config['fail']
    if config.get('fail_at_s') is None:
        return {'failed_links': links}
    return {'failures': [SimFailure(config['fail_at_s'], a, topo.port_to(a, b)) for a, b in links]}


def run_experiment(config, topo, cdf, record, progress):
    """For each seed and load, every scheme in turn on the same flows (the
    non-blocking reference first), one simulation each, the arrivals plus
    the drain long."""
    for seed in config['seeds']:
        for load in config['loads']:
            flows = draw_flows(topo, cdf, load, config['bw'], config['seconds'], config['pattern'], seed)
            config['drain_s'].append(config['drain'] or default_drain_s(flows, config['bw']))
            settings = run_settings(config, seed, config['seconds'] + config['drain_s'][-1])
            ports = source_ports(flows, random.Random('%s/%g/ports' % (seed, load)))
            for scheme in config['schemes']:
                progress('%s, load %g, seed %d: %d flows over %g s, then at most %g s to drain (simulated, %s)'
                         % (scheme, load, seed, len(flows), config['seconds'], config['drain_s'][-1],
                            tcp_setting(config)))
                scheme_topo, named = scheme_network(scheme, config['k'], [(f['src'], f['dst']) for f in flows])
                result = simulate(scheme_topo, scheme, scenario_flows(flows, named, ports, settings.stop_s),
                                  settings, progress, control_delay_s=config['control_delay_ms'] / 1e3,
                                  scheme_params=scheme_params_of(config),
                                  **failure_arguments(scheme_topo, scheme, config))
                rows = flow_rows(scheme, seed, load, flows, fcts_of(result), ideal_of(scheme, topo, config))
                run = {'scheme': scheme, 'seed': seed, 'load': load, **run_counts(rows),
                       'idle_rtt_ms': idle_rtts_ms(scheme, config), 'simulation': simulation_record(result)}
                record(rows, run)
                progress('%s, simulated %g s in %.1f s' % (finished_line(run, rows), result['simulated_s'],
                                                           result['wall_s']))
