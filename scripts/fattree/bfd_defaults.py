"""The BFD a fat-tree gets by default, per k: the Open vSwitch instances its
switches are spread over (scripts/emulator/ovs/instances.py), the sessions each
daemon runs, the interval within each daemon's packet budget
(scripts/emulator/bfd/policy.py) and the detection time. Pure computation, no root.

    python -m scripts.fattree.bfd_defaults [--k 4 6 8 16] [--out results/fattree]

Writes bfd_defaults.json and prints the README's Markdown table.
"""
import argparse
import json
import os

from scripts.fattree.bfd_defaults_report import markdown
from scripts.emulator.bfd import policy as bfd_policy
from scripts.emulator.ovs import daemon_policy, instances as ovs_instances
from scripts.argtypes import fattree_k
from topologies.fattree import FatTree


def defaults(k):
    topo = FatTree(k)
    daemons = daemon_policy.choose_for(topo).count  # unshaped: by switch ports, on any machine
    placement = ovs_instances.placement(daemon_policy.switch_ports(topo), daemons)
    sessions = [0] * daemons
    for link in topo.switch_links():
        sessions[placement[link.node_a]] += 1
        sessions[placement[link.node_b]] += 1
    links = len(topo.switch_links())
    interval = bfd_policy.default_interval(links, daemons)
    return {'k': k, 'switch_links': links, 'ovs_instances': daemons, 'sessions_per_instance': max(sessions),
            'interval_ms': interval,
            'bfd_packets_per_s': round(bfd_policy.bfd_packets_per_s(links, interval)) if interval else 0,
            'detection_ms': bfd_policy.detection_ms(interval) if interval else None}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=fattree_k, nargs='+', default=[4, 6, 8, 16])
    parser.add_argument('--out', default='results/fattree')
    args = parser.parse_args(argv)
    rows = [defaults(k) for k in args.k]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'bfd_defaults.json'), 'w') as f:
        json.dump(rows, f, indent=1)
    print(markdown(rows))


if __name__ == '__main__':
    main()
