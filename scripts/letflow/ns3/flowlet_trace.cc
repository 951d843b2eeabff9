// Drives letflow::FlowletTable under a controlled clock, for tests: no ns-3.
// stdin: first line "table_size delta_ns seed w0 w1 ...", then one packet per
// line "time_ns hash".  The checker runs at every multiple of delta_ns up to
// and including a packet's time, before that packet is looked up.
// stdout: one line per packet "port new_flowlet(0|1)".
#include <cstdint>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../sim/ns3/flowlet_table.h"

int main() {
  try {
    std::string line;
    if (!std::getline(std::cin, line)) throw std::invalid_argument("empty input");
    std::istringstream header(line);
    size_t table_size;
    uint64_t delta_ns, seed;
    if (!(header >> table_size >> delta_ns >> seed) || delta_ns == 0)
      throw std::invalid_argument("header must be: table_size delta_ns(>0) seed weights...");
    std::vector<double> weights;
    for (double w; header >> w;) weights.push_back(w);
    letflow::WeightedChoice choice(weights);
    letflow::FlowletTable table(table_size);
    std::mt19937_64 rng(seed);
    letflow::PacketClockChecker checker(delta_ns);
    uint64_t time_ns, hash;
    while (std::cin >> time_ns >> hash) {
      checker.RunUntil(time_ns, table);
      auto d = table.Lookup(hash, [&] { return choice.PickRandom(rng); });
      std::cout << d.port << ' ' << (d.new_flowlet ? 1 : 0) << '\n';
    }
  } catch (const std::exception& e) {
    std::cerr << "flowlet_trace: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
