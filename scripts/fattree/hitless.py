"""Loss caused by routing updates themselves, apart from loss caused by the
failures they answer: UDP probe streams between host pairs of a running
k=4 fat-tree while a sequence of hard link failures and recoveries is
applied.

The sequence fails e2_0-a2_2, then e1_0-a1_3, recovers e1_0-a1_3, then
e2_0-a2_2: the lower switches of pods 0 and 3 hold a second-level table for
10.2.0.0/24, get one for 10.1.0.0/24 beside it and lose it again (a
renumbering that once lost packets). Streams are classified from the model
(tables_with_failures, walked hop by hop):

  unaffected  the same path in every state of the sequence, over no link
              that fails in it, through switches the updates rewrite:
              whatever such a stream loses the update lost (must be 0);
  affected    a path over a failed link in some state, or a path that
              changes: loss there is the failure's (and its repair's).

Every packet leaves from a fresh source port (probe --fresh-ports), so
each is looked up in the OpenFlow tables as they stand when it arrives
instead of following a datapath cache entry translated before the update.
The failures are real (carrier down on both ends): the classification,
not a fake failure, keeps the unaffected streams off the failed links.

    python -m scripts.fattree.hitless [--out results/fattree]

Writes hitless.json.
"""
import argparse
import json
import os
import sys
import time

from controller.fattree import READY_PATH
from controller.fattree.failover import expand_failures, link_key, tables_with_failures
from controller.fattree.pipeline import compile_table
from scripts.emulator import faults, traffic
from scripts.emulator.fabric import Fabric
from scripts.emulator.progress import progress
from topologies.fattree import FatTree
from topologies.walk import walk

SEQUENCE = (('fail', 'e2_0', 'a2_2'), ('fail', 'e1_0', 'a1_3'),
            ('recover', 'e1_0', 'a1_3'), ('recover', 'e2_0', 'a2_2'))
# Toward the two subnets whose tables the sequence adds and removes, from
# four lower switches it rewrites; and two streams over the failed links.
UNAFFECTED = (('h0_0_3', 'h2_0_3'), ('h0_1_2', 'h2_0_2'), ('h3_1_3', 'h2_0_2'),
              ('h3_0_2', 'h1_0_2'), ('h0_1_3', 'h1_0_3'))
AFFECTED = (('h0_0_2', 'h2_0_2'), ('h3_0_3', 'h1_0_3'))
RATE = 250
SETTLE_S = 0.7  # steady state kept before the next step (and before the first)
FIRST_PORT = 7100


def failure_states(topo, sequence=SEQUENCE):
    """The failed links before the sequence and after each of its steps."""
    states, down = [frozenset()], []
    for action, a, b in sequence:
        down = down + [(a, b)] if action == 'fail' else [l for l in down if l != (a, b)]
        states.append(expand_failures(topo, down))
    return states


def classify(topo, pairs, sequence=SEQUENCE):
    """{(src, dst): 'unaffected' | 'affected' | 'untouched'} (see the module
    docstring; 'untouched': the same path through no rewritten switch)."""
    states = failure_states(topo, sequence)
    tables = [tables_with_failures(topo, failed) for failed in states]
    compiled = [{name: compile_table(t) for name, t in ts.items()} for ts in tables]
    rewritten = {name for before, after in zip(compiled, compiled[1:]) for name in after
                 if after[name] != before[name]}
    ever_failed = frozenset().union(*states)
    kinds = {}
    for src, dst in pairs:
        paths = {tuple(walk(topo, lambda sw, _, ip, t=t: t[sw].lookup(ip), src, dst)) for t in tables}
        crosses = any(link_key(sw, topo.peer(sw, port)[0]) in ever_failed
                      for path in paths for sw, port in path)
        if len(paths) > 1 or crosses:
            kinds[(src, dst)] = 'affected'
        else:
            through = {sw for sw, _ in next(iter(paths))}
            kinds[(src, dst)] = 'unaffected' if through & rewritten else 'untouched'
    return kinds


def _probe(*args):
    return [sys.executable, '-m', 'scripts.emulator.probe'] + [str(a) for a in args]


def _loss(received, rate, started, step_times, until):
    """(packets sent before ``until``, those lost before the first step and
    after each), by send time; later packets are left out (a starved
    sender may still be sending them when its receiver stops)."""
    sent_at = {seq: at for seq, at, _ in received}
    start = min((at - seq / float(rate) for seq, at in sent_at.items()), default=started)
    due = [start + seq / float(rate) for seq in range(int((until - start) * rate))]
    lost_at = [0] * (len(step_times) + 1)
    for seq, at in enumerate(due):
        if seq not in sent_at:
            lost_at[sum(1 for t in step_times if t <= at)] += 1
    return len(due), lost_at


