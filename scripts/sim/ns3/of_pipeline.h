// The subset of the OpenFlow 1.3 pipeline that dcfabric's controller uses,
// executing the rules and groups it computes (exported by
// scripts/sim/rules_export.py; the format is in that module's docstring).
// Header-only, plain C++ (no ns-3): the simulator's switches and the path
// test's driver share it.
//
// Covered: tables and goto_table, masked matches over the exported fields,
// write_metadata, apply-actions output / group / dec_ttl / controller /
// in_port / set_field / move (register and header moves), select and
// fast-failover groups whose buckets watch ports, packet and byte counters
// per rule, group and bucket, and at run time flow add, strict delete and
// non-strict delete by metadata, group add/modify and group delete.
// Ports are model ports (OpenFlow port - 1).
//
// Select groups pick their bucket as Open vSwitch 3.1 does with no
// selection_method given (the controller gives none): ofproto-dpif's
// group_set_selection_method takes the dp_hash method where its table fits
// 256 slots, the default method otherwise (scripts/sim/ovs_select.py is
// the same model in Python; tests/ovs/test_select_groups_ovs.py checks both
// against real bridges). dp_hash: the hash is
// flow_hash_symmetric_l3l4(flow, basis 0, inc_udp_ports=false) with OVS's
// murmur-style hash_add/hash_finish (lib/hash.h without SSE4.2, as Debian
// builds it) over the fields in network byte order read on a little-endian
// host: so like OVS it is the same on every switch (no per-switch basis),
// symmetric in source and destination, and ignores UDP ports. The hash
// value indexes a table of max(16, next power of two of the bucket count)
// slots filled by the Webster method, which for equal weights is slot s ->
// bucket s mod n; a dead bucket passes to the next slot's. Default (more
// than 256 buckets, e.g. an aggregation switch's m^2 buckets from k=34 on):
// flow_hash_symmetric_l4 (jhash over the Ethernet, IPv4 and TCP fields,
// each XORed with its peer) is the basis of hash_int(bucket id), and the
// live bucket scoring highest in its low 16 bits wins, the later on a tie.
// Packets carry their hosts' MACs (HostMac). Not modelled: weights other
// than equal, and non-IP packets.
//
// Flowlet groups (kind "flowlet", no OpenFlow counterpart: the letflow
// scheme's, which only this pipeline executes) are LetFlow's load balancer:
// the switch's one flowlet table (flowlet_table.h, the paper's 64K entries,
// indexed by a salted 64-bit hash of the 5-tuple) keeps a flowlet on its
// bucket; a new flowlet, or one whose bucket went dead, takes a uniformly
// random live bucket from the switch's own generator. The table's checker
// runs every flowlet timeout (Delta) on the packets' clock, so a flowlet
// ends after Delta to 2 Delta of silence, as in the paper.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "flowlet_table.h"

