/* Headers, parser, checksums and deparser shared by the dcfabric programs.
 *
 * A program declares its own `struct metadata_t` and then includes this file
 * (a textual include, so the parser can carry that metadata type). The parser
 * reads Ethernet, IPv4 and, for unfragmented TCP/UDP, the two port fields
 * (the 5-tuple of LetFlow's flowlet hash).
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> ETHERTYPE_IPV4 = 0x0800;
/* IEEE 802 local experimental ethertype: elephant reports of distda_sketch. */
const bit<16> ETHERTYPE_REPORT = 0x88B5;
const bit<8>  PROTO_TCP = 6;
const bit<8>  PROTO_UDP = 17;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

/* The first four bytes of a TCP or UDP header. */
header l4_ports_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

/* An elephant report sent to the control plane (only distda_sketch.p4 sets
 * it valid): source ToR, its estimated bytes and the window it crossed the
 * threshold in. */
header report_t {
    bit<16> srcTor;
    bit<32> bytes;
    bit<32> window;
}

struct headers_t {
    ethernet_t ethernet;
    report_t   report;
    ipv4_t     ipv4;
    l4_ports_t l4;
}

parser FabricParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (0, PROTO_TCP): parse_l4;
            (0, PROTO_UDP): parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        pkt.extract(hdr.l4);
        transition accept;
    }
}

control FabricVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

/* Every program rewrites the TTL, so the IPv4 checksum is recomputed. */
control FabricComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control FabricDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.report);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.l4);
    }
}
