// Leaf-spine packet simulation of LetFlow and the flow-oblivious baselines on
// ns-3.  The whole scenario is one C++ program (not Python bindings): a run
// then costs no 8-9 s cppyy import, per-packet switch logic stays in C++ (a
// Python routing subclass fails in the forwarding callback), and the Python
// driver parallelises independent runs as plain subprocesses.
//
// Input: a scenario file of "key value..." lines written by
// scripts/letflow/ns3_experiments.py (see ScenarioFile below).  Output: JSON on
// stdout with per-flow completion times, per-leaf per-spine counters and the
// number of flows per spine path over time.
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "../../sim/ns3/host_tcp.h"
#include "../../sim/ns3/flowlet_table.h"

using namespace ns3;

namespace {

enum class Scheme { kEcmp, kWcmp, kSpray, kLetFlow };

struct FlowSpec {
  int id, src_leaf, src_host, dst_leaf, dst_host;
  double start_s;
  uint64_t bytes;  // 0: long-lived, sends until the end of the run
};

struct Scenario {
  uint64_t seed = 1;
  Scheme scheme = Scheme::kLetFlow;
  double flowlet_timeout_us = 500;
  size_t flowlet_table_size = letflow::kPaperTableSize;
  int leaves = 2, spines = 2, hosts_per_leaf = 8;
  double host_rate_gbps = 1, link_delay_us = 10;
  uint32_t queue_packets = 100;
  double min_rto_us = 5000;
  uint32_t tcp_window_bytes = 0;  // 0: ns-3 default buffers
  double stop_s = 1;
  // Flows starting in [measure_from_s, measure_until_s] are measured; the run
  // ends once they have all completed (or at stop_s).
  double measure_from_s = 0, measure_until_s = 1e300;
  double sample_interval_us = 1000;
  std::map<std::pair<int, int>, double> link_gbps;  // (leaf, spine); absent = failed
  std::vector<double> spine_weights;
  std::vector<FlowSpec> flows;
};

Scheme ParseScheme(const std::string& name) {
  if (name == "ecmp") return Scheme::kEcmp;
  if (name == "wcmp") return Scheme::kWcmp;
  if (name == "spray") return Scheme::kSpray;
  if (name == "letflow") return Scheme::kLetFlow;
  throw std::invalid_argument("unknown scheme '" + name + "'");
}

Scenario ReadScenario(const std::string& path) {
  Scenario s;
  dcfabric::ForEachScenarioLine(path, [&](const std::string& key, std::istringstream& f) {
    bool ok = true;
    if (key == "seed") ok = bool(f >> s.seed);
    else if (key == "scheme") { std::string n; ok = bool(f >> n); s.scheme = ParseScheme(n); }
    else if (key == "flowlet_timeout_us") ok = bool(f >> s.flowlet_timeout_us);
    else if (key == "flowlet_table_size") ok = bool(f >> s.flowlet_table_size);
    else if (key == "leaves") ok = bool(f >> s.leaves);
    else if (key == "spines") ok = bool(f >> s.spines);
    else if (key == "hosts_per_leaf") ok = bool(f >> s.hosts_per_leaf);
    else if (key == "host_rate_gbps") ok = bool(f >> s.host_rate_gbps);
    else if (key == "link_delay_us") ok = bool(f >> s.link_delay_us);
    else if (key == "queue_packets") ok = bool(f >> s.queue_packets);
    else if (key == "min_rto_us") ok = bool(f >> s.min_rto_us);
    else if (key == "tcp_window_bytes") ok = bool(f >> s.tcp_window_bytes);
    else if (key == "stop_s") ok = bool(f >> s.stop_s);
    else if (key == "measure_from_s") ok = bool(f >> s.measure_from_s);
    else if (key == "measure_until_s") ok = bool(f >> s.measure_until_s);
    else if (key == "sample_interval_us") ok = bool(f >> s.sample_interval_us);
    else if (key == "link") {
      int l, sp; double g;
      ok = bool(f >> l >> sp >> g);
      s.link_gbps[{l, sp}] = g;
    } else if (key == "weights") {
      for (double w; f >> w;) s.spine_weights.push_back(w);
    } else if (key == "flow") {
      FlowSpec fl;
      ok = bool(f >> fl.id >> fl.src_leaf >> fl.src_host >> fl.dst_leaf >> fl.dst_host >>
                fl.start_s >> fl.bytes);
      s.flows.push_back(fl);
    } else {
      throw std::invalid_argument("unknown scenario key '" + key + "'");
    }
    return ok;
  });
  if (s.flowlet_timeout_us <= 0) throw std::invalid_argument("flowlet_timeout_us must be > 0");
  if ((int)s.spine_weights.size() != s.spines)
    throw std::invalid_argument("need one weight per spine");
  return s;
}

// Addresses: host h of leaf l is 10.l.h.2 (leaf side 10.l.h.1); the link from
// leaf l to spine s is 172.(16+s).l.0/24 with the leaf at .1, the spine at .2.
Ipv4Address HostAddress(int leaf, int host) {
  return Ipv4Address((10u << 24) | (uint32_t(leaf) << 16) | (uint32_t(host) << 8) | 2u);
}
Ipv4Address FabricAddress(int leaf, int spine, int end) {
  return Ipv4Address((172u << 24) | (uint32_t(16 + spine) << 16) | (uint32_t(leaf) << 8) |
                     uint32_t(end));
}

struct PathCounters {
  uint64_t packets = 0, bytes = 0, data_bytes = 0, flowlets = 0;
};

// The leaf switch's load balancer: routes every packet bound to another leaf
// through an uplink chosen by the scheme; everything else falls through to
// the static routes at lower priority in the Ipv4ListRouting.
class LeafLoadBalancer : public Ipv4RoutingProtocol {
 public:
  struct Uplink {
    int spine;
    Ipv4Address gateway;
    Ptr<NetDevice> device;
  };

