"""The K-ary N-Bridge (high-dimensional fat tree, seed 003 section 2.3) as a
plain-data model.

Shape K_{N-1} x ... x K_0 (written highest dimension first, as the paper
writes LSW(j_{N-1}, ..., j_0)). Leaf switch LSW(j_{N-1}, ..., j_0) carries H
hosts; in every dimension i the K_i leaves that differ only in coordinate i
form a *line*, and Q root switches RSW(i, <line coordinates>, p) connect all
of them (a Q-up, K_i-down fat tree per line).

Names (short: Linux interface names are "<node>-ethN", at most 15 chars, and
the nl/nr/nh prefixes keep them apart from other fabrics on the machine):
  leaf LSW(13, 2)              nl13_2
  root RSW(1, j0=2, p=0)       nr1_2_0     (dimension, line coordinates, p)
  host h of LSW(13, 2)         nh13_2_h

Ports (model, 0-based; OpenFlow port = model port + 1, see topologies.model):
  leaf:  port h (h < H)          -> host h
         port H + i*Q + p        -> RSW(i, line, p), which cables it on port j_i
  root of dimension i: port v    -> the leaf of its line with coordinate j_i = v

Host addresses encode the leaf coordinates so that routing is prefix
matching: inside 10.0.0.0/8 the 24 low bits hold one field per dimension,
highest dimension first, field i being bits(K_i) = bit length of K_i - 1
wide, then a host field of bit length of H holding h + 1 (never zero), all
right-aligned (unused high bits zero). Hence "the destination agrees with
coordinates j_{N-1}..j_d" is one prefix. For 33 x 6 with H = 1: LSW(13, 2)
host 0 is 10.0.0.213 (13 << 4 | 2 << 1 | 1).
Switches get model-only identifiers 169.254.x.y (never configured anywhere).

Datapath ids: leaf 0x1_0000_0000 | leaf index (coordinates in mixed radix),
root 0x2_0000_0000 | root index (creation order: dimension, line, p).
"""
from topologies.addressing import int_to_ip, ip_to_int
from topologies.model import Node, Topology, check_int

FABRIC_NET = '10.0.0.0'
FABRIC_PREFIX_LEN = 8
ADDRESS_BITS = 32 - FABRIC_PREFIX_LEN
SWITCH_ID_LIMIT = (1 << 16) - 2  # 169.254.0.1 .. 169.254.255.254
LEAF_DPID, ROOT_DPID = 1 << 32, 2 << 32


def field_bits(k):
    """Address bits of a coordinate in [0, k-1] (at least one)."""
    return max(1, (k - 1).bit_length())


def format_coords(coords):
    return 'LSW(%s)' % ','.join(str(c) for c in coords)


