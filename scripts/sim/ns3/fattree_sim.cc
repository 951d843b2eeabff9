// Packet-level simulation of a switched fabric whose switches execute the
// controller's exported OpenFlow rules (dcfabric::OfPipeline), with TCP hosts
// sending bulk flows.  One C++ program, not Python bindings: a run costs no
// 8-9 s import, and the per-packet switch logic stays in C++.
//
// A switch is a bare ns-3 node (no IP stack): a protocol handler on each of
// its point-to-point devices hands every IPv4 packet to the switch's pipeline,
// which returns the model port to send it out of.  So ports are the model's
// port numbers, TTL is decremented only where a rule says dec_ttl, and a full
// device queue is the switch's drop-tail queue.  Hosts run ns-3's TCP.
//
// Input: a scenario file of "key value..." lines written by
// scripts/sim/scenario.py (see ReadScenario).  Output: JSON on stdout (flows'
// bytes, drops, every rule's counters); progress on stderr.
//
// With a "controller" line the controller is in the loop (ControllerLink):
// the simulation pauses at every polling period and at every packet a rule
// sends to the controller, asks a driver on stdin/stdout
// (scripts/sim/controller_loop.py, which runs the schemes' own strategies)
// and applies its flow-mods a control delay later; "done" then precedes the
// JSON.
//
// With a "routing_controller" line a failure reaches the controller too
// (RoutingController): once the ends' ports go not live the simulation asks
// the driver (scripts/sim/failure_reaction.py, the app's own recompute)
// and applies its changes stage by stage, as the app's update sends them.
#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <tuple>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include "host_tcp.h"
#include "of_pipeline.h"

using namespace ns3;

namespace {

constexpr uint16_t kIpv4EtherType = 0x0800;
constexpr uint16_t kFirstSinkPort = 5201;  // iperf3's, as the emulator's flows
constexpr double kProgressEveryWallS = 2.0;

struct LinkSpec {
  std::string a;
  int port_a;
  std::string b;
  int port_b;
};

struct FlowSpec {
  int id;
  std::string src, dst;
  double start_s, stop_s;
  uint64_t bytes;  // 0: sends until stop_s
  int src_port;    // 0: ns-3's next ephemeral port
};

struct FailureSpec {
  double at_s;
  std::string node;
  int port;  // -1: the whole switch fails
};

struct Scenario {
  uint64_t seed = 1;
  double link_mbps = 1000, link_delay_us = 1;
  uint32_t queue_packets = 50;
  uint32_t ecn_threshold_packets = 0;  // 0: no ECN marking
  std::string tcp = "cubic";
  std::string sender_queue = "drop-tail";  // the hosts' device queues (SenderQueue: "fq")
  double min_rto_ms = 5;
  double stop_s = 1, measure_from_s = 0;
  double detection_ms = 210;  // failure -> the ends' ports read not live (BFD)
  std::string pipeline_path;
  // Controller in the loop: period 0 means none.
  double controller_period_s = 0, control_delay_s = 0;
  uint64_t polled_cookie = 0;  // the per-flow entries a poll reports
  std::vector<std::string> polled_switches;
  // The routing controller's reaction to failures: batch < 0 means none.
  double routing_batch_s = -1, routing_delay_s = 0;
  std::vector<std::string> switches;
  std::vector<std::pair<std::string, std::string>> hosts;  // (name, IPv4)
  std::vector<LinkSpec> links;
  std::vector<FlowSpec> flows;
  std::vector<FailureSpec> failures;
};

Scenario ReadScenario(const std::string& path) {
  Scenario s;
  dcfabric::ForEachScenarioLine(path, [&](const std::string& key, std::istringstream& f) {
    bool ok = true;
    if (key == "seed") ok = bool(f >> s.seed);
    else if (key == "link_mbps") ok = bool(f >> s.link_mbps);
    else if (key == "link_delay_us") ok = bool(f >> s.link_delay_us);
    else if (key == "queue_packets") ok = bool(f >> s.queue_packets);
    else if (key == "ecn_threshold_packets") ok = bool(f >> s.ecn_threshold_packets);
    else if (key == "tcp") ok = bool(f >> s.tcp);
    else if (key == "sender_queue") ok = bool(f >> s.sender_queue);
    else if (key == "min_rto_ms") ok = bool(f >> s.min_rto_ms);
    else if (key == "stop_s") ok = bool(f >> s.stop_s);
    else if (key == "measure_from_s") ok = bool(f >> s.measure_from_s);
    else if (key == "detection_ms") ok = bool(f >> s.detection_ms);
    else if (key == "pipeline") ok = bool(f >> s.pipeline_path);
    else if (key == "controller") {
      std::string cookie;
      ok = bool(f >> s.controller_period_s >> s.control_delay_s >> cookie);
      if (ok) s.polled_cookie = dcfabric::detail::Number(cookie);
    } else if (key == "routing_controller") {
      ok = bool(f >> s.routing_batch_s >> s.routing_delay_s) && s.routing_batch_s >= 0 &&
           s.routing_delay_s >= 0;
    } else if (key == "poll") {
      std::string name;
      ok = bool(f >> name);
      s.polled_switches.push_back(name);
    }
    else if (key == "switch") {
      std::string name;
      ok = bool(f >> name);
      s.switches.push_back(name);
    } else if (key == "host") {
      std::string name, ip;
      ok = bool(f >> name >> ip);
      s.hosts.push_back({name, ip});
    } else if (key == "link") {
      LinkSpec l;
      ok = bool(f >> l.a >> l.port_a >> l.b >> l.port_b);
      s.links.push_back(l);
    } else if (key == "flow") {
      FlowSpec fl;
      ok = bool(f >> fl.id >> fl.src >> fl.dst >> fl.start_s >> fl.stop_s >> fl.bytes >> fl.src_port);
      s.flows.push_back(fl);
    } else if (key == "fail_link") {
      FailureSpec fa;
      ok = bool(f >> fa.at_s >> fa.node >> fa.port);
      s.failures.push_back(fa);
    } else if (key == "fail_switch") {
      FailureSpec fa{0, "", -1};
      ok = bool(f >> fa.at_s >> fa.node);
      s.failures.push_back(fa);
    } else {
      throw std::invalid_argument("unknown scenario key '" + key + "' in " + path);
    }
    return ok;
  });
  if (s.tcp != "cubic" && s.tcp != "dctcp")
    throw std::invalid_argument("tcp must be cubic or dctcp, got '" + s.tcp + "'");
  if (s.sender_queue != "drop-tail" && s.sender_queue != "fq")
    throw std::invalid_argument("sender_queue must be drop-tail or fq, got '" + s.sender_queue + "'");
  if (s.tcp == "dctcp" && s.ecn_threshold_packets == 0)
    throw std::invalid_argument("dctcp needs an ECN marking threshold (ecn_threshold_packets > 0)");
  if (s.link_mbps <= 0 || s.queue_packets == 0 || s.stop_s <= 0)
    throw std::invalid_argument("link_mbps, queue_packets and stop_s must be positive");
  if (s.measure_from_s < 0 || s.measure_from_s >= s.stop_s)
    throw std::invalid_argument("measure_from_s must lie in [0, stop_s)");
  if (s.pipeline_path.empty()) throw std::invalid_argument("the scenario names no pipeline export");
  if (s.controller_period_s < 0 || s.control_delay_s < 0)
    throw std::invalid_argument("the controller's period and delay must not be negative");
  return s;
}

uint32_t BigEndian32(const uint8_t* b) {
  return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3];
}

