"""Traffic patterns of the bisection-bandwidth experiment (Al-Fares et al.,
section 4) over a k-ary fat-tree's hosts, as pure functions.

Every pattern is a permutation without fixed points: each host sends one
flow to one other host and receives exactly one. Hosts are numbered in the
model's order (pod, lower switch, host ID):

  random                  a uniformly random such permutation
  stride-N                host x sends to host (x + N) mod n
  staggered-E-P           a host sends to a host under its own lower switch
                          with probability E, elsewhere in its pod with
                          probability P, to another pod otherwise
  interpod-incoming       flows from other pods into a pod are chosen so that
                          two-level routing sends them through the same core
                          switches (its inter-pod worst case)
  sameid-outgoing         the hosts under one lower switch all send to
                          hosts, in other pods, with one and the same host ID:
                          two-level routing gives them the same uplink

Random choices come from the ``random.Random`` passed in, so a seed
reproduces a run.
"""
import random
import re

LABELS = {'random': 'Random', 'interpod-incoming': 'Inter-pod Incoming',
          'sameid-outgoing': 'Same-ID Outgoing'}
# The paper's Table 2 rows, in its order.
PAPER_PATTERNS = ('random', 'stride-1', 'stride-2', 'stride-4', 'stride-8', 'staggered-1.0-0.0',
                  'staggered-0.5-0.3', 'staggered-0.2-0.3', 'interpod-incoming', 'sameid-outgoing')
MAX_TRIES = 1000


class PatternError(ValueError):
    pass


def label(name):
    """The paper's name of a pattern, e.g. Stride(4), Staggered Prob (0.5, 0.3)."""
    kind, args = _parse(name)
    if kind == 'stride':
        return 'Stride(%d)' % args[0]
    if kind == 'staggered':
        return 'Staggered Prob (%s, %s)' % tuple(name.split('-')[1:])
    return LABELS[kind]


def _parse(name):
    if name in LABELS:
        return name, ()
    match = re.fullmatch(r'stride-(\d+)', name)
    if match:
        return 'stride', (int(match.group(1)),)
    match = re.fullmatch(r'staggered-(\d*\.?\d+)-(\d*\.?\d+)', name)
    if match:
        edge_p, pod_p = float(match.group(1)), float(match.group(2))
        if edge_p + pod_p > 1 + 1e-9:
            raise PatternError('%s: EdgeP + PodP must be at most 1' % name)
        return 'staggered', (edge_p, pod_p)
    raise PatternError('unknown traffic pattern %r; patterns are: random, stride-N, '
                       'staggered-EDGEP-PODP, interpod-incoming, sameid-outgoing (the paper\'s: %s)'
                       % (name, ' '.join(PAPER_PATTERNS)))


def check(name, topo):
    """Raise PatternError if ``name`` is not a pattern usable on ``topo``."""
    kind, args = _parse(name)
    if kind == 'stride' and args[0] % len(topo.hosts) == 0:
        raise PatternError('%s: a stride that is a multiple of %d hosts sends hosts to themselves'
                           % (name, len(topo.hosts)))


def _place(topo, name):
    pod, z, host_id = topo.node(name).coords
    return pod, z, host_id - 2


# Up to this many hosts (k=16) a source's candidates are listed and shuffled
# whole, as every committed table was drawn; a k=48 fabric's 27,648 hosts
# would list 764 million, so larger fabrics draw each source's candidates
# lazily from shared pools (the same constraints, another random draw).
LISTED_HOSTS = 1024


def flows(name, topo, rng):
    """[(source host, destination host)] of pattern ``name`` on fat-tree
    ``topo``, one per host in host order."""
    check(name, topo)
    kind, args = _parse(name)
    hosts = [h.name for h in topo.hosts]
    n = len(hosts)
    if kind == 'stride':
        return [(hosts[x], hosts[(x + args[0]) % n]) for x in range(n)]
    place = {h: _place(topo, h) for h in hosts}
    draw_orders = _listed_orders if n <= LISTED_HOSTS else _lazy_orders
    for _ in range(MAX_TRIES):
        match = _matching(hosts, draw_orders(kind, args, hosts, place, topo.half, rng), rng)
        if match is not None:
            return [(s, match[s]) for s in hosts]
    raise PatternError('%s: no permutation found in %d draws' % (name, MAX_TRIES))


def _classes(kind, args, hosts, place, half, rng):
    """What each source may send to, as {source: (kind of destinations,
    the key that names them)}: the pattern's constraints, and its random
    choices (a staggered source's class, a lower switch's host ID), drawn
    once per try in host order."""
    if kind == 'random':
        return {s: ('any', None) for s in hosts}
    if kind == 'staggered':
        classes = {}
        for s in hosts:
            draw = rng.random()
            classes[s] = (('edge', place[s][:2]) if draw < args[0] else
                          ('pod', place[s][:2]) if draw < args[0] + args[1] else ('other-pod', place[s][0]))
        return classes
    if kind == 'interpod-incoming':
        # Two-level routing takes a flow from lower switch z to host-ID
        # offset d through aggregation (z + d) mod k/2 and that switch's
        # core (d + its index) mod k/2: with (z + d) mod k/2 = 0, the
        # destination's offset alone picks the core, the same one for
        # every flow into a pod's hosts of that offset.
        return {s: ('other-pod-offset', (place[s][0], -place[s][1] % half)) for s in hosts}
    # sameid-outgoing: each lower switch draws one destination host ID, balanced
    edges = sorted({place[h][:2] for h in hosts})
    offsets = [e % half for e in range(len(edges))]
    rng.shuffle(offsets)
    offset_of = dict(zip(edges, offsets))
    return {s: ('other-pod-offset', (place[s][0], offset_of[place[s][:2]])) for s in hosts}


