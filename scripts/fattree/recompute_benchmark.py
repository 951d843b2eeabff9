"""How long the fat-tree controller takes to react to failures, from the
failure to the messages, and to program the fabric at start, at each k
(no fabric: the model only).

    python -m scripts.fattree.recompute_benchmark [--k 4 8 16 32 48] [--repeats 3] [--out results/fattree]

Per k, each figure is the median of --repeats runs, in wall-clock seconds
(every sample is kept, and the median CPU seconds of the process beside
some: on a shared machine the two part when other work competes):

  full_compute_s    every switch's tables with nothing failed, as the
                    controller computes them at start (FailureRouting(topo))
  full_compile_s    all of them compiled to OpenFlow (pipeline.compile_table)
                    Both start from cold caches (the modules' memoised
                    entries and rules cleared).
  start_up          the first full program: compute, compile (routing and
                    ARP rules), and messages (each switch's delete-all,
                    flow-mods and group-mods, encoded as the app sends
                    them), with their counts and bytes
  events            one link failure of each kind (upper-core, lower-upper),
                    one switch failure of each role (upper, lower, core)
                    and a burst of 20 link failures at once (seeded), each
                    then recovered, on the one FailureRouting the
                    controller keeps, each reaction in three steps as the
                    app takes them:
                      recompute_s  FailureRouting.update and the changed
                                   tables compiled (update_s, compile_s)
                      plan_s       the staged plan (staging.update_stages:
                                   forwarding_changes per changed switch,
                                   dependencies, stages)
                      messages_s   the ordered diffs (diff_s) and their
                                   flow- and group-mods encoded as the
                                   app sends them (encode_s: each
                                   distinct message encoded by Ryu once,
                                   ofp.diff_messages; each switch's batch
                                   one buffer with its xids written in,
                                   ofp.encode_batch, and kept by xid for
                                   the barrier's reply)
                    reaction_s is their sum (reaction_cpu_s the CPU
                    seconds of the process meanwhile: less than
                    reaction_s by what other work took from it); the
                    stages, switches per stage, flow-mods, group-mods
                    and bytes (each switch's barrier with them) are
                    counted.
  full_recompute_one_failure_s
                    the full recompute (tables_with_failures) under the
                    first link failure, for comparison

Every incremental result is checked equal to tables_with_failures under
the same failure set (--no-check skips that). Writes recompute_benchmark.json.
"""
import argparse
import gc
import json
import os
import random
import statistics
import sys
import time

from controller.fattree import failover, pipeline, twolevel
from controller.fattree.failover import FailureRouting, expand_failures, tables_with_failures
from controller.fattree.pipeline import compile_table, fabric_arp_rules
from controller.openflow.confirmations import Confirmations
from controller.openflow.diff import ADD_FLOW, DELETE_FLOW, DELETE_FLOWS, ordered_diff
from controller.openflow.staging import update_stages
from controller.ryuapp import ofp
from scripts.argtypes import fattree_k, positive
from scripts.emulator.progress import progress
from scripts.results import machine
from topologies.fattree import FatTree, aggregation_name, core_name, edge_name

BURST_LINKS = 20


def clear_caches():
    """Forget every memoised table entry, suffix table, rule and encoded
    message: the state of a controller that has computed nothing yet."""
    for module in (twolevel, failover, pipeline, ofp):
        for value in vars(module).values():
            if hasattr(value, 'cache_clear'):
                value.cache_clear()


class Stopwatch:
    """Wall-clock and CPU seconds of each timed run."""

    def __init__(self):
        self.wall, self.cpu = [], []

    def run(self, action):
        gc.collect()  # earlier garbage is not this run's to collect
        wall, cpu = time.perf_counter(), time.process_time()
        result = action()
        self.wall.append(time.perf_counter() - wall)
        self.cpu.append(time.process_time() - cpu)
        return result

    def median(self):
        return round(statistics.median(self.wall), 4)

    def median_cpu(self):
        return round(statistics.median(self.cpu), 4)

    def samples(self):
        return [round(s, 4) for s in self.wall]