namespace dcfabric {

// The header fields a rule may match or change; absent ones stay 0.
struct PacketFields {
  uint32_t in_port = 0;  // model port
  uint16_t eth_type = 0;
  uint64_t eth_src = 0, eth_dst = 0;  // 48 bits
  uint32_t ipv4_src = 0, ipv4_dst = 0;
  uint8_t ip_proto = 0;
  uint16_t tp_src = 0, tp_dst = 0;  // TCP or UDP ports, by ip_proto
  uint64_t metadata = 0;
  uint16_t arp_op = 0;
  uint32_t arp_spa = 0, arp_tpa = 0;
  uint64_t arp_sha = 0, arp_tha = 0;
  uint32_t reg0 = 0;
};

enum class Field {
  kInPort, kEthType, kEthSrc, kEthDst, kIpv4Src, kIpv4Dst, kIpProto, kTcpSrc, kTcpDst,
  kUdpSrc, kUdpDst, kMetadata, kArpOp, kArpSpa, kArpTpa, kArpSha, kArpTha, kReg0
};

inline Field ParseField(const std::string& name) {
  static const std::map<std::string, Field> kFields = {
      {"in_port", Field::kInPort}, {"eth_type", Field::kEthType}, {"eth_src", Field::kEthSrc},
      {"eth_dst", Field::kEthDst}, {"ipv4_src", Field::kIpv4Src}, {"ipv4_dst", Field::kIpv4Dst},
      {"ip_proto", Field::kIpProto}, {"tcp_src", Field::kTcpSrc}, {"tcp_dst", Field::kTcpDst},
      {"udp_src", Field::kUdpSrc}, {"udp_dst", Field::kUdpDst}, {"metadata", Field::kMetadata},
      {"arp_op", Field::kArpOp}, {"arp_spa", Field::kArpSpa}, {"arp_tpa", Field::kArpTpa},
      {"arp_sha", Field::kArpSha}, {"arp_tha", Field::kArpTha}, {"reg0", Field::kReg0}};
  auto it = kFields.find(name);
  if (it == kFields.end()) throw std::invalid_argument("unknown field " + name);
  return it->second;
}

inline unsigned FieldBits(Field f) {
  switch (f) {
    case Field::kEthSrc: case Field::kEthDst: case Field::kArpSha: case Field::kArpTha: return 48;
    case Field::kMetadata: return 64;
    case Field::kEthType: case Field::kTcpSrc: case Field::kTcpDst: case Field::kUdpSrc:
    case Field::kUdpDst: case Field::kArpOp: return 16;
    case Field::kIpProto: return 8;
    default: return 32;
  }
}

inline uint64_t GetField(const PacketFields& p, Field f) {
  switch (f) {
    case Field::kInPort: return p.in_port;
    case Field::kEthType: return p.eth_type;
    case Field::kEthSrc: return p.eth_src;
    case Field::kEthDst: return p.eth_dst;
    case Field::kIpv4Src: return p.ipv4_src;
    case Field::kIpv4Dst: return p.ipv4_dst;
    case Field::kIpProto: return p.ip_proto;
    case Field::kTcpSrc: case Field::kUdpSrc: return p.tp_src;
    case Field::kTcpDst: case Field::kUdpDst: return p.tp_dst;
    case Field::kMetadata: return p.metadata;
    case Field::kArpOp: return p.arp_op;
    case Field::kArpSpa: return p.arp_spa;
    case Field::kArpTpa: return p.arp_tpa;
    case Field::kArpSha: return p.arp_sha;
    case Field::kArpTha: return p.arp_tha;
    case Field::kReg0: return p.reg0;
  }
  return 0;
}

inline void SetField(PacketFields& p, Field f, uint64_t v) {
  switch (f) {
    case Field::kInPort: p.in_port = uint32_t(v); break;
    case Field::kEthType: p.eth_type = uint16_t(v); break;
    case Field::kEthSrc: p.eth_src = v & 0xffffffffffffULL; break;
    case Field::kEthDst: p.eth_dst = v & 0xffffffffffffULL; break;
    case Field::kIpv4Src: p.ipv4_src = uint32_t(v); break;
    case Field::kIpv4Dst: p.ipv4_dst = uint32_t(v); break;
    case Field::kIpProto: p.ip_proto = uint8_t(v); break;
    case Field::kTcpSrc: case Field::kUdpSrc: p.tp_src = uint16_t(v); break;
    case Field::kTcpDst: case Field::kUdpDst: p.tp_dst = uint16_t(v); break;
    case Field::kMetadata: p.metadata = v; break;
    case Field::kArpOp: p.arp_op = uint16_t(v); break;
    case Field::kArpSpa: p.arp_spa = uint32_t(v); break;
    case Field::kArpTpa: p.arp_tpa = uint32_t(v); break;
    case Field::kArpSha: p.arp_sha = v & 0xffffffffffffULL; break;
    case Field::kArpTha: p.arp_tha = v & 0xffffffffffffULL; break;
    case Field::kReg0: p.reg0 = uint32_t(v); break;
  }
}

// OVS lib/hash.h (the portable variant).
inline uint32_t OvsHashRot(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }
inline uint32_t OvsHashAdd(uint32_t hash, uint32_t data) {
  if (data) {  // zero-valued data leaves the hash alone (mhash_add__)
    data *= 0xcc9e2d51;
    data = OvsHashRot(data, 15);
    data *= 0x1b873593;
    hash ^= data;
  }
  hash = OvsHashRot(hash, 13);
  return hash * 5 + 0xe6546b64;
}
inline uint32_t OvsHashFinish(uint32_t hash, uint32_t final_value) {
  hash ^= final_value;
  hash ^= hash >> 16;
  hash *= 0x85ebca6b;
  hash ^= hash >> 13;
  hash *= 0xc2b2ae35;
  hash ^= hash >> 16;
  return hash;
}

// OVS lib/flow.c flow_hash_symmetric_l3l4(flow, 0, false) for IPv4; 0 for
// anything else. OVS's fields are big-endian words read as host integers.
inline uint32_t SymmetricL3L4Hash(const PacketFields& p) {
  if (p.eth_type != 0x0800) return 0;
  uint32_t hash = OvsHashAdd(0, __builtin_bswap32(p.ipv4_src ^ p.ipv4_dst));
  hash = OvsHashAdd(hash, p.ip_proto);
  if (p.ip_proto == 6 || p.ip_proto == 132)
    hash = OvsHashAdd(hash, __builtin_bswap16(uint16_t(p.tp_src ^ p.tp_dst)));
  return OvsHashFinish(hash, 0);
}

// OVS lib/hash.h hash_int (hash_2words).
inline uint32_t OvsHashInt(uint32_t x, uint32_t basis) {
  return OvsHashFinish(OvsHashAdd(OvsHashAdd(x, 0), basis), 8);
}

// OVS lib/jhash.c jhash_bytes over ``n`` bytes, little-endian words.
inline uint32_t OvsJhashBytes(const uint8_t* bytes, size_t n, uint32_t basis) {
  auto rot = OvsHashRot;
  uint32_t a, b, c;
  a = b = c = 0xdeadbeef + uint32_t(n) + basis;
  auto word = [&](size_t at) {
    uint32_t w = 0;
    for (size_t i = 0; i < 4 && at + i < n; ++i) w |= uint32_t(bytes[at + i]) << (8 * i);
    return w;
  };
  size_t at = 0;
  for (; n - at >= 12; at += 12) {
    a += word(at), b += word(at + 4), c += word(at + 8);
    a -= c, a ^= rot(c, 4), c += b;
    b -= a, b ^= rot(a, 6), a += c;
    c -= b, c ^= rot(b, 8), b += a;
    a -= c, a ^= rot(c, 16), c += b;
    b -= a, b ^= rot(a, 19), a += c;
    c -= b, c ^= rot(b, 4), b += a;
  }
  if (at < n) {
    a += word(at), b += word(at + 4), c += word(at + 8);
    c ^= b, c -= rot(b, 14);
    a ^= c, a -= rot(c, 11);
    b ^= a, b -= rot(a, 25);
    c ^= b, c -= rot(b, 16);
    a ^= c, a -= rot(c, 4);
    b ^= a, b -= rot(a, 14);
    c ^= b, c -= rot(b, 24);
  }
  return c;
}

// OVS lib/flow.c flow_hash_symmetric_l4(flow, 0) for untagged IPv4: its
// struct of XORed fields (address in a 16-byte union, eth_type, vlan_tci,
// tp_port, eth_addr, ip_proto, padding), zeroed, then jhash.
inline uint32_t SymmetricL4Hash(const PacketFields& p) {
  uint8_t fields[32] = {};
  auto put = [&](size_t at, uint64_t value, int n_bytes) {  // network byte order
    for (int i = 0; i < n_bytes; ++i) fields[at + i] = uint8_t(value >> (8 * (n_bytes - 1 - i)));
  };
  put(16, p.eth_type, 2);
  put(22, p.eth_src ^ p.eth_dst, 6);
  if (p.eth_type == 0x0800) {
    put(0, p.ipv4_src ^ p.ipv4_dst, 4);
    fields[28] = p.ip_proto;
    if (p.ip_proto == 6 || p.ip_proto == 132) put(20, uint16_t(p.tp_src ^ p.tp_dst), 2);
  }
  return OvsJhashBytes(fields, sizeof fields, 0);
}

// A host's MAC as topologies.model.mac_from_ip derives it (02:00 + IPv4):
// what the fabric's hosts send with, and the default method hashes.
inline uint64_t HostMac(uint32_t ipv4) { return 0x020000000000ULL | ipv4; }

struct Counters {
  uint64_t packets = 0, bytes = 0;
  void Hit(uint32_t n) { packets++; bytes += n; }
};

struct Action {
  enum Kind { kOutput, kGroup, kDecTtl, kController, kInPort, kSetField, kMove } kind;
  uint32_t arg = 0;  // output port, group id, move's bit count (0: whole field)
  Field field = Field::kInPort;  // set_field's and move's destination
  Field src = Field::kInPort;    // move's source
  uint64_t value = 0;            // set_field's value
};

struct MatchTerm {
  Field field;
  uint64_t value, mask;
  bool operator==(const MatchTerm& o) const {
    return field == o.field && value == o.value && mask == o.mask;
  }
  bool operator<(const MatchTerm& o) const {
    if (field != o.field) return field < o.field;
    if (value != o.value) return value < o.value;
    return mask < o.mask;
  }
};

struct FlowEntry {
  uint64_t id = 0;  // order of arrival on the switch: the export's line order, then run-time adds
  int table = 0;
  int priority = 0;
  uint64_t cookie = 0;
  std::vector<MatchTerm> match;  // sorted: two entries match alike iff equal
  std::vector<Action> actions;
  bool writes_metadata = false;
  uint64_t metadata_value = 0, metadata_mask = 0;
  int goto_table = -1;
  std::string line;  // the export record it came from
  Counters counters;

