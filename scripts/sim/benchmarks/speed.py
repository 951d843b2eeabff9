"""How fast the packet-level simulator runs on this machine: simulated
events per CPU second and CPU seconds per simulated second (it runs on one
core), for fat-trees of k=4, 8 and 16 at 1 and 10 Gbit/s, and the target
case, a 10 s run of k=4's 16 flows at 1 Gbit/s, in under 2 minutes.

Every case is the bisection experiment's own simulation
(scripts/sim/bisection_backend.measure): ECMP, a Random permutation (one
bulk TCP flow per host, seed 1), 50-packet queues, flows from 0 s on. Large
fabrics at 10 Gbit/s make tens of millions of events per simulated
millisecond, so each case simulates what fits a minute or so (CASES).
Set-up (building the nodes, loading the rules, the flows' start) is timed
apart, by the same case stopped as its last flow starts, and its events and
time are left out of the rates. Wall time is recorded beside CPU time: on a
shared machine it is the longer.

Run it alone on the machine, the timing measured:

    flock -x /tmp/dcfabric-cpu.lock python -m scripts.sim.benchmarks.speed

writes results/sim/speed_benchmark.json (``--cases 4:1000:0.1`` and
``--no-target`` for a short look; ``--markdown FILE`` prints a result's
table). The simulator's own progress lines (simulated time, flows done,
wall time) come every 2 s.
"""
import argparse
import json
import os
import resource
import sys

from scripts.argtypes import positive

SCHEME = 'ecmp'
PATTERN = 'random'
SEED = 1
QUEUE_PACKETS = 50
START_EXTRA_S = 1e-6  # the start run stops just after the last flow starts
# (k, link Mbit/s, simulated s): each about a minute on 2 cores
CASES = ((4, 1000, 0.5), (4, 10000, 0.05), (8, 1000, 0.05), (8, 10000, 0.01),
         (16, 1000, 0.01), (16, 10000, 0.003))
TARGET = (4, 1000, 10.0)
TARGET_WALL_S = 120.0


def _simulate(k, link_mbps, simulated_s, progress):
    """(per-flow Mbit/s, the simulator's result with its process's CPU
    seconds added) for the Random permutation of a k-ary fat-tree."""
    from scripts.experiments.patterns import seeded
    from scripts.sim.bisection_backend import measure
    from scripts.sim.ns3 import build
    from topologies.fattree import FatTree

    from scripts.experiments import defaults
    from scripts.sim.scenario import SimSettings
    # the hosts as a bisection at this rate has them: its minimum RTO, the default send queues
    config = {'k': k, 'bw': link_mbps, 'omit': 0.0, 'duration': simulated_s, 'queue': QUEUE_PACKETS,
              'min_rto_ms': defaults.simulated(link_mbps)['min_rto_ms'][0], 'sender_queue': SimSettings.sender_queue}
    pairs = seeded(PATTERN, FatTree(k), SEED)
    build.simulator()  # a source changed since: the compiler's time is no part of the case's
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rates, result = measure(SCHEME, pairs, config, SEED, progress)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result['cpu_s'] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return rates, result


