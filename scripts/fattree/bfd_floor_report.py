"""The BFD floor experiment's verdict and table (pure: the docs render them)."""


def links_label(bw):
    return 'shaped %g Mbit/s' % bw if bw else 'unshaped'


def deciding_windows(row):
    """The windows of a row that decide the floor: idle on every kind of
    links, and loaded on shaped links, as every experiment here runs (the
    bisection at 2 Mbit/s). Unshaped full load is reported, not decided on:
    there ovs-vswitchd forwards all it can, its veth sockets overflow and
    drop BFD packets with the data (Open vSwitch's ``forwarding_if_rx``
    counts data only on tunnel and patch ports, not on these), at any
    interval short enough to be useful (k=8 at 260 ms too)."""
    return ('idle', 'load') if row['links'] != 'unshaped' else ('idle',)


def windows_held(row):
    """Whether a row had no false detection in its deciding windows, in
    OVS's or the controller's count."""
    return all(row[w + '_ovs_flaps'] == 0 and row[w + '_controller_live_changes'] == 0
               for w in deciding_windows(row))


def lowest_holding(rows):
    """The lowest interval at and above which every measured row held (None
    if the highest did not): an interval that held by luck below one that
    flapped does not count."""
    intervals = sorted({r['interval_ms'] for r in rows}, reverse=True)
    lowest = None
    for interval in intervals:
        if not all(windows_held(r) for r in rows if r['interval_ms'] == interval):
            break
        lowest = interval
    return lowest


def merged(old_rows, new_rows):
    """``old_rows`` with every (interval, links) that ``new_rows`` has replaced, by interval descending."""
    key = lambda r: (r['interval_ms'], r['links'])
    rows = {key(r): r for r in old_rows}
    rows.update((key(r), r) for r in new_rows)
    return sorted(rows.values(), key=lambda r: (-r['interval_ms'], r['links']))


def markdown(rows):
    """The README's table of every row, and the lowest interval that held."""
    lines = ['| interval (ms) | links | BFD packets/s | window (s) | BFD flaps idle / load (OVS; controller) '
             '| ovs-vswitchd % of a core idle / load | machine busy % idle / load | load Mbit/s (16 flows) '
             '| silent failure detected (ms) |', '|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        lines.append('| %d | %s | %d | %d | %d / %d; %d / %d | %.0f / %.0f | %.0f / %.0f | %s | %s |' % (
            r['interval_ms'], r['links'], r['bfd_packets_per_s'], r['seconds'], r['idle_ovs_flaps'],
            r['load_ovs_flaps'], r['idle_controller_live_changes'], r['load_controller_live_changes'],
            r['idle_ovs_vswitchd_cpu_pct'], r['load_ovs_vswitchd_cpu_pct'], r['idle_cpu_busy_pct'],
            r['load_cpu_busy_pct'], r.get('load_aggregate_mbps'), ', '.join('%.0f' % d for d in r['detection_ms'])))
    lines.append('\nlowest interval that held, with every larger one: %s ms' % lowest_holding(rows))
    return '\n'.join(lines)
