"""The workload experiment (scripts/experiments/workload.py) on the packet-level
simulator: the flows workload_report.draw_flows draws, each a sized TCP
transfer from its start time, run by scripts/sim/ns3/fattree_sim through the
bisection backend's ``simulate`` (the scheme's exported rules, the dynamic
schemes' controller in the loop, failed links down from the start or, with
``fail_at_s`` in the config, failing then and reaching the controller). Each
flow's FCT and ideal FCT go into the run's record.

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

from scripts.sim.bisection_backend import (
    WALL_S_PER_HOST_GBIT_S,
    EPHEMERAL_PORTS, scheme_network, scheme_params_of, simulate, simulation_record)
from scripts.sim.scenario import SimFailure, SimFlow, SimSettings
from topologies.fattree import FatTree

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


def ideal_of(scheme, topo, config):
    """Each flow's ideal FCT function for a run of ``scheme`` (fat-tree
    host names on ``topo``): on the non-blocking reference every pair is
    one switch apart."""
    def ideal(flow):
        switches = 1 if scheme == 'nonblocking' else topo.switches_between(flow['src'], flow['dst'])
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
                       sender_queue=config['sender_queue'])


def failure_arguments(topo, scheme, config):
    """simulate's arguments for the config's failed links: down from the
    start (the rules computed for them) or, with ``fail_at_s``, failing
    then during the run. The non-blocking reference has none."""
    links = () if scheme == 'nonblocking' else [tuple(link.split('-')) for link in config['fail']]
    if config.get('fail_at_s') is None:
        return {'failed_links': links}
    return {'failures': [SimFailure(config['fail_at_s'], a, topo.port_to(a, b)) for a, b in links]}


SPEED_BASIS = ('the bisection\'s measured %g s of wall time per host, Gbit/s and simulated second, over the '
               'arrivals at the offered load' % WALL_S_PER_HOST_GBIT_S)


def estimate_s(config, run):
    """The bisection's measured speed over the arrivals: every host at the
    offered load (the 79 runs of the 10 Gbit/s FCT table, k=8, took 4,043 s,
    this estimate's 0.6-1.4 times by load)."""
    return WALL_S_PER_HOST_GBIT_S * config['hosts'] * config['bw'] / 1e3 * config['seconds'] * run['load']


def run_one(config, run, progress):
    """One simulated workload run's record: every flow's FCT (None: it did
    not finish) and its ideal on the simulated fabric, the fabric's idle
    RTTs and what the simulation cost and dropped."""
    flows, scheme = run['flows'], run['scheme']
    topo = FatTree(config['k'])
    settings = run_settings(config, run['seed'], config['seconds'] + run['drain_s'])
    ports = source_ports(flows, random.Random('%s/%g/ports' % (run['seed'], run['load'])))
    scheme_topo, named = scheme_network(scheme, config['k'], [(f['src'], f['dst']) for f in flows])
    result = simulate(scheme_topo, scheme, scenario_flows(flows, named, ports, settings.stop_s), settings, progress,
                      control_delay_s=config['control_delay_ms'] / 1e3, scheme_params=scheme_params_of(config),
                      **failure_arguments(scheme_topo, scheme, config))
    fct = {f['id']: f['fct_s'] for f in result['flows']}
    ideal = ideal_of(scheme, topo, config)
    return {'scheme': scheme, 'seed': run['seed'], 'load': run['load'],
            'flows': [{'id': f['id'], 'fct_s': None if fct.get(f['id']) is None else round(fct[f['id']], 6),
                       'ideal_fct_s': ideal(f)} for f in flows],
            'idle_rtt_ms': idle_rtts_ms(scheme, config), 'simulation': simulation_record(result)}
