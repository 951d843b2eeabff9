"""The controller's groups choose their bucket as real Open vSwitch does:
ECMP's select groups of an edge and an aggregation switch at k=4, 8 and 16
(2 to 64 buckets: OVS's dp_hash method), the aggregation switch's at k=48
(576 buckets, more than the dp_hash table's 256 slots: OVS's default
method), and the classifier's fast-failover groups, installed on a userspace
bridge. For 1,000 random TCP and 1,000 random UDP 5-tuples per group,
``ovs-appctl ofproto/trace`` (sent straight to the daemon's control socket)
gives OVS's bucket, with every port live and again with some dead; the
simulator's switches (of_pipeline.h, through path_trace) and
scripts.sim.ovs_select must give the same one.

A dp_hash group's trace stops at hash(sym_l4(0)),recirc(ID): the datapath
computes the hash per packet. OVS computes the same hash
(flow_hash_symmetric_l3l4) for a multipath action, so a multipath trace
gives OVS's own hash of each tuple, and the recirculation traced with that
dp_hash gives its bucket: nothing of the model enters OVS's answer."""
import dataclasses
import random
import re
import subprocess
import tempfile
import time

from controller.fattree.scheme_table0_rules import ecmp_group
from controller.openflow.rules import group_to_ofctl
from scripts.emulator.ovs import ovsdb
from scripts.sim import rules_export
from scripts.sim.ns3 import build
from scripts.sim.ovs_select import dp_hash_slots, ovs_symmetric_l3l4_hash, select_bucket
from tests.ovs.appctl import Appctl
from topologies.addressing import int_to_ip
from topologies.fattree import FatTree
from topologies.model import mac_from_ip, model_port

TUPLES_PER_PROTOCOL = 1000
IN_PORT = 4000
RECIRC_BATCH = 50
HASH_PROBE = 0xffff  # reg1 of the multipath rule; a group's rule matches its own index
LIVE, DEAD, SINK = 'dcfsl', 'dcfsd', 'dcfss'  # bridges: every port live; some dead; the live ports' peer
_MULTIPATH = re.compile(r'NXM_NX_REG0\[0\.\.15\] is now (0x[0-9a-f]+)')
_RECIRC = re.compile(r'Datapath actions: hash\(sym_l4\(0\)\),recirc\((0x[0-9a-f]+)\)')
_BUCKET = re.compile(r'^\s+bucket (\d+)$', re.M)
_PORT_STATE = re.compile(r'^ (\d+)\(.*\n.*\n\s+state:\s+(.*)$', re.M)
_UPPER = {'edge': 'aggregation', 'aggregation': 'core'}


def _up_ports(topo, switch):
    upper = _UPPER[topo.node(switch).role]
    return [p for p in topo.ports(switch) if topo.node(topo.peer(switch, p)[0]).role == upper]


