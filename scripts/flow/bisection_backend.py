"""The bisection experiment on the flow-level backend: one run's flows as
fluids over the controller's exported rules (scripts.flow.fabric), the
dynamic schemes' controller the app's own strategies in simulated time.

As the packet-level backend (scripts.sim.bisection_backend), flows run from
0 to omit + duration and count from omit on; source ports are drawn from
the same seeded stream, so a select group hashes every flow as in that
backend's run of the same seed; destination ports are each destination's
5201, 5202, ... in flow order. Flows start together at 0 (the packet-level
runs spread them over a millisecond; their first packets reach the
controller in that start order here too). A poll happens every period; its
flow-mods take effect the control delay later, and rates are recomputed
then. A flow's Mbit/s is its mean rate over the measured interval, as a
share of link capacity: no headers are taken off.
"""
import random
import time

from scripts.flow.fabric import FlowFabric
from scripts.sim import rules_export
from scripts.sim.bisection_backend import (
    EPHEMERAL_PORTS, START_SPREAD_S, scheme_network, scheme_params_of)
from scripts.sim.controller_loop import CONTROL_DELAY_S, DYNAMIC_SCHEMES, ControllerLoop

FIRST_SINK_PORT = 5201  # iperf3's, as the other backends' flows
REFUSED = {'letflow': 'a fluid model has no packets and so no flowlets (the gaps in a flow that '
                      'LetFlow re-routes at); run it on the packet-level simulator (--backend sim)'}


def flow_ports(pairs, seed):
    """([(start s, source port)] drawn as the packet-level backend draws
    them, [destination port]) for ``pairs`` in order."""
    draw = random.Random('%s/start' % seed)
    starts = [(draw.uniform(0, START_SPREAD_S), draw.randint(*EPHEMERAL_PORTS)) for _ in pairs]
    next_port, dports = {}, []
    for _, dst in pairs:
        dports.append(next_port.setdefault(dst, FIRST_SINK_PORT))
        next_port[dst] += 1
    return starts, dports


class MeasuredBytes:
    """Each flow's bits inside [start, stop], integrated piecewise."""

    def __init__(self, n_flows, start, stop):
        self.start, self.stop = start, stop
        self.bits = [0.0] * n_flows

    def add(self, rates_bps, t0, t1):
        overlap = min(t1, self.stop) - max(t0, self.start)
        if overlap > 0:
            self.bits = [b + r * overlap for b, r in zip(self.bits, rates_bps)]

    def mbps(self):
        return [b / (self.stop - self.start) / 1e6 for b in self.bits]


def _advance(fabric, measured, until):
    measured.add(fabric.rates_bps, fabric.now, until)
    fabric.advance(until)


def simulate(topo, scheme, named, config, seed):
    """(per-flow Mbit/s, the simulation's record) of ``named`` (host pairs of ``topo``)."""
    omit, stop = config['omit'], config['omit'] + config['duration']
    params = dict({'link_mbps': config['bw']}, **scheme_params_of(config), **config.get('scheme_params', {}))
    control_delay_s = config.get('control_delay_ms', CONTROL_DELAY_S * 1e3) / 1e3
    wall, cpu = time.monotonic(), time.process_time()
    controller = ControllerLoop(topo, scheme, params, control_delay_s) if scheme in DYNAMIC_SCHEMES else None
    export = rules_export.export_switches(topo, scheme, (), **(params if scheme != 'nonblocking' else {}))
    starts, dports = flow_ports(named, seed)
    flows = [(s, d, sport, dport) for (s, d), (_, sport), dport in zip(named, starts, dports)]
    fabric = FlowFabric(topo, export, flows, config['bw'] * 1e6, controller)
    fabric.route(sorted(range(len(flows)), key=lambda i: starts[i][0]))
    measured = MeasuredBytes(len(flows), omit, stop)
    rounds = rerouted = 0
    while controller and (rounds + 1) * controller.conf['period'] < stop:
        rounds += 1
        at = rounds * controller.conf['period']
        _advance(fabric, measured, at)
        changes = fabric.poll()
        _advance(fabric, measured, min(at + control_delay_s, stop))
        rerouted += len(fabric.apply(changes))
    _advance(fabric, measured, stop)
    record = {'backend': 'flow', 'simulated_s': stop, 'rounds': rounds,
              'packet_ins': fabric.packet_ins, 'flow_mods': fabric.flow_mods, 'rewalked_flows': rerouted,
              'undelivered_flows': sum(1 for i in range(len(flows)) if not fabric.delivered(i))}
    # what the run cost, which differs between two executions of it: the runner keeps it under ran_on
    cost = {'model_wall_s': round(time.monotonic() - wall, 2), 'cpu_s': round(time.process_time() - cpu, 2),
            'round_cpu_s': [round(t, 4) for t in fabric.round_cpu_s]}
    return measured.mbps(), record, cost


# Measured: the k=32 Table 2 of study table2-flow-scale, 72 runs of nonblocking, two-level, ECMP
# and the scheduler, 589,824 flows in 326 s of wall time on a shared 2-core machine.
WALL_S_PER_FLOW = 0.00055
SPEED_BASIS = ('the flow model\'s measured %g s of wall time per flow, over the four schemes of a k=32 '
               'Table 2' % WALL_S_PER_FLOW)


def estimate_s(config, run):
    return WALL_S_PER_FLOW * len(run['flows'])


def run_one(config, run, progress):
    """One run's record: ``config`` has k, bw (Mbit/s), duration and omit
    (s), optionally period_s, control_delay_ms and scheme_params (the
    app's scheme parameters, scheme_parameters); ``run`` has scheme,
    pattern, seed, rep and flows ([[src, dst], ...] fat-tree host names)."""
    scheme = run['scheme']
    if scheme in REFUSED:
        raise ValueError('the flow-level backend cannot run %s: %s' % (scheme, REFUSED[scheme]))
    pairs = [tuple(pair) for pair in run['flows']]
    topo, named = scheme_network(scheme, config['k'], pairs)
    rates, simulation, cost = simulate(topo, scheme, named, config, run['seed'])
    progress('%-12s %-20s seed %s: %10.1f Mbit/s aggregate (flow model, %d rounds, %.1f s)'
             % (scheme, run['pattern'], run['seed'], sum(rates), simulation['rounds'], cost['model_wall_s']))
    return {'flows': [{'src': s, 'dst': d, 'mbps': round(r, 3)} for (s, d), r in zip(pairs, rates)],
            'aggregate_mbps': round(sum(rates), 3), 'simulation': simulation, 'ran_on': cost}