  LeafLoadBalancer(int leaf, const Scenario& sc, std::vector<Uplink> uplinks,
                   const std::map<int, std::vector<int>>& uplinks_to_leaf)
      : leaf_(leaf),
        scheme_(sc.scheme),
        uplinks_(std::move(uplinks)),
        table_(sc.flowlet_table_size),
        delta_(MicroSeconds(sc.flowlet_timeout_us)),
        rng_(sc.seed * 1000003 + leaf),
        salt_(rng_()),
        counters_(sc.spines) {
    for (const auto& [dst_leaf, idx] : uplinks_to_leaf) {
      std::vector<double> w;
      for (int i : idx)
        w.push_back(scheme_ == Scheme::kEcmp ? 1.0 : sc.spine_weights[uplinks_[i].spine]);
      choices_.emplace(dst_leaf, Choice{idx, letflow::WeightedChoice(w)});
    }
    if (scheme_ == Scheme::kLetFlow) Simulator::Schedule(delta_, &LeafLoadBalancer::Check, this);
  }

  const std::vector<PathCounters>& counters() const { return counters_; }
  // Flows (5-tuples carrying payload) whose latest data packet took each spine.
  std::vector<int> FlowsPerSpine() const {
    std::vector<int> n(counters_.size(), 0);
    for (const auto& [key, spine] : flow_spine_) n[spine]++;
    return n;
  }

  Ptr<Ipv4Route> RouteOutput(Ptr<Packet>, const Ipv4Header&, Ptr<NetDevice>,
                             Socket::SocketErrno& err) override {
    err = Socket::ERROR_NOROUTETOHOST;  // a switch originates nothing
    return nullptr;
  }

