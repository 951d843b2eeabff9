"""What a set of flows gets if every link were shared max-min fairly (ideal
TCP with unbounded demand), on given paths: the model the flow classifier's
"never below two-level routing" guard and the bisection experiment's model
columns both use."""
import heapq


def path_links(topo, src, hops):
    """The directed links a flow from host ``src`` crosses, from its walk
    (topologies.walk)."""
    return {(src, hops[0][0])} | {(sw, topo.peer(sw, port)[0]) for sw, port in hops}


def max_min_rates(paths):
    """Each flow's max-min fair rate, flows on ``paths`` (sets of directed
    links, every link of capacity 1)."""
    users = {}  # link -> flows on it not yet frozen
    for i, path in enumerate(paths):
        for link in path:
            users.setdefault(link, set()).add(i)
    capacity = dict.fromkeys(users, 1.0)
    version = dict.fromkeys(users, 0)  # a heap entry is stale once its link changed
    heap = [(1.0 / len(flows), 0, link) for link, flows in users.items()]
    heapq.heapify(heap)
    rates = [0.0] * len(paths)
    while heap:  # water-filling: saturate the most shared link, freeze its flows
        rate, seen, bottleneck = heapq.heappop(heap)
        if seen != version[bottleneck] or not users[bottleneck]:
            continue
        changed = set()
        for i in sorted(users[bottleneck]):
            rates[i] = rate
            for link in paths[i]:
                capacity[link] -= rate
                users[link].discard(i)
                version[link] += 1
                changed.add(link)
        for link in changed:
            if users[link]:
                heapq.heappush(heap, (capacity[link] / len(users[link]), version[link], link))
    return rates


def max_min_share(paths):
    """% of ideal (every flow at link rate) that flows on ``paths`` get
    under max-min fair sharing (100 for no flows: nothing is lost)."""
    return 100.0 * sum(max_min_rates(paths)) / len(paths) if paths else 100.0
