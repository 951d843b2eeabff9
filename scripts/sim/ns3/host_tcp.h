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

// A sender's TCP socket: ns-3's, but for one state its own assertion
// rejects. ns-3 counts duplicate ACKs in CWR (its ECN response, which DCTCP
// enters on every ECE) and keeps the count when an ACK past the recovery
// point ends CWR; if that ACK also SACKs new data (a packet reordered or
// lost in the window) it counts as a duplicate ACK in OPEN, the count
// reaches 2, and NS_ASSERT "From OPEN->DISORDER but with 2 dup ACKs" stops
// the run. Its own exit from recovery to OPEN resets the count; this resets
// it on the exit from CWR as well.
class HostTcpSocket : public ns3::TcpSocketBase {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("dcfabric::HostTcpSocket")
                                 .SetParent<ns3::TcpSocketBase>()
                                 .SetGroupName("Internet")
                                 .AddConstructor<HostTcpSocket>();
    return tid;
  }
  HostTcpSocket() = default;
  HostTcpSocket(const HostTcpSocket&) = default;

 protected:
  ns3::Ptr<ns3::TcpSocketBase> Fork() override { return ns3::CopyObject<HostTcpSocket>(this); }
  void ReceivedAck(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& header) override {
    if (m_tcb->m_congState == ns3::TcpSocketState::CA_CWR && header.GetAckNumber() > m_recover)
      m_dupAckCount = 0;
    ns3::TcpSocketBase::ReceivedAck(packet, header);
  }
};

// The socket factory a host's applications name to get HostTcpSocket
// (aggregate one to each host node): ns-3's TcpL4Protocol::CreateSocket
// with the node's own congestion control, recovery and RTT estimator types.
class HostTcpSocketFactory : public ns3::SocketFactory {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("dcfabric::HostTcpSocketFactory")
                                 .SetParent<ns3::SocketFactory>()
                                 .SetGroupName("Internet");
    return tid;
  }
  ns3::Ptr<ns3::Socket> CreateSocket() override {
    using namespace ns3;
    Ptr<TcpL4Protocol> tcp = GetObject<TcpL4Protocol>();
    TypeIdValue congestion, recovery, rtt;
    tcp->GetAttribute("SocketType", congestion);
    tcp->GetAttribute("RecoveryType", recovery);
    tcp->GetAttribute("RttEstimatorType", rtt);
    ObjectFactory make;
    Ptr<HostTcpSocket> socket = CreateObject<HostTcpSocket>();
    socket->SetNode(GetObject<Node>());
    socket->SetTcp(tcp);
    make.SetTypeId(rtt.Get());
    socket->SetRtt(make.Create<RttEstimator>());
    make.SetTypeId(congestion.Get());
    socket->SetCongestionControlAlgorithm(make.Create<TcpCongestionOps>());
    make.SetTypeId(recovery.Get());
    socket->SetRecoveryAlgorithm(make.Create<TcpRecoveryOps>());
    tcp->AddSocket(socket);
    return socket;
  }
};

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
