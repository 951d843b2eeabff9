"""Two-level routing tables (Al-Fares et al., sections 3.3-3.5) as plain data.

A first-level entry is a left-handed prefix (mask 1^m 0^(32-m)). A terminating
prefix names an output port; a non-terminating one names a second-level table
of right-handed suffixes (mask 0^(32-m) 1^m), which several prefixes may share.
Lookup: longest matching prefix; if it is non-terminating, the longest matching
suffix of its table. This is the TCAM semantics of section 3.4 ("a left-handed
entry beats a right-handed one") because suffixes are only consulted through a
non-terminating prefix.

Ports are the paper's (0-based); see topologies.fattree for the cabling.
"""
from dataclasses import dataclass, field
import functools

from topologies.addressing import int_to_ip, ip_to_int, left_mask, right_mask


@dataclass(frozen=True)
class Prefix:
    """First-level entry: ``network/length`` -> port, or -> suffix table."""
    network: str
    length: int
    port: int = None
    suffix_table: str = None

    def __post_init__(self):
        if (self.port is None) == (self.suffix_table is None):
            raise ValueError('prefix %s/%d needs exactly one of port or suffix table'
                             % (self.network, self.length))
        if ip_to_int(self.network) & ~left_mask(self.length) & 0xffffffff:
            raise ValueError('prefix %s/%d has bits outside its mask' % (self.network, self.length))
        # what a lookup compares an address with: converted once, not per lookup
        object.__setattr__(self, 'bits', (left_mask(self.length), ip_to_int(self.network)))

    @property
    def terminating(self):
        return self.suffix_table is None

    def __str__(self):
        return '%s/%d' % (self.network, self.length)


@dataclass(frozen=True)
class Suffix:
    """Second-level entry: the low ``length`` bits equal ``value`` -> port."""
    value: str
    length: int
    port: int

    def __post_init__(self):
        if ip_to_int(self.value) & ~right_mask(self.length) & 0xffffffff:
            raise ValueError('suffix %s/%d has bits outside its mask' % (self.value, self.length))
        object.__setattr__(self, 'bits', (right_mask(self.length), ip_to_int(self.value)))

    def __str__(self):
        return '%s/%d' % (self.value, self.length)


# Entries are immutable values, so tables share them: a k=48 fabric's tables
# hold 85,248 prefixes (28,849 distinct) and 55,296 suffixes (576 distinct),
# and building and validating each anew was 40% of computing them.
@functools.lru_cache(maxsize=1 << 17)
def prefix_entry(network, length, port=None, suffix_table=None):
    return Prefix(network, length, port, suffix_table)


@functools.lru_cache(maxsize=1 << 17)
def suffix_entry(value, length, port):
    return Suffix(value, length, port)


def _longest(entries, address):
    """The longest entry matching ``address`` (an int), or None."""
    best = None
    for entry in entries:
        mask, value = entry.bits
        if address & mask == value and (best is None or entry.length > best.length):
            best = entry
    return best


@dataclass
class TwoLevelTable:
    """One switch's routing table: prefixes plus named suffix tables.
    ``failover`` names, per suffix table, the ordered up-ports its entries may
    fall back on in the data plane when their own port is not live."""
    switch: str
    prefixes: list = field(default_factory=list)
    suffix_tables: dict = field(default_factory=dict)
    failover: dict = field(default_factory=dict)

    def add_prefix(self, network, length, port=None, suffix_table=None):
        if suffix_table is not None and suffix_table not in self.suffix_tables:
            raise ValueError('%s: prefix %s/%d points to missing suffix table %s'
                             % (self.switch, network, length, suffix_table))
        self.prefixes.append(prefix_entry(network, length, port, suffix_table))

    def add_suffix(self, table, value, length, port):
        self.suffix_tables.setdefault(table, []).append(suffix_entry(value, length, port))

    def copy(self):
        """A table that can be changed without changing this one (the
        entries themselves are immutable and shared)."""
        return TwoLevelTable(self.switch, list(self.prefixes),
                             {name: list(suffixes) for name, suffixes in self.suffix_tables.items()},
                             dict(self.failover))

    def lookup(self, ip):
        """Output port for a destination, or None (no entry: dropped)."""
        address = ip_to_int(ip)
        prefix = _longest(self.prefixes, address)
        if prefix is None:
            return None
        if prefix.terminating:
            return prefix.port
        suffix = _longest(self.suffix_tables[prefix.suffix_table], address)
        return None if suffix is None else suffix.port

    def format(self):
        """The table in the paper's notation (figure 4): prefix -> port, and
        each second-level table as suffix -> port."""
        lines = ['%s' % self.switch, '  %-18s %s' % ('Prefix', 'Output port')]
        for p in self.prefixes:
            lines.append('  %-18s %s' % (p, p.port if p.terminating else '-> ' + p.suffix_table))
        for name, suffixes in self.suffix_tables.items():
            lines.append('  %-18s %s' % ('Suffix (' + name + ')', 'Output port'))
            lines.extend('  %-18s %s' % (s, s.port) for s in suffixes)
        return '\n'.join(lines)


def _add_host_suffixes(table, up_ports, z):
    """The /0 prefix with host-ID suffixes over the switch's up-ports; the
    modular shift (i - 2 + z) mod k/2 keeps traffic from the same host ID on
    different lower switches off the same upper switch."""
    half = len(up_ports)
    table.suffix_tables['hostid'] = []
    table.add_prefix('0.0.0.0', 0, suffix_table='hostid')
    for host_id in range(2, half + 2):
        table.add_suffix('hostid', '0.0.0.%d' % host_id, 8, up_ports[(host_id - 2 + z) % half])
    table.failover['hostid'] = tuple(up_ports)


@functools.lru_cache(maxsize=1 << 12)
def _network(ip, length):
    """The network of ``ip``'s /``length`` (every upper switch of a pod asks
    for each of its subnets)."""
    return int_to_ip(ip_to_int(ip) & left_mask(length))


def pod_switch_table(topo, name):
    """Algorithm 1. Upper switches: terminating /24 per subnet of the pod
    (the port to that subnet's lower switch), then /0 with host-ID suffixes.
    Lower switches omit the /24 step; their own subnet's hosts are delivered
    by /32 entries (the paper's "switched"). Ports come from the model."""
    node = topo.node(name)
    table = TwoLevelTable(name)
    for port in topo.down_ports(name):
        below = topo.nodes[topo.peer(name, port)[0]]
        if node.role == 'aggregation':
            table.add_prefix(_network(below.ip, 24), 24, port=port)
        else:
            table.add_prefix(below.ip, 32, port=port)
    _add_host_suffixes(table, topo.up_ports(name), node.coords[1])
    return table


def core_switch_table(topo, name):
    """Algorithm 2: a terminating 10.pod.0.0/16 per pod, to the port the
    model cables to that pod."""
    port_to_pod = {topo.pod_of(topo.peer(name, port)[0]): port for port in topo.down_ports(name)}
    table = TwoLevelTable(name)
    for pod in sorted(port_to_pod):
        table.add_prefix('10.%d.0.0' % pod, 16, port=port_to_pod[pod])
    return table


def switch_table(topo, name):
    if topo.node(name).role == 'core':
        return core_switch_table(topo, name)
    return pod_switch_table(topo, name)


def all_tables(topo):
    """Every switch's two-level table, by switch name."""
    return {sw.name: switch_table(topo, sw.name) for sw in topo.switches}

