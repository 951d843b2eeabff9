"""What two-level routing allows a set of flows if every link were shared
max-min fairly (ideal TCP): the model beside the bisection experiment's
measured two-level column, which shows TCP's own losses against it."""
from controller.fattree.twolevel import all_tables
from topologies.walk import walk


def two_level_fair_share(topo, pairs):
    """% of ideal (every flow at link rate) that the (source, destination)
    host ``pairs`` get on their two-level paths under max-min fair sharing."""
    tables = all_tables(topo)
    paths = []
    for src, dst in pairs:
        hops = walk(topo, lambda switch, _, ip: tables[switch].lookup(ip), src, dst)
        paths.append({(src, hops[0][0])} | {(sw, topo.peer(sw, port)[0]) for sw, port in hops})
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
