"""The tables of results/fattree/recompute_benchmark.json
(scripts/fattree/recompute_benchmark.py) as Markdown: the recompute, the
whole reaction to each failure and recovery, and the start-up program.
Pure: no Ryu, so the docs render anywhere."""


def _ms(seconds):
    return '%.1f' % (1e3 * seconds)


def _s(seconds):
    return '%.2f' % seconds


def _footer(result):
    rows, machine = result['results'], result['machine']
    loads = [r[key][0] for r in rows for key in ('load_average_before', 'load_average_after')]
    checked = all(e['checked'] for r in rows for e in r['events'])
    return ('Median wall-clock time of %d runs; every recomputed result %s the full recompute under the same '
            'failure set. %d cores (%s), %s %s; load average (1 min) %.2f to %.2f.' % (
                result['repeats'], 'checked equal to' if checked else 'not checked against',
                machine['cpu_count'], machine['processor'], machine['implementation'], machine['python'],
                min(loads), max(loads)))


def markdown(result):
    """The recompute alone: every table at start, and the incremental update per event."""
    rows = result['results']
    events = list(dict.fromkeys(e['event'] for r in rows for e in r['events']))
    lines = ['| k | switches | every table, nothing failed: compute + compile (ms) | full recompute, one link '
             'failure (ms) | ' + ' | '.join(events) + ' |', '|---' * (4 + len(events)) + '|']
    for r in rows:
        by_event = {e['event']: e['failure'] for e in r['events']}
        lines.append('| %d | {:,} | %s + %s | %s | %s |'.format(r['switches']) % (
            r['k'], _ms(r['full_compute_s']), _ms(r['full_compile_s']), _ms(r['full_recompute_one_failure_s']),
            ' | '.join('-' if event not in by_event else '%s ({:,})'.format(by_event[event]['changed_switches'])
                       % _ms(by_event[event]['update_s']) for event in events)))
    largest = max(rows, key=lambda r: r['k'])
    return '\n'.join(lines) + (
        '\n\nEach event column: the incremental update (`FailureRouting.update`) on the one instance the '
        'controller keeps, in ms, and in brackets the switches whose tables changed; recovering from each event '
        'took at most %s ms at k=%d. ' % (_ms(max(e['recovery']['update_s'] for e in largest['events'])),
                                           largest['k']) + _footer(result))


def _stages(reaction):
    return '{:,} in %d'.format(reaction['changed_switches']) % len(reaction['stages'])


def reaction_markdown(result):
    """The whole reaction per k and event, failure and recovery."""
    lines = ['| k | event | reaction (s) | recompute / plan / messages (s) | flow-mods | group-mods | switches in '
             'stages | recovery (s) | recovery: recompute / plan / messages (s) | recovery: switches in stages |',
             '|---' * 10 + '|']
    for r in result['results']:
        for e in r['events']:
            fail, back = e['failure'], e['recovery']
            lines.append('| %d | %s | **%s** | %s / %s / %s | {:,} | {:,} | %s | **%s** | %s / %s / %s | %s |'.format(
                fail['flow_mods'], fail['group_mods']) % (
                r['k'], e['event'], _s(fail['reaction_s']), _s(fail['recompute_s']), _s(fail['plan_s']),
                _s(fail['messages_s']), _stages(fail), _s(back['reaction_s']), _s(back['recompute_s']),
                _s(back['plan_s']), _s(back['messages_s']), _stages(back)))
    largest = max(result['results'], key=lambda r: r['k'])
    encode = max(e['failure']['encode_s'] / e['failure']['messages_s'] for e in largest['events']
                 if e['failure']['messages_s'])
    return '\n'.join(lines) + (
        '\n\nRecompute: `FailureRouting.update` and the changed tables compiled; plan: the staged update '
        '(`controller/openflow/staging.py`); messages: the ordered diffs and their flow- and group-mods '
        'encoded as the app sends them (each distinct message encoded by Ryu once, each switch\'s batch one '
        'buffer with its xids written in; at k=%d encoding is up to %.0f%% of it). ' % (largest['k'], 100 * encode)
        + _footer(result))


def start_up_markdown(result):
    """The first full program of every switch, per k."""
    lines = ['| k | switches | compute (s) | compile (s) | messages (s) | total (s) | flow-mods | group-mods '
             '| bytes (MB) |', '|---' * 9 + '|']
    for r in result['results']:
        s = r['start_up']
        lines.append('| %d | {:,} | %s | %s | %s | **%s** | {:,} | {:,} | %.1f |'.format(
            r['switches'], s['flow_mods'], s['group_mods']) % (
            r['k'], _s(s['compute_s']), _s(s['compile_s']), _s(s['messages_s']), _s(s['total_s']),
            s['bytes'] / 1e6))
    return '\n'.join(lines) + (
        '\n\nFrom cold caches: every switch\'s tables (`FailureRouting`), compiled with its ARP rules, and '
        'its whole state as `FabricApp.install_switch` sends it (delete every flow and group, then every '
        'group-mod and flow-mod, and a barrier: one buffer per switch, each distinct message encoded by Ryu '
        'once); port requests not counted. ' + _footer(result))
