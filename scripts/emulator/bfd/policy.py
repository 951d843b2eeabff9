"""BFD's interval by fabric size, within a packet budget (pure).

Every BFD session sends from both ends of a link every interval, and all of
a daemon's are handled by the one userspace ovs-vswitchd thread that also
forwards its share of the fabric's traffic, and all daemons share the
machine's cores. A fixed 100 ms grows with k^3 (k=8: 5,120 packets/s, k=16:
~41,000/s), so the interval is chosen to keep the whole fabric within
``BUDGET_PPS``, never below ``FLOOR_MS``: the lowest interval that had no
false detection on a k=4 fat-tree idle and under full load when it was
chosen (scripts/fattree/bfd_floor.py). Measured again with ovs-vswitchd's
send buffer raised on shaped fabrics (scripts/emulator/ovs/vswitchd.py SendBuffer),
50, 70 and 100 ms all held idle and under load on shaped links (README);
the floor stays where every k=4 measurement of the project was made.
Detection takes ``MULT`` missed intervals.
"""
import math

UDP_PORT = 3784  # RFC 5881, Open vSwitch's BFD

BUDGET_PPS = 2000
FLOOR_MS = 70
MULT = 3
# Open vSwitch runs every BFD session of a daemon in its one monitor thread.
# At k=16 (4,096 sessions, even at 2,050 ms) its loops took seconds, sessions
# timed out and some 1,800 links flapped right after start; k=8's 512 hold.
MAX_SESSIONS = 1024


def bfd_packets_per_s(switch_links, interval_ms):
    return 2 * switch_links * 1000.0 / interval_ms


def interval_for(switch_links, budget_pps=BUDGET_PPS, floor_ms=FLOOR_MS):
    """The shortest interval (whole 10 ms steps, at least ``floor_ms``) that
    keeps ``switch_links`` BFD sessions within ``budget_pps``."""
    if switch_links <= 0:
        raise ValueError('a fabric with BFD needs switch links, got %d' % switch_links)
    needed = 2 * switch_links * 1000.0 / budget_pps
    return max(floor_ms, int(math.ceil(needed / 10.0)) * 10)


def default_interval(switch_links, daemons=1):
    """The interval a fabric gets unless told otherwise: the whole fabric
    within the packet budget (the machine's two cores run every daemon), or
    None (BFD off, carrier only) when a daemon's share of the sessions, its
    switches spread over ``daemons`` ovs-vswitchd (scripts/emulator/ovs/instances.py
    balances their ports), is above ``MAX_SESSIONS``."""
    if 2 * math.ceil(switch_links / daemons) > MAX_SESSIONS:
        return None
    return interval_for(switch_links)


def interface_options(interval_ms):
    """The ``bfd`` column of every switch-to-switch interface with BFD every ``interval_ms``."""
    return {'enable': 'true', 'min_tx': str(interval_ms), 'min_rx': str(interval_ms), 'mult': str(MULT)}


def detection_ms(interval_ms, mult=MULT):
    return interval_ms * mult
