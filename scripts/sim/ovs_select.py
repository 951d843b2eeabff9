"""Which bucket of a select group Open vSwitch 3.1 (userspace datapath)
gives a packet, as pure functions: the model the simulator's switches
(scripts/sim/ns3/of_pipeline.h) execute, written from OVS's source and
checked against real bridges by tests/ovs/test_select_groups_ovs.py.

The controller's select groups name no selection method and weigh every
bucket 1, so OVS (ofproto-dpif.c, group_set_selection_method) picks one of
two methods by the bucket count n:

- dp_hash, when its table of max(16, next power of two >= n) slots fits in
  DP_HASH_MAX_SLOTS: the datapath hashes the packet with
  flow_hash_symmetric_l3l4 (``ovs_symmetric_l3l4_hash``; TCP ports count,
  UDP ports do not), slot s holds bucket s mod n (Webster's method with equal
  weights), and a dead bucket passes the packet to the next slot's
  (``bucket_index``).
- the default method otherwise: flow_hash_symmetric_l4 over the Ethernet
  addresses, addresses and TCP ports (``ovs_symmetric_l4_hash``), then the
  live bucket whose id scores highest, ties to the later one
  (``default_bucket_index``).

``select_bucket`` applies the rule to a 5-tuple. Hashes are lib/hash.h's
portable (non-SSE4.2) variant, as Debian builds OVS. Addresses are ints
(host byte order); ``live`` is None (every bucket live) or a predicate on
the bucket index. Non-IP packets are not modelled.
"""
import struct

DP_HASH_MIN_SLOTS = 16
DP_HASH_MAX_SLOTS = 256  # ofproto-dpif.c MAX_SELECT_GROUP_HASH_VALUES
HOST_MAC_BASE = 0x020000000000  # topologies.model.mac_from_ip: 02:00 + the IPv4 address
_MASK32 = 0xffffffff
_L4_PORTS_HASHED = (6, 132)  # TCP, SCTP: both hashes leave UDP ports out


def _rot(x, k):
    return (x << k | x >> (32 - k)) & _MASK32


def _hash_add(hash_, data):
    """lib/hash.h mhash_add: zero-valued data leaves the hash alone before
    the final rotate-multiply."""
    if data:
        data = data * 0xcc9e2d51 & _MASK32
        data = _rot(data, 15) * 0x1b873593 & _MASK32
        hash_ ^= data
    return (_rot(hash_, 13) * 5 + 0xe6546b64) & _MASK32


def _hash_finish(hash_, final):
    hash_ ^= final
    for shift, factor in ((16, 0x85ebca6b), (13, 0xc2b2ae35)):
        hash_ = (hash_ ^ hash_ >> shift) * factor & _MASK32
    return hash_ ^ hash_ >> 16


def _swap(value, n_bytes):
    """A network-order field read as the little-endian machine reads it."""
    return int.from_bytes(value.to_bytes(n_bytes, 'big'), 'little')


def ovs_symmetric_l3l4_hash(src_int, dst_int, proto, sport, dport):
    """lib/flow.c flow_hash_symmetric_l3l4(flow, 0, false) for IPv4: the
    dp_hash the datapath computes for the dp_hash method."""
    hash_ = _hash_add(_hash_add(0, _swap(src_int ^ dst_int, 4)), proto)
    if proto in _L4_PORTS_HASHED:
        hash_ = _hash_add(hash_, _swap(sport ^ dport, 2))
    return _hash_finish(hash_, 0)


def hash_int(value, basis):
    """lib/hash.h hash_int (= hash_2words(value, basis))."""
    return _hash_finish(_hash_add(_hash_add(value, 0), basis), 8)


def _jhash_mix(a, b, c):
    for rot_a, rot_b, rot_c in ((4, 6, 8), (16, 19, 4)):
        a = (a - c) & _MASK32; a ^= _rot(c, rot_a); c = (c + b) & _MASK32  # noqa: E702
        b = (b - a) & _MASK32; b ^= _rot(a, rot_b); a = (a + c) & _MASK32  # noqa: E702
        c = (c - b) & _MASK32; c ^= _rot(b, rot_c); b = (b + a) & _MASK32  # noqa: E702
    return a, b, c