def run_case(k, link_mbps, simulated_s, progress):
    """One case's figures. Its rates count the events and time beyond those
    of the same case stopped as its last flow starts (set-up: the nodes, the
    rules, the flows' start), so they are the running fabric's; per CPU
    second of the simulator's process, which other work on a shared machine
    does not stretch as it does the wall time."""
    from scripts.sim.bisection_backend import START_SPREAD_S

    label = 'k=%d %g Gbit/s %g s' % (k, link_mbps / 1e3, simulated_s)
    relay = lambda line: progress('%s: %s' % (label, line))  # noqa: E731
    progress('%s: set-up and the flows\' start (%g s simulated)' % (label, START_SPREAD_S + START_EXTRA_S))
    _, start = _simulate(k, link_mbps, START_SPREAD_S + START_EXTRA_S, relay)
    progress('%s: simulating' % label)
    rates, result = _simulate(k, link_mbps, simulated_s, relay)
    cpu_s = max(result['cpu_s'] - start['cpu_s'], 1e-9)
    case = {'k': k, 'flows': len(rates), 'link_mbps': link_mbps, 'simulated_s': result['simulated_s'],
            'wall_s': round(result['wall_s'], 3), 'cpu_s': round(result['cpu_s'], 3), 'events': result['events'],
            'start_simulated_s': start['simulated_s'], 'start_wall_s': round(start['wall_s'], 3),
            'start_cpu_s': round(start['cpu_s'], 3), 'start_events': start['events'],
            'events_per_cpu_s': round((result['events'] - start['events']) / cpu_s),
            'cpu_per_simulated_s': round(cpu_s / (result['simulated_s'] - start['simulated_s']), 2),
            'carried_pct': round(100 * sum(rates) / (len(rates) * link_mbps), 1)}
    progress('%s: %.1f s wall, %.1f s CPU, %.2f M events per CPU second, %.1f CPU s per simulated s' % (
        label, case['wall_s'], case['cpu_s'], case['events_per_cpu_s'] / 1e6, case['cpu_per_simulated_s']))
    return case


def benchmark(cases, target, progress):
    result = {'cases': [run_case(k, mbps, seconds, progress) for k, mbps, seconds in cases]}
    if target:
        result['target'] = dict(run_case(*target, progress), target_wall_s=TARGET_WALL_S)
    return result


def link_crossings(result, case):
    """What ``case``'s events went to, from its result and the fabric model:
    the segments its flows delivered (1448 bytes each, the carried rate over
    the simulated time after the start), events per segment, and the links
    a segment and its ACK cross (every segment is ACKed: host_tcp.h), the
    mean over the pattern's host pairs of their shortest paths, which ECMP
    takes. ns-3's point-to-point device spends two events on a crossing (the
    end of the transmission, the arrival); ``crossing_cpu_s`` is what those
    alone cost at the case's measured events per CPU second."""
    from scripts.experiments.patterns import seeded
    from scripts.emulator.shaping import PAYLOAD_PER_FRAME
    from topologies.fattree import FatTree

    topo = FatTree(case['k'])
    pairs = seeded(result['pattern'], topo, result['seed'])
    path_links = sum(topo.switches_between(src, dst) + 1 for src, dst in pairs) / len(pairs)
    seconds = case['simulated_s'] - case['start_simulated_s']
    segments = case['carried_pct'] / 100 * case['flows'] * case['link_mbps'] * 1e6 * seconds / (8 * PAYLOAD_PER_FRAME)
    crossings = 2 * path_links
    return {'segments': segments, 'events_per_segment': (case['events'] - case['start_events']) / segments,
            'crossings_per_segment': crossings,
            'crossing_cpu_s': 2 * crossings * segments / case['events_per_cpu_s']}


