"""The emulated Kevin experiment's workload, as pure choices over the model:
elephant ToR pairs (picked on the static hot spot, or given) and the mice's
random ToR pairs."""
from collections import defaultdict
import random

from controller.kevin.routing import KevinRouting
from topologies.kevin import KevinParameterError


def pick_elephants(kevin, count):
    """``count`` or fewer ToR pairs of maximal static greedy path length,
    distinct sources and distinct destinations, whose static paths all cross
    the same directed ToR link (the link that gathers the most such pairs)."""
    routing = KevinRouting(kevin)
    longest = max(routing.hops(s, t) for s in kevin.addresses for t in kevin.addresses)
    through = defaultdict(list)
    for s in kevin.addresses:
        for t in kevin.addresses:
            if s != t and routing.hops(s, t) == longest:
                path = routing.path(s, t)
                for link in zip(path, path[1:]):
                    through[link].append((s, t))

    def disjoint(pairs):
        chosen = []
        for s, t in sorted(pairs):
            if len(chosen) < count and all(s != a and t != b for a, b in chosen):
                chosen.append((s, t))
        return chosen

    return max((disjoint(through[link]) for link in sorted(through)), key=len)


def parse_pairs(kevin, texts):
    pairs = []
    for text in texts:
        source, sep, destination = text.partition(':')
        if not sep:
            raise KevinParameterError('an elephant is SOURCE:DESTINATION ToR addresses, e.g. 011:001; '
                                      'got %r' % text)
        pair = (kevin.parse(source), kevin.parse(destination))
        if pair[0] == pair[1]:
            raise KevinParameterError('elephant %s goes nowhere' % text)
        pairs.append(pair)
    if len(set(pairs)) != len(pairs):
        raise KevinParameterError('elephant pairs repeat: %s' % ' '.join(texts))
    return pairs


def mice_pairs(kevin, count, seed):
    """``count`` distinct ordered ToR pairs drawn with ``seed``."""
    all_pairs = [(s, t) for s in kevin.addresses for t in kevin.addresses if s != t]
    return random.Random(seed).sample(all_pairs, min(count, len(all_pairs)))