  bool Matches(const PacketFields& p) const {
    for (const MatchTerm& t : match)
      if ((GetField(p, t.field) & t.mask) != t.value) return false;
    return true;
  }
};

struct Bucket {
  int watch_port = -1;  // -1: none, always live
  std::vector<Action> actions;
  Counters counters;
};

struct GroupEntry {
  enum Kind { kSelect, kFastFailover, kFlowlet } kind;
  uint32_t id = 0;
  std::vector<Bucket> buckets;
  uint32_t hash_mask = 0;  // select by dp_hash: slots - 1
  bool default_method = false;  // select: more dp_hash slots than OVS takes
  uint64_t flowlet_timeout_ns = 0;  // flowlet: the table's checker period
  uint64_t flowlets = 0;  // flowlet: flowlets started (each a random pick)
  std::string line;  // the export record it came from
  Counters counters;
};

namespace detail {

inline uint64_t Number(const std::string& text) {
  size_t used = 0;
  uint64_t v = std::stoull(text, &used, 0);
  if (used != text.size()) throw std::invalid_argument("not a number: " + text);
  return v;
}

inline std::pair<std::string, std::string> Split(const std::string& token, char sep) {
  size_t at = token.find(sep);
  if (at == std::string::npos) return {token, ""};
  return {token.substr(0, at), token.substr(at + 1)};
}

inline Action ParseAction(const std::string& token) {
  auto [kind, arg] = Split(token, '=');
  Action a{Action::kDecTtl};
  if (kind == "dec_ttl") a.kind = Action::kDecTtl;
  else if (kind == "controller") a.kind = Action::kController;
  else if (kind == "in_port") a.kind = Action::kInPort;
  else if (kind == "output") { a.kind = Action::kOutput; a.arg = uint32_t(Number(arg)); }
  else if (kind == "group") { a.kind = Action::kGroup; a.arg = uint32_t(Number(arg)); }
  else if (kind == "set_field") {
    auto [field, value] = Split(arg, ':');
    a.kind = Action::kSetField;
    a.field = ParseField(field);
    a.value = Number(value);
  } else if (kind == "move") {
    auto [src, rest] = Split(arg, ':');
    auto [dst, bits] = Split(rest, ':');
    a.kind = Action::kMove;
    a.src = ParseField(src);
    a.field = ParseField(dst);
    a.arg = uint32_t(Number(bits));
  } else {
    throw std::invalid_argument("unknown action " + token);
  }
  return a;
}

inline bool Outputs(const Action& a) {
  return a.kind == Action::kOutput || a.kind == Action::kGroup || a.kind == Action::kInPort;
}

inline uint64_t LowBits(unsigned n) { return n >= 64 ? ~0ULL : (1ULL << n) - 1; }

}  // namespace detail

// A "flow ..." record of the export.
inline FlowEntry ParseFlow(const std::string& line) {
  std::istringstream in(line);
  std::string word, cookie;
  FlowEntry e;
  if (!(in >> word >> e.table >> e.priority >> cookie) || word != "flow")
    throw std::invalid_argument("not a flow record: " + line);
  e.cookie = detail::Number(cookie);
  e.line = line;
  bool in_actions = false;
  int outputs = 0;
  for (std::string token; in >> token;) {
    if (token == "actions") { in_actions = true; continue; }
    auto [key, value] = detail::Split(token, '=');
    if (!in_actions) {
      auto [v, m] = detail::Split(value, '/');
      Field f = ParseField(key);
      uint64_t mask = m.empty() ? detail::LowBits(FieldBits(f)) : detail::Number(m);
      e.match.push_back({f, detail::Number(v) & mask, mask});
    } else if (key == "write_metadata") {
      auto [v, m] = detail::Split(value, '/');
      e.writes_metadata = true;
      e.metadata_value = detail::Number(v);
      e.metadata_mask = detail::Number(m);
    } else if (key == "goto") {
      e.goto_table = int(detail::Number(value));
    } else {
      e.actions.push_back(detail::ParseAction(token));
      outputs += detail::Outputs(e.actions.back());
    }
  }
  if (!in_actions) throw std::invalid_argument("flow record without actions: " + line);
  // One packet leaves by one port: the controller never copies packets.
  if (outputs > 1 || (outputs && e.goto_table >= 0))
    throw std::invalid_argument("more than one output in " + line);
  std::sort(e.match.begin(), e.match.end());
  return e;
}

// A "group ..." record of the export.
inline GroupEntry ParseGroup(const std::string& line) {
  std::istringstream in(line);
  std::string word, kind;
  GroupEntry g;
  if (!(in >> word >> g.id >> kind) || word != "group")
    throw std::invalid_argument("not a group record: " + line);
  g.line = line;
  if (kind == "select") g.kind = GroupEntry::kSelect;
  else if (kind == "fast_failover") g.kind = GroupEntry::kFastFailover;
  else if (kind == "flowlet") g.kind = GroupEntry::kFlowlet;
  else throw std::invalid_argument("unsupported group type " + kind + " in " + line);
  for (std::string token; in >> token;) {
    auto [key, value] = detail::Split(token, '=');
    if (key == "timeout_us" && g.kind == GroupEntry::kFlowlet && g.buckets.empty()) {
      g.flowlet_timeout_ns = uint64_t(std::stod(value) * 1e3 + 0.5);
    } else if (token == "bucket") {
      std::string watch;
      if (!(in >> watch)) throw std::invalid_argument("bucket without watch port: " + line);
      g.buckets.push_back(Bucket{watch == "-" ? -1 : int(detail::Number(watch)), {}, {}});
    } else {
      if (g.buckets.empty()) throw std::invalid_argument("action before any bucket: " + line);
      g.buckets.back().actions.push_back(detail::ParseAction(token));
    }
  }
  if (g.buckets.empty()) throw std::invalid_argument("group without buckets: " + line);
  if (g.kind == GroupEntry::kFlowlet && g.flowlet_timeout_ns == 0)
    throw std::invalid_argument("flowlet group without a positive timeout_us: " + line);
  // OVS 3.1: max(16, next power of two of total weight / least weight)
  // dp_hash slots, at most 256 (MAX_SELECT_GROUP_HASH_VALUES).
  uint32_t slots = 16;
  while (slots < g.buckets.size()) slots <<= 1;
  g.hash_mask = slots - 1;
  g.default_method = slots > 256;
  return g;
}

class OfPipeline {
 public:
  // Every switch of an export file, by name.
  static std::map<std::string, OfPipeline> LoadExport(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read export " + path);
    std::map<std::string, OfPipeline> switches;
    OfPipeline* current = nullptr;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::istringstream words(line);
      std::string kind;
      if (!(words >> kind) || kind[0] == '#') continue;
      try {
        if (kind == "switch") {
          std::string name;
          words >> name;
          current = &switches[name];
        } else if (kind == "flow" || kind == "group") {
          if (!current) throw std::invalid_argument("record before any switch");
          if (kind == "flow") current->AddFlow(line);
          else current->AddGroup(ParseGroup(line));
        }  // scheme, failures, nodes and links are for the readers of the topology
      } catch (const std::exception& e) {
        throw std::invalid_argument(path + ":" + std::to_string(number) + ": " + e.what());
      }
    }
    return switches;
  }