def controller_groups():
    """(label, group) of every group checked, renumbered 1.. (ids play no
    part in the choice; the ECMP ids of different fabrics may meet)."""
    labelled = []
    for k in (4, 8, 16, 48):
        topo = FatTree(k)
        for switch in ('e0_0', 'a0_%d' % (k // 2)) if k < 48 else ('a0_24',):
            labelled.append(('ecmp k=%d %s' % (k, switch), ecmp_group(topo, switch, _up_ports(topo, switch))))
    export = rules_export.export_switches(FatTree(4), 'classifier', ())
    for switch in ('e0_0', 'a0_2'):
        labelled += [('classifier %s' % switch, g) for g in export[switch]['groups']]
    return [(label, dataclasses.replace(g, group_id=i)) for i, (label, g) in enumerate(labelled, 1)]


def dead_ports_of(groups):
    """One dead port in every group: its first bucket's, unless one of its
    ports is dead already."""
    dead = set()
    for _, group in groups:
        ports = {watch for watch, _ in group.buckets}
        if not ports & dead:
            dead.add(group.buckets[0][0])
    return dead


def random_tuples(rng):
    tuples = []
    for proto in (6, 17):
        for _ in range(TUPLES_PER_PROTOCOL):
            src, dst = (rng.randrange(0x0a000000, 0x0b000000) for _ in range(2))
            tuples.append((src, dst, proto, rng.randrange(1, 65536), rng.randrange(1, 65536)))
    return tuples


def _flow(tuple_):
    src, dst, proto, sport, dport = tuple_
    l4 = {6: 'tcp', 17: 'udp'}[proto]
    return '%s,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s,nw_ttl=64,%s_src=%d,%s_dst=%d' % (
        l4, mac_from_ip(int_to_ip(src)), mac_from_ip(int_to_ip(dst)), int_to_ip(src), int_to_ip(dst),
        l4, sport, l4, dport)


def _ofctl(command, bridge, lines):
    with tempfile.NamedTemporaryFile('w', suffix='.of') as spec:
        spec.write('\n'.join(lines) + '\n')
        spec.flush()
        subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', command, bridge, spec.name],
                       check=True, capture_output=True, text=True, timeout=120)


def make_bridges(groups, dead):
    ports = sorted({watch for _, g in groups for watch, _ in g.buckets} | {IN_PORT})
    sink_ports, bridges = [], []
    for bridge in (LIVE, DEAD):
        bridge_ports = []
        for port in ports:
            name, peer = '%s-p%d' % (bridge, port), '%s-%s%d' % (SINK, bridge[-1], port)
            if bridge == DEAD and port in dead:  # an internal port left down: LINK_DOWN, not live
                bridge_ports.append((name, port, {'type': 'internal'}))
                continue
            sink_ports.append((peer, len(sink_ports) + 1, {'type': 'patch', 'options': {'peer': name}}))
            bridge_ports.append((name, port, {'type': 'patch', 'options': {'peer': peer}}))
        bridges.append(bridge_ports)
    ovsdb.add_bridges([ovsdb.Bridge(name=name, datapath_type='netdev', fail_mode='secure',
                                    protocols=['OpenFlow13'], other_config={}, controllers=[],
                                    max_backoff=None, ports=bridge_ports)
                       for name, bridge_ports in zip((LIVE, DEAD, SINK), bridges + [sink_ports])])
    ovsdb.wait_applied(60)
    wait_live(LIVE, set(ports))
    wait_live(DEAD, set(ports) - dead)
    for bridge in (LIVE, DEAD):
        _ofctl('add-groups', bridge, [group_to_ofctl(g) for _, g in groups])
        _ofctl('add-flows', bridge, ['priority=100,in_port=%d,reg1=%d,ip,actions=group:%d'
                                     % (IN_PORT, g.group_id, g.group_id) for _, g in groups] +
               ['priority=100,in_port=%d,reg1=%d,ip,actions=multipath(symmetric_l3l4,0,modulo_n,'
                '65536,0,NXM_NX_REG0[0..15])' % (IN_PORT, HASH_PROBE)])


def wait_live(bridge, live, timeout_s=30):
    """Until exactly the ``live`` ports of the bridge are OFPPS_LIVE."""
    deadline = time.monotonic() + timeout_s
    while True:
        desc = subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', 'dump-ports-desc', bridge], check=True,
                              capture_output=True, text=True, timeout=60).stdout
        states = dict(_PORT_STATE.findall(desc))
        now_live = {int(port) for port, state in states.items() if state.strip() == 'LIVE'}
        if now_live == live:
            return
        assert time.monotonic() < deadline, 'ports of %s live: %s, not %s' % (bridge, now_live, live)
        time.sleep(0.1)


def ovs_hashes(appctl, tuples):
    """OVS's flow_hash_symmetric_l3l4 of each tuple, its low 16 bits."""
    probe = 'in_port=%d,reg1=%d,' % (IN_PORT, HASH_PROBE)
    replies = appctl.run_all([('ofproto/trace', LIVE, probe + _flow(t)) for t in tuples])
    return [int(_MULTIPATH.search(reply).group(1), 16) for reply in replies]


def _bucket_of(reply):
    if 'no live bucket' in reply:
        return None
    return int(_BUCKET.search(reply).group(1))


def ovs_buckets(appctl, bridge, group, tuples, hashes):
    """The bucket OVS gives each tuple (None: no live bucket)."""
    flows = ['in_port=%d,reg1=%d,%s' % (IN_PORT, group.group_id, _flow(t)) for t in tuples]
    if group.kind == 'fast_failover' or dp_hash_slots(len(group.buckets)) is None:
        first = appctl.run_all([('ofproto/trace', bridge, flow) for flow in flows])
        assert not any(_RECIRC.search(reply) for reply in first)  # chosen in the slow path
        return [_bucket_of(reply) for reply in first]
    buckets = []
    for start in range(0, len(flows), RECIRC_BATCH):
        buckets += _recirculated_buckets(appctl, bridge, flows[start:start + RECIRC_BATCH],
                                         hashes[start:start + RECIRC_BATCH])
    return buckets


