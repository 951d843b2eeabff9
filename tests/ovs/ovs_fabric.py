"""Real userspace Open vSwitch bridges wired like a topology model, for
checking compiled rules with ``ovs-appctl ofproto/trace`` (no traffic, no
Mininet, no controller).

Every switch becomes a netdev bridge ``PREFIX + name``; every switch-to-switch
cable becomes a pair of patch ports, so one trace follows a packet across the
whole fabric; a host's switch port is a patch port with no peer, where a
trace ends. Port numbers are the model's OpenFlow ports. Given a
``controller`` target (e.g. tcp:127.0.0.1:6653), the bridges carry the
model's datapath ids and connect to it, so a real controller programs them.
"""
import re
import subprocess
import tempfile

from controller.openflow.diff import (
    ADD_FLOW, ADD_GROUP, DELETE_FLOW, DELETE_FLOWS, DELETE_GROUP, MODIFY_GROUP)
from controller.openflow.rules import group_to_ofctl, to_ofctl
from scripts.emulator.ovs import ovsdb
from topologies.model import ofport

_BRIDGE = re.compile(r'^\s*bridge\("(.+)"\)')
_OUTPUT = re.compile(r'^\s+output:(\d+)')
_IN_PORT = re.compile(r'^\s+IN_PORT')
_DEC_TTL = re.compile(r'^\s+dec_ttl')


def _run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120).stdout