  // The model port a packet of ``bytes`` arriving at ``now_ns`` leaves by,
  // or -1 (dropped, or held by the controller: *to_controller says which).
  // *dec_ttl: the caller decrements the TTL (and drops at 0, as OVS's
  // dec_ttl does). Counts the hit of every entry, group and bucket on the
  // way. ``port_live(port)`` is a port's OFPPS_LIVE, read by groups' watch
  // ports. Only flowlet groups read the clock, which must not go back.
  int Forward(PacketFields& p, uint32_t bytes, uint64_t now_ns,
              const std::function<bool(uint32_t)>& port_live, bool* dec_ttl,
              bool* to_controller = nullptr) {
    now_ns_ = now_ns;
    return Run(p, bytes, port_live, dec_ttl, to_controller);
  }
  int Forward(PacketFields& p, uint32_t bytes, uint64_t now_ns, const std::vector<bool>& port_live,
              bool* dec_ttl, bool* to_controller = nullptr) {
    now_ns_ = now_ns;
    return Run(p, bytes, [&](uint32_t port) { return port < port_live.size() && port_live[port]; },
               dec_ttl, to_controller);
  }

  // The index of the bucket group ``id`` gives packet ``p``, or -1 (no
  // live bucket, or no such group); counts nothing. For the check against
  // real Open vSwitch.
  int BucketOf(uint32_t id, const PacketFields& p, const std::function<bool(uint32_t)>& port_live) {
    auto it = groups_.find(id);
    if (it == groups_.end()) return -1;
    Bucket* b = PickBucket(it->second, p, port_live);
    return b ? int(b - it->second.buckets.data()) : -1;
  }

