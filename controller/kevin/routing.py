"""Greedy LPM routing on Kevin (seed 002: Algorithm 1, the reduce step, Claim 1).

A ToR's table is built only from its own address and its neighbours' addresses
and ports. Greedy de Bruijn routing picks the neighbour whose address has the
longest suffix equal to a prefix of the destination (that neighbour minimises
the de Bruijn distance d - overlap). Algorithm 1 realises this as LPM: every
neighbour w on port p contributes the words w[d-l:] (its suffixes, l = 1..d)
as l-symbol prefixes -> p. Equal words from several neighbours form a port
group (equal-length routes). The reduce step drops entries that are never
used: those whose every one-symbol extension is already decided by a longer
entry. The ToR's own address is the local-delivery entry.

Claim 1: adding a directed matching M keeps greedy LPM routing correct with at
most d hops, since the static successor v[1:] + t[ov] always raises the overlap
by at least one and LPM can only pick a neighbour at least as good. Adding or
removing a DA neighbour therefore only changes the source ToR's own table
(``GreedyLpmTable.add_neighbour`` / ``remove_neighbour``).
"""
from dataclasses import dataclass

from topologies.addressing import ip_to_int
from topologies.kevin import KevinParameterError, address_str, index_of


class DaPortBusyError(ValueError):
    """A DA link on a transmit or receive port that is already in use."""


@dataclass(frozen=True)
class LpmEntry:
    """``symbols`` (a word of 1..d symbols, i.e. the prefix symbols*) -> ToR
    ports; several ports are a port group; no ports means local delivery."""
    symbols: tuple
    ports: frozenset

    @property
    def local(self):
        return not self.ports

    def format(self, d):
        word = address_str(self.symbols) + '*' * (d - len(self.symbols))
        target = 'local' if self.local else ','.join(str(p) for p in sorted(self.ports))
        return '%s -> %s' % (word, target)


def overlap(v, t):
    """Longest l with v[d-l:] == t[:l] (de Bruijn distance is d - overlap)."""
    d = len(v)
    for length in range(d, 0, -1):
        if v[d - length:] == t[:length]:
            return length
    return 0


class GreedyLpmTable:
    """One ToR's forwarding table (Algorithm 1 + reduce), kept up to date as
    neighbours come and go."""

    def __init__(self, address, k_s, neighbours=()):
        self.address = tuple(address)
        self.k_s = k_s
        self.d = len(self.address)
        self._neighbours = {}
        for port, neighbour in neighbours:
            self._set(port, neighbour)
        self._rebuild()

    @property
    def neighbours(self):
        """{port: neighbour address}."""
        return dict(self._neighbours)

    def _set(self, port, neighbour):
        neighbour = tuple(neighbour)
        if len(neighbour) != self.d or not all(0 <= s < self.k_s for s in neighbour):
            raise KevinParameterError('neighbour %r of %s is not a %d-symbol address over 0..%d'
                                      % (neighbour, address_str(self.address), self.d, self.k_s - 1))
        if port in self._neighbours:
            raise DaPortBusyError('port %d of %s already leads to %s'
                                  % (port, address_str(self.address),
                                     address_str(self._neighbours[port])))
        self._neighbours[port] = neighbour

    def add_neighbour(self, port, neighbour):
        """A new link (e.g. a DA link) on ``port``: local table update."""
        self._set(port, neighbour)
        self._rebuild()

    def remove_neighbour(self, port):
        """The link on ``port`` is gone; returns the neighbour it led to."""
        if port not in self._neighbours:
            raise KevinParameterError('port %d of %s has no neighbour'
                                      % (port, address_str(self.address)))
        neighbour = self._neighbours.pop(port)
        self._rebuild()
        return neighbour

    def candidates(self):
        """Algorithm 1 before the reduce step: {word: set of ports}, plus the
        own address as local delivery (empty port set)."""
        words = {}
        for port, w in self._neighbours.items():
            for length in range(1, self.d + 1):
                words.setdefault(w[self.d - length:], set()).add(port)
        words[self.address] = set()
        return words

    def _rebuild(self):
        words = self.candidates()

        def decided(word):
            # Every destination starting with ``word`` hits an entry at least this long.
            if word in words:
                return True
            return len(word) < self.d and all(decided(word + (x,)) for x in range(self.k_s))

        self._entries = {w: frozenset(ports) for w, ports in words.items()
                         if len(w) == self.d
                         or not all(decided(w + (x,)) for x in range(self.k_s))}

    @property
    def entries(self):
        """Reduced entries, longest first."""
        return [LpmEntry(w, p) for w, p in sorted(self._entries.items(),
                                                 key=lambda item: (-len(item[0]), item[0]))]

    def size(self):
        """Number of routing entries (without the local-delivery entry)."""
        return len(self._entries) - 1

    def bound(self):
        """Algorithm 1 adds d entries per neighbour and the reduce step only
        removes, so a ToR with k ports holds at most k*d entries."""
        return len(self._neighbours) * self.d

    def lookup(self, destination):
        """The longest entry matching a destination ToR address."""
        destination = tuple(destination)
        for length in range(self.d, 0, -1):
            ports = self._entries.get(destination[:length])
            if ports is not None:
                return LpmEntry(destination[:length], ports)
        return None

    def format(self):
        lines = ['ToR %s (%d entries)' % (address_str(self.address), len(self._entries))]
        lines += ['  ' + e.format(self.d) for e in self.entries]
        return '\n'.join(lines)