def timed(action, repeats, before=None):
    """(Stopwatch, last result) of ``action()`` run ``repeats`` times, each
    after ``before()``."""
    watch, result = Stopwatch(), None
    for _ in range(repeats):
        if before is not None:
            before()
        result = watch.run(action)
    return watch, result


def events(topo, seed):
    """[(name, failed links)] of the failures timed."""
    half = topo.half
    links = sorted(tuple(sorted((l.node_a, l.node_b))) for l in topo.switch_links())
    burst = random.Random(seed).sample(links, BURST_LINKS)
    return [
        ('upper-core link failure', expand_failures(topo, [(aggregation_name(0, half), core_name(1, 1))])),
        ('lower-upper link failure', expand_failures(topo, [(edge_name(0, 0), aggregation_name(0, half))])),
        ('upper switch failure', expand_failures(topo, failed_switches=[aggregation_name(0, half)])),
        ('lower switch failure', expand_failures(topo, failed_switches=[edge_name(0, 0)])),
        ('core switch failure', expand_failures(topo, failed_switches=[core_name(1, 1)])),
        ('burst of %d link failures' % BURST_LINKS, expand_failures(topo, burst)),
    ]


def send(datapath, confirmations, name, items, whole_state=False):
    """Messages to one switch as FabricApp.send_batch sends them: one
    buffer (ofp.encode_batch), kept by xid (Confirmations.sent). Returns
    the buffer's bytes."""
    buffer, kept, barrier_xid = ofp.encode_batch(datapath, items)
    confirmations.sent(name, kept, barrier_xid, whole_state=whole_state)
    return len(buffer)


def mods(ops):
    """(flow-mods, group-mods) of an ordered diff."""
    flow_mods = sum(1 for kind, _ in ops if kind in (ADD_FLOW, DELETE_FLOW, DELETE_FLOWS))
    return flow_mods, len(ops) - flow_mods


def switch_state(table, arp):
    """A switch's routing and ARP rules and groups, as the app's rules_for and groups_for give them."""
    rules, groups = compile_table(table)
    return rules + arp, groups


def react(topo, routing, installed, arp, failed):
    """The controller's reaction to the failure set becoming ``failed``, in
    the app's steps (routing_app.apply_failures, then FabricApp's staged
    update): {step: seconds} and what it sends. ``installed`` ({switch:
    (rules, groups)}) becomes the new state."""
    gc.collect()
    cpu = time.process_time()
    clock = [time.perf_counter()]
    changed = routing.update(failed)
    clock.append(time.perf_counter())
    new = {name: (rules + arp[name], groups)
           for name, (rules, groups) in ((name, compile_table(table)) for name, table in changed.items())}
    new = {name: state for name, state in new.items() if state != installed[name]}
    clock.append(time.perf_counter())
    plan = update_stages(topo, installed, new)
    clock.append(time.perf_counter())
    ops = {name: ordered_diff(installed[name][0], state[0], installed[name][1], state[1])
           for name, state in new.items()}
    clock.append(time.perf_counter())
    datapath, confirmations = ofp.Unconnected(), Confirmations(time.time)
    size = sum(send(datapath, confirmations, name, ofp.diff_messages(ops[name])) for name in ops)
    clock.append(time.perf_counter())
    installed.update(new)
    counts = [mods(o) for o in ops.values()]
    flow_mods, group_mods = sum(c[0] for c in counts), sum(c[1] for c in counts)
    update_s, compile_s, plan_s, diff_s, encode_s = (b - a for a, b in zip(clock, clock[1:]))
    return {'update_s': update_s, 'compile_s': compile_s, 'recompute_s': update_s + compile_s, 'plan_s': plan_s,
            'diff_s': diff_s, 'encode_s': encode_s, 'messages_s': diff_s + encode_s,
            'reaction_s': clock[-1] - clock[0], 'reaction_cpu_s': time.process_time() - cpu,
            'changed_switches': len(new), 'stages': [len(stage) for stage in plan],
            'flow_mods': flow_mods, 'group_mods': group_mods, 'bytes': size}


