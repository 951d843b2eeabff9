"""The bisection experiment on the packet-level simulator: each run exports
the scheme's rules (scripts/sim/rules_export.py, the controller's own
pure code), writes the scenario (scripts/sim/scenario.py), runs
scripts/sim/ns3/fattree_sim and reads its per-flow goodput. The dynamic
schemes run with their controller in the loop (scripts/sim/controller_loop.py:
the app's own strategies, polled in simulated time, their flow-mods applied a
control delay later); failures during a run reach the routing controller
(scripts/sim/failure_reaction.py), whose staged update follows.

Flows run from 0 to omit + duration and count from omit on, as the
emulator's iperf3 -O omit -t duration. The non-blocking reference is the
same hosts on one switch (topologies.nonblocking), simulated alike.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import threading

from scripts.sim import rules_export
from scripts.sim.controller_loop import (
    CONTROL_DELAY_S, DYNAMIC_SCHEMES, ControllerLoop, SimulatorEnded, serve)
from scripts.sim.failure_reaction import FailureReaction
from scripts.sim.ns3 import build
from scripts.sim.scenario import SimFailure, SimFlow, SimSettings, scenario_lines
from topologies.fattree import FatTree
from topologies.nonblocking import NonBlocking, host_name

START_SPREAD_S = 0.001  # flows start within a millisecond, as iperf3 clients started together
# Linux's ephemeral source ports (ip_local_port_range): a select group hashes
# them, and ns-3's own start at 49153 on every host, the same for every flow.
EPHEMERAL_PORTS = (32768, 60999)
RUN_TIMEOUT_S = 3600


def export_rules(topo, scheme, path, failed_links=(), scheme_params=None):
    """The rules and groups the controller installs for ``scheme`` (with
    ``scheme_params``, scheme_parameters) on ``topo`` once it knows of
    ``failed_links``, every switch's, written to ``path`` for
    OfPipeline::LoadExport."""
    rules_export.write_export(rules_export.export_switches(topo, scheme, failed_links, **(scheme_params or {})),
                              path, topo=topo, scheme=scheme, failed_links=failed_links)


def _relay(stream, progress, kept):
    for line in stream:  # progress as it comes; anything else is kept for the error
        progress(line.rstrip())
        kept.append(line)


def _sender(stdin):
    def send(lines):
        stdin.write('\n'.join(lines) + '\n')
        stdin.flush()
    return send


def _run(command, handlers, progress):
    """The simulator's stdout after ``handlers`` (controller_loop.serve's;
    none: the simulator asks nothing) have answered its questions; its
    stderr goes to ``progress`` line by line."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    errors = []
    relay = threading.Thread(target=_relay, args=(proc.stderr, progress, errors), daemon=True)
    relay.start()
    ended = None
    try:
        if handlers:
            serve(proc.stdout, _sender(proc.stdin), handlers)
        out = proc.stdout.read()
    except (SimulatorEnded, BrokenPipeError) as err:
        ended = err  # the simulator stopped: its exit status and stderr say why
    except BaseException:  # our side broke the exchange (or an interrupt): nothing will answer it
        proc.kill()
        proc.wait()
        relay.join()
        raise
    proc.stdin.close()
    returncode = proc.wait(RUN_TIMEOUT_S)
    relay.join()
    if returncode != 0:  # the simulator's own account: it names what it refused
        raise RuntimeError('fattree_sim failed (%d): %s' % (returncode, ''.join(errors[-5:]).strip()))
    if ended is not None:
        raise ended
    return out


def simulate(topo, scheme, flows, settings, progress=None, failures=(), control_delay_s=CONTROL_DELAY_S,
             scheme_params=None, failed_links=()):
    """fattree_sim's JSON result for ``flows`` on ``topo`` under ``scheme``.
    A dynamic scheme's controller answers the simulator (ControllerLoop:
    the app's scheme parameters for the link rate, ``scheme_params`` over
    them; its flow-mods take effect ``control_delay_s`` after the question).
    ``failed_links`` (pairs of switch names) are down from the start, the
    rules and the controller computed for them; ``failures`` happen during
    the run: the switches' fast-failover groups repair locally once they
    are detected, and the routing controller (FailureReaction, the app's
    recompute and staged update, each stage ``control_delay_s`` after the
    last) moves the switches to its state under them. Progress lines go to
    ``progress`` (default: stderr)."""
    binary = build.simulator()
    params = dict({'link_mbps': settings.link_mbps}, **(scheme_params or {}))
    controller = (ControllerLoop(topo, scheme, params, control_delay_s, failed_links=failed_links)
                  if scheme in DYNAMIC_SCHEMES else None)
    reaction = None
    if failures:
        reaction = (FailureReaction(topo, controller.strategy, failed_links, control_delay_s=control_delay_s)
                    if controller else FailureReaction.for_scheme(topo, scheme, params, failed_links,
                                                                  control_delay_s=control_delay_s))
    handlers = dict(controller.handlers() if controller else {}, **(reaction.handlers() if reaction else {}))
    down = [SimFailure(0.0, a, topo.port_to(a, b)) for a, b in failed_links]
    with tempfile.TemporaryDirectory(prefix='dcfabric-sim-') as work:
        rules, scenario = os.path.join(work, 'rules.txt'), os.path.join(work, 'scenario.txt')
        export_rules(topo, scheme, rules, failed_links, params)
        lines = scenario_lines(topo, rules, settings, flows, down + list(failures),
                               reaction.scenario_line() if reaction else None)
        with open(scenario, 'w') as f:
            f.write('\n'.join(lines + (controller.scenario_lines() if controller else [])) + '\n')
        out = _run([str(binary), scenario], handlers,
                   progress or (lambda m: print(m, file=sys.stderr, flush=True)))
    return json.loads(out)