class KevinRouting:
    """Greedy LPM state of a whole Kevin fabric: one table per ToR plus the DA
    circuits, which are directed matchings (per DA spine, each ToR transmits
    on at most one link and receives on at most one)."""

    def __init__(self, kevin):
        self.kevin = kevin
        self.tables = {v: GreedyLpmTable(v, kevin.k_s, kevin.static_neighbours(v))
                       for v in kevin.addresses}
        self.da_tx = {}  # (DA spine j, source) -> destination
        self.da_rx = {}  # (DA spine j, destination) -> source

    def add_da_link(self, j, source, destination):
        kevin = self.kevin
        source, destination = kevin.check_address(source), kevin.check_address(destination)
        port = kevin.da_port(j)
        if source == destination:
            raise KevinParameterError('DA link %s -> itself on DA spine %d is a self-loop'
                                      % (address_str(source), j))
        if (j, source) in self.da_tx:
            raise DaPortBusyError('DA spine %d: %s already transmits to %s'
                                  % (j, address_str(source), address_str(self.da_tx[(j, source)])))
        if (j, destination) in self.da_rx:
            raise DaPortBusyError('DA spine %d: %s already receives from %s'
                                  % (j, address_str(destination),
                                     address_str(self.da_rx[(j, destination)])))
        self.tables[source].add_neighbour(port, destination)
        self.da_tx[(j, source)] = destination
        self.da_rx[(j, destination)] = source

    def remove_da_link(self, j, source):
        source = self.kevin.check_address(source)
        if (j, source) not in self.da_tx:
            raise KevinParameterError('DA spine %d has no link from %s' % (j, address_str(source)))
        destination = self.da_tx.pop((j, source))
        del self.da_rx[(j, destination)]
        self.tables[source].remove_neighbour(self.kevin.da_port(j))
        return destination

    def da_links(self):
        """[(DA spine, source, destination)] sorted."""
        return sorted((j, s, t) for (j, s), t in self.da_tx.items())

    def neighbour(self, tor, port):
        return self.tables[tor].neighbours[port]

    def paths(self, source, destination):
        """Every greedy ToR path (all choices within port groups); raises
        ValueError on a drop or on a path longer than d hops."""
        source = self.kevin.check_address(source)
        destination = self.kevin.check_address(destination)
        finished, frontier = [], [[source]]
        while frontier:
            path = frontier.pop()
            here = path[-1]
            if here == destination:
                finished.append(path)
                continue
            if len(path) > self.kevin.d:
                raise ValueError('greedy path %s -> %s exceeds d=%d hops: %s' % (
                    address_str(source), address_str(destination), self.kevin.d,
                    ' '.join(address_str(v) for v in path)))
            entry = self.tables[here].lookup(destination)
            if entry is None or entry.local:
                raise ValueError('%s -> %s dropped at %s' % (
                    address_str(source), address_str(destination), address_str(here)))
            for port in sorted(entry.ports):
                frontier.append(path + [self.neighbour(here, port)])
        return finished

    def path(self, source, destination):
        """The greedy ToR path taking the lowest port of every port group."""
        path = [source]
        while path[-1] != destination:
            entry = self.tables[path[-1]].lookup(destination)
            path.append(self.neighbour(path[-1], min(entry.ports)))
        return path

    def hops(self, source, destination):
        return len(self.path(source, destination)) - 1

    def walk_forwarder(self, choose=min):
        """``forward(switch, in_port, dst_ip)`` over the model for
        topologies.walk: ToRs look up their table (``choose`` picks within a
        port group), spines follow their circuits."""
        kevin = self.kevin
        host_mask = (1 << kevin.ip.host_bits) - 1

        def forward(switch, in_port, dst_ip):
            node = kevin.node(switch)
            if node.role == 'tor':
                here = node.coords
                destination = kevin.ip.tor_address(dst_ip)
                if destination is None:
                    return None
                if destination == here:
                    host = (ip_to_int(dst_ip) & host_mask) - 1
                    return kevin.host_port(host) if 0 <= host < kevin.hosts_per_tor else None
                entry = self.tables[here].lookup(destination)
                return None if entry is None or entry.local else choose(entry.ports)
            sender = kevin.addresses[in_port]
            spine = node.coords[0]
            if spine < kevin.k_s:
                receiver = kevin.static_matchings[spine][sender]
            else:
                receiver = self.da_tx.get((spine - kevin.k_s, sender))
                if receiver is None:
                    return None
            return index_of(receiver, kevin.k_s)
        return forward
