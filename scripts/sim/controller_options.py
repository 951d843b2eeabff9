"""The options the bisection and the workload experiment share for the
simulated controller and hosts (``--backend sim``): the control delay, the
hosts' minimum RTO and send queues, and the dynamic schemes' polling
period. The emulator's controller and hosts run in real time with their
own, so it refuses them."""
from controller.fattree.scheme_parameters import DEFAULTS as SCHEME_DEFAULTS, timers_for_period
from scripts.argtypes import positive
from scripts.sim.controller_loop import CONTROL_DELAY_S
from scripts.sim.scenario import LINUX_MIN_RTO_MS, SENDER_QUEUES, SimSettings


def add_arguments(p):
    p.add_argument('--control-delay', type=float, default=None, metavar='MS',
                   help='sim: ms from a poll or packet-in to its flow-mods taking effect (stats reply or '
                        'packet-in, flow-mods, packet-out on a control channel; default %g)'
                        % (CONTROL_DELAY_S * 1e3))
    p.add_argument('--min-rto', type=float, default=None, metavar='MS',
                   help='sim: the hosts\' minimum TCP retransmission timeout (default %g, Linux\'s, as the '
                        'emulator\'s hosts; datacenter hosts tuned for microsecond RTTs use 1-10)' % LINUX_MIN_RTO_MS)
    p.add_argument('--sender-queue', choices=SENDER_QUEUES, default=None,
                   help='sim: the hosts\' own device queues: fq (default; as Linux leaves a sender\'s queue: '
                        'never dropping, its flows served in turn) or drop-tail (ns-3\'s: --queue packets, '
                        'dropping what the hosts\' TCP is not told of)')
    p.add_argument('--period', type=positive(float), default=None, metavar='S',
                   help='sim: seconds between the dynamic schemes\' counter polls and rounds (default the '
                        'app\'s, %g)' % SCHEME_DEFAULTS['period'])


def refuse_on_emulator(args, *others):
    """ValueError naming the first simulator option given to the emulator,
    of the shared ones and ``others`` [(option, value)] (None: not given)."""
    for option, value in (('--control-delay', args.control_delay), ('--min-rto', args.min_rto),
                          ('--period', args.period), ('--sender-queue', args.sender_queue), *others):
        if value is not None:
            raise ValueError('%s is the simulator\'s (--backend sim); the emulator\'s controller and hosts '
                             'run in real time with their own' % option)


def config(args):
    """The shared options' config entries for a simulated run (the period
    only when given: without it the schemes keep the app's), and the
    schemes' timers that follow the period (scheme_parameters.
    timers_for_period, as the simulator's controller applies them), in
    seconds; ValueError for a value out of range."""
    if args.control_delay is not None and args.control_delay < 0:
        raise ValueError('--control-delay must not be negative, got %g' % args.control_delay)
    if args.min_rto is not None and args.min_rto <= 0:
        raise ValueError('--min-rto must be positive, got %g' % args.min_rto)
    entries = {'control_delay_ms': CONTROL_DELAY_S * 1e3 if args.control_delay is None else args.control_delay,
               'min_rto_ms': LINUX_MIN_RTO_MS if args.min_rto is None else args.min_rto,
               'sender_queue': args.sender_queue or SimSettings.sender_queue}
    if args.period is not None:
        entries['period_s'] = args.period
    timers = timers_for_period(SCHEME_DEFAULTS['period'] if args.period is None else args.period)
    entries.update({'%s_s' % name: value for name, value in timers.items()})
    return entries
