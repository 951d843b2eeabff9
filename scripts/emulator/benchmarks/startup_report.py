"""The README's start-up table from scripts/emulator/benchmarks/startup.py's output.

    python -m scripts.emulator.benchmarks.startup_report [--out results/fattree]

Reads startup.json and prints it as Markdown (times in seconds)."""
import argparse
import json
import os


def _s(value, digits=1):
    return '-' if value is None else '%.*f' % (digits, value)


def rules(row):
    return ', '.join('%s %s' % (role, ' / '.join('%d+%d+%d' % (r['prefix'], r['suffix'], r['housekeeping'])
                                                 for r in counts))
                     for role, counts in row.get('rules', {}).items())


def markdown(rows):
    lines = ['| k | OVS instances | BFD interval | up | ready | start to all pairs | teardown / ovs-vswitchd done '
             '| controller CPU to ready | silent failure detected / repaired | bare Mininet up / teardown | '
             'up, teardown vs bare | rules per switch (prefix+suffix+housekeeping and ARP) |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        pairs = '{:,} {}pairs{}'.format(r['pairs_checked'], 'sampled ' if r['pairs_sampled'] else '',
                                        ', seed %d' % r['pair_seed'] if r['pairs_sampled'] else '')
        lines.append('| %d | %d | %s | %s | %s | %s (%s) | %s / %s | %s | %s / %s | %s / %s | %s | %s |' % (
            r['k'], r.get('ovs_instances', 1),
            '{:,} ms'.format(r['bfd_interval_ms']) if r['bfd_interval_ms'] else 'off',
            _s(r['up_s']), _s(r['ready_s']), _s(r['start_to_all_pairs_s']), pairs, _s(r['teardown_s']),
            _s(r['ovs_vswitchd_settled_s']), _s(r['controller_cpu_s_to_ready']),
            _s(r.get('silent_failure_detected_s'), 2), _s(r.get('silent_failure_recovered_s'), 2),
            _s(r.get('bare_up_s')), _s(r.get('bare_teardown_s')),
            '%.2f, %.2f' % (r['up_vs_bare'], r['teardown_vs_bare']) if 'up_vs_bare' in r else 'not measured',
            rules(r)))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='results/fattree')
    args = parser.parse_args(argv)
    with open(os.path.join(args.out, 'startup.json')) as f:
        print(markdown(json.load(f)))


if __name__ == '__main__':
    main()
