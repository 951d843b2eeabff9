// LetFlow flowlet table as in section 3 of the LetFlow paper (NSDI 2017):
// entries of {port, valid bit, age bit} indexed by a hash of the 5-tuple, and
// a checker that runs every Delta.  Kept free of ns-3 types so the same code is
// driven by both simulators (the LetFlow leaf-spine's load balancer, the
// fat-tree pipeline's flowlet groups) and by the controlled-clock trace tool
// in tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace letflow {

// Picks an index with probability proportional to its weight.
class WeightedChoice {
 public:
  explicit WeightedChoice(const std::vector<double>& weights) {
    if (weights.empty()) throw std::invalid_argument("no weights given");
    double total = 0;
    for (double w : weights) {
      if (!(w >= 0)) throw std::invalid_argument("negative or NaN weight");
      total += w;
      cumulative_.push_back(total);
    }
    if (total <= 0) throw std::invalid_argument("weights sum to zero");
    for (double& c : cumulative_) c /= total;
  }
  size_t size() const { return cumulative_.size(); }
  // u in [0, 1): the same mapping serves per-flow hashing (u from the hash)
  // and random choices (u from a generator).
  size_t Pick(double u) const {
    for (size_t i = 0; i < cumulative_.size(); ++i)
      if (u < cumulative_[i]) return i;
    return cumulative_.size() - 1;
  }
  template <class Rng>
  size_t PickRandom(Rng& rng) const {
    return Pick(std::uniform_real_distribution<double>(0.0, 1.0)(rng));
  }

 private:
  std::vector<double> cumulative_;
};

// The paper's table: 64K entries (section 3, its hardware cost).
constexpr size_t kPaperTableSize = 65536;

class FlowletTable {
 public:
  struct Entry {
    uint16_t port = 0;
    bool valid = false;
    bool age = false;
  };
  struct Decision {
    uint16_t port;
    bool new_flowlet;
  };

  explicit FlowletTable(size_t size) : entries_(size) {
    if (size == 0) throw std::invalid_argument("flowlet table size must be positive");
  }
  size_t size() const { return entries_.size(); }
  const Entry& entry(size_t index) const { return entries_.at(index); }

  // A packet whose 5-tuple hashes to `hash`: an active entry keeps its port and
  // clears the age bit; an invalid one starts a new flowlet on the port that
  // `choose()` returns.  Flows colliding on one index share the entry, as in
  // hardware.
  template <class Chooser>
  Decision Lookup(uint64_t hash, Chooser&& choose) {
    return Lookup(hash, choose, [](uint16_t) { return true; });
  }

  // As above, but an active entry whose port `usable(port)` refuses (its link
  // went down) starts a new flowlet too.
  template <class Chooser, class Usable>
  Decision Lookup(uint64_t hash, Chooser&& choose, Usable&& usable) {
    size_t index = hash % entries_.size();
    Entry& e = entries_[index];
    if (e.valid && usable(e.port)) {
      e.age = false;
      return {e.port, false};
    }
    if (!e.valid) active_.push_back(static_cast<uint32_t>(index));
    e.port = static_cast<uint16_t>(choose());
    e.valid = true;
    e.age = false;
    return {e.port, true};
  }

  // The checker, run every Delta: sets the age bit of entries that have it
  // clear and invalidates entries whose age bit was already set, so an entry
  // expires after Delta..2*Delta of silence.  It only visits entries that are
  // valid (tracked in active_): invalid entries are untouched by the checker,
  // so skipping them is equivalent to sweeping the whole table and keeps a 64K
  // table cheap when the simulator runs it every few hundred microseconds.
  void Age() {
    size_t kept = 0;
    for (uint32_t index : active_) {
      Entry& e = entries_[index];
      if (e.age) {
        e.valid = false;
      } else {
        e.age = true;
        active_[kept++] = index;
      }
    }
    active_.resize(kept);
  }

 private:
  std::vector<Entry> entries_;
  std::vector<uint32_t> active_;
};

// The checker driven by packets' timestamps instead of a timer: before the
// packet at `now_ns` is looked up, it runs the checks due at every multiple of
// Delta up to and including `now_ns`, as a timer every Delta from time 0
// would.  Two checks expire every entry, so a long silence costs two sweeps.
class PacketClockChecker {
 public:
  explicit PacketClockChecker(uint64_t delta_ns) : delta_ns_(delta_ns), next_ns_(delta_ns) {
    if (delta_ns == 0) throw std::invalid_argument("the flowlet timeout must be positive");
  }
  uint64_t delta_ns() const { return delta_ns_; }

  void RunUntil(uint64_t now_ns, FlowletTable& table) {
    if (now_ns < next_ns_) return;
    uint64_t due = (now_ns - next_ns_) / delta_ns_ + 1;
    for (uint64_t i = 0; i < std::min<uint64_t>(due, 2); ++i) table.Age();
    next_ns_ += due * delta_ns_;
  }

 private:
  uint64_t delta_ns_, next_ns_;
};

// 64-bit mix of a 5-tuple (splitmix64 finaliser) with a per-switch salt, so
// different switches hash the same flow independently.
inline uint64_t HashFiveTuple(uint32_t src, uint32_t dst, uint8_t proto,
                              uint16_t sport, uint16_t dport, uint64_t salt) {
  uint64_t x = salt ^ (uint64_t(src) << 32 | dst) ^
               (uint64_t(proto) << 48 | uint64_t(sport) << 16 | dport) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

}  // namespace letflow