  // The seed of the switch's random source: its flowlet groups' picks and
  // its flowlet table's hash salt (so switches hash a flow independently).
  void SeedFlowlets(uint64_t seed) {
    rng_.seed(seed);
    flowlet_salt_ = rng_();
  }

  // OFPFC_ADD of a "flow" record: an entry of the same table, priority and
  // match is replaced, keeping its counters. So OpenFlow 1.3 says (6.4: the
  // counters are copied from the replaced entry unless OFPFF_RESET_COUNTS)
  // and so Open vSwitch does (ofproto-dpif's rule_insert forwards the old
  // rule's stats), and the controller's flow-mods set no flags
  // (controller/ryuapp/ofp.py flow_add): a changed rule that an ordered
  // diff re-adds keeps counting where it was. Returns the entry.
  const FlowEntry& AddFlow(const std::string& line) {
    FlowEntry e = ParseFlow(line);
    for (const Action& a : e.actions)
      if (a.kind == Action::kGroup && !groups_.count(a.arg))
        throw std::invalid_argument("flow outputs to missing group " + std::to_string(a.arg));
    std::vector<std::unique_ptr<FlowEntry>>& table = tables_[e.table];
    for (auto& old : table) {
      if (old->priority == e.priority && old->match == e.match) {
        e.id = old->id;
        e.counters = old->counters;
        *old = std::move(e);
        return *old;
      }
    }
    e.id = next_id_++;
    // after every entry of at least its priority: equal priorities keep arrival order
    auto at = std::find_if(table.begin(), table.end(),
                           [&](const auto& other) { return other->priority < e.priority; });
    return **table.insert(at, std::make_unique<FlowEntry>(std::move(e)));
  }

