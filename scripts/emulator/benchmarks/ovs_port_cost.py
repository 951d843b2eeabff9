"""What one userspace ovs-vswitchd takes to add and remove many ports: the
reason large fabrics are spread over several (scripts/emulator/ovs/instances.py).

For each size, N veth pairs (both ends ports, 16 per bridge, as switch
ports are) go into the machine's Open vSwitch in one OVSDB transaction;
timed until ovs-vswitchd has applied it, then the bridges are deleted in
one transaction and timed the same way. Run as root, under the emulation
lock, with no fabric running.

    python -m scripts.emulator.benchmarks.ovs_port_cost [--ports 640 1280 2560] [--out results/fattree]
    python -m scripts.emulator.benchmarks.ovs_port_cost --report [--out results/fattree]

Writes ovs_port_cost.json; --report prints it as the README's table.
"""
import argparse
import json
import os
import subprocess
import time

from scripts.emulator.ovs import ovsdb
from scripts.emulator.progress import progress

PORTS_PER_BRIDGE = 16


def veths(names, add):
    pairs = zip(names[::2], names[1::2])
    lines = (['link add %s type veth peer name %s\nlink set %s up\nlink set %s up' % (a, b, a, b) for a, b in pairs]
             if add else ['link del %s' % a for a, _ in pairs])
    subprocess.run(['ip', '-force', '-batch', '-'], input='\n'.join(lines) + '\n', text=True, check=add,
                   capture_output=True, timeout=600)


def measure(ports):
    bridges = [ovsdb.Bridge(name='pcb%d' % b, datapath_type='netdev', fail_mode='secure', protocols=['OpenFlow13'],
                            other_config={}, controllers=[], max_backoff=None,
                            ports=[('pc%d_%d' % (b, p), p + 1, {}) for p in range(PORTS_PER_BRIDGE)])
               for b in range(ports // PORTS_PER_BRIDGE)]
    names = [name for bridge in bridges for name, _, _ in bridge.ports]
    veths(names, add=True)
    try:
        started = time.monotonic()
        ovsdb.add_bridges(bridges)
        ovsdb.wait_applied(1200)
        added = time.monotonic() - started
        started = time.monotonic()
        ovsdb.delete_bridges([bridge.name for bridge in bridges])
        ovsdb.wait_applied(1200)
        removed = time.monotonic() - started
    finally:
        ovsdb.delete_bridges([bridge.name for bridge in bridges])
        veths(names, add=False)
    return {'ports': ports, 'bridges': len(bridges), 'add_s': round(added, 2), 'remove_s': round(removed, 2)}


def markdown(rows):
    return '\n'.join(['| ports (bridges of 16) | added in (s) | removed in (s) |', '|---|---|---|'] + [
        '| {:,} ({}) | {:.1f} | {:.1f} |'.format(r['ports'], r['bridges'], r['add_s'], r['remove_s']) for r in rows])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--ports', type=int, nargs='+', default=[640, 1280, 2560])
    parser.add_argument('--out', default='results/fattree')
    parser.add_argument('--report', action='store_true', help='print the table of the last run')
    args = parser.parse_args(argv)
    path = os.path.join(args.out, 'ovs_port_cost.json')
    if args.report:
        with open(path) as f:
            print(markdown(json.load(f)))
        return
    ovsdb.wait_applied(1200)  # earlier work of the daemon is not this measurement's
    rows = []
    for ports in args.ports:
        progress('%d ports' % ports)
        rows.append(measure(ports))
        print('%(ports)d ports on %(bridges)d bridges: added in %(add_s).1f s, removed in %(remove_s).1f s'
              % rows[-1], flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(path, 'w') as f:
        json.dump(rows, f, indent=1)
    print(markdown(rows))


if __name__ == '__main__':
    main()