struct PortDrops {
  uint64_t queue_full = 0;  // the port's drop-tail queue overflowed
  uint64_t ecn_marked = 0;
};

class PipelineSwitch;

// A packet a rule sent to the controller: the switch, its fields, and the
// packet itself when the rule held it (no output) for a packet-out.
using PacketInHandler =
    std::function<void(PipelineSwitch*, const dcfabric::PacketFields&, Ptr<const Packet> held)>;

// One switch: model port -> device, which ports read live, and its pipeline.
class PipelineSwitch {
 public:
  PipelineSwitch(std::string name, Ptr<Node> node, dcfabric::OfPipeline* pipeline,
                 uint32_t ecn_threshold)
      : name_(std::move(name)), node_(node), pipeline_(pipeline), ecn_threshold_(ecn_threshold) {}

  void AddPort(int port, Ptr<PointToPointNetDevice> device) {
    if (port < 0) throw std::invalid_argument(name_ + ": negative port");
    if (size_t(port) >= devices_.size()) {
      devices_.resize(port + 1);
      live_.resize(port + 1, false);
      drops_.resize(port + 1);
    }
    if (devices_[port]) throw std::invalid_argument(name_ + ": port " + std::to_string(port) + " cabled twice");
    devices_[port] = device;
    live_[port] = true;
    uint32_t ifindex = device->GetIfIndex();
    if (ifindex >= port_of_ifindex_.size()) port_of_ifindex_.resize(ifindex + 1, -1);
    port_of_ifindex_[ifindex] = port;
    node_->RegisterProtocolHandler(MakeCallback(&PipelineSwitch::Receive, this), kIpv4EtherType,
                                   device);
  }

  std::vector<int> Ports() const {
    std::vector<int> ports;
    for (size_t p = 0; p < devices_.size(); ++p)
      if (devices_[p]) ports.push_back(int(p));
    return ports;
  }

  void SetLive(int port, bool live) { live_.at(port) = live; }
  void SetPacketInHandler(PacketInHandler handler) { packet_in_ = std::move(handler); }

  // A flow-mod from the controller at simulated time ``now_s``. An entry
  // replaced in place keeps its counters and so its age (the age is what
  // turns a first counter reading into a rate).
  void AddFlow(const std::string& line, double now_s) {
    installed_at_s_.try_emplace(pipeline_->AddFlow(line).id, now_s);
  }
  void DeleteFlowStrict(const std::string& line) { pipeline_->DeleteFlowStrict(line); }
  void DeleteFlows(int table, uint64_t value, uint64_t mask) { pipeline_->DeleteFlows(table, value, mask); }
  void AddOrModifyGroup(const std::string& line) { pipeline_->AddOrModifyGroup(dcfabric::ParseGroup(line)); }
  void DeleteGroup(uint32_t id) { pipeline_->DeleteGroup(id); }
  double InstalledAt(const dcfabric::FlowEntry& e) const {
    auto it = installed_at_s_.find(e.id);
    return it == installed_at_s_.end() ? 0 : it->second;  // the export's: from the start
  }

  // A held packet back through the pipeline from table 0 (a packet-out to
  // OFPP_TABLE), as if it had just arrived on its port.
  void Resend(Ptr<const Packet> packet, int in_port) { Process(packet, in_port); }
  const std::string& name() const { return name_; }
  const std::vector<PortDrops>& port_drops() const { return drops_; }
  uint64_t no_rule() const { return no_rule_; }
  uint64_t ttl_expired() const { return ttl_expired_; }
  uint64_t dead_port() const { return dead_port_; }
  const dcfabric::OfPipeline& pipeline() const { return *pipeline_; }

