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


def _matching(sources, allowed, rng):
    """A random perfect matching sources -> destinations (Kuhn's augmenting
    paths over shuffled candidate lists), or None if there is none."""
    owner = {}

    def augment(src, seen):
        for dst in allowed[src]:
            if dst not in seen:
                seen.add(dst)
                if dst not in owner or augment(owner[dst], seen):
                    owner[dst] = src
                    return True
        return False

    allowed = {src: rng.sample(sorted(dsts), len(dsts)) for src, dsts in allowed.items()}
    for src in rng.sample(sources, len(sources)):
        if not augment(src, set()):
            return None
    return {src: dst for dst, src in owner.items()}


def _place(topo, name):
    pod, z, host_id = topo.node(name).coords
    return pod, z, host_id - 2


def flows(name, topo, rng):
    """[(source host, destination host)] of pattern ``name`` on fat-tree
    ``topo``, one per host in host order."""
    check(name, topo)
    kind, args = _parse(name)
    hosts = [h.name for h in topo.hosts]
    n, half = len(hosts), topo.half
    place = {h: _place(topo, h) for h in hosts}
    if kind == 'stride':
        return [(hosts[x], hosts[(x + args[0]) % n]) for x in range(n)]
    for _ in range(MAX_TRIES):
        if kind == 'random':
            allowed = {s: {d for d in hosts if d != s} for s in hosts}
        elif kind == 'staggered':
            allowed = {}
            for s in hosts:
                draw = rng.random()
                same_edge = draw < args[0]
                same_pod = not same_edge and draw < args[0] + args[1]
                allowed[s] = {d for d in hosts if d != s and (
                    place[d][:2] == place[s][:2] if same_edge else
                    place[d][0] == place[s][0] and place[d][1] != place[s][1] if same_pod else
                    place[d][0] != place[s][0])}
        elif kind == 'interpod-incoming':
            # Two-level routing takes a flow from lower switch z to host-ID
            # offset d through aggregation (z + d) mod k/2 and that switch's
            # core (d + its index) mod k/2: with (z + d) mod k/2 = 0, the
            # destination's offset alone picks the core, the same one for
            # every flow into a pod's hosts of that offset.
            allowed = {s: {d for d in hosts if place[d][0] != place[s][0]
                           and (place[s][1] + place[d][2]) % half == 0} for s in hosts}
        else:  # sameid-outgoing: each lower switch draws one destination host ID, balanced
            edges = sorted({place[h][:2] for h in hosts})
            offsets = [e % half for e in range(len(edges))]
            rng.shuffle(offsets)
            offset_of = dict(zip(edges, offsets))
            allowed = {s: {d for d in hosts if place[d][0] != place[s][0]
                           and place[d][2] == offset_of[place[s][:2]]} for s in hosts}
        match = _matching(hosts, allowed, rng)
        if match is not None:
            return [(s, match[s]) for s in hosts]
    raise PatternError('%s: no permutation found in %d draws' % (name, MAX_TRIES))


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
