"""Kevin(n, k_s, k_d): a de Bruijn ToR fabric with demand-aware circuit spines.

Seed 002 ("Kevin"). n = k_s^d ToRs; ToR addresses are the d-symbol words over
[k_s - 1] of the de Bruijn graph DB(k_s, d), whose out-neighbours of v are the
left shifts v[1:] + (x,). Every ToR has one uplink to each of k = k_s + k_d
spines. The k_s static spines together realise DB(k_s, d): Observation 1 (the
graph is k_s-regular, so by Hall's theorem its bipartite out/in graph splits
into k_s perfect matchings) gives one directed matching per static spine. The
k_d demand-aware (DA) spines start empty; a DA link x -> y on spine i is a
circuit rule on that spine's bridge.

Ports (model, 0-based; OpenFlow port = model port + 1):
  ToR v:    port i (i < k_s)        -> static spine i (its port index(v))
            port k_s + j (j < k_d)  -> DA spine j     (its port index(v))
            port k + h (h < H)      -> host h of v
  spine:    port index(v)           -> ToR v
A spine port is one cable carrying both directions: ToR v transmits on it
towards its matching partner and receives on it from the ToR matched to v.

IP embedding (seed, last section): base prefix (p bits), then the de Bruijn
address with s = ceil(log2 k_s) bits per symbol (s*d bits, so each ToR owns a
/(p + s*d)), then host bits. Host h of a ToR gets host number h + 1; host
number 0 is the ToR's own address (its DistDA agent's).

Datapath ids: role code << 32 | index (ToR index = address read in base k_s,
spine index = spine number); codes 0x4b1 ToR, 0x4b2 static spine, 0x4b3 DA spine.
"""
import ipaddress

import networkx as nx
from networkx.algorithms import bipartite

from topologies.addressing import int_to_ip, ip_to_int
from topologies.model import Node, Topology, check_int

ROLE_CODES = {'tor': 0x4b1, 'static_spine': 0x4b2, 'da_spine': 0x4b3}
DEFAULT_BASE = '10.0.0.0/8'


class KevinParameterError(ValueError):
    """Parameters no Kevin fabric (or its IP embedding) can have."""


def _check_int(name, value, minimum):
    return check_int(value, 'Kevin ' + name, minimum, KevinParameterError)


def diameter_of(n, k_s):
    """d with n = k_s^d, or a clear error when n is not such a power."""
    d, size = 0, 1
    while size < n:
        size *= k_s
        d += 1
    if size != n:
        raise KevinParameterError('Kevin n must be a power of k_s=%d (n = k_s^x), got n=%d'
                                  % (k_s, n))
    return d


def db_successors(address, k_s):
    """Out-neighbours of a de Bruijn address: left shift, new last symbol x."""
    return [address[1:] + (x,) for x in range(k_s)]


def address_of(index, k_s, d):
    """The d-symbol address (most significant symbol first) of a ToR index."""
    symbols = []
    for _ in range(d):
        index, symbol = divmod(index, k_s)
        symbols.append(symbol)
    return tuple(reversed(symbols))


def index_of(address, k_s):
    value = 0
    for symbol in address:
        value = value * k_s + symbol
    return value


def address_str(address):
    return ''.join(str(s) for s in address)


def perfect_matchings(successors, nodes):
    """Split a regular directed graph into perfect matchings (Observation 1).

    ``successors[v]`` lists v's out-neighbours (self-loops count). Each round
    takes a perfect matching of the bipartite out/in graph (Hopcroft-Karp) and
    removes its edges; a k-regular bipartite graph minus a perfect matching is
    (k-1)-regular, so by Hall's theorem the next round always succeeds.
    Returns a list of dicts v -> partner, each a permutation of ``nodes``."""
    degree = {len(successors[v]) for v in nodes}
    if len(degree) != 1:
        raise KevinParameterError('graph is not regular (out-degrees %s)' % sorted(degree))
    # Integer vertices (v's out side is its index, its in side index + n):
    # networkx keeps them in sets, and only integers hash the same in every
    # process, so the decomposition (and every port number) is reproducible.
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    remaining = nx.Graph()
    remaining.add_nodes_from(range(2 * n))
    for v in nodes:
        for w in successors[v]:
            remaining.add_edge(index[v], n + index[w])
    tops = list(range(n))
    matchings = []
    for _ in range(degree.pop()):
        found = bipartite.hopcroft_karp_matching(remaining, top_nodes=tops)
        matching = {v: nodes[found[index[v]] - n] for v in nodes if index[v] in found}
        if len(matching) != len(nodes):
            raise AssertionError('no perfect matching left: the graph is not regular on both sides')
        remaining.remove_edges_from((index[v], n + index[w]) for v, w in matching.items())
        matchings.append(matching)
    return matchings


def check_decomposition(matchings, successors, nodes):
    """Raise unless ``matchings`` are permutations whose union is exactly the
    edge multiset of ``successors``."""
    edges = sorted((v, w) for v in nodes for w in successors[v])
    used = []
    for number, matching in enumerate(matchings):
        if sorted(matching) != sorted(nodes) or sorted(matching.values()) != sorted(nodes):
            raise AssertionError('matching %d is not a perfect matching' % number)
        used.extend(matching.items())
    if sorted(used) != edges:
        raise AssertionError('matchings do not cover the de Bruijn edges exactly once')


