"""The fat-tree app's routing schemes and their parameters, without Ryu (the
CLI and tests read them; controller.fattree.scheme_strategies implements them).

  twolevel    the two-level tables only (sections 3.3-3.5; the default)
  ecmp        upward ports chosen by an OpenFlow select group (5-tuple hash)
  classifier  flow classification with periodic rebalancing (3.6)
  scheduler   large-flow detection at the edges + the central scheduler (3.7)
  letflow     ECMP's groups choosing a random live bucket per flowlet (LetFlow):
              the simulator's switches only (SIMULATOR_ONLY)

Parameters (all optional): period (s between counter polls and
rebalancing/scheduling rounds, default 1), link_mbps (link capacity, default
10), threshold (large-flow threshold as a fraction of link capacity, 0.1),
gc_timeout (s a large flow may go unreported before its reservation is
freed, 3), flow_idle (whole s a per-flow entry outlives its last packet, 5),
max_moves (classifier moves per switch per round, 3), tolerance (as a
fraction of link capacity: the load difference the classifier leaves alone,
and the rate up to which it never moves a flow, 0.1), rearrange (reserved
flows the scheduler may move to make room for a flow with no free path, 8;
0 is the paper's plain search), flowlet_timeout_us (letflow: microseconds of
silence that end a flowlet, 500, the LetFlow paper's and dcfabric's LetFlow
simulator's Delta).
"""
SCHEME_NAMES = ('twolevel', 'ecmp', 'classifier', 'scheduler', 'letflow')
# Schemes the app cannot install, and why: only the simulator's pipeline runs them.
SIMULATOR_ONLY = {'letflow': 'its flowlet groups (a random bucket per flowlet) exist only in the '
                             'simulator\'s pipeline: OpenFlow 1.3 and Open vSwitch have no flowlet group'}
# The schemes the Ryu app runs on Open vSwitch.
OPENFLOW_SCHEMES = tuple(s for s in SCHEME_NAMES if s not in SIMULATOR_ONLY)
DEFAULTS = {'scheme': 'twolevel', 'period': 1.0, 'link_mbps': 10.0, 'threshold': 0.1,
            'gc_timeout': 3.0, 'flow_idle': 5, 'max_moves': 3, 'tolerance': 0.1,
            'rearrange': 8, 'flowlet_timeout_us': 500.0}


# The schemes' timers, each set by DEFAULTS in the app's polling periods.
# The rounds (the classifier's rebalancing, the scheduler's placement and
# collection) come once per period by construction; flowlet_timeout_us is a
# data-plane time (set by the paths' RTT), not a controller's, so no timer.
PERIOD_TIMERS = ('gc_timeout', 'flow_idle')


class SchemeParameterError(ValueError):
    pass


def timers_for_period(period_s):
    """The schemes' timers for a polling period of ``period_s`` seconds, by
    one rule: each keeps the number of periods the app's defaults give it
    (gc_timeout 3 periods, flow_idle 5), so a scheduler polled every 10 ms
    frees a flow unreported for 30 ms as the app does one unreported for
    3 s. At the app's own 1 s period they are DEFAULTS."""
    if isinstance(period_s, bool) or not isinstance(period_s, (int, float)) or period_s <= 0:
        raise SchemeParameterError('period must be a positive number, got %r' % (period_s,))
    periods = period_s / DEFAULTS['period']
    return {name: DEFAULTS[name] * periods for name in PERIOD_TIMERS}


def refuse_simulator_only(scheme):
    """SchemeParameterError saying why, for a scheme Open vSwitch cannot run."""
    if scheme in SIMULATOR_ONLY:
        raise SchemeParameterError('scheme %s runs on the simulator only (--backend sim): %s'
                                   % (scheme, SIMULATOR_ONLY[scheme]))


def scheme_config(params, simulated=False):
    """The scheme's parameters from the app's JSON params, defaults filled
    in; a clear error for an unknown scheme, a bad value, or (unless
    ``simulated``: the simulator's switches execute the rules) a scheme
    only the simulator runs, or a flow_idle of a fraction of a second."""
    conf = {name: params.get(name, default) for name, default in DEFAULTS.items()}
    if conf['scheme'] not in SCHEME_NAMES:
        raise SchemeParameterError('unknown scheme %r; choose one of %s'
                                   % (conf['scheme'], ', '.join(SCHEME_NAMES)))
    if not simulated:
        refuse_simulator_only(conf['scheme'])
    for name in ('period', 'link_mbps', 'threshold', 'gc_timeout', 'flow_idle', 'max_moves',
                 'flowlet_timeout_us'):
        value = conf[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise SchemeParameterError('%s must be a positive number, got %r' % (name, value))
    if not simulated and not isinstance(conf['flow_idle'], int):
        raise SchemeParameterError('flow_idle must be an integer (OVS timeouts are whole seconds), '
                                   'got %r' % (conf['flow_idle'],))
    if not isinstance(conf['max_moves'], int):
        raise SchemeParameterError('max_moves must be an integer, got %r' % (conf['max_moves'],))
    if isinstance(conf['rearrange'], bool) or not isinstance(conf['rearrange'], int) \
            or conf['rearrange'] < 0:
        raise SchemeParameterError('rearrange must be a non-negative integer, got %r'
                                   % (conf['rearrange'],))
    if isinstance(conf['tolerance'], bool) or not isinstance(conf['tolerance'], (int, float)) \
            or not 0 <= conf['tolerance'] < 1:
        raise SchemeParameterError('tolerance must be in [0, 1), got %r' % (conf['tolerance'],))
    return conf