TIMES = ('update_s', 'compile_s', 'recompute_s', 'plan_s', 'diff_s', 'encode_s', 'messages_s', 'reaction_s',
         'reaction_cpu_s')


def summary(samples):
    """The medians of the reactions ``samples``, their counts (the same in
    every sample) and every reaction time."""
    counts = {key: samples[0][key] for key in samples[0] if key not in TIMES}
    assert all({key: s[key] for key in counts} == counts for s in samples), samples
    medians = {key: round(statistics.median(s[key] for s in samples), 4) for key in TIMES}
    return dict(medians, **counts, reaction_samples=[round(s['reaction_s'], 4) for s in samples])


def start_up(topo):
    """The first full program of every switch, from cold caches: seconds to
    compute, compile and encode, and the flow-mods, group-mods and bytes
    (a switch's whole state after deleting every flow and group, as
    FabricApp.install_switch sends it)."""
    clear_caches()
    gc.collect()
    clock = [time.perf_counter()]
    routing = FailureRouting(topo)
    clock.append(time.perf_counter())
    arp = fabric_arp_rules(topo)
    states = {name: switch_state(table, arp[name]) for name, table in routing.tables.items()}
    clock.append(time.perf_counter())
    datapath, confirmations = ofp.Unconnected(), Confirmations(time.time)
    flow_mods = group_mods = size = 0
    for name, (rules, groups) in states.items():  # as FabricApp.install_switch sends it
        ops = ordered_diff((), rules, (), groups)
        size += send(datapath, confirmations, name, ofp.whole_state_messages(datapath, ops), whole_state=True)
        counts = mods(ops)
        flow_mods, group_mods = flow_mods + counts[0] + 1, group_mods + counts[1] + 1  # and the delete-alls
    clock.append(time.perf_counter())
    compute_s, compile_s, messages_s = (b - a for a, b in zip(clock, clock[1:]))
    return {'compute_s': compute_s, 'compile_s': compile_s, 'messages_s': messages_s,
            'total_s': clock[-1] - clock[0], 'flow_mods': flow_mods, 'group_mods': group_mods, 'bytes': size}


