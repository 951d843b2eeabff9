"""The leaf-switch shield/recover experiment of seed 003 section 5, on an
emulated K-ary N-Bridge (Mininet + userspace OVS + controller.nbridge.app).

    sudo .venv/bin/python -m scripts.nbridge.leaf_fault [--shape 33,6] [--target 13,2]
        [--phase 10] [--period 0.2] [--json results.json]
    python -m scripts.nbridge.leaf_fault --report RUN.json [RUN.json ...]   # the README's table

1. Pick a target leaf; node list = the hosts of every leaf on one of its
   lines (2-D: LSW(a, j0) and LSW(j1, b)), without the target's own hosts.
   Run AlltoAll among them (phase "normal").
2. Shield the target with scripts/nbridge/config_err_board.sh COORDS error ("shielded").
3. Power it off: all its links down ("off").
4. Power it on ("on"), then renew it with config_err_board.sh COORDS renew
   ("renewed").
Reports failed pairs per phase (target: zero), the switch hops of the pairs
whose path crosses the target (64 - received TTL) before and after the
shield against what the model predicts, their one-way latency, and whether
the emulator kept up over the whole AlltoAll (scripts/emulator/fidelity.py).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

from controller.nbridge.routing import NBridgeRouting
from scripts.emulator.fidelity import FidelityMonitor, describe, runs_verdict_cell, verdict
from topologies.walk import walk
from topologies.nbridge import NBridge, format_coords

APP = 'controller.nbridge.app'
PAPER_SHAPE, PAPER_TARGET = (33, 6), (13, 2)
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'config_err_board.sh')


def default_target(topo):
    """The paper's LSW(13, 2) on its 33 x 6 fabric, else the middle leaf."""
    return PAPER_TARGET if topo.shape == PAPER_SHAPE else tuple(k // 2 for k in topo.shape)


def node_list(topo, target):
    """Hosts of the leaves sharing a line with the target (differing in exactly one coordinate)."""
    return [h.name for h in topo.hosts
            if sum(a != b for a, b in zip(topo.leaf_of(h.name), target)) == 1]


def predicted_hops(topo, hosts, target):
    """{(src, dst): (normal switch hops, shielded switch hops)} from walking
    the compiled rules, for the pairs whose normal path crosses the target."""
    routing = NBridgeRouting(topo)
    name = topo.leaf_name(target)
    normal = {(s, d): walk(topo, routing.forward, s, d) for s in hosts for d in hosts if s != d}
    crossing = [pair for pair, hops in normal.items() if name in [sw for sw, _ in hops]]
    routing.shield(target)
    return {pair: (len(normal[pair]), len(walk(topo, routing.forward, *pair))) for pair in crossing}


def config_err_board(coords, verb, rest_port):
    """Run the operator's script against the controller; raise with its message on failure."""
    env = dict(os.environ, DCFABRIC_REST='http://127.0.0.1:%d' % rest_port)
    done = subprocess.run([SCRIPT, ','.join(map(str, coords)), verb], env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError('config_err_board.sh %s failed: %s' % (verb, done.stderr.strip()))
    return json.loads(done.stdout)


def set_links(net, topo, leaf, status):
    """Power a leaf off ('down') or on ('up'): every cable of it."""
    for port in topo.ports(leaf):
        peer, _ = topo.peer(leaf, port)
        net.configLinkStatus(leaf, peer, status)


def outage_pairs(blocks, outage_blocks):
    """Pairs that lost ``outage_blocks`` or more consecutive blocks: a broken
    path. Shorter runs happen here without one: the userspace OVS daemon is
    one process for every bridge on the machine and, busy (other fabrics,
    or reconfiguring when a powered-off leaf's ports go down), drops
    datagrams of every pair for up to about a second."""
    by_pair = {}
    for b in sorted(blocks, key=lambda b: b['block']):
        by_pair.setdefault((b['src'], b['dst']), []).append(b['ok'])
    failed = []
    for pair, oks in sorted(by_pair.items()):
        streak = longest = 0
        for ok in oks:
            streak = 0 if ok else streak + 1
            longest = max(longest, streak)
        if longest >= outage_blocks:
            failed.append(list(pair))
    return failed


def phase_stats(blocks, phases, crossing, period, settle_s=1.0, outage_s=2.0):
    """Per phase: lost blocks, pairs with any loss, failed pairs (an outage
    of ``outage_s`` seconds and at least three consecutive blocks), and loss/hops/latency of crossing
    vs other pairs. Hops and latency count blocks sent ``settle_s`` after the
    phase began (OVS revalidates its cached flows asynchronously, so a few
    blocks right after a change may still take the old path) and delivered
    before it ended: on an overloaded machine a block can wait a second in
    the switches' queues and be forwarded after the next change, with the
    next phase's hops (``arrived_after_end`` counts them);
    ``transition_hops`` and ``settled_after_s`` show the transitions."""
    result = {}
    for index, (phase, begin) in enumerate(phases):
        end = phases[index + 1][1] if index + 1 < len(phases) else float('inf')
        mine = [b for b in blocks if begin <= b['sent'] < end]
        stats = {'blocks': len(mine), 'lost_blocks': sum(not b['ok'] for b in mine),
                 'pairs_with_loss': len({(b['src'], b['dst']) for b in mine if not b['ok']}),
                 'failed_pairs': outage_pairs(mine, max(3, math.ceil(outage_s / period)))}
        for group, members in (('crossing', [b for b in mine if (b['src'], b['dst']) in crossing]),
                               ('other', [b for b in mine if (b['src'], b['dst']) not in crossing])):
            ok = [b for b in members if b['ok']]
            in_phase = [b for b in ok if b['sent'] + b['lat_us'] / 1e6 < end]
            settled = [b for b in in_phase if b['sent'] >= begin + settle_s]
            hops = sorted({64 - b['ttl'] for b in settled})
            odd = [b['sent'] - begin for b in in_phase if 64 - b['ttl'] not in hops]
            latency = [b['lat_us'] for b in settled]
            stats[group] = {'pairs': len({(b['src'], b['dst']) for b in members}), 'hops': hops,
                            'lost_blocks': len(members) - len(ok), 'arrived_after_end': len(ok) - len(in_phase),
                            'transition_hops': sorted({64 - b['ttl'] for b in in_phase} - set(hops)),
                            'settled_after_s': round(max(odd), 2) if odd else 0.0,
                            'mean_hops': round(statistics.mean(64 - b['ttl'] for b in settled), 2)
                            if settled else None,
                            'median_latency_us': round(statistics.median(latency), 1) if latency else None}
        result[phase] = stats
    return result


def run_phases(fabric, topo, target, phase_s=5.0, period=0.2, size=1000, rest_port=8080, log=print):
    """The five phases on a running fabric; returns the results as a dict."""
    from scripts.nbridge.alltoall import AllToAll
    from scripts.emulator.traffic import wait_all_pairs

    leaf = topo.leaf_name(target)
    nodes = node_list(topo, target)
    crossing = predicted_hops(topo, nodes, target)
    log('%s: target %s (%s), %d nodes, %d ordered pairs, %d cross the target'
        % (topo.name, format_coords(target), leaf, len(nodes), len(nodes) * (len(nodes) - 1), len(crossing)))
    reach_s = wait_all_pairs(fabric.net, nodes, deadline_s=120, progress=log)
    log('node list all-pairs reachable after %.1f s' % reach_s)
    alltoall = AllToAll(fabric.net, nodes, period=period, size=size, log=log).start()
    # every phase and transition, not the agents' start-up
    monitor = FidelityMonitor().start()
    phases = [('normal', alltoall.start_time)]
    try:
        alltoall.pump(phase_s)
        for phase, action in (
                ('shielded', lambda: config_err_board(target, 'error', rest_port)),
                ('off', lambda: set_links(fabric.net, topo, leaf, 'down')),
                ('on', lambda: set_links(fabric.net, topo, leaf, 'up')),
                ('renewed', lambda: config_err_board(target, 'renew', rest_port))):
            phases.append((phase, time.time()))  # the transition belongs to the new phase
            answer = action()
            log('--- %s%s' % (phase, ': %s' % json.dumps(answer['changed']) if answer else ''))
            alltoall.pump(phase_s)
        alltoall.pump(alltoall.deadline)  # the last blocks' deadline: they count
    finally:
        figures = monitor.stop()
        alltoall.stop()
    return {'fabric': topo.name, 'target': format_coords(target), 'nodes': len(nodes),
            'pairs': len(nodes) * (len(nodes) - 1), 'crossing_pairs': len(crossing),
            'predicted_hops_normal_shielded': sorted({hops for hops in crossing.values()}),
            'reachable_s': round(reach_s, 1), 'phase_s': phase_s, 'period_s': period, 'block_bytes': size,
            'phases': phase_stats(alltoall.blocks, phases, crossing, period),
            'lost': {'%s->%s' % pair: times for pair, times in sorted(alltoall.summary().items())},
            'late_blocks': len(alltoall.late),
            # no non-blocking reference runs here: the verdict rests on the machine's headroom
            'fidelity': verdict(figures),
            # nothing here is drawn at random: shape and target fix the node list and phases
            'seeds': []}


def run_experiment(shape=(4, 3), q=1, hosts_per_leaf=1, target=None, phase_s=5.0, period=0.2, size=1000,
                   ofp_port=6653, rest_port=8080, log=print):
    """Build the fabric with its controller, run the phases, tear down."""
    from scripts.emulator.fabric import Fabric

    topo = NBridge(shape, q, hosts_per_leaf)
    target = topo.check_coords(target) if target is not None else default_target(topo)
    params = {'shape': list(shape), 'q': q, 'hosts': hosts_per_leaf}
    loadavg_before = os.getloadavg()[0]
    started = time.time()
    with Fabric(topo, APP, params, ofp_port=ofp_port, rest_port=rest_port) as fabric:
        build_s = time.time() - started
        log('fabric up in %.1f s (%d switches, %d hosts)' % (build_s, len(topo.switches), len(topo.hosts)))
        result = run_phases(fabric, topo, target, phase_s, period, size, rest_port, log)
    result['build_s'] = round(build_s, 1)
    # the machine is shared: latencies mean little without its load
    result['loadavg_1m'] = [round(loadavg_before, 2), round(os.getloadavg()[0], 2)]
    return result


def markdown(results):
    """The README's table, one row per finished run (``--json`` files)."""
    phases = ('normal', 'shielded', 'off', 'on', 'renewed')
    lines = ['| fabric, target | nodes / pairs / crossing | build (s) | load average before, after '
             '| failed pairs per phase (normal, shielded, off, on, renewed) | blocks lost / sent '
             '| crossing pairs\' switch hops, normal -> shielded '
             '| crossing one-way latency, median (ms): normal, shielded, renewed | emulator |',
             '|' + '---|' * 9]
    for r in results:
        stats = r['phases']
        crossing = {phase: stats[phase]['crossing'] for phase in phases}
        lines.append('| %s, %s | %d / %d / %d | %s | %s | %s | %d / %d | %s -> %s | %s | %s |' % (
            r['fabric'], r['target'], r['nodes'], r['pairs'], r['crossing_pairs'], r['build_s'],
            ', '.join('%.2f' % x for x in r['loadavg_1m']),
            ', '.join(str(len(stats[phase]['failed_pairs'])) for phase in phases),
            sum(stats[phase]['lost_blocks'] for phase in phases), sum(stats[phase]['blocks'] for phase in phases),
            ','.join(map(str, crossing['normal']['hops'])), ','.join(map(str, crossing['shielded']['hops'])),
            ', '.join('%.1f' % (crossing[phase]['median_latency_us'] / 1000)
                      for phase in ('normal', 'shielded', 'renewed')),
            runs_verdict_cell([r])))
    return '\n'.join(lines)


def print_report(result, out=print):
    out('\n%s, target %s: %d nodes, %d pairs, %d cross the target; model hops (normal, shielded): %s'
        % (result['fabric'], result['target'], result['nodes'], result['pairs'], result['crossing_pairs'],
           result['predicted_hops_normal_shielded']))
    out('%-9s %7s %11s %10s %7s %10s %14s %10s %12s' % (
        'phase', 'blocks', 'lost(cross)', 'lossy prs', 'FAILED', 'cross hops', 'cross lat us', 'other hops',
        'other lat us'))
    for phase, s in result['phases'].items():
        out('%-9s %7d %11s %10d %7d %10s %14s %10s %12s' % (
            phase, s['blocks'], '%d(%d)' % (s['lost_blocks'], s['crossing']['lost_blocks']),
            s['pairs_with_loss'], len(s['failed_pairs']),
            ','.join(map(str, s['crossing']['hops'])), s['crossing']['median_latency_us'],
            ','.join(map(str, s['other']['hops'])), s['other']['median_latency_us']))
    out('FAILED = pairs that lost every block for 2 s (and 3 blocks) or more: a broken path; lost = blocks that '
        'missed the deadline, (cross) of them on pairs crossing the target; hops = 64 - TTL at the '
        'receiver; latency = median one-way')
    lost = result['lost']
    out('pairs that lost blocks (seconds since the AlltoAll began): %s' % (
        '; '.join('%s at %s' % (pair, ','.join('%g' % t for t in times[:8]) + (' ...' if len(times) > 8 else ''))
                  for pair, times in list(lost.items())[:20]) + (' ... (%d pairs)' % len(lost) if len(lost) > 20 else '')
        if lost else 'none'))
    out('build %s s; total failed pairs %d' % (
        result.get('build_s', '-'), len({tuple(p) for s in result['phases'].values() for p in s['failed_pairs']})))
    fidelity = result['fidelity']
    out('emulator over the AlltoAll: machine idle %s%% (median), busiest ovs-vswitchd %s%% of a core (median), '
        'its packet sockets dropped %s: %s' % (fidelity['idle_pct_median'], fidelity['daemon_busy_pct_median'],
                                              fidelity['daemon_socket_drops'], describe(fidelity)))


def coordinates(text):
    return tuple(int(x) for x in text.strip('()').split(','))


def main(argv=None):
    parser = argparse.ArgumentParser(prog='scripts.nbridge.leaf_fault', description=__doc__.split('\n\n')[0])
    parser.add_argument('--shape', type=coordinates, default=(4, 3), help='K_{N-1},...,K_0 (paper: 33,6)')
    parser.add_argument('--q', type=int, default=1, help='root switches per line')
    parser.add_argument('--hosts', type=int, default=1, help='hosts per leaf')
    parser.add_argument('--target', type=coordinates, help='target leaf coordinates (default: paper/middle)')
    parser.add_argument('--phase', type=float, default=5.0, help='seconds per phase')
    parser.add_argument('--period', type=float, default=0.2, help='AlltoAll block period (s)')
    parser.add_argument('--size', type=int, default=1000, help='AlltoAll block size (bytes)')
    parser.add_argument('--ofp-port', type=int, default=6653)
    parser.add_argument('--rest-port', type=int, default=8080)
    parser.add_argument('--json', help='write the results here')
    parser.add_argument('--report', nargs='+', metavar='JSON',
                        help='no run: print the README\'s Markdown table of finished runs (their --json files)')
    args = parser.parse_args(argv)
    if args.report:
        results = []
        for path in args.report:
            with open(path) as f:
                results.append(json.load(f))
        print(markdown(results))
        return
    from scripts.emulator.errors import SetupError
    try:
        result = run_experiment(args.shape, args.q, args.hosts, args.target, args.phase, args.period, args.size,
                                args.ofp_port, args.rest_port,
                                log=lambda m: print(m, file=sys.stderr, flush=True))
    except (SetupError, ValueError, RuntimeError, TimeoutError) as err:
        sys.exit('nbridge_experiment: %s' % err)
    print_report(result)
    if args.json:
        with open(args.json, 'w') as out:
            json.dump(result, out, indent=1)
    sys.exit(1 if any(s['failed_pairs'] for s in result['phases'].values()) else 0)


if __name__ == '__main__':
    main()
