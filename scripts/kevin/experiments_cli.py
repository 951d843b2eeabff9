"""Kevin experiments.

  python -m scripts.kevin.experiments_cli emulation [--n 8 --k-s 2 --k-d 1] [--bw 10]
          [--duration 20] [--elephants 3 | --pairs 000:100 ...] [--mice 8]
          [--schemes none bfs greedy distda] [--seeds 1 2 3 | --reps 3 --seed-base 1]
      Emulated fabric (Mininet + the Ryu apps), one fresh fabric per scheme
      and seed: a skewed workload of a few elephant ToR pairs (long iperf3
      TCP flows between the ToRs' first hosts) plus background mice (ping
      streams of 1000-byte packets at 5/s between random ToR pairs' second
      hosts, drawn with the repetition's seed, far below the DA threshold).
      Reported per scheme: the ToRs on each elephant's path read from the
      TTL that ping sees before the elephants start and after they end (DA
      links are never torn down proactively, so they are still in place),
      the same probed once a second during the run, the time from elephant
      start until its DA links were in its source's table (controller REST
      /kevin/state), iperf3 throughput over the whole run and its second
      half, the mice's RTT and loss, the CPU (machine busy %, ovs-vswitchd,
      load average) during the run and, for DistDA, its
      PortRequest/Approve/Decline/Release counts.
      Default elephants (--elephants N): N pairs of maximal static path
      length with distinct sources and distinct destinations whose static
      greedy paths all cross one directed ToR link: the hot spot DA links are
      meant to relieve (a k_d = 1 fabric can give each its own link).

  python -m scripts.kevin.experiments_cli report results/kevin/emulation.json
      The README's Markdown table of a finished emulation run.

  python -m scripts.kevin.experiments_cli model [--n 64 256] [--loads ...]
          [--seeds 0 1 2 | --reps 3 --seed-base 0]
      Pure model at scale (scripts.kevin.model_experiment): average
      ToR-to-ToR path length versus load for static de Bruijn, Kevin with
      BFS-DA-links and Greedy-DA-links, and a static expander of the same
      degree.

Results go to results/kevin/ as JSON, CSV and a PNG plot
(model_path_length.*, emulation.*), with the seeds they were made with.
Modules: model_experiment, workload, emulation_run, emulation_stats,
report, commands (dcfabric kevin cli|tables).
"""
import argparse
import json
import os
import sys

from scripts.argtypes import add_seed_options, positive, seeds_of
from scripts.kevin import model_experiment
from scripts.kevin.commands import cmd_cli, cmd_tables
from scripts.kevin.emulation_run import SCHEMES, MICE_BYTES, MICE_INTERVAL_S, run_scheme, scheme_setup
from scripts.kevin.emulation_stats import summarise
from scripts.kevin.report import write_emulation, write_model
from scripts.kevin.workload import mice_pairs, parse_pairs, pick_elephants
from topologies.kevin import Kevin, KevinParameterError, address_str

DEFAULT_OUT = os.path.join('results', 'kevin')


def cmd_model(args):
    seeds = seeds_of(args)
    results = model_experiment.run_model(args.n, args.loads, seeds)
    table = model_experiment.means(results, args.n, args.loads)
    write_model(args.out, model_experiment.__doc__.split('Workload ')[1].strip(), seeds, results, table,
                model_experiment.SCHEMES, args.n)


def _pairs_text(pairs):
    return ['%s:%s' % (address_str(s), address_str(t)) for s, t in pairs]


def cmd_emulation(args):
    from scripts.emulator.progress import progress
    seeds = seeds_of(args)
    kevin = Kevin(args.n, args.k_s, args.k_d, hosts_per_tor=args.hosts)
    for scheme in args.schemes:
        scheme_setup(scheme, args)
    elephants = parse_pairs(kevin, args.pairs) if args.pairs else pick_elephants(kevin, args.elephants)
    mice = {seed: mice_pairs(kevin, args.mice, seed) for seed in seeds}
    progress('%s, %d Mbit/s links, elephants %s, %d mice; seeds %s; machine load %.1f (%d CPUs)'
             % (kevin.name, args.bw, ' '.join(_pairs_text(elephants)), args.mice,
                ' '.join(map(str, seeds)), os.getloadavg()[0], os.cpu_count()))
    runs = []
    for rep, seed in enumerate(seeds):
        for scheme in args.schemes:
            progress('run %d/%d: %s, seed %d' % (rep * len(args.schemes) + args.schemes.index(scheme) + 1,
                                                 len(seeds) * len(args.schemes), scheme, seed))
            runs.append(run_scheme(scheme, rep, seed, args, kevin, elephants, mice[seed]))
    rows = [summarise(runs, scheme) for scheme in args.schemes]
    config = {k: v for k, v in vars(args).items() if k not in ('func', 'seed_defaults')}
    config.update(seeds=seeds, fabric=kevin.name, elephants=_pairs_text(elephants),
                  mice={seed: _pairs_text(pairs) for seed, pairs in mice.items()},
                  mice_ping_interval_s=MICE_INTERVAL_S, mice_ping_bytes=MICE_BYTES)
    write_emulation(args.out, config, rows, runs)