class IpEmbedding:
    """De Bruijn addresses inside IPv4 addresses: base | symbols | host."""

    def __init__(self, k_s, d, base=DEFAULT_BASE, hosts_per_tor=1):
        try:
            network = ipaddress.IPv4Network(base)
        except ValueError as error:
            raise KevinParameterError('Kevin base prefix %r is not an IPv4 network: %s'
                                      % (base, error)) from None
        self.k_s, self.d = k_s, d
        self.base = int(network.network_address)
        self.base_length = network.prefixlen
        self.symbol_bits = max(1, (k_s - 1).bit_length())
        self.tor_length = self.base_length + self.symbol_bits * d
        self.host_bits = 32 - self.tor_length
        if self.host_bits < 1 or hosts_per_tor + 1 > 1 << self.host_bits:
            raise KevinParameterError(
                'base %s leaves %d host bits after %d ToR bits (%d symbols x %d bits): '
                'too few for %d hosts per ToR plus the ToR address'
                % (base, max(self.host_bits, 0), self.symbol_bits * d, d,
                   self.symbol_bits, hosts_per_tor))

    def prefix(self, symbols):
        """(network int, length) of the IP prefix for a word of <= d symbols."""
        value = 0
        for symbol in symbols:
            value = value << self.symbol_bits | symbol
        length = self.base_length + self.symbol_bits * len(symbols)
        return self.base | value << (32 - length), length

    def host_ip(self, address, host_number):
        network, _ = self.prefix(address)
        return int_to_ip(network | host_number)

    def tor_address(self, ip):
        """The ToR address an IPv4 address belongs to, or None outside Kevin."""
        value = ip_to_int(ip)
        if self.base_length and (value ^ self.base) >> (32 - self.base_length):
            return None
        word = (value >> self.host_bits) & ((1 << (self.symbol_bits * self.d)) - 1)
        mask = (1 << self.symbol_bits) - 1
        address = tuple((word >> (self.symbol_bits * (self.d - 1 - j))) & mask
                        for j in range(self.d))
        return address if all(s < self.k_s for s in address) else None


def tor_name(address):
    return 'kvt' + address_str(address)


def host_name(address, host):
    return 'kvh%s_%d' % (address_str(address), host)


def static_spine_name(i):
    return 'kvs%d' % i


def da_spine_name(j):
    return 'kvd%d' % j


class Kevin(Topology):
    """Kevin(n, k_s, k_d) with ``hosts_per_tor`` hosts per ToR."""

    def __init__(self, n, k_s, k_d, hosts_per_tor=1, base=DEFAULT_BASE):
        super().__init__('kevin(n=%s,k_s=%s,k_d=%s)' % (n, k_s, k_d))
        self.k_s = _check_int('k_s', k_s, 2)
        # The seed asks k_d >= 2; k_d = 0 and 1 are kept as the static de Bruijn
        # baseline and the smallest emulation.
        self.k_d = _check_int('k_d', k_d, 0)
        self.n = _check_int('n', n, k_s * k_s)
        self.hosts_per_tor = _check_int('hosts_per_tor', hosts_per_tor, 1)
        self.d = diameter_of(n, k_s)
        self.k = k_s + k_d
        self.ip = IpEmbedding(k_s, self.d, base, hosts_per_tor)
        self.addresses = [address_of(i, k_s, self.d) for i in range(n)]
        successors = {v: db_successors(v, k_s) for v in self.addresses}
        self.static_matchings = perfect_matchings(successors, self.addresses)
        check_decomposition(self.static_matchings, successors, self.addresses)

        for i, v in enumerate(self.addresses):
            self.add_node(Node(tor_name(v), 'tor', self.ip.host_ip(v, 0), v,
                               ROLE_CODES['tor'] << 32 | i))
            for h in range(hosts_per_tor):
                self.add_node(Node(host_name(v, h), 'host', self.ip.host_ip(v, h + 1), v + (h,)))
        # Spines are circuits without an IP role; distinct link-local
        # placeholders keep Topology.by_ip unambiguous.
        for i in range(self.k):
            static = i < k_s
            self.add_node(Node(self.spine_name(i), 'static_spine' if static else 'da_spine',
                               '169.254.0.%d' % (i + 1), (i,),
                               ROLE_CODES['static_spine' if static else 'da_spine'] << 32 | i))
        for index, v in enumerate(self.addresses):
            for i in range(self.k):
                self.add_link(tor_name(v), i, self.spine_name(i), index)
            for h in range(hosts_per_tor):
                self.add_link(tor_name(v), self.k + h, host_name(v, h), 0)

    def spine_name(self, i):
        """Name of spine port i of every ToR (static spines first)."""
        if not 0 <= i < self.k:
            raise KevinParameterError('%s has spines 0..%d, not %r' % (self.name, self.k - 1, i))
        return static_spine_name(i) if i < self.k_s else da_spine_name(i - self.k_s)

    def da_port(self, j):
        """ToR port (= spine number) of DA spine j."""
        if not 0 <= j < self.k_d:
            raise KevinParameterError('%s has DA spines 0..%d, not %r' % (self.name, self.k_d - 1, j))
        return self.k_s + j

    def index(self, address):
        return index_of(address, self.k_s)

    def check_address(self, address):
        address = tuple(address)
        if len(address) != self.d or not all(isinstance(s, int) and 0 <= s < self.k_s
                                             for s in address):
            raise KevinParameterError('%r is not a ToR address of %s (%d symbols in 0..%d)'
                                      % (address, self.name, self.d, self.k_s - 1))
        return address

    def parse(self, text):
        """ToR address from its digit string, e.g. '011'."""
        if not isinstance(text, str) or not text.isdigit():
            raise KevinParameterError('%r is not a ToR address string' % (text,))
        return self.check_address(int(c) for c in text)

    def tor(self, address):
        return tor_name(address)

    def static_neighbours(self, address):
        """[(port, neighbour address)] over the static spines."""
        return [(i, m[address]) for i, m in enumerate(self.static_matchings)]

    def host_port(self, h):
        return self.k + h
