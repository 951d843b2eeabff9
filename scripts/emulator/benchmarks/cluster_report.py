"""The cluster measurement's tables (pure: the docs render them)."""
from scripts.emulator.fidelity import runs_verdict_cell

LOCAL = 'local'  # --servers local: this machine's own Open vSwitch

def where(row):
    text = ('this machine, %d private OVS' % row['ovs_instances'] if row.get('ovs_instances', 1) > 1
            else 'this machine\'s OVS') if row['servers'] == LOCAL else '%d container server%s' % (
        row['servers'], 's' if row['servers'] > 1 else '')
    return text + ''.join(', %s' % row[c] for c in ('tunnel', 'ovs_config') if row[c])


def with_range(row, key, form='%.1f'):
    """A row's value, and the range of its runs when it has several."""
    text = form % row[key]
    values = [run[key] for run in row.get('runs', []) if 'failure' not in run]
    if len(values) > 1:
        text += ' (%s-%s)' % (form % min(values), form % max(values))
    return text


def runs_cell(row):
    runs = len(row.get('runs', [row]))
    failed = len(row.get('failed_runs', []))
    return '%d' % runs + (' (%d failed: %s)' % (failed, '; '.join(row['failed_runs'])) if failed else '')


def emulator_cell(row):
    """The fidelity verdicts of a row's runs: 'faithful', 'LIMITED n/m runs:
    what limited them', or 'not judged' (rows recorded before the verdict
    existed, or every run failed)."""
    return runs_verdict_cell(row.get('runs', [row]))


def throughput_markdown(rows):
    """The fat-tree section's table: aggregate TCP throughput by k and set-up."""
    lines = ['| k | ovs-vswitchd instances | Open vSwitch | flows | runs | TCP sum (Mbit/s), median (range) | '
             'CPU per ovs-vswitchd (% of a core) | emulator |', '|' + '---|' * 8]
    for r in (r for r in rows if 'aggregate_mbps' in r):
        lines.append('| %d | %s | %s | %d | %s | %s | %s | %s |' % (
            r['k'], r.get('ovs_instances', 1) if r['servers'] == LOCAL else r['servers'],
            (('this machine\'s private' if r.get('ovs_instances', 1) > 1 else 'this machine\'s')
             if r['servers'] == LOCAL else 'container servers\'')
            + (', ' + r['ovs_config'] if r['ovs_config'] else ''),
            r['flows'], runs_cell(r), with_range(r, 'aggregate_mbps'),
            ' / '.join('%.0f' % c for c in r['vswitchd_cpu_pct']), emulator_cell(r)))
    return '\n'.join(lines)


def markdown(rows):
    """The README's cluster table."""
    lines = ['| k | where | runs | tunnels | build + start (s) | ready (s) | all pairs (s) | '
             'TCP sum of the flows (Mbit/s), median (range) | CPU per ovs-vswitchd (% of a core) | '
             'BFD false failures under the flows | failure injected (s) | BFD down seen within (s) | emulator |',
             '|' + '---|' * 13]
    dash = lambda v: '-' if v is None else v
    for r in rows:
        if 'aggregate_mbps' not in r:  # every run failed
            lines.append('| %d | %s | %s |' % (r['k'], where(r), runs_cell(r)) + ' - |' * 9 + ' %s |' % emulator_cell(r))
            continue
        lines.append('| %d | %s | %s | %d | %.1f | %.1f | %.1f | %s, %d flows | %s | %s | %s | %s | %s |' % (
            r['k'], where(r), runs_cell(r), r['tunnels'],
            r['build_and_start_s'], r['ready_s'], r['all_pairs_s'], with_range(r, 'aggregate_mbps'), r['flows'],
            ' / '.join('%.0f' % c for c in r['vswitchd_cpu_pct']),
            with_range(r, 'bfd_false_failures_under_load', '%d') if 'bfd_false_failures_under_load' in r else '-',
            dash(r['tunnel_failure_injection_s']), dash(r['bfd_down_seen_within_s']), emulator_cell(r)))
    return '\n'.join(lines)