 private:
  void Receive(Ptr<NetDevice> device, Ptr<const Packet> packet, uint16_t, const Address&,
               const Address&, NetDevice::PacketType) {
    Process(packet, port_of_ifindex_[device->GetIfIndex()]);
  }

  void Process(Ptr<const Packet> packet, int in_port) {
    uint8_t b[60];
    uint32_t n = packet->CopyData(b, sizeof b);
    uint32_t ihl = (b[0] & 0xf) * 4;
    if (n < 20 || (b[0] >> 4) != 4 || n < ihl) {
      no_rule_++;  // nothing but IPv4 travels here; count it rather than guess
      return;
    }
    dcfabric::PacketFields fields;
    fields.in_port = in_port;
    fields.eth_type = kIpv4EtherType;
    fields.ip_proto = b[9];
    fields.ipv4_src = BigEndian32(b + 12);
    fields.ipv4_dst = BigEndian32(b + 16);
    fields.eth_src = dcfabric::HostMac(fields.ipv4_src);  // point-to-point links carry no Ethernet
    fields.eth_dst = dcfabric::HostMac(fields.ipv4_dst);
    if ((fields.ip_proto == 6 || fields.ip_proto == 17) && n >= ihl + 4) {
      fields.tp_src = uint16_t(b[ihl] << 8 | b[ihl + 1]);
      fields.tp_dst = uint16_t(b[ihl + 2] << 8 | b[ihl + 3]);
    }
    bool dec_ttl = false, to_controller = false;
    dcfabric::PacketFields matched = fields;  // Forward may rewrite fields
    int out = pipeline_->Forward(fields, packet->GetSize(), Simulator::Now().GetNanoSeconds(), live_,
                                 &dec_ttl, &to_controller);
    if (to_controller && packet_in_) {
      packet_in_(this, matched, out < 0 ? packet : nullptr);
      if (out < 0) return;  // held for the controller
    }
    if (out < 0 || size_t(out) >= devices_.size() || !devices_[out]) {
      no_rule_++;
      return;
    }
    if (!live_[out]) {  // a rule's plain output to a port whose link is down
      dead_port_++;
      return;
    }
    Ptr<PointToPointNetDevice> dev = devices_[out];
    uint8_t ecn = b[1] & 0x3;
    bool mark = ecn_threshold_ && (ecn == 1 || ecn == 2) &&
                dev->GetQueue()->GetNPackets() >= ecn_threshold_;
    Ptr<Packet> copy = packet->Copy();
    if (dec_ttl || mark) {
      Ipv4Header ip;
      copy->RemoveHeader(ip);
      if (dec_ttl) {
        if (ip.GetTtl() <= 1) {
          ttl_expired_++;
          return;
        }
        ip.SetTtl(ip.GetTtl() - 1);
      }
      if (mark) {
        ip.SetEcn(Ipv4Header::ECN_CE);
        drops_[out].ecn_marked++;
      }
      copy->AddHeader(ip);
    }
    if (!dev->Send(copy, dev->GetBroadcast(), kIpv4EtherType)) drops_[out].queue_full++;
  }

  std::string name_;
  Ptr<Node> node_;
  dcfabric::OfPipeline* pipeline_;
  uint32_t ecn_threshold_;
  std::vector<Ptr<PointToPointNetDevice>> devices_;  // index: model port
  std::vector<bool> live_;
  std::vector<int> port_of_ifindex_;
  std::vector<PortDrops> drops_;
  uint64_t no_rule_ = 0, ttl_expired_ = 0, dead_port_ = 0;
  PacketInHandler packet_in_;
  std::map<uint64_t, double> installed_at_s_;  // entry id -> when a flow-mod added it
};

// Sends the driver one question (its lines, then "end") and returns the
// lines of its answer before its "end".
std::vector<std::string> Exchange(std::istream& in, std::ostream& out, const std::string& question) {
  out << question << "end" << std::endl;
  std::vector<std::string> answer;
  for (std::string line;;) {
    if (!std::getline(in, line)) throw std::runtime_error("the controller closed the pipe");
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "end") return answer;
    answer.push_back(line);
  }
}

// The controller in the loop, over a line protocol with the driver (the
// simulation waits for each answer, so the controller takes no simulated
// time to think; the control delay is what the messages take):
//   -> poll T                       every period: the polled switches'
//      entry SWITCH PACKETS BYTES AGE_S FLOW_RECORD...   entries of the cookie
//      end
//   -> packet_in T SWITCH PROTO SRC DST SPORT DPORT     (addresses as integers)
//   <- add SWITCH FLOW_RECORD | delete SWITCH FLOW_RECORD | packet_out ... end
// The answer's flow-mods (and a packet_out: the held packets back through
// table 0) apply the control delay after the question. A flow's further
// packets while its packet-in is answered wait with the first (held) or go
// on unreported (copied).
class ControllerLink {
 public:
  ControllerLink(const Scenario& sc, std::map<std::string, std::unique_ptr<PipelineSwitch>>* switches,
                 std::istream& in, std::ostream& out)
      : period_s_(sc.controller_period_s), delay_s_(sc.control_delay_s), cookie_(sc.polled_cookie),
        switches_(switches), in_(in), out_(out) {
    for (const std::string& name : sc.polled_switches) polled_.push_back(Switch(name));
    for (auto& [name, sw] : *switches)
      sw->SetPacketInHandler([this](PipelineSwitch* s, const dcfabric::PacketFields& f,
                                    Ptr<const Packet> held) { PacketIn(s, f, held); });
    Simulator::Schedule(Seconds(period_s_), [this] { Poll(); });
  }

  uint64_t polls() const { return polls_; }
  uint64_t packet_ins() const { return packet_ins_; }
  uint64_t flow_mods() const { return flow_mods_; }