def run(fabric, model, running=None, prefix='', sequence=SEQUENCE, streams=UNAFFECTED + AFFECTED,
        rate=RATE):
    """Stream every (src, dst) of ``streams`` (``model`` names) while
    ``sequence`` is applied to the fabric (``running``: the topology it runs
    as, its names ``prefix`` + the model's), each step once the controller
    has taken in the previous one. Returns {(src, dst): {'sent', 'lost',
    'lost_at_step'}}, loss before the first step and after each, counted
    until the last step has settled."""
    running = running or model
    net, controller = fabric.net, fabric.controller
    expected = [len(s) for s in failure_states(model, sequence)][1:]
    seconds = len(sequence) * (SETTLE_S + 1.0) + SETTLE_S + 3
    receivers = [net.get(prefix + dst).popen(_probe('recv', FIRST_PORT + i, '--seconds', seconds + 1))
                 for i, (_, dst) in enumerate(streams)]
    for i, (_, dst) in enumerate(streams):  # every receiver listens before anything is sent
        deadline = time.time() + 10
        while ':%d ' % (FIRST_PORT + i) not in net.get(prefix + dst).cmd('ss -Hlun'):
            if time.time() > deadline:
                raise RuntimeError('probe receiver on %s did not start' % dst)
            time.sleep(0.05)
    senders = [net.get(prefix + src).popen(_probe('send', net.get(prefix + dst).IP(), FIRST_PORT + i,
                                                  '--rate', rate, '--seconds', seconds, '--fresh-ports'))
               for i, (src, dst) in enumerate(streams)]
    started, step_times = time.time(), []
    try:
        time.sleep(SETTLE_S + 0.5)
        for (action, a, b), failed_links in zip(sequence, expected):
            step_times.append(time.time())
            (faults.fail_link if action == 'fail' else faults.recover_link)(running, prefix + a, prefix + b)
            deadline = time.time() + 10
            while True:  # the controller holds the new failure set and has pushed it
                state = controller.readiness() or {}
                if state.get('failed_links') == failed_links and not state.get('recompute_pending'):
                    break
                if time.time() > deadline:
                    raise RuntimeError('controller did not take in %s %s-%s: %s' % (action, a, b, state))
                time.sleep(0.02)
            time.sleep(SETTLE_S)
        if time.time() > started + seconds - 0.5:
            raise RuntimeError('the sequence outlasted the streams (%.1f s)' % (time.time() - started))
        until = time.time()
        results = {}
        for stream, receiver in zip(streams, receivers):
            out, _ = receiver.communicate()
            sent, lost_at = _loss(json.loads(out), rate, started, step_times, until)
            results[stream] = {'sent': sent, 'lost': sum(lost_at), 'lost_at_step': lost_at}
        return results
    finally:
        for proc in senders + receivers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='results/fattree')
    parser.add_argument('--ofp-port', type=int, default=6653)
    parser.add_argument('--rest-port', type=int, default=8080)
    args = parser.parse_args(argv)
    topo = FatTree(4)
    kinds = classify(topo, UNAFFECTED + AFFECTED)
    with Fabric(topo, 'controller.fattree.routing_app', {'k': 4}, ofp_port=args.ofp_port,
                rest_port=args.rest_port, bfd_ms=100, ready_path=READY_PATH) as fabric:
        traffic.wait_all_pairs(fabric.net, [h.name for h in topo.hosts], progress=progress)
        try:
            results = run(fabric, topo)
        finally:
            for _, a, b in SEQUENCE:
                faults.recover_link(topo, a, b)
    rows = [dict(src=src, dst=dst, kind=kinds[(src, dst)], **r) for (src, dst), r in results.items()]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, 'hitless.json')
    with open(path, 'w') as f:
        json.dump({'k': 4, 'rate_pps': RATE, 'fresh_source_port_per_packet': True,
                   'sequence': [list(s) for s in SEQUENCE], 'streams': rows}, f, indent=2)
    for r in rows:
        print('%-10s %s -> %s  sent %d  lost %d  per step %s'
              % (r['kind'], r['src'], r['dst'], r['sent'], r['lost'], r['lost_at_step']))
    print('written: %s' % path)


if __name__ == '__main__':
    main()