# -- dcfabric kevin ... (scripts.cli) -------------------------------------------

def fabric_options(p, hosts=1, hosts_help=''):
    p.add_argument('--n', type=int, default=8, help='ToRs, a power of k_s (default 8)')
    p.add_argument('--k-s', type=int, default=2, help='static spines = de Bruijn degree (default 2)')
    p.add_argument('--k-d', type=int, default=1, help='demand-aware spines (default 1)')
    if hosts is not None:
        p.add_argument('--hosts', type=int, default=hosts,
                       help='hosts per ToR (default %d)%s' % (hosts, hosts_help and ': ' + hosts_help))


def timing_options(p):
    p.add_argument('--period', type=float, default=1.0,
                   help='scheduling / DistDA counter polling period rho, s (default 1)')
    p.add_argument('--delta', type=float, default=1.0, help='reconfiguration delay, s (default 1)')
    p.add_argument('--reservation', type=float, default=30.0, help='reservation r, s (default 30)')
    p.add_argument('--threshold', type=float, default=100e3,
                   help='elephant threshold, bytes/s (default 100000)')
    p.add_argument('--request-timeout', type=float, default=1.0,
                   help='DistDA: give up an unanswered PortRequest after this long (default 1 s)')


def add_cli_arguments(parser):
    """``dcfabric kevin cli|tables``: scripts.cli hands its ``kevin`` parser
    here, and adds the experiments to the subparsers returned."""
    sub = parser.add_subparsers(dest='kevin_command', required=True)
    p = sub.add_parser('cli', help="start a Kevin fabric with its controller and open Mininet's CLI")
    fabric_options(p)
    p.add_argument('--scheduler', choices=SCHEMES, default='none',
                   help='DA links: none (static de Bruijn), bfs (Algorithm 2), greedy '
                        '(Algorithm 3), distda (Algorithm 4, controller.kevin.distda_app)')
    timing_options(p)
    p.add_argument('--bw', type=positive(float), help='shape every link to BW Mbit/s (HTB)')
    p.add_argument('--ofp-port', type=int, default=6653, help='OpenFlow port on 127.0.0.1')
    p.add_argument('--rest-port', type=int, default=8080, help='REST port on 127.0.0.1')
    p.set_defaults(func=cmd_cli)
    p = sub.add_parser('tables', help="every ToR's greedy LPM table (Algorithm 1 + reduce) "
                                      'and its size against the bound')
    fabric_options(p, hosts=None)
    p.add_argument('--tor', help='one ToR by address, e.g. 011')
    p.add_argument('--da', nargs='+', metavar='SRC:DST[:SPINE]',
                   help='add DA links first, e.g. 011:100 (the seed\'s Figure 4)')
    p.set_defaults(func=cmd_tables)
    return sub


def cmd_report(args):
    from scripts.kevin.report import markdown_emulation
    with open(args.json) as f:
        print(markdown_emulation(json.load(f)['summary']))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    model = sub.add_parser('model', help='pure-model path length vs load against an expander')
    model.add_argument('--n', type=int, nargs='+', default=[64, 256])
    model.add_argument('--loads', type=float, nargs='+',
                       default=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0])
    add_seed_options(model, reps=3, seed_base=0, per='expander and pair draw')
    model.add_argument('--out', default=DEFAULT_OUT)
    model.set_defaults(func=cmd_model)
    emu = sub.add_parser('emulation', help='emulated skewed workload: no DA links, BFS, Greedy, '
                                           'DistDA side by side (root, Open vSwitch)')
    fabric_options(emu, hosts=2, hosts_help='elephants use the first, mice the second')
    emu.add_argument('--bw', type=positive(float), default=10, help='link rate, Mbit/s (default 10)')
    emu.add_argument('--queue', type=positive(int), default=50,
                     help='packets each shaped link may queue (default 50)')
    emu.add_argument('--duration', type=positive(int), default=20,
                     help='elephant iperf3 seconds (default 20)')
    emu.add_argument('--elephants', type=positive(int), default=3,
                     help='number of elephants picked as the module help says (default 3)')
    emu.add_argument('--pairs', nargs='+', metavar='SRC:DST',
                     help='elephant ToR pairs instead, e.g. 011:001 110:010')
    emu.add_argument('--mice', type=int, default=8, help='mouse ping streams (default 8)')
    emu.add_argument('--schemes', nargs='+', choices=SCHEMES, default=list(SCHEMES))
    timing_options(emu)
    add_seed_options(emu, reps=1, seed_base=1, per='repetition of every scheme (its mice pairs)')
    emu.add_argument('--out', default=DEFAULT_OUT)
    emu.set_defaults(func=cmd_emulation)
    report = sub.add_parser('report', help="no run: the README's Markdown table of a finished emulation run")
    report.add_argument('json', metavar='EMULATION_JSON')
    report.set_defaults(func=cmd_report)
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (KevinParameterError, ValueError) as err:
        parser.error(str(err))
    except KeyboardInterrupt:
        from scripts.emulator import run_record
        sys.exit('kevin_experiment: interrupted; %s' % run_record.teardown_state())


if __name__ == '__main__':
    main()
