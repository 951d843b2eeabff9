"""The outage experiment's table and summary figures (pure: the docs render them)."""
from scripts.emulator.bfd import policy as bfd_policy

def span(values):
    """'a-b' of the smallest and largest value (one value alone if they are equal)."""
    low, high = min(values), max(values)
    return '%g' % low if low == high else '%g-%g' % (low, high)


def summary(result):
    """The figures the README states about a run (outages.json as loaded)."""
    rows = result['outages']
    hard = [r for r in rows if r['mode'] == 'hard']
    local = [r['restored_ms'] for r in hard if r['repaired_by'] != 'controller']
    controller = [r['restored_ms'] for r in hard if r['repaired_by'] == 'controller']
    silent = [r['restored_ms'] for r in rows if r['mode'] == 'silent']
    reach = result['single_link_reachability']
    return {'hard_local': len(local), 'hard_local_ms': span(local),
            'hard_controller': len(controller), 'hard_controller_ms': span(controller),
            'silent_ms': span(silent), 'bfd_detection_ms': bfd_policy.detection_ms(result['bfd_ms']),
            'control_lost_max': max(r['control_lost'] for r in rows),
            'single_links': len(reach), 'single_links_with_unreachable': sum(1 for r in reach if r['unreachable']),
            'pairs': max((r['pairs'] for r in reach), default=0),
            'loadavg_1m': result.get('loadavg_1m')}


def markdown(result):
    """The README's outage table and the summary sentence's figures."""
    lines = ['| failure | element | mode | direction | repaired by | packets lost | restored after (ms) '
             '| lost on recovery | control stream lost |', '|---|---|---|---|---|---|---|---|---|']
    lines += ['| %(class)s | %(element)s | %(mode)s | %(direction)s | %(repaired_by)s | %(lost)s '
              '| %(restored_ms)s | %(lost_on_recovery)s | %(control_lost)s |' % r for r in result['outages']]
    lines.append('')
    lines += ['%s: %s' % item for item in summary(result).items()]
    return '\n'.join(lines)