  bool RouteInput(Ptr<const Packet> p, const Ipv4Header& ip, Ptr<const NetDevice>,
                  const UnicastForwardCallback& ucb, const MulticastForwardCallback&,
                  const LocalDeliverCallback&, const ErrorCallback&) override {
    uint32_t dst = ip.GetDestination().Get();
    int dst_leaf = (dst >> 16) & 0xff;
    auto it = choices_.find(dst_leaf);
    if ((dst >> 24) != 10 || dst_leaf == leaf_ || it == choices_.end()) return false;
    const Choice& c = it->second;

    TcpHeader tcp;
    uint16_t sport = 0, dport = 0;
    uint32_t payload = 0;
    if (ip.GetProtocol() == TcpL4Protocol::PROT_NUMBER && p->PeekHeader(tcp)) {
      sport = tcp.GetSourcePort();
      dport = tcp.GetDestinationPort();
      payload = p->GetSize() - tcp.GetSerializedSize();
    }
    uint64_t hash = letflow::HashFiveTuple(ip.GetSource().Get(), dst, ip.GetProtocol(), sport,
                                           dport, salt_);
    size_t pick;
    bool new_flowlet = false;
    switch (scheme_) {
      case Scheme::kEcmp:
      case Scheme::kWcmp:
        pick = c.weights.Pick(double(hash >> 11) * 0x1.0p-53);
        break;
      case Scheme::kSpray:
        pick = c.weights.PickRandom(rng_);
        break;
      case Scheme::kLetFlow: {
        auto d = table_.Lookup(hash, [&] { return c.weights.PickRandom(rng_); });
        pick = d.port;
        new_flowlet = d.new_flowlet;
        // Flows to different leaves may collide on one entry; the stored port
        // is an index into the first leaf's candidate list and may not fit the
        // second (hardware stores a port and has the same ambiguity).
        if (pick >= c.uplink_index.size()) pick %= c.uplink_index.size();
        break;
      }
    }
    const Uplink& up = uplinks_[c.uplink_index[pick]];
    PathCounters& pc = counters_[up.spine];
    pc.packets++;
    pc.bytes += p->GetSize() + ip.GetSerializedSize();
    pc.data_bytes += payload;
    pc.flowlets += new_flowlet;
    if (payload > 0) flow_spine_[hash] = up.spine;

    Ptr<Ipv4Route> route = Create<Ipv4Route>();
    route->SetDestination(ip.GetDestination());
    route->SetGateway(up.gateway);
    route->SetSource(ip.GetSource());
    route->SetOutputDevice(up.device);
    ucb(route, p, ip);
    return true;
  }

  void NotifyInterfaceUp(uint32_t) override {}
  void NotifyInterfaceDown(uint32_t) override {}
  void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
  void SetIpv4(Ptr<Ipv4>) override {}
  void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const override {}

 private:
  struct Choice {
    std::vector<int> uplink_index;
    letflow::WeightedChoice weights;
  };

  void Check() {
    table_.Age();
    Simulator::Schedule(delta_, &LeafLoadBalancer::Check, this);
  }

