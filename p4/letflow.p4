/* LetFlow flowlet switching (Vanini et al., NSDI 2017, section 3) for a
 * leaf-spine fabric; spines run it too, with only down-link routes.
 *
 * routes (lpm on ipv4.dstAddr): to_port(p) for a host or, on a spine, a
 * leaf; to_uplinks() for traffic leaving the leaf, which takes the port of
 * its flowlet.
 *
 * Flowlet table (the paper's figure): the 5-tuple hashes to one of
 * FLOWLET_ENTRIES entries of (port, valid, age). The paper's checker sweeps
 * the table every Delta: an entry whose age bit is set is invalidated,
 * otherwise its age bit is set; a packet clears the age bit. A flowlet
 * therefore ends after an idle time between Delta and 2*Delta.
 * A P4 target has no background sweep, so the sweep is counted instead of
 * run: a global epoch advances every Delta (lazily, on the next packet) and
 * each entry keeps the epoch of its last packet in place of the age bit.
 * "Age bit set" is "one epoch has passed", "invalidated" is "two epochs
 * have passed": the entry expires at the second epoch boundary after its
 * last packet, i.e. after Delta..2*Delta of idleness, as in the paper.
 * When two or more epochs have passed since the last tick, every entry is
 * expired whatever the exact count, so the epoch then advances by 2 and the
 * tick phase restarts now (no division in the data plane).
 *
 * A new flowlet (invalid or expired entry) takes a uniformly random slot of
 * the ECMP member list; a port listed w times in the list has weight w
 * (LetFlow's weighted variant, section 3.1). Delta and the number of slots
 * come from the control plane (table_set_default config set_config ...), the
 * members from the ecmp_member table, so both can change at run time.
 */
struct metadata_t {
    bit<1>  to_uplinks;
    bit<8>  slot;
    bit<48> delta;
    bit<8>  slots;
}

#include "include/fabric.p4"

#define FLOWLET_ENTRIES 4096

control LetFlowIngress(inout headers_t hdr, inout metadata_t meta,
                       inout standard_metadata_t std) {
    register<bit<9>>(FLOWLET_ENTRIES)  flowlet_port;
    register<bit<1>>(FLOWLET_ENTRIES)  flowlet_valid;
    register<bit<32>>(FLOWLET_ENTRIES) flowlet_epoch;
    register<bit<48>>(1) last_tick;
    register<bit<32>>(1) epoch;

    action drop() {
        mark_to_drop(std);
    }

    action set_config(bit<48> delta_us, bit<8> slots) {
        meta.delta = delta_us;
        meta.slots = slots;
    }

    /* Delta in microseconds (bmv2 timestamps are microseconds) and the
     * number of ECMP slots; without configuration no uplink is usable. */
    table config {
        actions = { set_config; }
        default_action = set_config(50000, 0);
    }

    action to_port(bit<9> port) {
        std.egress_spec = port;
    }

    action to_uplinks() {
        meta.to_uplinks = 1;
    }

    table routes {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { to_port; to_uplinks; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_uplink(bit<9> port) {
        std.egress_spec = port;
    }

    table ecmp_member {
        key = { meta.slot: exact; }
        actions = { set_uplink; drop; }
        default_action = drop();
        size = 256;
    }

    apply {
        if (!hdr.ipv4.isValid() || hdr.ipv4.ttl <= 1) {
            drop();
            return;
        }
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        routes.apply();
        if (meta.to_uplinks == 0) {
            return;
        }
        config.apply();
        if (meta.slots == 0) {
            drop();
            return;
        }

        @atomic {
            bit<48> now = std.ingress_global_timestamp;
            bit<48> tick;
            bit<32> current;
            last_tick.read(tick, 0);
            epoch.read(current, 0);
            if (now - tick >= meta.delta + meta.delta) {
                current = current + 2;
                tick = now;
            } else if (now - tick >= meta.delta) {
                current = current + 1;
                tick = tick + meta.delta;
            }
            last_tick.write(0, tick);
            epoch.write(0, current);

            bit<32> index;
            hash(index, HashAlgorithm.crc32, (bit<32>) 0,
                 { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol,
                   hdr.l4.srcPort, hdr.l4.dstPort },
                 (bit<32>) FLOWLET_ENTRIES);
            bit<1> valid;
            bit<32> seen;
            bit<9> port;
            flowlet_valid.read(valid, index);
            flowlet_epoch.read(seen, index);
            flowlet_port.read(port, index);
            if (valid == 0 || current - seen >= 2) {
                random(meta.slot, (bit<8>) 0, meta.slots - 1);
                ecmp_member.apply();
                port = std.egress_spec;
                flowlet_port.write(index, port);
                flowlet_valid.write(index, 1);
            }
            std.egress_spec = port;
            flowlet_epoch.write(index, current);
        }
    }
}

control LetFlowEgress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t std) {
    apply { }
}

V1Switch(FabricParser(), FabricVerifyChecksum(), LetFlowIngress(), LetFlowEgress(),
         FabricComputeChecksum(), FabricDeparser()) main;
