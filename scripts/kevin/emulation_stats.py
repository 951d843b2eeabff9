"""The emulated Kevin experiment's numbers, pure: when a DA link was ready
for an elephant (from the controller's state), the mice's ping summary, and
one table row per scheme over its runs."""
import re
import statistics

from controller.kevin.routing import KevinRouting
from scripts.emulator.fidelity import run_faithful, runs_verdict_cell
from topologies.kevin import address_str


def da_ready_s(kevin, state, elephant, started):
    """(ToRs on the elephant's path as the controller routes it at the end,
    seconds from elephant start until the last DA link on that path was in
    its source's table, or None when the path uses no DA link)."""
    routing = KevinRouting(kevin)
    usable = {}
    for link in state['da_links']['usable']:
        source, destination = kevin.parse(link['source']), kevin.parse(link['destination'])
        routing.add_da_link(link['spine'], source, destination)
        usable[(source, destination)] = link['spine']
    path = routing.path(*elephant)
    ready = []
    for hop in zip(path, path[1:]):
        if hop in usable:
            key = (usable[hop], address_str(hop[0]), address_str(hop[1]))
            entry = [e for e in state['da_links']['history']
                     if (e['spine'], e['source'], e['destination']) == key][-1]
            ready.append(entry['usable_at'] - started)
    return len(path), (max(ready) if ready else None)


def ping_summary(output):
    sent = re.search(r'(\d+) packets transmitted, (\d+) received', output)
    rtt = re.search(r'= [\d.]+/([\d.]+)/([\d.]+)/', output)
    if not sent:
        raise RuntimeError('no ping summary in %r' % output)
    transmitted, received = map(int, sent.groups())
    return {'sent': transmitted, 'received': received,
            'rtt_avg_ms': float(rtt.group(1)) if rtt else None,
            'rtt_max_ms': float(rtt.group(2)) if rtt else None}


def _mean(values):
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def summarise(runs, scheme):
    """One table row: means over repetitions (sums over elephants per run).
    A run the emulator limited is left out unless every run was (then the
    row says so)."""
    all_runs = [r for r in runs if r['scheme'] == scheme]
    runs = [r for r in all_runs if run_faithful(r)] or all_runs
    elephants = [e for r in runs for e in r['elephants']]
    mice = [m for r in runs for m in r['mice']]
    sent = sum(m['sent'] for m in mice)
    row = {'scheme': scheme, 'reps': len(runs), 'seeds': ' '.join(str(r['seed']) for r in runs),
           'emulator': runs_verdict_cell(all_runs),
           'tors_before': _mean(e['tors_before'] for e in elephants),
           'tors_after': _mean(e['tors_after'] for e in elephants),
           'da_ready_mean_s': _mean(e['da_ready_s'] for e in elephants),
           'da_ready_max_s': max((e['da_ready_s'] for e in elephants if e['da_ready_s'] is not None),
                                 default=None),
           'elephant_mbps_sum': _mean(sum(e['mbps'] for e in r['elephants']) for r in runs),
           'elephant_mbps_sum_second_half': _mean(
               sum(e['mbps_second_half'] or 0 for e in r['elephants']) for r in runs),
           'elephant_mbps_sum_per_rep': [round(sum(e['mbps'] for e in r['elephants']), 2)
                                         for r in runs],
           'elephant_mbps_min': min(e['mbps'] for e in elephants),
           'mice_rtt_ms': _mean(m['rtt_avg_ms'] for m in mice),
           'mice_loss_pct': 100.0 * (sent - sum(m['received'] for m in mice)) / sent if sent else None,
           'cpu_busy_pct': _mean(r['cpu']['cpu_busy_pct'] for r in runs),
           'ovs_cpu_pct': _mean(r['cpu']['ovs_vswitchd_cpu_pct'] for r in runs),
           'loadavg_1m': _mean(r['cpu']['loadavg_1m'] for r in runs),
           # bridges beyond this fabric's are other people's emulations sharing the CPU
           'ovs_bridges_max': max(r['cpu'].get('ovs_bridges', 0) for r in runs)}
    if scheme == 'distda':
        for way in ('sent', 'received'):
            for kind, count in runs[0]['distda'][way].items():
                row['%s_%s' % (kind, way)] = _mean(r['distda'][way][kind] for r in runs)
        row['distda_detection_to_approve_s'] = _mean(
            x['detection_to_approve_s'] for r in runs for x in r['distda']['setups'])
    return row

