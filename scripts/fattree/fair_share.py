"""What a set of flows gets if every link were shared max-min fairly (ideal
TCP), on the paths a routing scheme gives them: the model beside the
bisection experiment's measured columns, which shows TCP's own losses
against it."""
from controller.fattree.twolevel import all_tables
from topologies.walk import walk


def path_links(topo, src, hops):
    """The directed links a flow from host ``src`` crosses, from its walk."""
    return {(src, hops[0][0])} | {(sw, topo.peer(sw, port)[0]) for sw, port in hops}


def max_min_share(paths):
    """% of ideal (every flow at link rate) that flows on ``paths`` (sets of
    directed links, every link of capacity 1) get under max-min fair sharing."""
    capacity = {link: 1.0 for path in paths for link in path}
    rates, active = [0.0] * len(paths), set(range(len(paths)))
    while active:  # water-filling: saturate the most shared link, freeze its flows
        share = {}
        for link, left in capacity.items():
            users = [i for i in active if link in paths[i]]
            if users:
                share[link] = (left / len(users), users)
        bottleneck = min(share, key=lambda link: share[link][0])
        rate, users = share[bottleneck]
        for i in users:
            rates[i] = rate
            active.discard(i)
            for link in paths[i]:
                capacity[link] -= rate
    return 100.0 * sum(rates) / len(paths)


def two_level_fair_share(topo, pairs):
    """max_min_share of the (source, destination) host ``pairs`` on their
    two-level paths."""
    tables = all_tables(topo)
    return max_min_share([path_links(topo, src, walk(topo, lambda sw, _, ip: tables[sw].lookup(ip), src, dst))
                          for src, dst in pairs])
