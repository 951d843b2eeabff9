"""A fault campaign against a running fat-tree (the default two-level app,
BFD on at the budget interval, unshaped links), under background traffic: a
ping mesh and a few rate-capped iperf3 flows.

Each step applies one or two events back to back, drawn at random (seeded):
a link or a switch failing, hard (carrier down) or silent (black-holed, left
to BFD), a failed element recovering, the controller killed and started
again, or a switch's OpenFlow connection dropped and restored. Failures
overlap: up to ``--max-failed`` elements are down at once.

After each step, once the controller holds the physical failure set and says
ready, it checks the switches' installed state without trusting the
controller (scripts.fattree.installed_check): every physically connected
host pair by a hop walk over the dumped flows and groups, and every switch's
dump against the tables computed for the failures in place.

    python -m scripts.fattree.fault_campaign --k K --events N --seed S [--out DIR]

Writes DIR/campaign.json: every event with its timings and findings, and the
totals (events, pairs_unrouted, table_mismatches, ping_loss).
"""
import json
import os
import random
import re
import subprocess
import time
import urllib.request

from controller.fattree import APP, READY_PATH
from controller.fattree.failover import link_key, tables_with_failures
from scripts.argtypes import fattree_k, non_negative_int, positive
from scripts.emulator import faults, traffic
from scripts.emulator.bfd import policy as bfd_policy
from scripts.emulator.command import command_main
from scripts.emulator.fabric import Fabric
from scripts.emulator.progress import progress
from scripts.fattree import fault_campaign_report, installed_check
from scripts.fattree.fault_events import choose_events, physical_failures
from scripts.results import write_result
from topologies.fattree import FatTree
from topologies.renamed import renamed

PREFIX = 'fc'
OVS_TIMEOUT_S = 10
SETTLE_TIMEOUT_S = 60  # for the controller to hold a step's failures and be ready
IPERF_RATE = '5M'  # background flows: traffic, not a load that would starve BFD


def _prefixed(element):
    return (element[0],) + tuple(PREFIX + name for name in element[1:])


def _ovs(*args):
    return subprocess.run(['ovs-vsctl', '--timeout=%d' % OVS_TIMEOUT_S] + list(args), check=True,
                          capture_output=True, text=True, timeout=OVS_TIMEOUT_S + 5).stdout.strip()


def apply_event(fabric, topo, event):
    if event['kind'] == 'fail-link' or event['kind'] == 'fail-switch':
        faults.fail(topo, _prefixed(event['element']), silent=event['silent'])
    elif event['kind'] == 'recover':
        faults.recover(topo, _prefixed(event['element']))
    elif event['kind'] == 'controller-restart':
        fabric.controller.stop()
        fabric.controller.start()
    elif event['kind'] == 'connection-drop':
        bridge = PREFIX + event['switch']
        target = _ovs('get-controller', bridge)
        _ovs('del-controller', bridge)
        _ovs('set-controller', bridge, target)


def wait_settled(fabric, expected_links, timeout=SETTLE_TIMEOUT_S):
    """Seconds until the controller holds exactly ``expected_links`` failed
    and is ready; raises NotSettled with what it held instead."""
    started = time.time()
    url_links = 'http://127.0.0.1:%d/fattree/state/links' % fabric.controller.rest_port
    state = None
    while time.time() - started < timeout:
        state = fabric.controller.readiness()
        if state and state.get('ready') and state.get('failed_links') == len(expected_links):
            rows = _get_json(url_links)
            if {link_key(r['a'], r['b']) for r in rows if not r['up']} == expected_links:
                return time.time() - started
        time.sleep(0.1)
    rows = _get_json(url_links)
    held = {link_key(r['a'], r['b']) for r in rows if not r['up']}
    differing = [{key: r[key] for key in ('a', 'b', 'a_state', 'b_state', 'up')} for r in rows
                 if (link_key(r['a'], r['b']) in expected_links) != (not r['up'])]
    raise NotSettled('the controller did not settle within %ds on the %d failed links: %s; it held %d failed, '
                     'these links differ: %s' % (timeout, len(expected_links), state, len(held), differing))


