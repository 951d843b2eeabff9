"""The bisection experiment on the packet-level simulator: each run exports
the scheme's rules (scripts/sim/rules_export.py, the controller's own
pure code), writes the scenario (scripts/sim/network.py), runs
scripts/sim/ns3/fattree_sim and reads its per-flow goodput.

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

from scripts.sim import rules_export
from scripts.sim.ns3 import build
from scripts.sim.network import SimFlow, SimSettings, scenario_lines
from topologies.fattree import FatTree
from topologies.nonblocking import NonBlocking, host_name

# Schemes the simulator runs: the static ones. The dynamic schemes' pure
# logic (controller/fattree/classifier.py, scheduler.py) does not run in
# simulated time yet.
SIM_SCHEMES = ('nonblocking', 'twolevel', 'ecmp')
START_SPREAD_S = 0.001  # flows start within a millisecond, as iperf3 clients started together
# Linux's ephemeral source ports (ip_local_port_range): a select group hashes
# them, and ns-3's own start at 49153 on every host, the same for every flow.
EPHEMERAL_PORTS = (32768, 60999)
RUN_TIMEOUT_S = 3600


def check_schemes(schemes):
    """ValueError naming the schemes the simulator does not run."""
    missing = [s for s in schemes if s not in SIM_SCHEMES]
    if missing:
        raise ValueError('the sim backend does not run %s yet (it runs %s); run them with --backend emulator'
                         % (', '.join(missing), ', '.join(SIM_SCHEMES)))


def export_rules(topo, scheme, path):
    """The rules and groups the controller installs for ``scheme`` on
    ``topo``, every switch's, written to ``path`` for OfPipeline::LoadExport."""
    rules_export.write_export(rules_export.export_switches(topo, scheme), path, topo=topo, scheme=scheme)


def simulate(topo, scheme, flows, settings, progress=None, failures=()):
    """fattree_sim's JSON result for ``flows`` on ``topo`` under ``scheme``.
    Its progress lines go to ``progress`` (default: stderr)."""
    binary = build.simulator()
    with tempfile.TemporaryDirectory(prefix='dcfabric-sim-') as work:
        rules, scenario = os.path.join(work, 'rules.txt'), os.path.join(work, 'scenario.txt')
        export_rules(topo, scheme, rules)
        with open(scenario, 'w') as f:
            f.write('\n'.join(scenario_lines(topo, rules, settings, flows, failures)) + '\n')
        proc = subprocess.Popen([str(binary), scenario], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        errors = []
        for line in proc.stderr:  # progress as it comes; anything else is kept for the error
            (progress or (lambda m: print(m, file=sys.stderr, flush=True)))(line.rstrip())
            errors.append(line)
        out = proc.stdout.read()
        if proc.wait(RUN_TIMEOUT_S) != 0:
            raise RuntimeError('fattree_sim failed (%d): %s' % (proc.returncode, ''.join(errors[-5:]).strip()))
    return json.loads(out)


def run_settings(config, seed):
    return SimSettings(link_mbps=config['bw'], stop_s=config['omit'] + config['duration'],
                       measure_from_s=config['omit'], queue_packets=config['queue'], seed=seed)


def measure(scheme, pairs, config, seed, progress):
    """(per-flow Mbit/s in pair order, the simulator's result) of one run."""
    k = config['k']
    settings = run_settings(config, seed)
    draw = random.Random('%s/start' % seed)
    if scheme == 'nonblocking':
        topo = NonBlocking(k)
        index = {h.name: i for i, h in enumerate(FatTree(k).hosts)}
        named = [(host_name(index[s]), host_name(index[d])) for s, d in pairs]
    else:
        topo, named = FatTree(k), pairs
    flows = [SimFlow(s, d, draw.uniform(0, START_SPREAD_S), settings.stop_s, src_port=draw.randint(*EPHEMERAL_PORTS))
             for s, d in named]
    result = simulate(topo, scheme, flows, settings, progress)
    return [f['goodput_mbps'] for f in result['flows']], result


def run_experiment(config, flows_of, record, progress):
    """Every seed, pattern and scheme, as the emulator's run order has them
    (the reference first), one simulation each."""
    check_schemes(config['schemes'])
    for rep, seed in enumerate(config['seeds']):
        for pattern in config['patterns']:
            for scheme in config['schemes']:
                pairs = flows_of[(pattern, rep)]
                rates, result = measure(scheme, pairs, config, seed, progress)
                record({'scheme': scheme, 'pattern': pattern, 'rep': rep, 'seed': seed,
                        'flows': [{'src': s, 'dst': d, 'mbps': round(r, 3)} for (s, d), r in zip(pairs, rates)],
                        'aggregate_mbps': round(sum(rates), 3),
                        'simulation': {'wall_s': round(result['wall_s'], 2), 'events': result['events'],
                                       'simulated_s': result['simulated_s']}})
                progress('%-12s %-20s seed %d: %8.1f Mbit/s aggregate (simulated %g s in %.1f s)'
                         % (scheme, pattern, seed, sum(rates), result['simulated_s'], result['wall_s']))
