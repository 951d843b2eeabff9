"""IPv4 addresses as integers and masks: the one home of these helpers for
every model, routing module and script."""
import functools


@functools.lru_cache(maxsize=None)
def ip_to_int(ip):
    """Dotted quad -> 32-bit integer (cached: routing walks ask millions of times)."""
    a, b, c, d = (int(x) for x in ip.split('.'))
    return a << 24 | b << 16 | c << 8 | d


def int_to_ip(value):
    """32-bit integer -> dotted quad."""
    return '.'.join(str((value >> s) & 0xff) for s in (24, 16, 8, 0))


def left_mask(length):
    """Left-handed (prefix) mask 1^length 0^(32-length) as an integer."""
    return (0xffffffff << (32 - length)) & 0xffffffff


def right_mask(length):
    """Right-handed (suffix) mask 0^(32-length) 1^length as an integer."""
    return (1 << length) - 1


def prefix_mask(length):
    """Left-handed mask as a dotted quad (OpenFlow masked matches)."""
    return int_to_ip(left_mask(length))
