// Walks packets through an export's switches (of_pipeline.h) over its
// cabling, for the path test: no ns-3, no time.
// usage: path_trace EXPORT < queries
// queries, one a line:
//   dead_link A B          the link's ports are not live
//   dead_switch S          nor are S's ports and those facing it; S forwards nothing
//   at NS                  the traces that follow happen at NS (from 0; flowlet groups read it)
//   dead_port SW PORT      the port is not live
//   trace SRC DST PROTO SPORT DPORT BYTES
//   bucket SW GROUP SRC_IP DST_IP PROTO SPORT DPORT   the bucket index the
//                          group gives the packet (sent by its hosts), -1 if none
// stdout: per trace "SRC DST PROTO SPORT DPORT: SW:PORT... -> END" with END
// one of HOST (delivered), drop@SW, controller@SW (held there), dead@SW
// (out of a port that is not live), ttl@SW, loop; then for every entry hit
// "counter SW ID PACKETS BYTES" (ID: the entry's line order on its switch);
// per bucket query "bucket INDEX".
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "of_pipeline.h"

namespace {

uint32_t Ipv4(const std::string& dotted) {
  std::istringstream in(dotted);
  uint32_t value = 0;
  std::string part;
  for (int i = 0; i < 4 && std::getline(in, part, '.'); ++i) value = value << 8 | std::stoul(part);
  return value;
}

struct Topology {
  std::map<std::string, uint32_t> host_ip;
  std::map<std::pair<std::string, uint32_t>, std::pair<std::string, uint32_t>> peer;
};

Topology ReadTopology(const std::string& path) {
  std::ifstream in(path);
  Topology topo;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string kind, a, b, role, ip;
    uint32_t pa, pb;
    words >> kind;
    if (kind == "node" && words >> a >> role >> ip && role == "host") topo.host_ip[a] = Ipv4(ip);
    if (kind == "link" && words >> a >> pa >> b >> pb) {
      topo.peer[{a, pa}] = {b, pb};
      topo.peer[{b, pb}] = {a, pa};
    }
  }
  return topo;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: path_trace EXPORT < queries\n";
    return 2;
  }
  try {
    auto switches = dcfabric::OfPipeline::LoadExport(argv[1]);
    Topology topo = ReadTopology(argv[1]);
    std::set<std::pair<std::string, std::string>> dead_links;
    std::set<std::string> dead_switches;
    std::set<std::pair<std::string, uint32_t>> dead_ports;
    uint64_t now_ns = 0;
    auto live = [&](const std::string& sw, uint32_t port) {
      auto it = topo.peer.find({sw, port});
      if (it == topo.peer.end() || dead_switches.count(sw) || dead_switches.count(it->second.first) ||
          dead_ports.count({sw, port}))
        return false;
      return !dead_links.count({sw, it->second.first});
    };
    for (std::string line; std::getline(std::cin, line);) {
      std::istringstream words(line);
      std::string kind, a, b;
      uint32_t port_number;
      words >> kind;
      if (kind == "dead_link" && words >> a >> b) {
        dead_links.insert({a, b});
        dead_links.insert({b, a});
      } else if (kind == "dead_port" && words >> a >> port_number) {
        dead_ports.insert({a, port_number});
      } else if (kind == "bucket") {
        std::string src, dst;
        uint32_t group;
        unsigned proto, sport, dport;
        if (!(words >> a >> group >> src >> dst >> proto >> sport >> dport))
          throw std::invalid_argument("bad bucket query: " + line);
        dcfabric::PacketFields p;
        p.eth_type = 0x0800;
        p.ipv4_src = Ipv4(src);
        p.ipv4_dst = Ipv4(dst);
        p.eth_src = dcfabric::HostMac(p.ipv4_src);
        p.eth_dst = dcfabric::HostMac(p.ipv4_dst);
        p.ip_proto = uint8_t(proto);
        p.tp_src = uint16_t(sport);
        p.tp_dst = uint16_t(dport);
        std::cout << "bucket " << switches.at(a).BucketOf(group, p, [&](uint32_t q) { return live(a, q); })
                  << '\n';
      } else if (kind == "dead_switch" && words >> a) {
        dead_switches.insert(a);
      } else if (kind == "at") {
        if (!(words >> now_ns)) throw std::invalid_argument("bad time: " + line);
      } else if (kind == "trace") {
        unsigned proto, sport, dport, bytes;
        if (!(words >> a >> b >> proto >> sport >> dport >> bytes))
          throw std::invalid_argument("bad trace: " + line);
        std::cout << a << ' ' << b << ' ' << proto << ' ' << sport << ' ' << dport << ':';
        dcfabric::PacketFields p;
        p.eth_type = 0x0800;
        p.ipv4_src = topo.host_ip.at(a);
        p.ipv4_dst = topo.host_ip.at(b);
        p.eth_src = dcfabric::HostMac(p.ipv4_src);
        p.eth_dst = dcfabric::HostMac(p.ipv4_dst);
        p.ip_proto = uint8_t(proto);
        p.tp_src = uint16_t(sport);
        p.tp_dst = uint16_t(dport);
        auto [node, port] = topo.peer.at({a, 0});
        std::string end = "loop";
        for (int ttl = 64, hops = 0; ttl > 0 && hops < 64; ++hops) {  // no dec_ttl: still ends
          if (topo.host_ip.count(node)) { end = node; break; }
          if (dead_switches.count(node)) { end = "drop@" + node; break; }
          p.in_port = port;
          p.metadata = 0;
          bool dec_ttl = false, to_controller = false;
          std::string sw = node;
          int out = switches.at(sw).Forward(
              p, bytes, now_ns, [&](uint32_t q) { return live(sw, q); }, &dec_ttl, &to_controller);
          if (out < 0) { end = (to_controller ? "controller@" : "drop@") + sw; break; }
          if (dec_ttl && --ttl == 0) { end = "ttl@" + sw; break; }
          std::cout << ' ' << sw << ':' << out;
          if (!live(sw, uint32_t(out))) { end = "dead@" + sw; break; }
          std::tie(node, port) = topo.peer.at({sw, uint32_t(out)});
        }
        std::cout << " -> " << end << '\n';
      } else if (!kind.empty()) {
        throw std::invalid_argument("unknown query: " + line);
      }
    }
    for (const auto& [name, pipeline] : switches)
      for (const dcfabric::FlowEntry* e : pipeline.Entries())
        if (e->counters.packets)
          std::cout << "counter " << name << ' ' << e->id << ' ' << e->counters.packets << ' '
                    << e->counters.bytes << '\n';
  } catch (const std::exception& e) {
    std::cerr << "path_trace: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
