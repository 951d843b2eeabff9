"""A shaped link's HTB class (pure): the depth of its token buckets and its
quantum, shared by the Mininet classes that shape links and by the ideal
flow-completion time that must count what the buckets let through at once;
and what a host sets on its end of a shaped link.

The ideal FCT of a flow is what it takes alone on an idle emulated fabric,
as the generator times it (scripts/emulator/flowgen.py: connect, an 8-byte
request, the response):

    2 base RTTs (the handshake; the request out and the first byte back)
    + what the links' token buckets do not let through at once, over the TCP
      goodput of the link (1,448 payload bytes per 1,514-byte frame, as HTB
      counts them: TCP timestamps on, a 1,500-byte MTU); an idle shaped link
      passes its bucket's depth at once
    + one frame time per switch on the path (store and forward of the last
      frame on the links after the first)

with the base RTT measured by ping on the idle fabric for the same number
of switches.
"""

# How long a shaped link may fall behind its rate and still catch up. A class
# sends while both its rate bucket and its ceil bucket hold tokens, and
# Mininet gives the ceil bucket (cburst) about one frame: every dequeue the
# machine runs late, by more than a frame time, is link time lost for good.
# At 20 Mbit/s (0.6 ms a frame) the non-blocking reference's 16 flows carried
# 77% of line rate so, and 92-94% with both buckets this deep (docs/emulator.md,
# "The shaped link's buckets"). None: Mininet's own buckets, kept for that
# comparison (scripts/emulator/benchmarks/shaped_link.py).
HTB_BURST_S = 0.024
MININET_BURST_BYTES = 15000
# HTB derives a class's quantum from its rate (rate / 10) and warns above
# 200,000 bytes (16 Mbit/s); one data class per port borrows from no
# sibling, so any legal quantum does: a fixed one, without the warning.
HTB_QUANTUM = 60000
PAYLOAD_PER_FRAME, FRAME_BYTES = 1448, 1514
# A host's TCP hands its shaped interface one frame per packet. Linux sizes
# TCP's GSO packets by the path's minimum RTT (tcp_tso_rtt_log, since 2022):
# under half a millisecond, up to 64 KB each. An emulated link's minimum RTT
# is tens of microseconds (its bucket lets the first frames through at once,
# a veth takes no time), which no real link of a few Mbit/s shows (one frame
# takes 2.4 ms at 5 Mbit/s). So each host's own queue held 5-30 such packets,
# 100-170 KB where its 50-packet limit means 76 KB of frames: up to 270 ms at
# 5 Mbit/s, with the ACKs of the flow the host received waiting behind them.
# The non-blocking reference's Stride(4) at 5 Mbit/s carried 76-87% of line
# rate so, its flows 2.4-4.7 Mbit/s, some without a loss; one frame per
# packet, 93.4%, every flow 4.67 Mbit/s (data and the other flow's ACKs share
# a link).
HOST_GSO_MAX_SEGS = 1


def burst_bytes(mbps):
    """The depth of a shaped link's rate and ceil buckets: HTB_BURST_S of
    its rate, never below Mininet's 15 KB (Mininet's own: 0 here, its ceil
    bucket holding about a frame)."""
    if HTB_BURST_S is None:
        return 0
    return max(MININET_BURST_BYTES, int(mbps * 1e6 / 8 * HTB_BURST_S))


def htb_buckets(mbps):
    """The burst, cburst and quantum options of a data class at ``mbps``."""
    if HTB_BURST_S is None:
        return ' burst %d quantum %d' % (MININET_BURST_BYTES, HTB_QUANTUM)
    return ' burst %d cburst %d quantum %d' % (burst_bytes(mbps), burst_bytes(mbps), HTB_QUANTUM)


def goodput_bps(link_mbps):
    return link_mbps * 1e6 * PAYLOAD_PER_FRAME / FRAME_BYTES


def ideal_fct_s(size_bytes, link_mbps, base_rtt_s, switches):
    frame_s = FRAME_BYTES * 8 / (link_mbps * 1e6)
    paced = max(0.0, size_bytes - burst_bytes(link_mbps) * PAYLOAD_PER_FRAME / FRAME_BYTES)
    return 2 * base_rtt_s + paced * 8 / goodput_bps(link_mbps) + switches * frame_s


def host_interface_commands(intf, offloads, shaped):
    """The shell commands that set up host interface ``intf``: ethtool's
    ``offloads`` (silent: a feature the device lacks is no matter), and on a
    shaped link one frame per packet (HOST_GSO_MAX_SEGS), whose failure
    prints why."""
    commands = ['ethtool -K %s %s >/dev/null 2>&1' % (intf, offloads)]
    if shaped:
        commands.append('ip link set dev %s gso_max_segs %d 2>&1' % (intf, HOST_GSO_MAX_SEGS))
    return commands