 private:
  // (switch, protocol, source, destination, destination port): the schemes' flow
  using FlowId = std::tuple<PipelineSwitch*, uint8_t, uint32_t, uint32_t, uint16_t>;
  struct Change {
    PipelineSwitch* sw;
    bool remove;
    std::string record;
  };
  struct Answer {
    std::vector<Change> changes;
    bool packet_out = false;
  };

  PipelineSwitch* Switch(const std::string& name) const {
    auto it = switches_->find(name);
    if (it == switches_->end()) throw std::invalid_argument("no switch named " + name);
    return it->second.get();
  }

  void Poll() {
    double now = Simulator::Now().GetSeconds();
    polls_++;
    std::ostringstream msg;
    msg.precision(9);
    msg << "poll " << now << "\n";
    for (PipelineSwitch* sw : polled_)
      for (const dcfabric::FlowEntry* e : sw->pipeline().Entries())
        if (e->table == 0 && e->cookie == cookie_)
          msg << "entry " << sw->name() << ' ' << e->counters.packets << ' ' << e->counters.bytes
              << ' ' << now - sw->InstalledAt(*e) << ' ' << e->line << "\n";
    Answer answer = Ask(msg.str());
    Simulator::Schedule(Seconds(delay_s_), [this, answer] { Apply(answer, FlowId{}); });
    Simulator::Schedule(Seconds(period_s_), [this] { Poll(); });
  }

  void PacketIn(PipelineSwitch* sw, const dcfabric::PacketFields& f, Ptr<const Packet> held) {
    FlowId flow{sw, f.ip_proto, f.ipv4_src, f.ipv4_dst, f.tp_dst};
    auto [pending, fresh] = pending_.try_emplace(flow);
    if (held) pending->second.push_back({held->Copy(), int(f.in_port)});
    if (!fresh) return;
    packet_ins_++;
    std::ostringstream msg;
    msg.precision(9);
    msg << "packet_in " << Simulator::Now().GetSeconds() << ' ' << sw->name() << ' '
        << int(f.ip_proto) << ' ' << f.ipv4_src << ' ' << f.ipv4_dst << ' ' << f.tp_src << ' '
        << f.tp_dst << "\n";
    Answer answer = Ask(msg.str());
    Simulator::Schedule(Seconds(delay_s_), [this, answer, flow] { Apply(answer, flow); });
  }

  // Sends one question and reads the answer.
  Answer Ask(const std::string& question) {
    Answer answer;
    for (const std::string& line : Exchange(in_, out_, question)) {
      std::istringstream words(line);
      std::string kind, name;
      words >> kind;
      if (kind == "packet_out") {
        answer.packet_out = true;
        continue;
      }
      try {
        if ((kind != "add" && kind != "delete") || !(words >> name))
          throw std::invalid_argument("expected add SWITCH FLOW, delete SWITCH FLOW, packet_out or end");
        std::string record;
        std::getline(words >> std::ws, record);
        dcfabric::ParseFlow(record);  // a bad record fails now, not at apply time
        answer.changes.push_back({Switch(name), kind == "delete", record});
      } catch (const std::exception& e) {
        throw std::invalid_argument("bad controller reply '" + line + "': " + e.what());
      }
    }
    return answer;
  }

  void Apply(const Answer& answer, FlowId flow) {
    double now = Simulator::Now().GetSeconds();
    for (const Change& c : answer.changes) {
      flow_mods_++;
      if (c.remove) c.sw->DeleteFlowStrict(c.record);
      else c.sw->AddFlow(c.record, now);
    }
    if (!std::get<0>(flow)) return;
    std::vector<std::pair<Ptr<Packet>, int>> held = std::move(pending_[flow]);
    pending_.erase(flow);
    if (answer.packet_out)
      for (auto& [packet, in_port] : held) std::get<0>(flow)->Resend(packet, in_port);
  }

  double period_s_, delay_s_;
  uint64_t cookie_;
  std::map<std::string, std::unique_ptr<PipelineSwitch>>* switches_;
  std::istream& in_;
  std::ostream& out_;
  std::vector<PipelineSwitch*> polled_;
  std::map<FlowId, std::vector<std::pair<Ptr<Packet>, int>>> pending_;  // held packets
  uint64_t polls_ = 0, packet_ins_ = 0, flow_mods_ = 0;
};

// The routing controller's reaction to failures, as the Ryu app's
// (controller/fattree/routing_app.py apply_failures, its staged update in
// controller/ryuapp/fabric_app.py). Ports going not live are batched as the
// app's debounce does: the recompute runs once no port has gone down for
// batch_s. Then the simulation asks the driver
//   -> ports_down T SWITCH PORT [SWITCH PORT]...   every port down since the last
//   <- stage | add SWITCH FLOW_RECORD | delete SWITCH FLOW_RECORD (strict)
//      | delete_table SWITCH TABLE METADATA/MASK (non-strict)
//      | group SWITCH GROUP_RECORD (add or modify) | delete_group SWITCH ID ... end
// and stage i's ops apply (i + 1) control delays after the recompute: each
// stage goes out once the previous stage's barriers are answered, a round
// trip each. A recompute that comes due while an update is still being
// applied waits for its last stage.
class RoutingController {
 public:
  RoutingController(const Scenario& sc, std::map<std::string, std::unique_ptr<PipelineSwitch>>* switches,
                    std::istream& in, std::ostream& out)
      : batch_s_(sc.routing_batch_s), delay_s_(sc.routing_delay_s), switches_(switches), in_(in),
        out_(out) {}

