"""The table of the BFD each k gets by default (pure: the docs render it)."""


def markdown(rows):
    lines = ['| k | switch links | Open vSwitch instances | BFD sessions per instance | interval | '
             'BFD packets/s (all instances) | detection |', '|---|---|---|---|---|---|---|']
    for r in rows:
        lines.append('| %d | {:,} | %d | {:,} | %s | {:,} | %s |'.format(
            r['switch_links'], r['sessions_per_instance'], r['bfd_packets_per_s'])
            % (r['k'], r['ovs_instances'], '{:,} ms'.format(r['interval_ms']) if r['interval_ms'] else 'off',
               '{:,} ms'.format(r['detection_ms']) if r['detection_ms'] else 'hard failures only'))
    return '\n'.join(lines)
