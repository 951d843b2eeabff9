"""How many ovs-vswitchd daemons a fabric gets: one policy, from the
machine's cores, the forwarding one daemon carries faithfully here (the
machine's calibration, scripts/emulator/calibration.py) and the fabric (its
size, and its link rate when shaped), that every fabric command prints with
its reason; ``--ovs-instances N`` overrides it. Pure but for
``machine_cores`` and ``choose_for`` without ``per_daemon_mbps`` (which
reads the calibration, measuring it once if this machine has none).

What it rests on (measured, docs/emulator.md):

* One daemon forwards every packet of its switches with one thread: on a
  2-core Intel Xeon about 1.3-1.45 Gbit/s of shaped traffic summed over its
  switches' hops, on other CPUs more or less; the calibration measures it.
* A permutation of long flows at link rate R needs hosts x R x (mean switch
  hops of a flow) of that forwarding: a k=4 fat-tree 16 x R x 4.5.
* On 16 cores, k=4, 4 daemons were faithful at 50 Mbit/s (3,580 Mbit/s of
  forwarding, 895 each) and 8 at 100 Mbit/s (7,150, 895 each), where one
  daemon limited every run; a quiet 2-core AMD EPYC's daemon dropped packets
  at 40% of what its thread forwards: a daemon is given a share of that
  (calibration.FAITHFUL_SHARE), ``per_daemon_mbps``.
* The hosts need cores too: on 2 cores two private daemons' poll loops
  left the machine 0-5% idle even at 5 Mbit/s, while one (the machine's)
  left it 40% idle and was faithful at 10 Mbit/s. Daemons get at most half
  the cores (``CORES_PER_DAEMON``); one daemon is the machine's own.
* Unshaped links carry what the daemons can: there the count follows the
  switch ports a daemon holds (its start-up and teardown work grows with
  them: ``by_switch_ports``), on any machine.
"""
import math
import os
from collections import namedtuple

# Ports one daemon holds (k=16 on four; results/fattree/ovs_port_cost.json: adding
# and removing grow about fourfold for twice the ports).
PORTS_PER_INSTANCE = 1280
MAX_INSTANCES = 16
CORES_PER_DAEMON = 2
# switches whose hops are counted from when averaging a flow's hops (every
# one in a fat-tree up to k=16; beyond, an evenly spaced sample)
HOP_SOURCES = 128

DaemonChoice = namedtuple('DaemonChoice', 'count reason')


def machine_cores():
    """The cores this process may run on (its affinity: a cpuset's, not the machine's)."""
    return len(os.sched_getaffinity(0))


def switch_ports(model):
    """{switch: its port count}, in the model's order."""
    return {switch.name: len(model.ports(switch.name)) for switch in model.switches}


def by_switch_ports(ports):
    """Daemons for a fabric whose switches have ``ports`` ports in all."""
    return max(1, min(MAX_INSTANCES, math.ceil(ports / PORTS_PER_INSTANCE)))


def asked(count):
    return DaemonChoice(count, 'as asked (--ovs-instances %d)' % count)


def switch_hops(model):
    """[(switches a flow crosses, host pairs that cross that many)] between
    the hosts of ``model`` (shortest paths, every ordered pair of hosts on
    distinct switches or not), from at most HOP_SOURCES source switches,
    evenly spaced."""
    hosts_on = {}
    for host in model.hosts:
        switch, _ = model.host_attachment(host.name)
        hosts_on[switch] = hosts_on.get(switch, 0) + 1
    neighbours = {switch.name: [] for switch in model.switches}
    for link in model.switch_links():
        neighbours[link.node_a].append(link.node_b)
        neighbours[link.node_b].append(link.node_a)
    sources = sorted(hosts_on)
    step = max(1, len(sources) // HOP_SOURCES)
    crossings = []
    for source in sources[::step]:
        switches_crossed = {source: 1}
        frontier = [source]
        while frontier:
            following = []
            for switch in frontier:
                for neighbour in neighbours[switch]:
                    if neighbour not in switches_crossed:
                        switches_crossed[neighbour] = switches_crossed[switch] + 1
                        following.append(neighbour)
            frontier = following
        for destination, count in hosts_on.items():
            if destination in switches_crossed:
                others = count - 1 if destination == source else count
                if others:
                    crossings.append((switches_crossed[destination], hosts_on[source] * others))
    return crossings


def mean_switch_hops(model):
    """The mean number of switches a flow between two hosts of ``model``
    crosses: 67/15 in a k=4 fat-tree."""
    crossings = switch_hops(model)
    pairs = sum(count for _, count in crossings)
    return sum(hops * count for hops, count in crossings) / pairs if pairs else 1.0


def longest_switch_path(model):
    """The most switches a flow between two hosts of ``model`` crosses: 5 in a fat-tree."""
    return max((hops for hops, _ in switch_hops(model)), default=1)


def choose(cores, switch_ports, switches, hosts=0, hops=1.0, bw=None, per_daemon_mbps=None):
    """The daemons for a fabric of ``switches`` switches with
    ``switch_ports`` ports in all, on ``cores`` cores; with ``bw`` (shaped
    links, Mbit/s) its ``hosts`` each sending at ``bw`` over ``hops``
    switches on average, each daemon forwarding ``per_daemon_mbps``
    faithfully. A DaemonChoice (pure)."""
    by_ports = by_switch_ports(switch_ports)
    if not bw:
        count = min(by_ports, switches)
        return DaemonChoice(count, 'unshaped links: one daemon per {:,} switch ports, {:,} here'.format(
            PORTS_PER_INSTANCE, switch_ports))
    demand = hosts * bw * hops
    needed = max(1, math.ceil(demand / per_daemon_mbps))
    room = max(1, cores // CORES_PER_DAEMON)
    count = min(switches, max(by_ports, min(needed, room)))
    reason = ('a permutation at %g Mbit/s needs {:,} hosts x %g x %.1f switch hops = {:,} Mbit/s of '
              'forwarding, %d daemon%s at %d Mbit/s each' % (bw, bw, hops, needed, 's' if needed > 1 else '',
                                                             per_daemon_mbps)).format(hosts, round(demand))
    if needed > room:
        reason += ('; %d cores leave room for %d (the hosts need the other half): runs at this rate may be '
                   'limited by the emulator' % (cores, room))
    else:
        reason += '; %d cores leave room for %d' % (cores, room)
    if by_ports > min(needed, room):
        reason += '; {:,} switch ports need {}'.format(switch_ports, by_ports)
    return DaemonChoice(count, reason)


def choose_for(model, bw=None, ovs_instances=None, cores=None, per_daemon_mbps=None):
    """``ovs_instances`` (asked for) or the policy's choice for ``model`` on
    this machine (``cores``: this process's unless given; ``per_daemon_mbps``:
    this machine's calibration's unless given, read only for shaped links)."""
    if ovs_instances is not None:
        return asked(ovs_instances)
    if bw and per_daemon_mbps is None:
        from scripts.emulator import calibration
        per_daemon_mbps = calibration.current().faithful_mbps_per_daemon
    ports = switch_ports(model)
    return choose(machine_cores() if cores is None else cores, sum(ports.values()), len(ports),
                  len(model.hosts), mean_switch_hops(model) if bw else 1.0, bw, per_daemon_mbps)


def describe(choice):
    """The line a fabric command prints at start."""
    where = ("the machine's own" if choice.count == 1 else 'private, each in a network namespace of its own')
    return 'ovs-vswitchd daemons: %d, %s (%s)' % (choice.count, where, choice.reason)