class NBridge(Topology):
    """K_{N-1} x ... x K_0 leaves, Q roots per line in every dimension, H hosts per leaf."""

    def __init__(self, shape, q=1, hosts_per_leaf=1):
        shape = self.check_shape(shape, q, hosts_per_leaf)
        super().__init__('nbridge(%s, Q=%d, H=%d)' % ('x'.join(map(str, shape)), q, hosts_per_leaf))
        self.shape, self.q, self.hosts_per_leaf = shape, q, hosts_per_leaf
        self.n = len(shape)
        self._build()

    @staticmethod
    def check_shape(shape, q, hosts_per_leaf):
        """Reject shapes the paper or the 10.0.0.0/8 addressing cannot express."""
        try:
            shape = tuple(shape)
        except TypeError:
            raise ValueError('N-Bridge shape must be a sequence K_{N-1},...,K_0, got %r' % (shape,)) from None
        if not shape:
            raise ValueError('N-Bridge needs N >= 1 dimensions, got an empty shape')
        n = len(shape)
        for pos, k in enumerate(shape):
            check_int(k, 'K_%d (leaves in dimension %d)' % (n - 1 - pos, n - 1 - pos), 2)
        check_int(q, 'Q (root switches per line)', 1)
        check_int(hosts_per_leaf, 'H (hosts per leaf)', 1)
        bits = sum(field_bits(k) for k in shape) + hosts_per_leaf.bit_length()
        if bits > ADDRESS_BITS:
            raise ValueError('N-Bridge %s with H=%d needs %d address bits; 10.0.0.0/8 has %d'
                             % ('x'.join(map(str, shape)), hosts_per_leaf, bits, ADDRESS_BITS))
        leaves = 1
        for k in shape:
            leaves *= k
        switches = leaves + q * sum(leaves // k for k in shape)
        if switches > SWITCH_ID_LIMIT:
            raise ValueError('N-Bridge %s with Q=%d has %d switches; at most %d can be numbered'
                             % ('x'.join(map(str, shape)), q, switches, SWITCH_ID_LIMIT))
        return shape

    # -- coordinates (tuples in paper order: index 0 is dimension N-1) --------

    def k(self, dim):
        return self.shape[self.n - 1 - dim]

    def coord(self, coords, dim):
        return coords[self.n - 1 - dim]

    def line_of(self, coords, dim):
        """Coordinates of a leaf without dimension ``dim``: its line in that dimension."""
        pos = self.n - 1 - dim
        return coords[:pos] + coords[pos + 1:]

    def all_coords(self):
        result = [()]
        for k in self.shape:
            result = [c + (v,) for c in result for v in range(k)]
        return result

    def check_coords(self, coords):
        """The coordinates as a tuple, or ValueError naming what is wrong."""
        coords = tuple(coords)
        if len(coords) != self.n:
            raise ValueError('%s has %d coordinates; %s needs %d (j_%d..j_0)'
                             % (format_coords(coords), len(coords), self.name, self.n, self.n - 1))
        for pos, (value, k) in enumerate(zip(coords, self.shape)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < k:
                raise ValueError('%s: j_%d must be an integer in [0, %d], got %r'
                                 % (format_coords(coords), self.n - 1 - pos, k - 1, value))
        return coords

    def parse_coords(self, text):
        """'13,2', '(13,2)' or 'LSW(13,2)' -> (13, 2), checked against the shape."""
        body = text.strip()
        if body.upper().startswith('LSW'):
            body = body[3:]
        body = body.strip().strip('()')
        try:
            coords = tuple(int(part) for part in body.split(','))
        except ValueError:
            raise ValueError('bad leaf coordinates %r: expected integers like %s'
                             % (text, ','.join(['0'] * self.n))) from None
        return self.check_coords(coords)

    # -- names -----------------------------------------------------------------

    @staticmethod
    def leaf_name(coords):
        return 'nl' + '_'.join(map(str, coords))

    @staticmethod
    def root_name(dim, line, p):
        return 'nr' + '_'.join(map(str, (dim,) + tuple(line) + (p,)))

    @staticmethod
    def host_name(coords, h):
        return 'nh' + '_'.join(map(str, tuple(coords) + (h,)))

    def leaf_of(self, name):
        """Coordinates of a leaf switch or of a host's leaf."""
        node = self.node(name)
        return node.coords if node.role == 'leaf' else node.coords[:-1]

    # -- addressing ------------------------------------------------------------

    @property
    def host_bits(self):
        return self.hosts_per_leaf.bit_length()

    def _shift(self, dim):
        """Bit position of dimension ``dim``'s field (the host field is at 0)."""
        return self.host_bits + sum(field_bits(self.k(d)) for d in range(dim))

    def prefix(self, coords, dims_from):
        """(network, length): destinations whose coordinates of dimensions
        >= dims_from equal ``coords``' (dims_from = N: the whole fabric).
        The unused bits above the highest field are zero, so this is a prefix."""
        value = ip_to_int(FABRIC_NET)
        for dim in range(dims_from, self.n):
            value |= self.coord(coords, dim) << self._shift(dim)
        length = 32 - self._shift(dims_from) if dims_from < self.n else FABRIC_PREFIX_LEN
        return int_to_ip(value), length

    def host_ip(self, coords, h):
        network, _ = self.prefix(coords, 0)
        return int_to_ip(ip_to_int(network) | (h + 1))

    def leaf_port_up(self, dim, p):
        return self.hosts_per_leaf + dim * self.q + p

    # -- construction ----------------------------------------------------------

    def _build(self):
        switch_numbers = iter(range(1, SWITCH_ID_LIMIT + 1))

        def switch_ip():
            return int_to_ip(ip_to_int('169.254.0.0') + next(switch_numbers))

        for index, coords in enumerate(self.all_coords()):
            self.add_node(Node(self.leaf_name(coords), 'leaf', switch_ip(), coords, LEAF_DPID | index))
            for h in range(self.hosts_per_leaf):
                self.add_node(Node(self.host_name(coords, h), 'host', self.host_ip(coords, h), coords + (h,)))
                self.add_link(self.leaf_name(coords), h, self.host_name(coords, h), 0)
        root_index = 0
        for dim in range(self.n):
            lines = sorted({self.line_of(c, dim) for c in self.all_coords()})
            for line in lines:
                for p in range(self.q):
                    name = self.root_name(dim, line, p)
                    self.add_node(Node(name, 'root', switch_ip(), (dim, line, p), ROOT_DPID | root_index))
                    root_index += 1
                    for v in range(self.k(dim)):
                        leaf = self.leaf_on_line(line, dim, v)
                        self.add_link(self.leaf_name(leaf), self.leaf_port_up(dim, p), name, v)

    def leaf_on_line(self, line, dim, value):
        pos = self.n - 1 - dim
        return tuple(line[:pos]) + (value,) + tuple(line[pos:])

    def root_of(self, coords, dim, p):
        """Name of RSW(dim, line of ``coords``, p)."""
        return self.root_name(dim, self.line_of(coords, dim), p)