class NotSettled(RuntimeError):
    """The controller never held a step's physical failure set."""


def _get_json(url):
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.load(reply)


def installed_states(model):
    """{model switch name: InstalledState} read from the running bridges."""
    states = {}
    for switch in model.switches:
        bridge = PREFIX + switch.name
        dump = {}
        for what in ('dump-flows', 'dump-groups'):
            cmd = ['ovs-ofctl', '-O', 'OpenFlow13'] + (['--no-stats'] if what == 'dump-flows' else [])
            dump[what] = subprocess.run(cmd + [what, bridge], check=True, capture_output=True, text=True,
                                        timeout=OVS_TIMEOUT_S).stdout
        states[switch.name] = installed_check.InstalledState(dump['dump-flows'], dump['dump-groups'])
    return states


def check_step(model, failed):
    """(unrouted pairs, {switch: mismatch}) of the fabric as it stands."""
    links, switches = physical_failures(model, failed)
    states = installed_states(model)
    unrouted = installed_check.unrouted_pairs(model, states, links, switches)
    tables = tables_with_failures(model, links)
    mismatches = {}
    for name, state in states.items():
        mismatch = installed_check.table_mismatch(model, tables[name], state)
        if mismatch:
            mismatches[name] = mismatch
    return unrouted, mismatches


_PING_SUMMARY = re.compile(r'(\d+) packets transmitted, (\d+) received')


class BackgroundTraffic:
    """A ping mesh over ``pings`` sampled pairs (5 per second each) and
    ``flows`` iperf3 flows at IPERF_RATE, for as long as the campaign runs."""

    def __init__(self, net, hosts, seed, pings, flows):
        pairs = traffic.sample_pairs(hosts, pings + flows, seed)
        self.net = net
        self.ping_pairs, self.flow_pairs = pairs[:pings], pairs[pings:]
        self.pings, self.iperfs = {}, []

    def start(self):
        for src, dst in self.ping_pairs:
            self.pings[(src, dst)] = traffic.start_ping(self.net, src, dst, ('-i', '0.2', '-W', '1'))
        for i, (src, dst) in enumerate(self.flow_pairs):
            port = str(5301 + i)
            self.iperfs.append(self.net.get(dst).popen(['iperf3', '-s', '-p', port]))
            time.sleep(0.3)
            self.iperfs.append(self.net.get(src).popen(
                ['iperf3', '-c', self.net.get(dst).IP(), '-p', port, '-b', IPERF_RATE, '-t', '86400']))
        return self

    def stop(self):
        """{'sent', 'received', 'loss_pct', 'per_pair'} of the ping mesh."""
        per_pair = {}
        for (src, dst), proc in self.pings.items():
            if proc.poll() is None:
                proc.send_signal(2)  # SIGINT: ping prints its statistics
            out, _ = proc.communicate(timeout=30)
            found = _PING_SUMMARY.search(out.decode() if isinstance(out, bytes) else out)
            per_pair['%s>%s' % (src, dst)] = [int(found.group(1)), int(found.group(2))] if found else None
        for proc in self.iperfs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        sent = sum(v[0] for v in per_pair.values() if v)
        received = sum(v[1] for v in per_pair.values() if v)
        return {'sent': sent, 'received': received,
                'loss_pct': round(100.0 * (sent - received) / sent, 3) if sent else None,
                'per_pair': per_pair}


