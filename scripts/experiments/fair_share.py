"""Two-level routing's max-min fair share (controller.fattree.fair_share):
the model beside the bisection experiment's measured columns, which shows
TCP's own losses against it."""
from controller.fattree.fair_share import max_min_share, path_links
from controller.fattree.twolevel import all_tables
from topologies.walk import walk


def two_level_fair_share(topo, pairs, tables=None):
    """max_min_share of the (source, destination) host ``pairs`` on their
    two-level paths; ``tables``: all_tables(topo), when already computed
    (a k=48 fabric's take seconds)."""
    tables = tables if tables is not None else all_tables(topo)
    return max_min_share([path_links(topo, src, walk(topo, lambda sw, _, ip: tables[sw].lookup(ip), src, dst))
                          for src, dst in pairs])