def run_settings(config, seed):
    return SimSettings(link_mbps=config['bw'], stop_s=config['omit'] + config['duration'],
                       measure_from_s=config['omit'], queue_packets=config['queue'], seed=seed,
                       min_rto_ms=config['min_rto_ms'], sender_queue=config['sender_queue'])


# the run's config entries that set the schemes' parameters (scheme_parameters)
SCHEME_SETTINGS = {'period_s': 'period', 'flowlet_timeout_us': 'flowlet_timeout_us'}


def scheme_params_of(config):
    return {param: config[key] for key, param in SCHEME_SETTINGS.items() if key in config}


def scheme_network(scheme, k, pairs):
    """(the topology ``scheme`` runs on, the (src, dst) fat-tree host
    ``pairs`` named as its hosts): the non-blocking reference's hosts
    stand in for the fat-tree's of the same index."""
    if scheme != 'nonblocking':
        return FatTree(k), list(pairs)
    index = {h.name: i for i, h in enumerate(FatTree(k).hosts)}
    return NonBlocking(k), [(host_name(index[s]), host_name(index[d])) for s, d in pairs]


def simulation_record(result):
    """What a run's record keeps of its simulation: the events, the packets
    the switches' queues dropped and marked ECN, the packets the hosts' own
    device queues dropped (their TCP is not told), and, for a dynamic scheme,
    its controller's polls, packet-ins and flow-mods, and with failures
    during the run, the routing controller's recomputes, stages and ops."""
    ports = [p for s in result['switches'].values() for p in s.get('ports', {}).values()]
    simulation = {'events': result['events'],
                  'simulated_s': result['simulated_s'], 'queue_drops': sum(p['queue_drops'] for p in ports),
                  'ecn_marked': sum(p['ecn_marked'] for p in ports), 'host_queue_drops': result['host_queue_drops']}
    for controller in ('controller', 'routing_controller'):
        if controller in result:
            simulation[controller] = result[controller]
    flowlets = [s['flowlets'] for s in result['switches'].values() if 'flowlets' in s]
    if flowlets:  # letflow: the flowlets its switches started, each a random pick
        simulation['flowlets'] = sum(flowlets)
    return simulation


def measure(scheme, pairs, config, seed, progress):
    """(per-flow Mbit/s in pair order, the simulator's result) of one run."""
    settings = run_settings(config, seed)
    draw = random.Random('%s/start' % seed)
    topo, named = scheme_network(scheme, config['k'], pairs)
    flows = [SimFlow(s, d, draw.uniform(0, START_SPREAD_S), settings.stop_s, src_port=draw.randint(*EPHEMERAL_PORTS))
             for s, d in named]
    result = simulate(topo, scheme, flows, settings, progress,
                      control_delay_s=config.get('control_delay_ms', CONTROL_DELAY_S * 1e3) / 1e3,
                      scheme_params=scheme_params_of(config))
    return [f['goodput_mbps'] for f in result['flows']], result


# Measured: 48 s of wall time per simulated second for a k=4 bisection run at 1 Gbit/s (16 flows), one core;
# the simulator's work grows with the packets, hosts x rate x simulated time.
WALL_S_PER_HOST_GBIT_S = 3.0
SPEED_BASIS = ('the simulator\'s measured %g s of wall time per host, Gbit/s and simulated second'
               % WALL_S_PER_HOST_GBIT_S)


def estimate_s(config, run):
    return WALL_S_PER_HOST_GBIT_S * len(run['flows']) * config['bw'] / 1e3 * (config['omit'] + config['duration'])


def run_one(config, run, progress):
    """One simulated bisection run's record: every flow's goodput over the
    measured time and what the simulation cost and dropped."""
    pairs = [tuple(pair) for pair in run['flows']]
    rates, result = measure(run['scheme'], pairs, config, run['seed'], progress)
    return {'scheme': run['scheme'], 'pattern': run['pattern'], 'rep': run['rep'], 'seed': run['seed'],
            'flows': [{'src': s, 'dst': d, 'mbps': round(r, 3)} for (s, d), r in zip(pairs, rates)],
            'aggregate_mbps': round(sum(rates), 3), 'simulation': simulation_record(result)}
