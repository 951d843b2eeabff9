"""The time settings of a simulated run (the packet-level simulator and the
flow-level model), derived from its link rate, each with where it came
from, so that a command as typed runs the docs' tables.

One rule, from the 1 Gbit/s table (0.1 s measured after 0.05 s, polled
every 10 ms, a 10 ms minimum RTO, flow-mods 1 ms after a poll): every time
constant scales inversely with the rate, "a hundredth of the period at a
hundred times the rate", so a run holds the same number of packets per
flow and the schemes as many rounds. Each is capped at what the emulator's
hosts and controller use at low rates: the app's 1 s period and Linux's
200 ms minimum RTO.
"""
APP_PERIOD_S = 1.0
LINUX_MIN_RTO_MS = 200.0
APP_CONTROL_DELAY_MS = 1.0
REFERENCE_MBPS = 1000.0
PERIODS_MEASURED, PERIODS_LEFT_OUT = 10, 5

# the emulator's runs: iperf3 whole seconds, long enough for its CPU samples
EMULATOR_DURATION_S, EMULATOR_OMIT_S = 15, 3


def _clean(value):
    """A value as a person writes it: 0.001, not 0.0010000000000000002."""
    value = float('%.9g' % value)
    return int(value) if value.is_integer() else value


def simulated(bw_mbps):
    """{setting: (value, where it came from)} of a simulated run at
    ``bw_mbps``: period_s, duration, omit, min_rto_ms, control_delay_ms."""
    scale = REFERENCE_MBPS / bw_mbps
    period = min(APP_PERIOD_S, 0.01 * scale)
    rate = 'at %g Mbit/s' % bw_mbps
    return {
        'period_s': (_clean(period), '10 ms at 1 Gbit/s, inversely with the rate, at most the app\'s 1 s (%s)' % rate),
        'duration': (_clean(PERIODS_MEASURED * period), '%d polling periods (%s)' % (PERIODS_MEASURED, rate)),
        'omit': (_clean(PERIODS_LEFT_OUT * period), '%d polling periods (%s)' % (PERIODS_LEFT_OUT, rate)),
        'min_rto_ms': (_clean(min(LINUX_MIN_RTO_MS, 10 * scale)),
                       '10 ms at 1 Gbit/s, inversely with the rate, at most Linux\'s 200 ms (%s)' % rate),
        'control_delay_ms': (_clean(min(APP_CONTROL_DELAY_MS, APP_CONTROL_DELAY_MS * scale)),
                             '1 ms up to 1 Gbit/s, inversely with the rate above (%s)' % rate)}


def emulated():
    return {'duration': (EMULATOR_DURATION_S, 'the emulator\'s: iperf3 whole seconds with room for its CPU samples'),
            'omit': (EMULATOR_OMIT_S, 'the emulator\'s: TCP start and the schemes\' first rounds')}


def resolve(given, derived):
    """(values, sources): each setting as ``given`` (None: not given) or,
    where not, as ``derived`` {setting: (value, source)}."""
    values, sources = {}, {}
    for name, (value, source) in derived.items():
        if given.get(name) is None:
            values[name], sources[name] = value, source
        else:
            values[name], sources[name] = given[name], 'given'
    return values, sources
