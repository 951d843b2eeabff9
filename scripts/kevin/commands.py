"""``dcfabric kevin cli|tables``: a Kevin fabric with its controller and
Mininet's CLI, and every ToR's greedy LPM table against its bound."""
from controller.kevin.routing import KevinRouting
from scripts.kevin.emulation_run import scheme_setup
from topologies.kevin import Kevin, KevinParameterError, address_str


def cmd_cli(args):
    from mininet.cli import CLI
    from scripts.emulator.fabric import Fabric
    app, params = scheme_setup(args.scheduler, args)
    kevin = Kevin(args.n, args.k_s, args.k_d, hosts_per_tor=args.hosts)
    with Fabric(kevin, app, params, ofp_port=args.ofp_port, rest_port=args.rest_port, bw=args.bw,
                log_level='info') as fabric:
        print('%s with %s (%s); controller log %s; state: curl http://127.0.0.1:%d/kevin/state'
              % (kevin.name, app, args.scheduler, fabric.controller.log_path, args.rest_port))
        CLI(fabric.net)


def cmd_tables(args):
    kevin = Kevin(args.n, args.k_s, args.k_d)
    routing = KevinRouting(kevin)
    for text in args.da or ():
        parts = text.split(':')
        spine = parts[2] if len(parts) == 3 else '0'
        if len(parts) not in (2, 3) or not spine.isdigit():
            raise KevinParameterError('a DA link is SRC:DST or SRC:DST:SPINE, e.g. 011:100; got %r'
                                      % text)
        routing.add_da_link(int(spine), kevin.parse(parts[0]), kevin.parse(parts[1]))
    tors = [kevin.parse(args.tor)] if args.tor else kevin.addresses
    for v in tors:
        table = routing.tables[v]
        print(table.format())
        print('  %d routing entries; bound (ports x d) %d x %d = %d\n'
              % (table.size(), len(table.neighbours), kevin.d, table.bound()))
    worst = max(tors, key=lambda v: routing.tables[v].size())
    ports = {p: address_str(w) for p, w in routing.tables[worst].neighbours.items()}
    print('largest table: ToR %s, %d entries <= bound %d (ports -> neighbours: %s)'
          % (address_str(worst), routing.tables[worst].size(), routing.tables[worst].bound(), ports))