def run(args):
    model = FatTree(args.k)
    topo = renamed(model, PREFIX)
    interval = bfd_policy.interval_for(len(model.switch_links()))
    rng = random.Random(args.seed)
    failed, records = {}, []
    hosts = [h.name for h in topo.hosts]
    with Fabric(topo, APP, {'k': args.k}, ofp_port=args.ofp_port, rest_port=args.rest_port, bfd_ms=interval,
                ready_path=READY_PATH) as fabric:
        traffic.wait_all_pairs(fabric.net, hosts, progress=progress)
        background = BackgroundTraffic(fabric.net, hosts, args.seed, args.pings, args.flows).start()
        ping_loss, aborted = None, None
        try:
            unrouted, mismatches = check_step(model, failed)
            records.append({'step': 0, 'events': [], 'pairs_unrouted': len(unrouted),
                            'table_mismatches': len(mismatches)})
            applied = 0
            while applied < args.events:
                events = choose_events(model, rng, failed, args.max_failed)[:args.events - applied]
                if not events:
                    continue
                started = time.time()
                for event in events:
                    apply_event(fabric, topo, event)
                applied_s = time.time() - started
                progress('step %d: %s' % (len(records), ', '.join(_describe(e) for e in events)))
                links, _ = physical_failures(model, failed)
                try:
                    settle_s = wait_settled(fabric, links)
                except NotSettled as error:  # a finding: written down with what came before it
                    aborted = {'step': len(records), 'events': events, 'error': str(error)}
                    break
                checking = time.time()
                unrouted, mismatches = check_step(model, failed)
                applied += len(events)
                record = {'step': len(records), 'events': events, 'failed': sorted('-'.join(e) for e in failed),
                          'apply_s': round(applied_s, 3), 'settle_s': round(settle_s, 3),
                          'check_s': round(time.time() - checking, 3),
                          'pairs_unrouted': len(unrouted), 'unrouted_examples': unrouted[:5],
                          'table_mismatches': len(mismatches), 'mismatched_switches': mismatches}
                records.append(record)
                progress('  %d down; settled in %.2f s; %d pairs unrouted, %d tables differ (%d of %d events)'
                         % (len(failed), settle_s, len(unrouted), len(mismatches), applied, args.events))
        finally:
            ping_loss = background.stop()
            for element in list(failed):
                faults.recover(topo, _prefixed(element))
    result = {'k': args.k, 'seed': args.seed, 'bfd_ms': interval, 'max_failed': args.max_failed,
              'most_failed': max(len(r.get('failed', ())) for r in records),
              'events': sum(len(r['events']) for r in records),
              'steps': len(records) - 1,
              'event_counts': _counts(records),
              'pairs_unrouted': sum(r['pairs_unrouted'] for r in records),
              'table_mismatches': sum(r['table_mismatches'] for r in records),
              'settle_s': _spread([r['settle_s'] for r in records[1:]]),
              'ping_loss': ping_loss, 'background': {'ping_pairs': args.pings, 'iperf3_flows': args.flows,
                                                      'iperf3_rate': IPERF_RATE},
              'aborted': aborted, 'records': records}
    write_result(args.out, 'campaign.json', result, lambda r: fault_campaign_report.markdown([r]))
    print('written: %s' % os.path.join(args.out, 'campaign.json'))
    if aborted:
        raise NotSettled('stopped at step %d: %s' % (aborted['step'], aborted['error']))
    return result


def _describe(event):
    if 'element' in event:
        return '%s %s%s' % (event['kind'], '-'.join(event['element'][1:]),
                            ' (silent)' if event.get('silent') else '')
    return event['kind'] + (' ' + event['switch'] if 'switch' in event else '')


def _counts(records):
    counts = {}
    for record in records:
        for event in record['events']:
            kind = event['kind'] + (' silent' if event.get('silent') else '')
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def _spread(values):
    if not values:
        return None
    ordered = sorted(values)
    return {'min': ordered[0], 'median': ordered[len(ordered) // 2], 'max': ordered[-1]}


def add_arguments(parser):
    parser.add_argument('--k', type=fattree_k, default=4)
    parser.add_argument('--events', type=positive(int), default=30)
    parser.add_argument('--seed', type=int, default=37)
    parser.add_argument('--max-failed', type=positive(int), default=3, help='elements down at once')
    parser.add_argument('--pings', type=positive(int), default=16, help='ping mesh pairs')
    parser.add_argument('--flows', type=non_negative_int, default=2, help='background iperf3 flows')
    parser.add_argument('--out', default='results/fattree/fault_campaign')
    parser.add_argument('--ofp-port', type=int, default=6653)
    parser.add_argument('--rest-port', type=int, default=8080)


main = command_main('python -m scripts.fattree.fault_campaign', __doc__, add_arguments, run, 'fault campaign',
                    (NotSettled,))

if __name__ == '__main__':
    main()