  int leaf_;
  Scheme scheme_;
  std::vector<Uplink> uplinks_;
  std::map<int, Choice> choices_;
  letflow::FlowletTable table_;
  Time delta_;
  std::mt19937_64 rng_;
  uint64_t salt_;
  std::vector<PathCounters> counters_;
  std::map<uint64_t, int> flow_spine_;
};

struct FlowState {
  uint64_t received = 0;
  double finish_s = -1;
};

// One transmit queue (one direction of a link): where the bottleneck is shows
// up as its utilisation and its occupancy.  Drops are counted per node (see
// node_drops in Run).
struct LinkStats {
  std::string name, kind;  // kind: host-up, host-down, fabric-up, fabric-down
  uint64_t tx_bytes = 0, tx_bytes_sampled = 0;
  uint32_t queue = 0, max_queue = 0;
};

std::string Gbps(double g) { return std::to_string(g * 1e3) + "Mbps"; }

void Run(const Scenario& sc, std::ostream& out) {
  RngSeedManager::SetSeed(sc.seed);
  // A given window caps the advertised one through the receive buffer: the paper's 256 KB.
  dcfabric::ConfigureHostTcp(sc.min_rto_us, sc.tcp_window_bytes > 0 ? sc.tcp_window_bytes : 1 << 22);

  NodeContainer leaves, spines, hosts;
  leaves.Create(sc.leaves);
  spines.Create(sc.spines);
  hosts.Create(sc.leaves * sc.hosts_per_leaf);
  InternetStackHelper stack;
  Ipv4ListRoutingHelper list;
  Ipv4StaticRoutingHelper static_routing;
  list.Add(static_routing, 0);
  stack.SetRoutingHelper(list);
  stack.Install(leaves);
  stack.Install(spines);
  stack.Install(hosts);
  // Without a queue disc a full device queue stops its transmit queue, and
  // the node's traffic-control layer drops what IP hands it for that device:
  // drops are visible per node, not per device queue.
  std::vector<std::pair<std::string, uint64_t>> node_drops;  // in the order leaves, spines, hosts
  for (int l = 0; l < sc.leaves; ++l) node_drops.push_back({"L" + std::to_string(l), 0});
  for (int s = 0; s < sc.spines; ++s) node_drops.push_back({"S" + std::to_string(s), 0});
  for (int l = 0; l < sc.leaves; ++l)
    for (int h = 0; h < sc.hosts_per_leaf; ++h)
      node_drops.push_back({"H" + std::to_string(l) + "." + std::to_string(h), 0});
  NodeContainer all_nodes(leaves, spines, hosts);
  for (uint32_t i = 0; i < all_nodes.GetN(); ++i) {
    uint64_t* counter = &node_drops[i].second;
    if (!all_nodes.Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop", Callback<void, Ptr<const Packet>>([counter](Ptr<const Packet>) { (*counter)++; })))
      throw std::runtime_error("ns-3 TrafficControlLayer has no TcDrop trace source");
  }

  PointToPointHelper p2p;
  p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(sc.link_delay_us)));
  p2p.SetQueue("ns3::DropTailQueue",
               "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, sc.queue_packets)));
  TrafficControlHelper no_qdisc;  // DropTail switches: remove ns-3's default fq_codel
  Ipv4AddressHelper addr;

  std::vector<std::unique_ptr<LinkStats>> links;
  auto watch = [&](Ptr<NetDevice> dev, std::string name, std::string kind) {
    links.push_back(std::make_unique<LinkStats>(LinkStats{std::move(name), std::move(kind)}));
    LinkStats* st = links.back().get();
    dev->TraceConnectWithoutContext(
        "PhyTxEnd", Callback<void, Ptr<const Packet>>(
                        [st](Ptr<const Packet> p) { st->tx_bytes += p->GetSize(); }));
    Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
    q->TraceConnectWithoutContext(
        "PacketsInQueue", Callback<void, uint32_t, uint32_t>([st](uint32_t, uint32_t n) {
          st->queue = n;
          st->max_queue = std::max(st->max_queue, n);
        }));
  };
  // Devices come back as (a's end, b's end); each end transmits a -> b resp. b -> a.
  auto connect = [&](Ptr<Node> a, Ptr<Node> b, double gbps, Ipv4Address network,
                     const std::string& a_name, const std::string& b_name, const std::string& up,
                     const std::string& down) {
    p2p.SetDeviceAttribute("DataRate", StringValue(Gbps(gbps)));
    NetDeviceContainer d = p2p.Install(a, b);
    addr.SetBase(network, "255.255.255.0");
    addr.Assign(d);
    no_qdisc.Uninstall(d);
    watch(d.Get(0), a_name + "->" + b_name, up);
    watch(d.Get(1), b_name + "->" + a_name, down);
    return d;
  };

  for (int l = 0; l < sc.leaves; ++l)
    for (int h = 0; h < sc.hosts_per_leaf; ++h) {
      Ptr<Node> host = hosts.Get(l * sc.hosts_per_leaf + h);
      std::string host_name = "H" + std::to_string(l) + "." + std::to_string(h);
      connect(leaves.Get(l), host, sc.host_rate_gbps,
              Ipv4Address((10u << 24) | (uint32_t(l) << 16) | (uint32_t(h) << 8)),
              "L" + std::to_string(l), host_name, "host-down", "host-up");
      static_routing.GetStaticRouting(host->GetObject<Ipv4>())
          ->SetDefaultRoute(Ipv4Address((10u << 24) | (uint32_t(l) << 16) | (uint32_t(h) << 8) | 1u), 1);
    }

  std::vector<std::vector<LeafLoadBalancer::Uplink>> uplinks(sc.leaves);
  std::vector<std::set<int>> spines_of_leaf(sc.leaves);
  std::vector<std::pair<int, Ptr<NetDevice>>> spine_downlinks;  // (spine, device)
  for (const auto& [ls, gbps] : sc.link_gbps) {
    auto [l, s] = ls;
    if (l < 0 || l >= sc.leaves || s < 0 || s >= sc.spines)
      throw std::invalid_argument("link names a leaf or spine that does not exist");
    NetDeviceContainer d = connect(leaves.Get(l), spines.Get(s), gbps, FabricAddress(l, s, 0),
                                   "L" + std::to_string(l), "S" + std::to_string(s), "fabric-up",
                                   "fabric-down");
    uplinks[l].push_back({s, FabricAddress(l, s, 2), d.Get(0)});
    spines_of_leaf[l].insert(s);
    spine_downlinks.push_back({s, d.Get(1)});
    Ptr<Ipv4> sip = spines.Get(s)->GetObject<Ipv4>();
    static_routing.GetStaticRouting(sip)->AddNetworkRouteTo(
        Ipv4Address((10u << 24) | (uint32_t(l) << 16)), Ipv4Mask("255.255.0.0"),
        FabricAddress(l, s, 1), sip->GetInterfaceForDevice(d.Get(1)));
  }

  std::vector<Ptr<LeafLoadBalancer>> balancers;
  for (int l = 0; l < sc.leaves; ++l) {
    std::map<int, std::vector<int>> to_leaf;  // destination leaf -> usable uplinks
    for (int m = 0; m < sc.leaves; ++m) {
      if (m == l) continue;
      for (size_t i = 0; i < uplinks[l].size(); ++i)
        if (spines_of_leaf[m].count(uplinks[l][i].spine)) to_leaf[m].push_back(int(i));
    }
    auto lb = Create<LeafLoadBalancer>(l, sc, uplinks[l], to_leaf);
    Ptr<Ipv4ListRouting> lr =
        DynamicCast<Ipv4ListRouting>(leaves.Get(l)->GetObject<Ipv4>()->GetRoutingProtocol());
    lr->AddRoutingProtocol(lb, 10);
    balancers.push_back(lb);
  }

  std::vector<uint64_t> spine_tx_packets(sc.spines, 0);
  for (auto& [s, dev] : spine_downlinks) {
    int spine = s;
    dev->TraceConnectWithoutContext(
        "PhyTxBegin", Callback<void, Ptr<const Packet>>(
                          [&spine_tx_packets, spine](Ptr<const Packet>) { spine_tx_packets[spine]++; }));
  }

  std::vector<FlowState> state(sc.flows.size());
  // Finite-flow runs end 10 ms (many RTTs, so the closing ACKs and FINs in
  // flight are forwarded and counted) after the last measured flow completes:
  // stop_s is only an upper bound, and flows that arrive later exist to keep
  // the load on while the measured ones finish.
  size_t open_flows = 0;
  bool long_lived = false;
  auto measured = [&sc](const FlowSpec& f) {
    return f.bytes > 0 && f.start_s >= sc.measure_from_s && f.start_s <= sc.measure_until_s;
  };
  for (const FlowSpec& f : sc.flows) {
    if (measured(f)) open_flows++;
    long_lived |= f.bytes == 0;
  }
  for (size_t i = 0; i < sc.flows.size(); ++i) {
    const FlowSpec& f = sc.flows[i];
    if (f.src_leaf < 0 || f.src_leaf >= sc.leaves || f.dst_leaf < 0 || f.dst_leaf >= sc.leaves ||
        f.src_host < 0 || f.src_host >= sc.hosts_per_leaf || f.dst_host < 0 ||
        f.dst_host >= sc.hosts_per_leaf)
      throw std::invalid_argument("flow " + std::to_string(f.id) + " names a missing host");
    uint16_t port = uint16_t(1000 + i);
    Ptr<Node> dst = hosts.Get(f.dst_leaf * sc.hosts_per_leaf + f.dst_host);
    Ptr<Node> src = hosts.Get(f.src_leaf * sc.hosts_per_leaf + f.src_host);
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sink.Install(dst);
    sa.Start(Seconds(0));
    FlowState* st = &state[i];
    uint64_t size = f.bytes;
    bool counts = measured(f);
    sa.Get(0)->TraceConnectWithoutContext(
        "Rx", Callback<void, Ptr<const Packet>, const Address&>(
                  [st, size, counts, &open_flows, long_lived](Ptr<const Packet> p,
                                                              const Address&) {
                    st->received += p->GetSize();
                    if (size > 0 && st->finish_s < 0 && st->received >= size) {
                      st->finish_s = Simulator::Now().GetSeconds();
                      if (counts && --open_flows == 0 && !long_lived)
                        Simulator::Stop(MilliSeconds(10));
                    }
                  }));
    BulkSendHelper bulk("ns3::TcpSocketFactory",
                        InetSocketAddress(HostAddress(f.dst_leaf, f.dst_host), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(f.bytes));
    bulk.SetAttribute("SendSize", UintegerValue(1448));
    ApplicationContainer ba = bulk.Install(src);
    ba.Start(Seconds(f.start_s));
  }

  std::vector<std::pair<double, std::vector<int>>> series;  // flows per spine at the sources
  std::vector<LinkStats*> fabric;  // fabric links get a time series; host links only totals
  for (auto& l : links)
    if (l->kind.rfind("fabric", 0) == 0) fabric.push_back(l.get());
  // [t, bytes sent in the interval per fabric link..., queue length per fabric link...]
  std::vector<std::vector<double>> fabric_series;
  std::function<void()> sample = [&] {
    std::vector<int> total(sc.spines, 0);
    for (auto& lb : balancers) {
      auto n = lb->FlowsPerSpine();
      for (int s = 0; s < sc.spines; ++s) total[s] += n[s];
    }
    double now = Simulator::Now().GetSeconds();
    series.push_back({now, total});
    std::vector<double> row{now};
    for (LinkStats* l : fabric) {
      row.push_back(double(l->tx_bytes - l->tx_bytes_sampled));
      l->tx_bytes_sampled = l->tx_bytes;
    }
    for (LinkStats* l : fabric) row.push_back(l->queue);
    fabric_series.push_back(std::move(row));
    Simulator::Schedule(MicroSeconds(sc.sample_interval_us), sample);
  };
  if (sc.sample_interval_us > 0) Simulator::Schedule(MicroSeconds(sc.sample_interval_us), sample);

  Simulator::Stop(Seconds(sc.stop_s));
  Simulator::Run();

  out.precision(9);
  out << "{\"flows\": [";
  for (size_t i = 0; i < sc.flows.size(); ++i) {
    const FlowSpec& f = sc.flows[i];
    out << (i ? ", " : "") << "{\"id\": " << f.id << ", \"bytes\": " << f.bytes
        << ", \"start_s\": " << f.start_s << ", \"received\": " << state[i].received
        << ", \"fct_s\": ";
    if (state[i].finish_s >= 0) out << state[i].finish_s - f.start_s; else out << "null";
    out << "}";
  }
  out << "], \"paths\": [";
  bool first = true;
  for (int l = 0; l < sc.leaves; ++l)
    for (int s = 0; s < sc.spines; ++s) {
      const PathCounters& c = balancers[l]->counters()[s];
      if (!c.packets) continue;
      out << (first ? "" : ", ") << "{\"leaf\": " << l << ", \"spine\": " << s
          << ", \"packets\": " << c.packets << ", \"bytes\": " << c.bytes
          << ", \"data_bytes\": " << c.data_bytes << ", \"flowlets\": " << c.flowlets << "}";
      first = false;
    }
  out << "], \"spine_tx_packets\": [";
  for (int s = 0; s < sc.spines; ++s) out << (s ? ", " : "") << spine_tx_packets[s];
  out << "], \"flows_per_spine\": [";
  for (size_t i = 0; i < series.size(); ++i) {
    out << (i ? ", " : "") << "[" << series[i].first;
    for (int n : series[i].second) out << ", " << n;
    out << "]";
  }
  out << "], \"links\": [";
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkStats& l = *links[i];
    out << (i ? ", " : "") << "{\"name\": \"" << l.name << "\", \"kind\": \"" << l.kind
        << "\", \"tx_bytes\": " << l.tx_bytes << ", \"max_queue\": " << l.max_queue << "}";
  }
  out << "], \"node_drops\": {";
  for (size_t i = 0; i < node_drops.size(); ++i)
    out << (i ? ", " : "") << "\"" << node_drops[i].first << "\": " << node_drops[i].second;
  out << "}, \"fabric_series\": {\"links\": [";
  for (size_t i = 0; i < fabric.size(); ++i) out << (i ? ", " : "") << "\"" << fabric[i]->name << "\"";
  out << "], \"samples\": [";
  for (size_t i = 0; i < fabric_series.size(); ++i) {
    out << (i ? ", " : "") << "[";
    for (size_t j = 0; j < fabric_series[i].size(); ++j)
      out << (j ? ", " : "") << fabric_series[i][j];
    out << "]";
  }
  out << "]}, \"end_s\": " << Simulator::Now().GetSeconds() << "}\n";
  Simulator::Destroy();
}

}  // namespace

int main(int argc, char** argv) {
  return dcfabric::ScenarioMain(argc, argv, "letflow_sim", ReadScenario, Run);
}