  // Ports the switches now read not live.
  void PortsDown(const std::vector<std::pair<PipelineSwitch*, int>>& ports) {
    down_.insert(down_.end(), ports.begin(), ports.end());
    Simulator::Cancel(due_);
    due_ = Simulator::Schedule(Seconds(batch_s_), [this] { Recompute(); });
  }

  uint64_t recomputes() const { return recomputes_; }
  uint64_t stages() const { return stages_; }
  uint64_t ops() const { return ops_; }

 private:
  struct Op {
    enum Kind { kAdd, kDelete, kDeleteTable, kGroup, kDeleteGroup } kind;
    PipelineSwitch* sw;
    std::string record;  // add, delete, group
    int table = 0;  // delete_table
    uint64_t value = 0, mask = 0;  // delete_table's metadata; delete_group's id in value
  };
  using Stage = std::vector<Op>;

  void Recompute() {
    double now = Simulator::Now().GetSeconds();
    if (now < busy_until_s_) {
      due_ = Simulator::Schedule(Seconds(busy_until_s_ - now), [this] { Recompute(); });
      return;
    }
    recomputes_++;
    std::ostringstream msg;
    msg.precision(9);
    msg << "ports_down " << now;
    for (const auto& [sw, port] : down_) msg << ' ' << sw->name() << ' ' << port;
    msg << "\n";
    down_.clear();
    std::vector<Stage> plan = Ask(msg.str());
    for (size_t i = 0; i < plan.size(); ++i) {
      stages_++;
      Simulator::Schedule(Seconds((i + 1) * delay_s_), [this, stage = plan[i]] { Apply(stage); });
    }
    busy_until_s_ = now + plan.size() * delay_s_;
  }

  PipelineSwitch* Switch(const std::string& name) const {
    auto it = switches_->find(name);
    if (it == switches_->end()) throw std::invalid_argument("no switch named " + name);
    return it->second.get();
  }

  std::vector<Stage> Ask(const std::string& question) {
    std::vector<Stage> plan;
    for (const std::string& line : Exchange(in_, out_, question)) {
      std::istringstream words(line);
      std::string kind, name;
      words >> kind;
      try {
        if (kind == "stage") {
          plan.emplace_back();
          continue;
        }
        if (plan.empty()) throw std::invalid_argument("an op before the first stage");
        if (!(words >> name)) throw std::invalid_argument("no switch");
        Op op{Op::kAdd, Switch(name)};
        std::string rest;
        std::getline(words >> std::ws, rest);
        if (kind == "add" || kind == "delete") {
          op.kind = kind == "add" ? Op::kAdd : Op::kDelete;
          dcfabric::ParseFlow(rest);  // a bad record fails now, not at apply time
          op.record = rest;
        } else if (kind == "group") {
          op.kind = Op::kGroup;
          dcfabric::ParseGroup(rest);
          op.record = rest;
        } else if (kind == "delete_table") {
          std::istringstream args(rest);
          std::string metadata, extra;
          if (!(args >> op.table >> metadata) || (args >> extra) || metadata.find('/') == std::string::npos)
            throw std::invalid_argument("expected delete_table SWITCH TABLE METADATA/MASK");
          op.kind = Op::kDeleteTable;
          op.value = dcfabric::detail::Number(metadata.substr(0, metadata.find('/')));
          op.mask = dcfabric::detail::Number(metadata.substr(metadata.find('/') + 1));
        } else if (kind == "delete_group") {
          op.kind = Op::kDeleteGroup;
          op.value = dcfabric::detail::Number(rest);
        } else {
          throw std::invalid_argument("expected stage, add, delete, delete_table, group, delete_group or end");
        }
        plan.back().push_back(op);
      } catch (const std::exception& e) {
        throw std::invalid_argument("bad routing controller reply '" + line + "': " + e.what());
      }
    }
    return plan;
  }

  void Apply(const Stage& stage) {
    double now = Simulator::Now().GetSeconds();
    for (const Op& op : stage) {
      ops_++;
      switch (op.kind) {
        case Op::kAdd: op.sw->AddFlow(op.record, now); break;
        case Op::kDelete: op.sw->DeleteFlowStrict(op.record); break;
        case Op::kDeleteTable: op.sw->DeleteFlows(op.table, op.value, op.mask); break;
        case Op::kGroup: op.sw->AddOrModifyGroup(op.record); break;
        case Op::kDeleteGroup: op.sw->DeleteGroup(uint32_t(op.value)); break;
      }
    }
  }

  double batch_s_, delay_s_;
  std::map<std::string, std::unique_ptr<PipelineSwitch>>* switches_;
  std::istream& in_;
  std::ostream& out_;
  std::vector<std::pair<PipelineSwitch*, int>> down_;  // since the last recompute
  EventId due_;
  double busy_until_s_ = 0;
  uint64_t recomputes_ = 0, stages_ = 0, ops_ = 0;
};

struct FlowState {
  uint64_t received = 0, received_at_measure_start = 0;
  double finish_s = -1;
};

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void ConfigureTcp(const Scenario& sc) {
  dcfabric::ConfigureHostTcp(sc.min_rto_ms * 1e3, 1 << 22);
  Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                     TypeIdValue(sc.tcp == "dctcp" ? TcpDctcp::GetTypeId() : TcpCubic::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));  // Linux's
}

