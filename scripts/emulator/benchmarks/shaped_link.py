"""What a shaped link's token buckets and the hosts' TCP do to the
emulator's rate: the non-blocking reference and two-level routing (k=4,
Stride(4), 16 iperf3 flows) at one link rate, with Mininet's own HTB
buckets (15 KB, the ceil bucket about one frame) or dcfabric's
(shaping.HTB_BURST_S of the rate in both), and with the hosts on
BBR (these kernels' default) or CUBIC (mininet_classes.HOST_TCP).

    dcfabric measure shaped-link [--bw 20] [--duration 8] [--omit 3] [--seed 37] [--out results/emulator]

Writes OUT/shaped_link.json and prints the table. Every run carries its
fidelity verdict (scripts/emulator/fidelity.py).
"""
import argparse
import sys

from scripts.argtypes import positive
from scripts.results import write_result

K = 4
PATTERN = 'stride-4'
# (label, the buckets' depth in seconds of the rate or None for Mininet's, the hosts' TCP)
VARIANTS = (
    ("Mininet's buckets, BBR", None, 'bbr'),
    ("Mininet's buckets, CUBIC", None, 'cubic'),
    ('deep buckets, BBR', 0.024, 'bbr'),
    ('deep buckets, CUBIC', 0.024, 'cubic'),
)


def run_variant(label, burst_s, tcp, args, progress):
    from scripts.emulator import mininet_classes, shaping
    from scripts.emulator.fidelity import verdict
    from scripts.emulator.bisection_measure import measure
    from scripts.emulator.bisection_backend import Fabrics
    from scripts.experiments.patterns import seeded
    from topologies.fattree import FatTree
    shaping.HTB_BURST_S, mininet_classes.HOST_TCP = burst_s, tcp
    pairs = seeded(PATTERN, FatTree(K), args.seed)
    config = {'k': K, 'bw': args.bw, 'queue': 50, 'ovs_instances': 1,
              'schemes': ['nonblocking', 'twolevel']}
    row = {'variant': label, 'burst_s': burst_s, 'host_tcp': tcp}
    with Fabrics(config, progress) as fabrics:
        for scheme in config['schemes']:
            net, host_of = fabrics.use(scheme)
            rates, _, figures = measure(net, host_of, pairs, {'duration': args.duration, 'omit': args.omit})
            pct = 100.0 * sum(rates) / (len(pairs) * args.bw)
            fidelity = verdict(figures, pct if scheme == 'nonblocking' else row['nonblocking']['pct_of_line'])
            row[scheme] = {'aggregate_mbps': round(sum(rates), 1), 'pct_of_line': round(pct, 1),
                           'flow_mbps_min': round(min(rates), 1), 'fidelity': fidelity}
            progress('%s, %s: %.1f Mbit/s (%.1f%% of line rate), %s'
                     % (label, scheme, sum(rates), pct, 'faithful' if fidelity['ok'] else
                        'limited: ' + '; '.join(fidelity['limited_by'])))
    return row


def markdown(result):
    lines = ['| buckets and hosts\' TCP | non-blocking, % of line rate | its slowest flow (Mbit/s) | '
             'two-level, % of line rate | its slowest flow (Mbit/s) | verdict (non-blocking / two-level) |',
             '|---|---|---|---|---|---|']
    for row in result['rows']:
        nb, tl = row['nonblocking'], row['twolevel']
        lines.append('| %s | %.1f | %.1f | %.1f | %.1f | %s / %s |' % (
            row['variant'], nb['pct_of_line'], nb['flow_mbps_min'], tl['pct_of_line'], tl['flow_mbps_min'],
            'faithful' if nb['fidelity']['ok'] else 'limited', 'faithful' if tl['fidelity']['ok'] else 'limited'))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='dcfabric measure shaped-link', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--bw', type=positive(float), default=20.0, help='link rate in Mbit/s (default 20)')
    parser.add_argument('--duration', type=positive(int), default=8)
    parser.add_argument('--omit', type=int, default=3)
    parser.add_argument('--seed', type=int, default=37)
    parser.add_argument('--out', default='results/emulator')
    args = parser.parse_args(argv)
    from scripts.emulator.command import run_command
    progress = lambda m: print('... ' + m, file=sys.stderr, flush=True)  # noqa: E731
    result = run_command('shaped-link', lambda: {
        'k': K, 'pattern': PATTERN, 'seed': args.seed, 'bw_mbps': args.bw, 'duration': args.duration,
        'omit': args.omit, 'rows': [run_variant(*variant, args, progress) for variant in VARIANTS]})
    write_result(args.out, 'shaped_link.json', result, markdown)
    return 0


if __name__ == '__main__':
    main()
