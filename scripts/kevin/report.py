"""The Kevin experiments' outputs: JSON, CSV, the printed tables and the
plots, each captioned with the seeds and repetitions that made it."""
import csv
import json
import os


def seeds_caption(seeds):
    return '%d repetition(s), seed(s) %s' % (len(seeds), ' '.join(map(str, seeds)))


def write_model(out_dir, workload, seeds, results, table, schemes, sizes):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, 'model_path_length.json'), 'w') as out:
        json.dump({'workload': workload, 'seeds': seeds, 'runs': results, 'means': table},
                  out, indent=1, default=list)
    with open(os.path.join(out_dir, 'model_path_length.csv'), 'w', newline='') as out:
        writer = csv.DictWriter(out, fieldnames=['seeds'] + list(table[0]))
        writer.writeheader()
        writer.writerows(dict(line, seeds=' '.join(map(str, seeds))) for line in table)
    print('\nmean ToR-to-ToR hops over %s (unweighted / demand-weighted)' % seeds_caption(seeds))
    print('%5s %5s %17s %17s %17s %17s' % (('n', 'load') + schemes))
    for line in table:
        print('%5d %5.1f ' % (line['n'], line['load']) + ' '.join(
            '%8.2f/%-8.2f' % (line[s], line[s + '_weighted']) for s in schemes))
    path = os.path.join(out_dir, 'model_path_length.png')
    plot_model(path, table, schemes, sizes, seeds)
    print('wrote %s and model_path_length.json/.csv' % path)


def plot_model(path, table, schemes, sizes, seeds):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        lines = [l for l in table if l['n'] == n]
        for scheme in schemes:
            ax.plot([l['load'] for l in lines], [l[scheme] for l in lines], marker='o', label=scheme)
        ax.set_title('n=%d ToRs, k_s=2, k_d=6 (expander degree 8)\nmean over %s'
                     % (n, seeds_caption(seeds)), fontsize=9)
        ax.set_xlabel('load (active ToR pairs / (n k_d))')
        ax.set_ylabel('mean path length (ToR hops)')
        ax.grid(True)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def write_emulation(out_dir, config, rows, runs):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, 'emulation.json'), 'w') as out:
        json.dump({'config': config, 'summary': rows, 'runs': runs}, out, indent=1)
    fields = sorted({key for row in rows for key in row}, key=lambda k: (k != 'scheme', k))
    with open(os.path.join(out_dir, 'emulation.csv'), 'w', newline='') as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    print_emulation_table(rows)
    plot_emulation(rows, os.path.join(out_dir, 'emulation.png'), config)
    print('wrote %s/emulation.json, .csv and .png' % out_dir)


def _fmt(value, spec='%.1f'):
    return '-' if value is None else spec % value


def print_emulation_table(rows):
    print('\nmeans over the runs of each scheme (seeds per row in the CSV)')
    print('%-7s %11s %10s %11s %17s %9s %13s %9s %5s %8s  %s' % (
        'scheme', 'ToRs before', 'ToRs after', 'DA ready s', 'elephant Mbit/s', 'min flow',
        'mice RTT/loss', 'CPU busy', 'load', 'bridges', 'emulator'))
    print('%-7s %11s %10s %11s %17s %9s %13s %9s %5s %8s' % (
        '', '(mean)', '(mean)', '(mean/max)', 'sum: all/2nd half', 'Mbit/s', 'ms / %', '%', '1m',
        '(max)'))
    for row in rows:
        print('%-7s %11s %10s %11s %17s %9s %13s %9s %5s %8s  %s' % (
            row['scheme'], _fmt(row['tors_before'], '%.2f'), _fmt(row['tors_after'], '%.2f'),
            '%s/%s' % (_fmt(row['da_ready_mean_s']), _fmt(row['da_ready_max_s'])),
            '%s/%s' % (_fmt(row['elephant_mbps_sum']), _fmt(row['elephant_mbps_sum_second_half'])),
            _fmt(row['elephant_mbps_min']),
            '%s/%s' % (_fmt(row['mice_rtt_ms']), _fmt(row['mice_loss_pct'])),
            _fmt(row['cpu_busy_pct'], '%.0f'), _fmt(row['loadavg_1m'], '%.1f'),
            row['ovs_bridges_max'], row['emulator']))
    for row in rows:
        if row['scheme'] == 'distda':
            print('DistDA messages sent/received: %s; elephant detection to PortApprove %s s' % (
                ', '.join('%s %s/%s' % (kind, _fmt(row[kind + '_sent'], '%g'),
                                        _fmt(row[kind + '_received'], '%g'))
                          for kind in ('PortRequest', 'PortApprove', 'PortDecline', 'PortRelease')),
                _fmt(row['distda_detection_to_approve_s'], '%.2f')))


def markdown_emulation(rows):
    """The README's table: one row per scheme, means over its repetitions."""
    names = {'none': 'none (static de Bruijn)', 'bfs': 'BFS-DA-links', 'greedy': 'Greedy-DA-links',
             'distda': 'DistDA'}
    lines = ['| scheme | repetitions (seeds) | ToRs on elephant path before -> after (TTL) '
             '| elephant start -> DA link in table, s (mean / max) '
             '| elephant Mbit/s, sum over the elephants (whole run / 2nd half) | per repetition | slowest elephant Mbit/s '
             '| mice RTT ms / loss % | load average, CPU busy % | emulator |',
             '|' + '---|' * 10]
    for row in rows:
        lines.append('| %s | %d (%s) | %s -> %s | %s | %s / %s | %s | %s | %s / %s | %s, %s | %s |' % (
            names.get(row['scheme'], row['scheme']), row['reps'], row['seeds'],
            _fmt(row['tors_before'], '%.3g'), _fmt(row['tors_after'], '%.3g'),
            '-' if row['da_ready_mean_s'] is None else '%.1f / %.1f' % (row['da_ready_mean_s'],
                                                                         row['da_ready_max_s']),
            _fmt(row['elephant_mbps_sum']), _fmt(row['elephant_mbps_sum_second_half']),
            ', '.join('%.1f' % x for x in row['elephant_mbps_sum_per_rep']),
            _fmt(row['elephant_mbps_min']), _fmt(row['mice_rtt_ms'], '%.0f'), _fmt(row['mice_loss_pct']),
            _fmt(row['loadavg_1m']), _fmt(row['cpu_busy_pct'], '%.0f'),
            row['emulator']))
    return '\n'.join(lines)


def plot_emulation(rows, path, config):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    schemes = [r['scheme'] for r in rows]
    x = range(len(rows))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    panels = ((axes[0], ('tors_before', 'tors_after'), ('before DA', 'after DA'),
               'ToRs on elephant path (from TTL)'),
              (axes[1], ('elephant_mbps_sum', 'elephant_mbps_sum_second_half'),
               ('whole run', 'second half'), 'elephant throughput, sum (Mbit/s)'),
              (axes[2], ('da_ready_mean_s', 'da_ready_max_s'), ('mean', 'max'),
               'elephant start to DA link in table (s)'))
    for ax, keys, labels, title in panels:
        for offset, (key, label) in zip((-0.2, 0.2), zip(keys, labels)):
            ax.bar([i + offset for i in x], [r[key] or 0 for r in rows], width=0.4, label=label)
        ax.set_xticks(list(x))
        ax.set_xticklabels(schemes)
        ax.set_title(title)
        ax.legend()
        ax.grid(True, axis='y')
    fig.suptitle('%s, %g Mbit/s links, %d s elephants; means over %s'
                 % (config['fabric'], config['bw'], config['duration'], seeds_caption(config['seeds'])),
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path)