// A host's send queue as Linux leaves it ("fq"): it never drops, since
// Linux's TCP small queues keep a sender's data in its socket rather than in
// a queue that overflows (ns-3's TCP has none, and is not told of a drop at
// its own device), and it serves its flows in turn, a packet each, as
// Linux's fq, so a flow's ACKs or a new flow's first packets do not wait
// behind another flow's backlog. Its backlog counts in the sender's RTT,
// where Linux's socket wait does not.
class SenderQueue : public Queue<Packet> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid =
        TypeId("dcfabric::SenderQueue").SetParent<Queue<Packet>>().AddConstructor<SenderQueue>();
    return tid;
  }
  bool Enqueue(Ptr<Packet> p) override {
    uint8_t b[26] = {0};  // the device's PPP header (2), IPv4 (20: ns-3's hosts set no options), ports
    p->CopyData(b, sizeof b);
    FlowKey key{BigEndian32(b + 14), BigEndian32(b + 18), BigEndian32(b + 22)};
    std::deque<Ptr<Packet>>& flow = flows_[key];
    if (flow.empty()) turns_.push_back(key);
    flow.push_back(p);
    return true;
  }
  Ptr<Packet> Dequeue() override {
    if (turns_.empty()) return nullptr;
    FlowKey key = turns_.front();
    turns_.pop_front();
    auto it = flows_.find(key);
    Ptr<Packet> p = it->second.front();
    it->second.pop_front();
    if (it->second.empty())
      flows_.erase(it);
    else
      turns_.push_back(key);
    return p;
  }
  Ptr<Packet> Remove() override { return Dequeue(); }
  Ptr<const Packet> Peek() const override {
    return turns_.empty() ? nullptr : flows_.at(turns_.front()).front();
  }

 private:
  using FlowKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // source, destination, ports
  std::map<FlowKey, std::deque<Ptr<Packet>>> flows_;
  std::deque<FlowKey> turns_;  // flows with packets, in the order they are served
};