class OvsFabric:
    def __init__(self, topo, prefix, controller=None):
        self.topo = topo
        self.prefix = prefix
        self.controller = controller
        self.bridges = {self.bridge(s.name): s.name for s in topo.switches}

    def bridge(self, switch):
        return self.prefix + switch

    def port_name(self, switch, port):
        return '%s-p%d' % (self.bridge(switch), ofport(port))

    def __enter__(self):
        self.remove()
        bridges = []
        for switch in self.topo.switches:
            ports = []
            for port in self.topo.ports(switch.name):
                peer_node, peer_port = self.topo.peer(switch.name, port)
                peer = ('%s-host' % self.port_name(switch.name, port)
                        if self.topo.nodes[peer_node].is_host else self.port_name(peer_node, peer_port))
                ports.append((self.port_name(switch.name, port), ofport(port),
                              {'type': 'patch', 'options': {'peer': peer}}))
            bridges.append(ovsdb.Bridge(
                name=self.bridge(switch.name), datapath_type='netdev', fail_mode='secure',
                protocols=['OpenFlow13'], ports=ports, max_backoff=None,
                other_config={'datapath-id': '%016x' % switch.dpid} if self.controller else {},
                controllers=[self.controller] if self.controller else []))
        try:
            ovsdb.add_bridges(bridges)
            ovsdb.wait_applied(60)
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc):
        self.remove()

    def remove(self):
        ovsdb.delete_bridges(self.bridges)

    def install(self, switch, rules, groups=()):
        """Replace the switch's flows (and groups) with the given plain-data ones."""
        bridge = self.bridge(switch)
        _run('ovs-ofctl', '-O', 'OpenFlow13', 'del-flows', bridge)
        _run('ovs-ofctl', '-O', 'OpenFlow13', 'del-groups', bridge)
        for kind, lines in (('add-groups', [group_to_ofctl(g) for g in groups]),
                            ('add-flows', [to_ofctl(r) for r in rules])):
            if lines:
                with tempfile.NamedTemporaryFile('w', suffix='.of') as spec:
                    spec.write('\n'.join(lines) + '\n')
                    spec.flush()
                    _run('ovs-ofctl', '-O', 'OpenFlow13', kind, bridge, spec.name)

    def apply(self, switch, ops):
        """Send an ordered diff (controller.openflow.diff) as the Ryu app
        does, op by op in its order, through ovs-ofctl."""
        bridge = self.bridge(switch)
        for operation, item in ops:
            if operation == ADD_FLOW:
                _run('ovs-ofctl', '-O', 'OpenFlow13', 'add-flow', bridge, to_ofctl(item))
            elif operation in (DELETE_FLOW, DELETE_FLOWS):
                match = to_ofctl(item).split(',actions=')[0].split(',')
                if operation == DELETE_FLOW:
                    _run('ovs-ofctl', '-O', 'OpenFlow13', '--strict', 'del-flows', bridge,
                         ','.join(part for part in match if not part.startswith('cookie=')))
                else:  # non-strict: neither priority nor cookie compared
                    _run('ovs-ofctl', '-O', 'OpenFlow13', 'del-flows', bridge,
                         ','.join(part for part in match if not part.startswith(('cookie=', 'priority='))))
            elif operation in (ADD_GROUP, MODIFY_GROUP):
                command = 'add-group' if operation == ADD_GROUP else 'mod-group'
                _run('ovs-ofctl', '-O', 'OpenFlow13', command, bridge, group_to_ofctl(item))
            elif operation == DELETE_GROUP:
                _run('ovs-ofctl', '-O', 'OpenFlow13', 'del-groups', bridge, 'group_id=%d' % item.group_id)
            else:
                raise ValueError('unknown diff operation %r' % (operation,))

    def dump_flows(self, switch):
        return _run('ovs-ofctl', '-O', 'OpenFlow13', '--no-stats', 'dump-flows', self.bridge(switch))

    def arp_request(self, src_host, target_ip):
        """(final packet fields or None if unchanged, hops) of an ARP request
        for ``target_ip`` sent by ``src_host``, as ofproto/trace sees it."""
        switch, port = self.topo.host_attachment(src_host)
        src = self.topo.node(src_host)
        flow = ('in_port=%s,arp,arp_op=1,dl_src=%s,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=%s,arp_tpa=%s,'
                'arp_sha=%s,arp_tha=00:00:00:00:00:00' % (self.port_name(switch, port), src.mac,
                                                          src.ip, target_ip, src.mac))
        out = _run('ovs-appctl', '--timeout=60', 'ofproto/trace', self.bridge(switch), flow)
        final = None
        hops = []
        for line in out.splitlines():
            if line.startswith('Final flow:') and 'unchanged' not in line:
                final = dict(term.split('=', 1) for term in line.split(':', 1)[1].strip().split(',')
                             if '=' in term)
            elif _BRIDGE.match(line):
                hops.append(self.bridges[_BRIDGE.match(line).group(1)])
            elif _IN_PORT.match(line):
                hops.append('in_port')
        return final, hops

    def dump_groups(self, switch):
        return _run('ovs-ofctl', '-O', 'OpenFlow13', 'dump-groups', self.bridge(switch))

    def trace(self, src_host, dst_host, ttl=64, fields='tcp,tp_src=40000,tp_dst=5001', raw=None):
        """(hops, ttl): hops are (switch, model port) pairs the packet leaves
        by, as ofproto/trace follows it across the patch ports; ttl is what
        the dec_ttl actions on the way leave of the given one. ``raw``
        replaces the IPv4 header fields with a flow of one's own."""
        switch, port = self.topo.host_attachment(src_host)
        src, dst = self.topo.node(src_host), self.topo.node(dst_host)
        headers = raw or '%s,nw_src=%s,nw_dst=%s,nw_ttl=%d' % (fields, src.ip, dst.ip, ttl)
        flow = 'in_port=%s,dl_src=%s,dl_dst=%s,%s' % (
            self.port_name(switch, port), src.mac, dst.mac, headers)
        out = _run('ovs-appctl', '--timeout=60', 'ofproto/trace', self.bridge(switch), flow)
        hops = []
        for line in out.splitlines():
            if _BRIDGE.match(line):
                bridge = _BRIDGE.match(line).group(1)
                hops.append([self.bridges[bridge], None])
            elif _OUTPUT.match(line):
                hops[-1][1] = int(_OUTPUT.match(line).group(1)) - ofport(0)
            elif _IN_PORT.match(line):
                hops[-1][1] = 'in_port'
            elif _DEC_TTL.match(line):
                ttl -= 1
        return [tuple(h) for h in hops], ttl
