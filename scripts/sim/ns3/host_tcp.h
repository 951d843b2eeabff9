// What dcfabric's ns-3 simulators share (scripts/sim/ns3/fattree_sim.cc,
// scripts/letflow/ns3/letflow_sim.cc): the hosts' TCP defaults for
// datacenter round trips, and a main() that runs a scenario file.
#pragma once

#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

namespace dcfabric {

// Every host's TCP socket: 1448-byte segments (a 1500-byte MTU with
// timestamps), an ACK per segment, ``buffer_bytes`` send and receive buffers
// and a minimum RTO of ``min_rto_us``.
inline void ConfigureHostTcp(double min_rto_us, uint32_t buffer_bytes) {
  using namespace ns3;
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  // An ACK per segment: with ns-3's one per two, two CUBIC flows sharing a
  // 1 Gbit/s drop-tail port locked one out (1-17 Mbit/s against 950, its
  // window stuck in 5 ms RTO cycles); per-segment ACKs shared it 451-513.
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  // ns-3's 1 s minimum RTO (Linux: 200 ms) would turn a datacenter loss into a stall.
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(min_rto_us)));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(10)));
  // Likewise its 3 s SYN timeout: one dropped SYN would dominate a mean FCT.
  Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(MicroSeconds(min_rto_us)));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buffer_bytes));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buffer_bytes));
}

// Each line of a scenario file but blanks and # comments, as its key and a
// stream of the values after it: ``read(key, values)`` stores them and says
// whether they parsed (false: the line is named in the error); it throws for
// a key it does not know.
template <class Read>
void ForEachScenarioLine(const std::string& path, Read read) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot open scenario file " + path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream values(line);
    std::string key;
    if (!(values >> key) || key[0] == '#') continue;
    if (!read(key, values)) throw std::invalid_argument("bad value in scenario line: " + line);
  }
}

// ``program SCENARIO_FILE``: run(read(path), std::cout); a bad scenario or
// a failure mid-run exits 2 with its reason on stderr.
template <class Read, class Run>
int ScenarioMain(int argc, char** argv, const std::string& program, Read read, Run run) {
  if (argc != 2) {
    std::cerr << "usage: " << program << " SCENARIO_FILE\n";
    return 2;
  }
  try {
    run(read(argv[1]), std::cout);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << '\n';
    return 2;
  }
  return 0;
}

}  // namespace dcfabric