// A point-to-point link between ``a`` and ``b`` at the scenario's rate and
// delay, each end's device with a drop-tail queue of its packets. Built by
// hand rather than by PointToPointHelper, which gives each device a
// NetDeviceQueueInterface: its flow control schedules an event at every
// dequeue (a third of a hop's events) and serves only queue discs, which
// no node here has.
std::array<Ptr<PointToPointNetDevice>, 2> Cable(Ptr<Node> a, Ptr<Node> b, const Scenario& sc) {
  auto channel = CreateObjectWithAttributes<PointToPointChannel>(
      "Delay", TimeValue(MicroSeconds(sc.link_delay_us)));
  std::array<Ptr<PointToPointNetDevice>, 2> ends;
  Ptr<Node> nodes[2] = {a, b};
  for (int e = 0; e < 2; ++e) {
    ends[e] = CreateObjectWithAttributes<PointToPointNetDevice>(
        "DataRate", DataRateValue(DataRate(uint64_t(sc.link_mbps * 1e6))));
    ends[e]->SetAddress(Mac48Address::Allocate());
    ends[e]->SetQueue(CreateObjectWithAttributes<DropTailQueue<Packet>>(
        "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, sc.queue_packets))));
    nodes[e]->AddDevice(ends[e]);
  }
  for (auto& end : ends) end->Attach(channel);
  return ends;
}

void Run(const Scenario& sc, std::ostream& out) {
  auto wall_start = std::chrono::steady_clock::now();
  auto wall_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };
  RngSeedManager::SetSeed(sc.seed);
  // A calendar queue runs the same events in the same order as ns-3's
  // default (a red-black tree map) in about a quarter less CPU time here.
  Simulator::SetScheduler(ObjectFactory("ns3::CalendarScheduler"));
  ConfigureTcp(sc);

  std::map<std::string, dcfabric::OfPipeline> pipelines =
      dcfabric::OfPipeline::LoadExport(sc.pipeline_path);
  std::map<std::string, std::unique_ptr<PipelineSwitch>> switches;
  std::map<std::string, Ptr<Node>> nodes;
  for (const std::string& name : sc.switches) {
    auto it = pipelines.find(name);
    if (it == pipelines.end())
      throw std::invalid_argument("the pipeline export " + sc.pipeline_path + " has no switch " + name);
    it->second.SeedFlowlets(sc.seed * 1000003 + switches.size());  // the run's seed, apart per switch
    Ptr<Node> node = CreateObject<Node>();
    nodes[name] = node;
    switches[name] = std::make_unique<PipelineSwitch>(name, node, &it->second,
                                                       sc.ecn_threshold_packets);
  }
  NodeContainer host_nodes;
  std::map<std::string, Ipv4Address> host_ip;
  for (const auto& [name, ip] : sc.hosts) {
    if (nodes.count(name)) throw std::invalid_argument("node " + name + " named twice");
    Ptr<Node> node = CreateObject<Node>();
    nodes[name] = node;
    host_nodes.Add(node);
    host_ip[name] = Ipv4Address(ip.c_str());
  }
  InternetStackHelper stack;
  stack.Install(host_nodes);
  for (auto it = host_nodes.Begin(); it != host_nodes.End(); ++it)
    (*it)->AggregateObject(CreateObject<dcfabric::HostTcpSocketFactory>());

  auto node_of = [&](const std::string& name) {
    auto it = nodes.find(name);
    if (it == nodes.end()) throw std::invalid_argument("a link or flow names unknown node " + name);
    return it->second;
  };
  // (node, port) -> its device, for failures
  std::map<std::pair<std::string, int>, Ptr<PointToPointNetDevice>> device_at;
  std::map<std::pair<std::string, int>, std::pair<std::string, int>> peer;
  std::map<std::string, int> host_links;
  uint64_t host_queue_drops = 0;
  for (const LinkSpec& l : sc.links) {
    const auto d = Cable(node_of(l.a), node_of(l.b), sc);
    const std::pair<std::string, int> ends[2] = {{l.a, l.port_a}, {l.b, l.port_b}};
    for (int e = 0; e < 2; ++e) {
      const Ptr<PointToPointNetDevice>& dev = d[e];
      const auto& [name, port] = ends[e];
      device_at[ends[e]] = dev;
      peer[ends[e]] = ends[1 - e];
      auto sw = switches.find(name);
      if (sw != switches.end()) {
        sw->second->AddPort(port, dev);
        continue;
      }
      if (host_links[name]++) throw std::invalid_argument("host " + name + " has more than one link");
      if (sc.sender_queue == "fq") dev->SetQueue(CreateObject<SenderQueue>());
      // A packet the host's own full device queue drops: ns-3's TCP is not
      // told (Linux's is, and its TCP small queues keep that queue short).
      dev->GetQueue()->TraceConnectWithoutContext(
          "Drop", Callback<void, Ptr<const Packet>>(
                      [&host_queue_drops](Ptr<const Packet>) { host_queue_drops++; }));
      // No queue disc on the host's NIC (ns-3's default would be fq_codel):
      // its device queue is drop-tail, as every shaped interface of the emulator.
      Ptr<Ipv4> ipv4 = nodes[name]->GetObject<Ipv4>();
      int32_t ifc = ipv4->AddInterface(dev);
      ipv4->AddAddress(ifc, Ipv4InterfaceAddress(host_ip[name], Ipv4Mask("255.0.0.0")));
      ipv4->SetUp(ifc);
    }
  }
  for (const auto& [name, _] : sc.hosts)
    if (!host_links.count(name)) throw std::invalid_argument("host " + name + " has no link");

  // Flows: one sink per flow on the destination, ports from iperf3's up.
  std::vector<FlowState> state(sc.flows.size());
  std::map<std::string, uint16_t> next_port;
  size_t flows_done = 0;
  for (size_t i = 0; i < sc.flows.size(); ++i) {
    const FlowSpec& f = sc.flows[i];
    if (!host_ip.count(f.src) || !host_ip.count(f.dst) || f.src == f.dst)
      throw std::invalid_argument("flow " + std::to_string(f.id) + " needs two distinct hosts");
    if (f.start_s < 0 || f.stop_s <= f.start_s)
      throw std::invalid_argument("flow " + std::to_string(f.id) + " must start before it stops");
    auto [it, fresh] = next_port.try_emplace(f.dst, kFirstSinkPort);
    uint16_t port = it->second++;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sink.Install(nodes[f.dst]);
    sa.Start(Seconds(0));
    FlowState* st = &state[i];
    uint64_t size = f.bytes;
    sa.Get(0)->TraceConnectWithoutContext(
        "Rx", Callback<void, Ptr<const Packet>, const Address&>(
                  [st, size, &flows_done](Ptr<const Packet> p, const Address&) {
                    st->received += p->GetSize();
                    if (size > 0 && st->finish_s < 0 && st->received >= size) {
                      st->finish_s = Simulator::Now().GetSeconds();
                      flows_done++;
                    }
                  }));
    BulkSendHelper bulk("dcfabric::HostTcpSocketFactory", InetSocketAddress(host_ip[f.dst], port));
    bulk.SetAttribute("MaxBytes", UintegerValue(f.bytes));
    bulk.SetAttribute("SendSize", UintegerValue(1448));
    if (f.src_port)
      bulk.SetAttribute("Local", AddressValue(InetSocketAddress(Ipv4Address::GetAny(), f.src_port)));
    ApplicationContainer ba = bulk.Install(nodes[f.src]);
    ba.Start(Seconds(f.start_s));
    ba.Stop(Seconds(f.stop_s));
    if (size == 0) Simulator::Schedule(Seconds(f.stop_s), [&flows_done] { flows_done++; });
  }
  Simulator::Schedule(Seconds(sc.measure_from_s), [&state] {
    for (FlowState& st : state) st.received_at_measure_start = st.received;
  });

  std::unique_ptr<RoutingController> routing;
  if (sc.routing_batch_s >= 0) routing = std::make_unique<RoutingController>(sc, &switches, std::cin, out);

  // Failures: the link drops everything from at_s on; BFD's detection time
  // later the switches at its ends read the port not live, which is all a
  // fast-failover group needs for its local repair, and the routing
  // controller hears of it.
  std::map<double, std::vector<std::pair<PipelineSwitch*, int>>> detected;  // detection time -> ports
  auto drop_all = CreateObject<RateErrorModel>();
  drop_all->SetRate(1.0);
  drop_all->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
  auto fail_port = [&](const std::pair<std::string, int>& end, double at_s) {
    auto dev = device_at.find(end);
    if (dev == device_at.end())
      throw std::invalid_argument(end.first + " has no cabled port " + std::to_string(end.second));
    const auto& far = peer[end];
    for (const auto& e : {end, far}) {
      Ptr<PointToPointNetDevice> d = device_at[e];
      Simulator::Schedule(Seconds(at_s), [d, drop_all] { d->SetReceiveErrorModel(drop_all); });
      auto sw = switches.find(e.first);
      if (sw != switches.end()) {
        detected[at_s].push_back({sw->second.get(), e.second});
      }
    }
  };
  for (const FailureSpec& fa : sc.failures) {
    if (fa.port >= 0) {
      fail_port({fa.node, fa.port}, fa.at_s);
      continue;
    }
    auto sw = switches.find(fa.node);
    if (sw == switches.end()) throw std::invalid_argument("fail_switch names unknown switch " + fa.node);
    for (int port : sw->second->Ports()) fail_port({fa.node, port}, fa.at_s);
  }
  for (const auto& [at_s, ports] : detected)
    Simulator::Schedule(Seconds(at_s) + MicroSeconds(sc.detection_ms * 1e3),
                        [ports = ports, r = routing.get()] {
                          for (const auto& [s, port] : ports) s->SetLive(port, false);
                          if (r) r->PortsDown(ports);
                        });

  std::unique_ptr<ControllerLink> controller;
  if (sc.controller_period_s > 0)
    controller = std::make_unique<ControllerLink>(sc, &switches, std::cin, out);

  // Progress on stderr every few wall seconds, checked each simulated ms.
  double last_report = 0;
  std::function<void()> progress = [&] {
    if (wall_s() - last_report >= kProgressEveryWallS) {
      last_report = wall_s();
      std::fprintf(stderr, "fattree_sim: simulated %.3f of %.3f s, flows done %zu/%zu, wall %.1f s\n",
                   Simulator::Now().GetSeconds(), sc.stop_s, flows_done, sc.flows.size(), last_report);
    }
    Simulator::Schedule(MilliSeconds(1), progress);
  };
  Simulator::Schedule(MilliSeconds(1), progress);

  Simulator::Stop(Seconds(sc.stop_s));
  Simulator::Run();
  double measured_s = sc.stop_s - sc.measure_from_s;

  out.precision(9);
  if (controller || routing) out << "done\n";
  out << "{\"simulated_s\": " << Simulator::Now().GetSeconds() << ", \"wall_s\": " << wall_s()
      << ", \"events\": " << Simulator::GetEventCount() << ", \"measured_s\": " << measured_s
      << ", \"host_queue_drops\": " << host_queue_drops;
  if (controller)
    out << ", \"controller\": {\"polls\": " << controller->polls() << ", \"packet_ins\": "
        << controller->packet_ins() << ", \"flow_mods\": " << controller->flow_mods() << "}";
  if (routing)
    out << ", \"routing_controller\": {\"recomputes\": " << routing->recomputes() << ", \"stages\": "
        << routing->stages() << ", \"ops\": " << routing->ops() << "}";
  out << ",\n \"flows\": [";
  for (size_t i = 0; i < sc.flows.size(); ++i) {
    const FlowSpec& f = sc.flows[i];
    const FlowState& st = state[i];
    uint64_t measured = st.received - st.received_at_measure_start;
    out << (i ? ",\n  " : "\n  ") << "{\"id\": " << f.id << ", \"src\": " << JsonString(f.src)
        << ", \"dst\": " << JsonString(f.dst) << ", \"bytes_received\": " << st.received
        << ", \"bytes_measured\": " << measured
        << ", \"goodput_mbps\": " << measured * 8 / measured_s / 1e6 << ", \"fct_s\": ";
    if (st.finish_s >= 0) out << st.finish_s - f.start_s; else out << "null";
    out << "}";
  }
  out << "],\n \"switches\": {";
  bool first = true;
  for (const std::string& name : sc.switches) {
    const PipelineSwitch& s = *switches[name];
    out << (first ? "\n  " : ",\n  ") << JsonString(name) << ": {\"no_rule\": " << s.no_rule()
        << ", \"ttl_expired\": " << s.ttl_expired() << ", \"dead_port\": " << s.dead_port()
        << ", \"rules_hit\": [";
    // Every entry a packet hit, as its export record with its counters.
    bool first_rule = true;
    for (const dcfabric::FlowEntry* e : s.pipeline().Entries()) {
      if (!e->counters.packets) continue;
      out << (first_rule ? "" : ", ") << "[" << JsonString(e->line) << ", " << e->counters.packets
          << ", " << e->counters.bytes << "]";
      first_rule = false;
    }
    out << "], \"group_buckets\": {";
    bool first_group = true;
    for (const auto& [id, group] : s.pipeline().Groups()) {
      out << (first_group ? "" : ", ") << "\"" << id << "\": [";
      for (size_t b = 0; b < group.buckets.size(); ++b)
        out << (b ? ", " : "") << group.buckets[b].counters.packets;
      out << "]";
      first_group = false;
    }
    out << "}";
    if (routing) {  // what the switch holds at the end, to compare with the controller's state
      out << ", \"flows\": [";
      bool first_flow = true;
      for (const dcfabric::FlowEntry* e : s.pipeline().Entries()) {
        out << (first_flow ? "" : ", ") << JsonString(e->line);
        first_flow = false;
      }
      out << "], \"groups\": [";
      bool first_group_line = true;
      for (const auto& [id, group] : s.pipeline().Groups()) {
        out << (first_group_line ? "" : ", ") << JsonString(group.line);
        first_group_line = false;
      }
      out << "]";
    }
    // Flowlet groups: the flowlets started, each a random pick of a bucket.
    uint64_t flowlets = 0;
    bool has_flowlets = false;
    for (const auto& [id, group] : s.pipeline().Groups()) {
      if (group.kind != dcfabric::GroupEntry::kFlowlet) continue;
      has_flowlets = true;
      flowlets += group.flowlets;
    }
    if (has_flowlets) out << ", \"flowlets\": " << flowlets;
    out << ", \"ports\": {";
    bool first_port = true;
    for (int port : s.Ports()) {
      const PortDrops& d = s.port_drops()[port];
      out << (first_port ? "" : ", ") << "\"" << port << "\": {\"queue_drops\": " << d.queue_full
          << ", \"ecn_marked\": " << d.ecn_marked << "}";
      first_port = false;
    }
    out << "}}";
    first = false;
  }
  out << "}}\n";
  Simulator::Destroy();
}

}  // namespace

int main(int argc, char** argv) {
  return dcfabric::ScenarioMain(argc, argv, "fattree_sim", ReadScenario, Run);
}