def markdown(result):
    """The speed table, its conditions and the target case, as Markdown."""
    lines = ['| k | flows | link rate (Gbit/s) | simulated (s) | events | events per CPU second (M) | CPU s per '
             'simulated s | CPU (s) | of it set-up and start (s) | wall (s) | carried, % of line rate |',
             '|---' * 11 + '|']
    for c in result['cases']:
        lines.append('| %d | {:,} | %g | %g | {:,} | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f |'.format(
            c['flows'], c['events']) % (c['k'], c['link_mbps'] / 1e3, c['simulated_s'], c['events_per_cpu_s'] / 1e6,
                                         c['cpu_per_simulated_s'], c['cpu_s'], c['start_cpu_s'], c['wall_s'],
                                         c['carried_pct']))
    machine = result['machine']
    text = '\n'.join(lines) + (
        '\n\n%s, a Random permutation (seed %d), %d-packet queues, one bulk TCP %s flow per host from the first '
        'millisecond on. The simulator runs on one core: CPU is its process\'s time; the rates count what a run '
        'adds to the same case stopped as its last flow starts (set-up and start). %d cores (%s); load average '
        '(1 min) %.2f before, %.2f after (wall exceeds CPU where other work shared the cores); %s.' % (
            result['scheme'].upper(), result['seed'], result['queue_packets'], result['tcp'].upper(),
            machine['cpu_count'], machine['processor'], result['load_average_before'][0],
            result['load_average_after'][0], result['build']))
    target = result.get('target')
    if target:
        text += ('\n\nThe target case, k=%d with %d flows at %g Gbit/s for %g simulated seconds, set-up included: '
                 '**%.1f s** of wall time, %.1f s of CPU time: %s the target of %.0f s; %.2f M events per CPU second, '
                 '%.1f CPU seconds per simulated second.' % (
                     target['k'], target['flows'], target['link_mbps'] / 1e3, target['simulated_s'], target['wall_s'],
                     target['cpu_s'], 'within' if max(target['wall_s'], target['cpu_s']) < target['target_wall_s']
                     else 'over', target['target_wall_s'], target['events_per_cpu_s'] / 1e6,
                     target['cpu_per_simulated_s']))
        spent = link_crossings(result, target)
        text += (' Its flows delivered %.2f M segments, %.1f events each. A segment and its ACK cross %.1f links (the '
                 'mean path of the pattern\'s pairs, both ways), and ns-3\'s point-to-point device spends two events '
                 'on each crossing: %.1f of the %.1f. At the measured events per CPU second, those crossings alone '
                 'take %.0f CPU seconds, and %.0f with one event a crossing.' % (
                     spent['segments'] / 1e6, spent['events_per_segment'], spent['crossings_per_segment'],
                     2 * spent['crossings_per_segment'], spent['events_per_segment'], spent['crossing_cpu_s'],
                     spent['crossing_cpu_s'] / 2))
    return text


def _case(text):
    try:
        k, mbps, seconds = text.split(':')
        return int(k), positive(float)(mbps), positive(float)(seconds)
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError('a case is K:MBIT_S:SIMULATED_S, got %r' % text) from None


def _build_description():
    from scripts.letflow.ns3.build import CXXFLAGS, allocator_flags
    return 'the simulator built with %s, %s' % (
        ' '.join(f for f in CXXFLAGS if f.startswith(('-O', '-D'))),
        'linked to jemalloc' if allocator_flags() else "glibc's malloc")


def main(argv=None):
    from scripts.emulator.progress import progress
    from scripts.results import machine

    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--cases', type=_case, nargs='+', default=list(CASES),
                        help='K:MBIT_S:SIMULATED_S each (default: %s)'
                             % ' '.join('%d:%d:%g' % c for c in CASES))
    parser.add_argument('--no-target', action='store_true',
                        help='leave out the target case (%d s simulated)' % TARGET[2])
    parser.add_argument('--out', default='results/sim', help='directory of speed_benchmark.json')
    parser.add_argument('--markdown', metavar='JSON', help='no run: print the table of a result file')
    args = parser.parse_args(argv)
    if args.markdown:
        with open(args.markdown) as f:
            print(markdown(json.load(f)))
        return 0
    from scripts.sim.scenario import SimSettings
    before = os.getloadavg()
    result = benchmark(list(args.cases), None if args.no_target else TARGET, progress)
    result.update({'backend': 'sim', 'machine': machine(), 'build': _build_description(), 'scheme': SCHEME,
                   'pattern': PATTERN, 'seed': SEED, 'queue_packets': QUEUE_PACKETS,
                   'tcp': SimSettings(link_mbps=1).tcp,
                   'load_average_before': before, 'load_average_after': os.getloadavg(),
                   'command': ' '.join(['python -m scripts.sim.benchmarks.speed'] + (sys.argv[1:] if argv is None
                                                                                      else list(argv)))})
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, 'speed_benchmark.json')
    with open(path, 'w') as f:
        json.dump(result, f, indent=2)
    print(markdown(result))
    print('written to %s' % path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
