"""How long the fat-tree controller takes to compute its routing state, and
to recompute it after failures, at each k (no fabric: the model only).

    python -m scripts.fattree.recompute_benchmark [--k 4 8 16 32 48] [--repeats 3] [--out results/fattree]

Per k, each figure is the median of --repeats runs, in wall-clock seconds
(every sample is kept, and the median CPU seconds of the process beside
each: on a shared machine the two part when other work competes):

  full_compute_s    every switch's tables with nothing failed, as the
                    controller computes them at start (FailureRouting(topo))
  full_compile_s    all of them compiled to OpenFlow (pipeline.compile_table)
                    Both start from cold caches (the modules' memoised
                    entries and rules cleared).
  events            one link failure (upper-core, then lower-upper), one
                    switch failure (upper, lower, core) and a burst of 20
                    link failures at once (seeded), each then recovered,
                    on the one FailureRouting the controller keeps:
                    update_s (the incremental recompute), compile_s (of the
                    changed tables), changed_switches, recover_s; the first
                    sample (caches not yet holding the event's entries) is
                    also given as first_update_s.
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
import platform
import random
import statistics
import sys
import time

from controller.fattree import failover, pipeline, twolevel
from controller.fattree.failover import FailureRouting, expand_failures, tables_with_failures
from scripts.argtypes import fattree_k, positive
from scripts.emulator.progress import progress
from topologies.fattree import FatTree, aggregation_name, core_name, edge_name

BURST_LINKS = 20


def clear_caches():
    """Forget every memoised table entry, suffix table and rule: the state of
    a controller that has computed nothing yet."""
    for module in (twolevel, failover, pipeline):
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
        ('link failure, upper-core', expand_failures(topo, [(aggregation_name(0, half), core_name(1, 1))])),
        ('link failure, lower-upper', expand_failures(topo, [(edge_name(0, 0), aggregation_name(0, half))])),
        ('switch failure, upper', expand_failures(topo, failed_switches=[aggregation_name(0, half)])),
        ('switch failure, lower', expand_failures(topo, failed_switches=[edge_name(0, 0)])),
        ('switch failure, core', expand_failures(topo, failed_switches=[core_name(1, 1)])),
        ('burst of %d link failures' % BURST_LINKS, expand_failures(topo, burst)),
    ]


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

    row['events'] = []
    for name, failed in events(topo, seed):
        progress('k=%d: %s (%d links), %d runs' % (k, name, len(failed), repeats))
        updates, compiles, recoveries, changed = Stopwatch(), Stopwatch(), Stopwatch(), {}
        for _ in range(repeats):
            changed = updates.run(lambda: routing.update(failed))
            compiles.run(lambda: [pipeline.compile_table(table) for table in changed.values()])
            if check:
                assert routing.tables == tables_with_failures(topo, failed), (k, name)
            recovered = recoveries.run(lambda: routing.update(frozenset()))
            assert set(recovered) == set(changed), (k, name)
        row['events'].append({
            'event': name, 'failed_links': sorted('-'.join(sorted(link)) for link in failed)
            if len(failed) <= 4 else len(failed),
            'changed_switches': len(changed), 'update_s': updates.median(), 'update_cpu_s': updates.median_cpu(),
            'first_update_s': round(updates.wall[0], 4), 'compile_s': compiles.median(),
            'recover_s': recoveries.median(), 'recover_cpu_s': recoveries.median_cpu(),
            'update_samples': updates.samples(), 'recover_samples': recoveries.samples(), 'checked': check})
        progress('k=%d: %s: %.4f s (first %.4f s), %d switches changed, compiled in %.4f s; recovered in %.4f s'
                 % (k, name, updates.median(), updates.wall[0], len(changed), compiles.median(),
                    recoveries.median()))

    first = events(topo, seed)[0][1]
    progress('k=%d: full recompute under one link failure, for comparison' % k)
    row['full_recompute_one_failure_s'] = timed(lambda: tables_with_failures(topo, first), 1)[0].median()
    row['load_average_after'] = [round(x, 2) for x in os.getloadavg()]
    return row


def machine():
    return {'python': platform.python_version(), 'implementation': platform.python_implementation(),
            'cpu_count': os.cpu_count(), 'machine': platform.machine(), 'system': platform.platform(),
            'processor': _cpu_model()}


def _cpu_model():
    try:
        with open('/proc/cpuinfo') as info:
            for line in info:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


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
        print('k=%(k)d (%(switches)d switches): tables %(full_compute_s).3f s + compile %(full_compile_s).3f s; '
              'full recompute after one failure %(full_recompute_one_failure_s).3f s' % row)
        for event in row['events']:
            print('  %-28s %8.4f s (%d switches changed, compiled in %.4f s), recovery %.4f s'
                  % (event['event'], event['update_s'], event['changed_switches'], event['compile_s'],
                     event['recover_s']))
    print('written to %s' % path)


if __name__ == '__main__':
    main()
