"""The fault campaigns' table (scripts.fattree.fault_campaign): one row per
campaign.json. Pure."""


def _spread(spread):
    return '-' if not spread else '%.2f / %.2f / %.2f' % (spread['min'], spread['median'], spread['max'])


def markdown(results):
    lines = ['| k | seed | events (steps) | most down at once | pairs unrouted | tables differing | settle s '
             '(min / median / max) | ping mesh loss | events by kind |',
             '|---|---|---|---|---|---|---|---|---|']
    for r in results:
        loss = r['ping_loss']
        lines.append('| %d | %d | %d (%d) | %d | **%d** | **%d** | %s | %s%% of {:,} | %s |'.format(loss['sent']) % (
            r['k'], r['seed'], r['events'], r['steps'], r['most_failed'], r['pairs_unrouted'],
            r['table_mismatches'], _spread(r['settle_s']), loss['loss_pct'],
            ', '.join('%s %d' % (kind, n) for kind, n in sorted(r['event_counts'].items()))))
    stopped = ['k=%d: stopped at step %d (%s): %s' % (r['k'], r['aborted']['step'], ', '.join(
        e['kind'] for e in r['aborted']['events']), r['aborted']['error']) for r in results if r.get('aborted')]
    return '\n'.join(lines) + ''.join('\n\n**%s**' % line for line in stopped)
