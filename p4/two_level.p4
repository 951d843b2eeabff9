/* Two-level routing table of Al-Fares et al. (SIGCOMM 2008, section 3.4)
 * as one ternary table over ipv4.dstAddr: the TCAM.
 *
 * In the paper's hardware the TCAM returns the lowest matching address and a
 * RAM at that address holds the output port. Here the bmv2 entry priority is
 * that address: in simple_switch a *lower* priority number wins among
 * matching ternary entries, exactly "lowest address wins". The control plane
 * (controller/p4_entries.py) writes the left-handed prefixes (mask 1^m 0^n)
 * at the low addresses, longest first, and the right-handed suffixes
 * (mask 0^n 1^m) above them, so a destination matching a prefix and a
 * suffix takes the prefix. The action data is the RAM word: the port.
 *
 * The forwarding equals the OpenFlow pipeline of controller/fattree_rules.py:
 * output on the port and decrement the TTL at every switch (so traceroute
 * and ping show the path length); destination MACs are already the hosts'
 * own (static ARP in the hosts, see scripts/p4_fabric.py), so no MAC is
 * rewritten. Non-IPv4 frames and TCAM misses are dropped: nothing floods in
 * a fat-tree full of loops.
 */
struct metadata_t { }

#include "include/fabric.p4"

control TwoLevelIngress(inout headers_t hdr, inout metadata_t meta,
                        inout standard_metadata_t std) {
    action drop() {
        mark_to_drop(std);
    }

    /* The RAM word of a TCAM hit. */
    action output(bit<9> port) {
        std.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table tcam {
        key = { hdr.ipv4.dstAddr: ternary; }
        actions = { output; drop; }
        default_action = drop();
        size = 1024;
    }

    apply {
        /* OVS's dec_ttl drops a packet whose TTL cannot be decremented. */
        if (!hdr.ipv4.isValid() || hdr.ipv4.ttl <= 1) {
            drop();
        } else {
            tcam.apply();
        }
    }
}

control TwoLevelEgress(inout headers_t hdr, inout metadata_t meta,
                       inout standard_metadata_t std) {
    apply { }
}

V1Switch(FabricParser(), FabricVerifyChecksum(), TwoLevelIngress(), TwoLevelEgress(),
         FabricComputeChecksum(), FabricDeparser()) main;