def _allowed(kind_key, s, d, place):
    """Whether a source ``s`` of class ``kind_key`` may send to ``d``."""
    kind, key = kind_key
    if d == s:
        return False
    if kind == 'any':
        return True
    if kind == 'edge':
        return place[d][:2] == key
    if kind == 'pod':
        return place[d][0] == key[0] and place[d][1] != key[1]
    if kind == 'other-pod':
        return place[d][0] != key
    return place[d][0] != key[0] and place[d][2] == key[1]


def _listed_orders(kind, args, hosts, place, half, rng):
    """{source: every allowed destination, shuffled}."""
    classes = _classes(kind, args, hosts, place, half, rng)
    allowed = {s: sorted(d for d in hosts if _allowed(classes[s], s, d, place)) for s in hosts}
    return {s: rng.sample(dsts, len(dsts)) for s, dsts in allowed.items()}


def _lazy_orders(kind, args, hosts, place, half, rng):
    """{source: _LazyOrder of its allowed destinations}, drawn from lists
    each class's sources share (each holds every allowed destination and is
    filtered as it is drawn)."""
    lists = {}
    for d in hosts:
        pod, z, offset = place[d]
        for key in (('any', None), ('edge', (pod, z)), ('pod', pod), ('offset', offset)):
            lists.setdefault(key, []).append(d)

    def shared(kind_of, key):
        if kind_of in ('any', 'other-pod'):
            return lists['any', None]
        if kind_of == 'edge':
            return lists['edge', key]
        if kind_of == 'pod':
            return lists['pod', key[0]]
        return lists['offset', key[1]]  # other-pod-offset
    return {s: _LazyOrder(shared(*c), lambda d, s=s, c=c: _allowed(c, s, d, place), rng)
            for s, c in _classes(kind, args, hosts, place, half, rng).items()}


class _LazyOrder:
    """A source's candidates in a random order, drawn as they are asked for
    (a Fisher-Yates shuffle of a shared list, its swaps kept sparse)."""

    def __init__(self, pool, allowed, rng):
        self.pool, self.allowed, self.rng = pool, allowed, rng
        self.left, self.swaps, self.drawn = len(pool), {}, []

    def __getitem__(self, i):
        """The i-th allowed candidate (IndexError past the last)."""
        while len(self.drawn) <= i:
            if not self.left:
                raise IndexError(i)
            j = self.rng.randrange(self.left)
            self.left -= 1
            pick = self.swaps.get(j, j)
            self.swaps[j] = self.swaps.get(self.left, self.left)
            if self.allowed(self.pool[pick]):
                self.drawn.append(self.pool[pick])
        return self.drawn[i]


def _matching(sources, orders, rng):
    """A random perfect matching sources -> destinations, or None if there
    is none: Kuhn's augmenting paths, each source trying its candidates in
    ``orders`` (indexable, IndexError past the last), searched without
    recursion (the paths grow long on thousands of hosts)."""
    owner = {}
    for src in rng.sample(sources, len(sources)):
        seen, stack = set(), [[src, 0]]
        while stack:
            top = stack[-1]
            try:
                dst = orders[top[0]][top[1]]
            except IndexError:
                stack.pop()
                continue
            top[1] += 1
            if dst in seen:
                continue
            seen.add(dst)
            if dst in owner:  # try to move its owner on: remember the way down
                top[2:] = [dst]
                stack.append([owner[dst], 0])
                continue
            # a free destination: shift every owner on the path along it
            owner[dst] = top[0]
            for below in stack[:-1]:
                owner[below[2]] = below[0]
            break
        else:
            return None
    return {src: dst for dst, src in owner.items()}


def seeded(name, topo, seed):
    return flows(name, topo, random.Random('%s/%s' % (seed, name)))


# The workload experiment's choices of a new flow's destination
WORKLOAD_PATTERNS = ('all-to-all', 'permutation', 'inter-pod')


def peer_chooser(pattern, topo, seed):
    """f(host index, rng) -> the index of the host a new flow of ``host`` goes to."""
    hosts = [h.name for h in topo.hosts]
    if pattern == 'all-to-all':
        return lambda i, rng: (i + 1 + int(rng.integers(len(hosts) - 1))) % len(hosts)
    if pattern == 'inter-pod':
        others = [[j for j, h in enumerate(hosts) if topo.pod_of(h) != topo.pod_of(hosts[i])]
                  for i in range(len(hosts))]
        return lambda i, rng: others[i][int(rng.integers(len(others[i])))]
    if pattern == 'permutation':
        partner = {hosts.index(s): hosts.index(d) for s, d in seeded('random', topo, seed)}
        return lambda i, rng: partner[i]
    raise ValueError('unknown pattern %r; patterns: %s' % (pattern, ', '.join(WORKLOAD_PATTERNS)))
