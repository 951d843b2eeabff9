"""Control-plane entries for the P4 programs of p4/, as simple_switch_CLI
commands. Pure: data in, command lines out, no P4 tool, Ryu or Mininet.

The fat-tree entries come from the same two-level tables
(controller.fattree.twolevel) the OpenFlow pipeline is compiled from
(controller.fattree.pipeline): one source of truth for both data planes.
Ports in the commands are the model's OpenFlow ports (topologies.model.ofport),
which the runner (scripts/p4/bmv2_fabric.py) gives simple_switch as its port
numbers.
"""
from dataclasses import dataclass
import ipaddress

from controller.fattree.twolevel import all_tables
from topologies.addressing import int_to_ip, ip_to_int, left_mask, right_mask
from topologies.model import ofport

TCAM = 'TwoLevelIngress.tcam'
LETFLOW = 'LetFlowIngress'
SKETCH = 'SketchIngress'
# Must equal REPORT_SESSION and MAX_TORS in p4/distda_sketch.p4.
REPORT_SESSION = 100
MAX_TORS = 1024


@dataclass(frozen=True)
class TcamEntry:
    """One TCAM word: ``value``/``mask`` over the destination address, at
    ``address`` (the bmv2 priority: the lowest matching address wins);
    ``port`` is the model port of its RAM word, None for a drop."""
    address: int
    value: str
    mask: str
    port: int = None

    def command(self):
        key = '%s&&&%s' % (self.value, self.mask)
        if self.port is None:
            return 'table_add %s drop %s => %d' % (TCAM, key, self.address)
        return 'table_add %s output %s => %d %d' % (TCAM, key, ofport(self.port), self.address)


def tcam_entries(table):
    """The TCAM image of a two-level table (Al-Fares et al., section 3.4).

    Prefixes are laid out longest first. A terminating prefix is one word. A
    non-terminating prefix P/m contributes its suffixes at its own place,
    each as one word that matches P's m high bits and the suffix's low bits
    (longest suffix first), then a drop word for P itself, so that a
    destination under P that no suffix matches is dropped as
    TwoLevelTable.lookup drops it, instead of falling through to a shorter
    prefix. In the fat-tree the only non-terminating prefix is 0.0.0.0/0,
    so this is the paper's layout: prefixes at the low addresses, the
    suffixes above them, and no drop word (a /0 drop is the table miss).
    """
    entries = []

    def add(value, mask, port):
        entries.append(TcamEntry(len(entries), int_to_ip(value), int_to_ip(mask), port))

    for prefix in sorted(table.prefixes, key=lambda p: -p.length):
        network, mask = ip_to_int(prefix.network), left_mask(prefix.length)
        if prefix.terminating:
            add(network, mask, prefix.port)
            continue
        suffixes = table.suffix_tables[prefix.suffix_table]
        for suffix in sorted(suffixes, key=lambda s: -s.length):
            value, suffix_mask = ip_to_int(suffix.value), right_mask(suffix.length)
            # Prefix and suffix longer than 32 bits together overlap; where
            # they disagree no address matches both, and the word is useless.
            if (network ^ value) & mask & suffix_mask:
                continue
            add(network | value, mask | suffix_mask, suffix.port)
        if prefix.length:
            add(network, mask, None)
    return entries


def two_level_commands(table):
    """simple_switch_CLI commands loading one switch's table into two_level.p4."""
    return [entry.command() for entry in tcam_entries(table)]


def fattree_commands(topo):
    """Commands of every switch of a fat-tree, by the model's switch name."""
    return {name: two_level_commands(table) for name, table in all_tables(topo).items()}


def _network(cidr):
    net = ipaddress.IPv4Network(cidr)
    return '%s/%d' % (net.network_address, net.prefixlen)


def letflow_commands(routes, uplinks=(), delta_us=50000, weights=None):
    """Commands of a letflow.p4 switch.

    routes: {cidr: model port} for destinations reached on a fixed port
    (hosts, or a spine's leaves), or {cidr: None} for destinations that
    leave by the flowlet's uplink. uplinks: model ports of the ECMP member
    list; weights: optional {uplink: positive int}, a port listed that many
    times in the list. delta_us: the flowlet timeout Delta.
    """
    weights = weights or {}
    if set(weights) - set(uplinks):
        raise ValueError('weights for ports that are not uplinks: %s'
                         % sorted(set(weights) - set(uplinks)))
    slots = [port for port in uplinks for _ in range(weights.get(port, 1))]
    if any(w < 1 for w in weights.values()) or len(slots) > 255:
        raise ValueError('weights must be positive and give at most 255 slots: %s' % weights)
    if delta_us <= 0:
        raise ValueError('flowlet timeout must be positive, got %r us' % delta_us)
    commands = ['table_set_default %s.config set_config %d %d' % (LETFLOW, delta_us, len(slots))]
    commands += ['table_add %s.ecmp_member set_uplink %d => %d' % (LETFLOW, slot, ofport(port))
                 for slot, port in enumerate(slots)]
    for cidr, port in routes.items():
        if port is None:
            commands.append('table_add %s.routes to_uplinks %s =>' % (LETFLOW, _network(cidr)))
        else:
            commands.append('table_add %s.routes to_port %s => %d'
                            % (LETFLOW, _network(cidr), ofport(port)))
    return commands


def sketch_commands(local_hosts, routes, source_tors, report_port, window_us, threshold_bytes):
    """Commands of a distda_sketch.p4 destination ToR.

    local_hosts: {cidr: model port} of the ToR's own hosts (their traffic is
    counted); routes: {cidr: model port} of everything else; source_tors:
    {cidr: ToR index} naming the source ToR of a sender; report_port: the
    model port where elephant reports leave; a source is an elephant when
    its bytes in one window of window_us reach threshold_bytes.
    """
    if window_us <= 0 or threshold_bytes <= 0:
        raise ValueError('window and threshold must be positive')
    if any(not 0 <= tor < MAX_TORS for tor in source_tors.values()):
        raise ValueError('source ToR indices must be in [0, %d)' % MAX_TORS)
    commands = ['table_set_default %s.config set_config %d %d' % (SKETCH, window_us, threshold_bytes),
                'mirroring_add %d %d' % (REPORT_SESSION, ofport(report_port))]
    commands += ['table_add %s.routes deliver %s => %d' % (SKETCH, _network(c), ofport(p))
                 for c, p in local_hosts.items()]
    commands += ['table_add %s.routes forward %s => %d' % (SKETCH, _network(c), ofport(p))
                 for c, p in routes.items()]
    commands += ['table_add %s.src_tor set_src_tor %s => %d' % (SKETCH, _network(c), tor)
                 for c, tor in source_tors.items()]
    return commands
