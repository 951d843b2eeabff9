/* Destination-based elephant detection for DistDA (seed 002, section on
 * Algorithm 4: "destination-based elephant detection of flows from a source
 * ... in P4 using sketches").
 *
 * Runs at a destination ToR. routes (lpm on ipv4.dstAddr) forwards as any
 * ToR does; deliver(p) marks a packet that leaves to one of this ToR's own
 * hosts, and only those are counted: the demand *into* this ToR. src_tor
 * (lpm on ipv4.srcAddr) names the source ToR of the sender's subnet; a
 * source without an entry (this ToR's own hosts) is not counted.
 *
 * The bytes (IPv4 total length) per source ToR go into a count-min sketch of
 * three rows of SKETCH_COLUMNS counters, each row with its own hash;
 * the estimate is the minimum over the rows, which never underestimates.
 * Counters belong to a measurement window of config's window_us: a global
 * window number advances when a packet finds the window over, and a counter
 * stamped with an older window restarts from zero on its next update, so the
 * sketch is cleared without a sweep.
 *
 * When the estimate reaches config's threshold_bytes the source is an
 * elephant: the packet is cloned (ingress to egress, mirror session
 * REPORT_SESSION, which the control plane points at its CPU port) and the
 * clone leaves as an Ethernet frame of type ETHERTYPE_REPORT carrying
 * report_t, cut to that header. reported_window remembers per source ToR
 * the window of its last report, so a source is reported once per window.
 */
struct metadata_t {
    bit<1>  deliver;
    bit<1>  counted;
    @field_list(1)
    bit<16> src_tor;
    @field_list(1)
    bit<32> estimate;
    @field_list(1)
    bit<32> window;
    bit<48> window_us;
    bit<32> threshold;
}

#include "include/fabric.p4"

#define SKETCH_COLUMNS 256
#define MAX_TORS 1024
const bit<32> REPORT_SESSION = 100;
const bit<32> INSTANCE_INGRESS_CLONE = 1;

control SketchIngress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t std) {
    register<bit<32>>(SKETCH_COLUMNS) row0_bytes;
    register<bit<32>>(SKETCH_COLUMNS) row1_bytes;
    register<bit<32>>(SKETCH_COLUMNS) row2_bytes;
    register<bit<32>>(SKETCH_COLUMNS) row0_window;
    register<bit<32>>(SKETCH_COLUMNS) row1_window;
    register<bit<32>>(SKETCH_COLUMNS) row2_window;
    register<bit<32>>(MAX_TORS) reported_window;
    register<bit<48>>(1) window_start;
    /* Windows are numbered from 1 so that a zeroed register never looks
     * like the current window. */
    register<bit<32>>(1) window_number;

    action drop() {
        mark_to_drop(std);
    }

    action set_config(bit<48> window_us, bit<32> threshold_bytes) {
        meta.window_us = window_us;
        meta.threshold = threshold_bytes;
    }

    table config {
        actions = { set_config; }
        default_action = set_config(1000000, 0xffffffff);
    }

    action forward(bit<9> port) {
        std.egress_spec = port;
    }

    action deliver(bit<9> port) {
        std.egress_spec = port;
        meta.deliver = 1;
    }

    table routes {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; deliver; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_src_tor(bit<16> tor) {
        meta.src_tor = tor;
        meta.counted = 1;
    }

    table src_tor {
        key = { hdr.ipv4.srcAddr: lpm; }
        actions = { set_src_tor; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    /* One count-min row (its hash: CRC-32 of the source ToR and the row's
     * salt): restart a counter of an older window, add the packet's bytes,
     * and lower the estimate to this row's count. */
    #define SKETCH_ROW(bytes_reg, window_reg, salt)                           \
    {                                                                       \
        bit<32> column;                                                     \
        hash(column, HashAlgorithm.crc32, (bit<32>) 0,                      \
             { meta.src_tor, (bit<8>) salt }, (bit<32>) SKETCH_COLUMNS);    \
        bit<32> count;                                                      \
        bit<32> stamp;                                                      \
        bytes_reg.read(count, column);                                      \
        window_reg.read(stamp, column);                                     \
        if (stamp != meta.window) {                                         \
            count = 0;                                                      \
        }                                                                   \
        count = count + (bit<32>) hdr.ipv4.totalLen;                        \
        bytes_reg.write(column, count);                                     \
        window_reg.write(column, meta.window);                              \
        if (count < meta.estimate) {                                        \
            meta.estimate = count;                                          \
        }                                                                   \
    }

    apply {
        if (!hdr.ipv4.isValid() || hdr.ipv4.ttl <= 1) {
            drop();
            return;
        }
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        routes.apply();
        if (meta.deliver == 0) {
            return;
        }
        src_tor.apply();
        if (meta.counted == 0 || meta.src_tor >= MAX_TORS) {
            return;
        }
        config.apply();
        @atomic {
            bit<48> start;
            window_start.read(start, 0);
            window_number.read(meta.window, 0);
            if (meta.window == 0 || std.ingress_global_timestamp - start >= meta.window_us) {
                meta.window = meta.window + 1;
                window_start.write(0, std.ingress_global_timestamp);
                window_number.write(0, meta.window);
            }
            meta.estimate = 0xffffffff;
            SKETCH_ROW(row0_bytes, row0_window, 1)
            SKETCH_ROW(row1_bytes, row1_window, 2)
            SKETCH_ROW(row2_bytes, row2_window, 3)
            bit<32> last;
            reported_window.read(last, (bit<32>) meta.src_tor);
            if (meta.estimate >= meta.threshold && last != meta.window) {
                reported_window.write((bit<32>) meta.src_tor, meta.window);
                clone_preserving_field_list(CloneType.I2E, REPORT_SESSION, 1);
            }
        }
    }
}

control SketchEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t std) {
    apply {
        if (std.instance_type == INSTANCE_INGRESS_CLONE) {
            hdr.report.setValid();
            hdr.report.srcTor = meta.src_tor;
            hdr.report.bytes = meta.estimate;
            hdr.report.window = meta.window;
            hdr.ethernet.etherType = ETHERTYPE_REPORT;
            hdr.ipv4.setInvalid();
            hdr.l4.setInvalid();
            truncate(14 + 10);
        }
    }
}

V1Switch(FabricParser(), FabricVerifyChecksum(), SketchIngress(), SketchEgress(),
         FabricComputeChecksum(), FabricDeparser()) main;