def benchmark(k, repeats, seed, check):
    progress('k=%d: building the model' % k)
    started = time.perf_counter()
    topo = FatTree(k)
    row = {'k': k, 'switches': len(topo.switches), 'hosts': len(topo.hosts),
           'model_build_s': round(time.perf_counter() - started, 3)}

    row['load_average_before'] = [round(x, 2) for x in os.getloadavg()]
    progress('k=%d: full compute (every table, nothing failed), %d runs' % (k, repeats))
    watch, routing = timed(lambda: FailureRouting(topo), repeats, clear_caches)
    row.update(full_compute_s=watch.median(), full_compute_cpu_s=watch.median_cpu(),
               full_compute_samples=watch.samples())
    progress('k=%d: full compile, %d runs' % (k, repeats))
    watch, _ = timed(lambda: {name: pipeline.compile_table(t) for name, t in routing.tables.items()},
                     repeats, clear_caches)
    row.update(full_compile_s=watch.median(), full_compile_cpu_s=watch.median_cpu(),
               full_compile_samples=watch.samples())
    row['full_compute_and_compile_s'] = round(row['full_compute_s'] + row['full_compile_s'], 4)
    progress('k=%d: start-up (compute, compile, encode every switch\'s program), %d runs' % (k, repeats))
    starts = [start_up(topo) for _ in range(repeats)]
    row['start_up'] = dict({key: round(statistics.median(s[key] for s in starts), 4)
                            for key in ('compute_s', 'compile_s', 'messages_s', 'total_s')},
                           **{key: starts[0][key] for key in ('flow_mods', 'group_mods', 'bytes')})
    progress('k=%d: start-up %.2f s (%s flow-mods, %s group-mods, %.1f MB)' % (
        k, row['start_up']['total_s'], format(row['start_up']['flow_mods'], ','),
        format(row['start_up']['group_mods'], ','), row['start_up']['bytes'] / 1e6))

    arp = fabric_arp_rules(topo)
    installed = {name: switch_state(table, arp[name]) for name, table in routing.tables.items()}
    row['events'] = []
    for name, failed in events(topo, seed):
        progress('k=%d: %s (%d links), %d runs' % (k, name, len(failed), repeats))
        failures, recoveries = [], []
        for _ in range(repeats):
            failures.append(react(topo, routing, installed, arp, failed))
            if check:
                assert routing.tables == tables_with_failures(topo, failed), (k, name)
            recoveries.append(react(topo, routing, installed, arp, frozenset()))
            assert failures[-1]['changed_switches'] == recoveries[-1]['changed_switches'], (k, name)
        row['events'].append({
            'event': name, 'failed_links': sorted('-'.join(sorted(link)) for link in failed)
            if len(failed) <= 4 else len(failed), 'checked': check,
            'failure': summary(failures), 'recovery': summary(recoveries)})
        for what, result in (('', row['events'][-1]['failure']), (' recovery', row['events'][-1]['recovery'])):
            progress(reaction_line(k, name + what, result))

    first = events(topo, seed)[0][1]
    progress('k=%d: full recompute under one link failure, for comparison' % k)
    row['full_recompute_one_failure_s'] = timed(lambda: tables_with_failures(topo, first), 1)[0].median()
    row['load_average_after'] = [round(x, 2) for x in os.getloadavg()]
    return row


def reaction_line(k, name, r):
    return ('k=%d %s: reaction %.2f s (recompute %.2f s, plan %.2f s, messages %.2f s; {:,} flow-mods, '
            '{:,} group-mods, {:,} switches in %d stage%s)'.format(r['flow_mods'], r['group_mods'],
                                                                    r['changed_switches'])
            % (k, name, r['reaction_s'], r['recompute_s'], r['plan_s'], r['messages_s'], len(r['stages']),
               '' if len(r['stages']) == 1 else 's'))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=fattree_k, nargs='+', default=[4, 8, 16, 32, 48])
    parser.add_argument('--repeats', type=positive(int), default=3)
    parser.add_argument('--seed', type=int, default=1, help='seed of the burst links')
    parser.add_argument('--no-check', action='store_true',
                        help='skip checking each result against the full recompute')
    parser.add_argument('--out', default='results/fattree')
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rows = [benchmark(k, args.repeats, args.seed, not args.no_check) for k in args.k]
    command = 'python -m scripts.fattree.recompute_benchmark ' + ' '.join(sys.argv[1:] if argv is None else argv)
    result = {'machine': machine(), 'repeats': args.repeats, 'seed': args.seed, 'command': command.strip(),
              'results': rows}
    path = os.path.join(args.out, 'recompute_benchmark.json')
    with open(path, 'w') as f:
        json.dump(result, f, indent=2)
    for row in rows:
        start = row['start_up']
        print('k=%d start-up: %.2f s (compute %.2f s, compile %.2f s, messages %.2f s; {:,} flow-mods, '
              '{:,} group-mods, %.1f MB)'.format(start['flow_mods'], start['group_mods'])
              % (row['k'], start['total_s'], start['compute_s'], start['compile_s'], start['messages_s'],
                 start['bytes'] / 1e6))
        for event in row['events']:
            print(reaction_line(row['k'], event['event'], event['failure']))
            print(reaction_line(row['k'], event['event'] + ' recovery', event['recovery']))
    print('written to %s' % path)


if __name__ == '__main__':
    main()