  // OFPFC_DELETE_STRICT: the entry of the record's table, priority and
  // match (its actions are ignored); false when there is none.
  bool DeleteFlowStrict(const std::string& line) {
    FlowEntry e = ParseFlow(line);
    auto& table = tables_[e.table];
    auto it = std::find_if(table.begin(), table.end(), [&](const auto& old) {
      return old->priority == e.priority && old->match == e.match;
    });
    if (it == table.end()) return false;
    table.erase(it);
    return true;
  }

  // OFPFC_DELETE of every entry of ``table`` whose match is at least as
  // specific as metadata=value/mask (an entry not matching metadata is
  // less specific and stays). Returns how many went.
  size_t DeleteFlows(int table, uint64_t value, uint64_t mask) {
    auto& entries = tables_[table];
    size_t before = entries.size();
    entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const auto& e) {
      return std::any_of(e->match.begin(), e->match.end(), [&](const MatchTerm& t) {
        return t.field == Field::kMetadata && (t.mask & mask) == mask && (t.value & mask) == (value & mask);
      });
    }), entries.end());
    return before - entries.size();
  }

  // OFPGC_ADD of a new group.
  void AddGroup(GroupEntry g) {
    CheckFlowletTimeout(g);
    uint32_t id = g.id;
    if (!groups_.emplace(id, std::move(g)).second)
      throw std::invalid_argument("duplicate group " + std::to_string(id));
  }

  // OFPGC_ADD of a new group or OFPGC_MODIFY of an existing one: the
  // buckets are replaced and the counters start again at 0, as Open
  // vSwitch's group_modify constructs the modified group's stats afresh.
  void AddOrModifyGroup(GroupEntry g) {
    CheckFlowletTimeout(g);
    uint32_t id = g.id;
    groups_[id] = std::move(g);
  }

  // OFPGC_DELETE: the group and, as OpenFlow 1.3 has it, every entry that
  // outputs to it. False when there is no such group.
  bool DeleteGroup(uint32_t id) {
    if (!groups_.erase(id)) return false;
    for (auto& [table, entries] : tables_)
      entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const auto& e) {
        return std::any_of(e->actions.begin(), e->actions.end(),
                           [&](const Action& a) { return a.kind == Action::kGroup && a.arg == id; });
      }), entries.end());
    return true;
  }

  // Every entry, in id order (the export's order, then run-time adds).
  std::vector<const FlowEntry*> Entries() const {
    std::vector<const FlowEntry*> all;
    for (const auto& [table, entries] : tables_)
      for (const auto& e : entries) all.push_back(e.get());
    std::sort(all.begin(), all.end(), [](auto a, auto b) { return a->id < b->id; });
    return all;
  }
  const std::map<uint32_t, GroupEntry>& Groups() const { return groups_; }

 private:
  void CheckFlowletTimeout(const GroupEntry& g) {
    if (g.kind != GroupEntry::kFlowlet) return;
    if (!flowlets_)
      flowlets_ = std::make_unique<Flowlets>(g.flowlet_timeout_ns);
    else if (flowlets_->checker.delta_ns() != g.flowlet_timeout_ns)
      throw std::invalid_argument("flowlet groups of one switch share its table's timeout");
  }

  const FlowEntry* Lookup(int table, const PacketFields& p) const {
    auto it = tables_.find(table);
    if (it == tables_.end()) return nullptr;
    for (const auto& e : it->second)
      if (e->Matches(p)) return e.get();
    return nullptr;
  }

  template <class Live>
  Bucket* PickBucket(GroupEntry& g, const PacketFields& p, const Live& live) {
    auto alive = [&](const Bucket& b) { return b.watch_port < 0 || live(uint32_t(b.watch_port)); };
    if (g.kind == GroupEntry::kFastFailover) {
      for (Bucket& b : g.buckets)
        if (alive(b)) return &b;
      return nullptr;
    }
    if (g.kind == GroupEntry::kFlowlet) return PickFlowletBucket(g, p, alive);
    if (g.default_method) {
      uint32_t basis = SymmetricL4Hash(p), best_score = 0;
      Bucket* best = nullptr;
      for (uint32_t id = 0; id < g.buckets.size(); ++id) {
        uint32_t score = OvsHashInt(id, basis) & 0xffff;
        if (alive(g.buckets[id]) && score >= best_score) best = &g.buckets[id], best_score = score;
      }
      return best;
    }
    uint32_t hash = SymmetricL3L4Hash(p);
    for (uint32_t i = 0; i <= g.hash_mask; ++i) {
      Bucket& b = g.buckets[((hash + i) & g.hash_mask) % g.buckets.size()];
      if (alive(b)) return &b;
    }
    return nullptr;
  }

  template <class Alive>
  Bucket* PickFlowletBucket(GroupEntry& g, const PacketFields& p, const Alive& alive) {
    if (std::none_of(g.buckets.begin(), g.buckets.end(), alive)) return nullptr;
    flowlets_->checker.RunUntil(now_ns_, flowlets_->table);
    uint64_t hash = letflow::HashFiveTuple(p.ipv4_src, p.ipv4_dst, p.ip_proto, p.tp_src, p.tp_dst,
                                           flowlet_salt_);
    auto choose = [&] {
      std::vector<double> live;
      for (const Bucket& b : g.buckets) live.push_back(alive(b) ? 1 : 0);
      return letflow::WeightedChoice(live).PickRandom(rng_);
    };
    // An entry of another group with more buckets may hold an index this one lacks.
    auto usable = [&](uint16_t i) { return i < g.buckets.size() && alive(g.buckets[i]); };
    letflow::FlowletTable::Decision d = flowlets_->table.Lookup(hash, choose, usable);
    g.flowlets += d.new_flowlet;
    return &g.buckets[d.port];
  }

  template <class Live>
  void Apply(const std::vector<Action>& actions, PacketFields& p, uint32_t bytes, const Live& live,
             bool* dec_ttl, bool* to_controller, int* out) {
    for (const Action& a : actions) {
      switch (a.kind) {
        case Action::kOutput: *out = int(a.arg); break;
        case Action::kInPort: *out = int(p.in_port); break;
        case Action::kDecTtl: *dec_ttl = true; break;
        case Action::kController: if (to_controller) *to_controller = true; break;
        case Action::kSetField: SetField(p, a.field, a.value); break;
        case Action::kMove: {
          uint64_t mask = detail::LowBits(a.arg ? a.arg : FieldBits(a.field));
          SetField(p, a.field, (GetField(p, a.field) & ~mask) | (GetField(p, a.src) & mask));
          break;
        }
        case Action::kGroup: {
          GroupEntry& g = groups_.at(a.arg);
          g.counters.Hit(bytes);
          Bucket* b = PickBucket(g, p, live);
          if (b) {
            b->counters.Hit(bytes);
            Apply(b->actions, p, bytes, live, dec_ttl, to_controller, out);
          }
          break;
        }
      }
    }
  }

  template <class Live>
  int Run(PacketFields& p, uint32_t bytes, const Live& live, bool* dec_ttl, bool* to_controller) {
    *dec_ttl = false;
    if (to_controller) *to_controller = false;
    int out = -1;
    for (int table = 0; table >= 0;) {
      FlowEntry* e = const_cast<FlowEntry*>(Lookup(table, p));
      if (!e) return -1;  // a table miss with no miss entry drops (OpenFlow 1.3)
      e->counters.Hit(bytes);
      Apply(e->actions, p, bytes, live, dec_ttl, to_controller, &out);
      if (e->writes_metadata)
        p.metadata = (p.metadata & ~e->metadata_mask) | (e->metadata_value & e->metadata_mask);
      if (e->goto_table >= 0 && e->goto_table <= table)
        throw std::logic_error("goto_table must go forward: " + e->line);
      table = e->goto_table;
    }
    return out;
  }

  std::map<int, std::vector<std::unique_ptr<FlowEntry>>> tables_;  // highest priority first
  std::map<uint32_t, GroupEntry> groups_;
  uint64_t next_id_ = 0;

  // LetFlow's flowlet table, one per switch as in the paper, made with the
  // switch's first flowlet group.
  struct Flowlets {
    explicit Flowlets(uint64_t timeout_ns) : checker(timeout_ns) {}
    letflow::FlowletTable table{letflow::kPaperTableSize};
    letflow::PacketClockChecker checker;
  };
  std::unique_ptr<Flowlets> flowlets_;
  std::mt19937_64 rng_{1};
  uint64_t flowlet_salt_ = 0;
  uint64_t now_ns_ = 0;  // the packet being forwarded arrived then
};

}  // namespace dcfabric
