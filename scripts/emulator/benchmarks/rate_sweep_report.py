"""The rate sweep's verdict and table (pure: the docs render it).

A rate holds when every run at it kept its fidelity verdict
(scripts/emulator/fidelity.py): the non-blocking reference carried at
least 90% of line rate on every pattern, the machine kept idle CPU, no
ovs-vswitchd dropped packets unread. The sweep's result is the highest
rate that holds. A lower rate can fail where a higher one holds: at
2 Mbit/s a 50-packet queue holds 300 ms, and TCP's slow start over it
costs the reference a few percent of a short run.
"""
import re


def rate_row(bw, runs, line_rate):
    """One rate's row from its bisection runs (their ``fidelity`` objects)."""
    reference = {r['pattern']: round(100.0 * r['aggregate_mbps'] / line_rate, 1)
                 for r in runs if r['scheme'] == 'nonblocking'}
    limited = [r for r in runs if not r['fidelity']['ok']]
    # what limited them, without each run's figure: 'machine idle', 'non-blocking reference', ...
    reasons = sorted({re.match(r'\D*', reason).group().strip() for r in limited for reason in r['fidelity']['limited_by']})
    return {'bw_mbps': bw, 'runs': len(runs), 'runs_limited': len(limited), 'holds': not limited,
            'nonblocking_pct_of_line_min': min(reference.values()) if reference else None,
            'nonblocking_pct_of_line': reference,
            'idle_pct_median_min': min((r['fidelity']['idle_pct_median'] for r in runs
                                        if r['fidelity']['idle_pct_median'] is not None), default=None),
            'daemon_busy_pct_median_max': max((r['fidelity']['daemon_busy_pct_median'] for r in runs
                                               if r['fidelity']['daemon_busy_pct_median'] is not None), default=None),
            'limited_by': reasons}


def highest_faithful_rate(rows):
    """The highest rate that holds (None: none does)."""
    return max((row['bw_mbps'] for row in rows if row['holds']), default=None)


def markdown(result):
    lines = ['| link rate (Mbit/s) | runs | limited | non-blocking, lowest % of line rate | lowest median idle CPU % '
             '| highest median ovs-vswitchd % of a core | holds | limited by |',
             '|---|---|---|---|---|---|---|---|']
    for row in result['rates']:
        lines.append('| %g | %d | %d | %s | %s | %s | %s | %s |' % (
            row['bw_mbps'], row['runs'], row['runs_limited'],
            '-' if row['nonblocking_pct_of_line_min'] is None else '%.1f' % row['nonblocking_pct_of_line_min'],
            '-' if row['idle_pct_median_min'] is None else '%.1f' % row['idle_pct_median_min'],
            '-' if row['daemon_busy_pct_median_max'] is None else '%.1f' % row['daemon_busy_pct_median_max'],
            'yes' if row['holds'] else 'no', '; '.join(row['limited_by']) or '-'))
    best = result['highest_faithful_mbps']
    lines.append('')
    lines.append('Highest rate at which the verdict holds everywhere: %s.'
                 % ('%g Mbit/s' % best if best is not None else 'none of those swept'))
    return '\n'.join(lines)


def predicted_cell(row):
    """The calibration's predicted rate, or why there is none: no
    calibration, or one that refused the fabric (below the floor)."""
    if row.get('calibration') is None:
        return '-'
    if row['predicted_mbps'] is None:
        return 'below 2: refused'
    return '%g' % row['predicted_mbps']


def machines_markdown(machines):
    """One row per machine: its rate sweep's answer beside its calibration's
    prediction (results/calibration/machines.json)."""
    lines = ['| machine | rate sweep: highest faithful rate (Mbit/s) | calibration: predicted rate (Mbit/s) '
             '| one ovs-vswitchd forwards (Mbit/s of shaped hops) | faithful per daemon (Mbit/s) '
             '| hosts carry without a daemon (Mbit/s) | calibration took (s) | load during the sweep |',
             '|---|---|---|---|---|---|---|---|']
    for row in machines['machines']:
        calibration = row.get('calibration')

        def figure(key, form='{:,.0f}'):
            return form.format(calibration[key]) if calibration else 'not measured'
        lines.append('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
            row['machine'],
            '-' if row['sweep_highest_faithful_mbps'] is None else '%g' % row['sweep_highest_faithful_mbps'],
            predicted_cell(row),
            figure('daemon_hop_mbps'), figure('faithful_mbps_per_daemon'), figure('host_mbps'),
            figure('took_s', '{:.1f}'), row.get('load', '-')))
    return '\n'.join(lines)