def _jhash_final(a, b, c):
    for rot in (14, 11, 25, 16, 4, 14, 24):
        c = (c ^ b) - _rot(b, rot) & _MASK32
        a, b, c = b, c, a  # the next line works on the next pair
    return c, a, b


def jhash_bytes(data, basis):
    """lib/jhash.c jhash_bytes (little-endian words)."""
    n = len(data)
    a = b = c = (0xdeadbeef + n + basis) & _MASK32
    padded = data + bytes(-n % 12)
    words = struct.unpack('<%dI' % (len(padded) // 4), padded)
    full = n // 12
    for i in range(full):
        a = (a + words[3 * i]) & _MASK32
        b = (b + words[3 * i + 1]) & _MASK32
        c = (c + words[3 * i + 2]) & _MASK32
        a, b, c = _jhash_mix(a, b, c)
    if n % 12:
        a = (a + words[3 * full]) & _MASK32
        b = (b + words[3 * full + 1]) & _MASK32
        c = (c + words[3 * full + 2]) & _MASK32
        a, b, c = _jhash_final(a, b, c)
    return c


def ovs_symmetric_l4_hash(src_int, dst_int, proto, sport, dport, eth_src=None, eth_dst=None):
    """lib/flow.c flow_hash_symmetric_l4(flow, 0) for untagged IPv4: the
    default method's hash. The Ethernet addresses default to the hosts' own
    (derived from their IPv4 addresses; the fabric's rules keep them)."""
    eth_src = HOST_MAC_BASE | src_int if eth_src is None else eth_src
    eth_dst = HOST_MAC_BASE | dst_int if eth_dst is None else eth_dst
    tp_port = sport ^ dport if proto in _L4_PORTS_HASHED else 0
    # The C struct: ipv4 address in a 16-byte union with IPv6's, eth_type,
    # vlan_tci, tp_port, eth_addr[6], ip_proto, 3 bytes of padding.
    fields = struct.pack('>I12xHHH6sB3x', src_int ^ dst_int, 0x0800, 0, tp_port,
                         (eth_src ^ eth_dst).to_bytes(6, 'big'), proto)
    return jhash_bytes(fields, 0)


def dp_hash_slots(n_buckets):
    """The dp_hash table's size for n equal buckets, or None where it would
    exceed DP_HASH_MAX_SLOTS (OVS then uses the default method)."""
    slots = DP_HASH_MIN_SLOTS
    while slots < n_buckets:
        slots *= 2
    return slots if slots <= DP_HASH_MAX_SLOTS else None


def bucket_index(n_buckets, flow_hash, live=None):
    """The dp_hash method's bucket for the packet's dp_hash ``flow_hash``
    (ovs_symmetric_l3l4_hash), or None when no bucket is live."""
    slots = dp_hash_slots(n_buckets)
    if slots is None:
        raise ValueError('%d buckets take the default method, not dp_hash' % n_buckets)
    for i in range(slots):
        index = ((flow_hash + i) & (slots - 1)) % n_buckets
        if live is None or live(index):
            return index
    return None


def default_bucket_index(n_buckets, l4_hash, live=None):
    """The default method's bucket for ``l4_hash`` (ovs_symmetric_l4_hash):
    the live bucket id with the highest (hash_int(id, l4_hash) & 0xffff),
    the later one on a tie; None when none is live."""
    best, best_score = None, 0
    for index in range(n_buckets):
        if live is None or live(index):
            score = hash_int(index, l4_hash) & 0xffff
            if score >= best_score:
                best, best_score = index, score
    return best


def select_bucket(n_buckets, src_int, dst_int, proto, sport, dport, live=None):
    """The bucket OVS gives this IPv4 5-tuple in a select group of n equal
    buckets, by the method OVS chooses for n; None when none is live."""
    if dp_hash_slots(n_buckets) is not None:
        return bucket_index(n_buckets, ovs_symmetric_l3l4_hash(src_int, dst_int, proto, sport, dport),
                            live)
    return default_bucket_index(n_buckets, ovs_symmetric_l4_hash(src_int, dst_int, proto, sport, dport),
                                live)