def _recirculated_buckets(appctl, bridge, flows, hashes, tries=5):
    """A trace's recirculation context lives a moment after it: trace the
    second pass right after the first, and again where it was gone."""
    for _ in range(tries):
        first = appctl.run_all([('ofproto/trace', bridge, flow) for flow in flows])
        recircs = [_RECIRC.search(reply).group(1) for reply in first]
        # dp_hash 0 means "not computed yet": a zero low half keeps bit 16 set
        again = appctl.run_all([('ofproto/trace', bridge, 'recirc_id=%s,dp_hash=%#x,%s'
                                 % (r, h or 0x10000, f)) for r, h, f in zip(recircs, hashes, flows)])
        if not any('No recirculation context' in reply for reply in again):
            return [_bucket_of(reply) for reply in again]
    raise AssertionError('recirculation contexts expired %d times in a row' % tries)


def model_buckets(group, tuples, dead):
    def live(index):
        return group.buckets[index][0] not in dead
    if group.kind == 'fast_failover':
        first_live = next((i for i in range(len(group.buckets)) if live(i)), None)
        return [first_live] * len(tuples)
    return [select_bucket(len(group.buckets), *t, live=live) for t in tuples]


def simulator_buckets(tmp_path, groups, tuples, dead):
    """path_trace's answers (of_pipeline.h's BucketOf): every group over
    every tuple, every port live, then with ``dead`` dead."""
    ports = sorted({watch for _, g in groups for watch, _ in g.buckets})
    export = tmp_path / 'groups.txt'
    export.write_text('\n'.join(['link sel %d sink %d' % (model_port(p), model_port(p)) for p in ports] +
                                ['switch sel'] + [rules_export.group_line(g) for _, g in groups]) + '\n')
    queries = ['bucket sel %d %s %s %d %d %d' % (g.group_id, int_to_ip(t[0]), int_to_ip(t[1]), *t[2:])
               for _, g in groups for t in tuples]
    dead_queries = ['dead_port sel %d' % model_port(p) for p in sorted(dead)]
    done = subprocess.run([str(build.path_trace()), str(export)], capture_output=True, text=True,
                          input='\n'.join(queries + dead_queries + queries) + '\n', check=True, timeout=120)
    answers = [int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith('bucket ')]
    answers = [None if a < 0 else a for a in answers]
    n = len(tuples)
    live_answers, dead_answers = answers[:len(queries)], answers[len(queries):]
    return ({g.group_id: live_answers[i * n:(i + 1) * n] for i, (_, g) in enumerate(groups)},
            {g.group_id: dead_answers[i * n:(i + 1) * n] for i, (_, g) in enumerate(groups)})


def test_select_groups_choose_as_ovs(require_ovs, tmp_path):
    groups = controller_groups()
    assert {len(g.buckets) for _, g in groups} >= {2, 4, 8, 16, 64, 576}
    dead = dead_ports_of(groups)
    tuples = random_tuples(random.Random(45))
    simulated = simulator_buckets(tmp_path, groups, tuples, dead)
    ovsdb.delete_bridges([LIVE, DEAD, SINK])
    try:
        make_bridges(groups, dead)
        with Appctl() as appctl:
            hashes = ovs_hashes(appctl, tuples)
            assert hashes == [ovs_symmetric_l3l4_hash(*t) & 0xffff for t in tuples]
            differences = []
            for bridge, down, simulator in ((LIVE, set(), simulated[0]), (DEAD, dead, simulated[1])):
                for label, group in groups:
                    real = ovs_buckets(appctl, bridge, group, tuples, hashes)
                    for name, chosen in (('ovs_select', model_buckets(group, tuples, down)),
                                         ('simulator', simulator[group.group_id])):
                        wrong = sum(a != b for a, b in zip(real, chosen))
                        if wrong:
                            differences.append('%s, %s, %s: %d of %d tuples differ'
                                               % (bridge, label, name, wrong, len(tuples)))
                    if bridge == LIVE and group.kind == 'select' and len(group.buckets) <= 64:
                        assert set(real) == set(range(len(group.buckets)))  # the tuples reach every bucket
    finally:
        ovsdb.delete_bridges([LIVE, DEAD, SINK])
    assert differences == [], "\n".join(differences)
