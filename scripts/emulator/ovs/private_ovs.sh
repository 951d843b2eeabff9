#!/bin/bash
# A private Open vSwitch (ovsdb-server + ovs-vswitchd, userspace datapath) in
# a network namespace of its own, for experiments that must not share the
# machine's ovs-vswitchd: its one userspace-datapath thread forwards every
# bridge's packets and stalls while other emulations add or delete bridges.
#
#   scripts/emulator/ovs/private_ovs.sh start            # namespace dcfbis, OVS in /tmp/dcfbis-ovs
#   scripts/emulator/ovs/private_ovs.sh exec CMD ARGS..  # run CMD there (Mininet, controller, ovs-* tools)
#   scripts/emulator/ovs/private_ovs.sh stop             # stop the daemons, delete the namespace
#
# e.g. scripts/emulator/ovs/private_ovs.sh exec nice .venv/bin/dcfabric bisection --reps 2
# The netdev datapath's tap device is per namespace, hence the namespace;
# OVS_RUNDIR points every ovs-vsctl/ovs-ofctl (and so Mininet) at this OVS.
set -euo pipefail
NS=${DCF_OVS_NS:-dcfbis}
DIR=${DCF_OVS_DIR:-/tmp/dcfbis-ovs}
in_ns() { ip netns exec "$NS" env OVS_RUNDIR="$DIR" OVS_LOGDIR="$DIR" OVS_DBDIR="$DIR" "$@"; }

case "${1:-}" in
start)
    if [ -e "$DIR/ovs-vswitchd.pid" ] && kill -0 "$(cat "$DIR/ovs-vswitchd.pid")" 2>/dev/null; then
        echo "private OVS already running in $DIR (namespace $NS)"; exit 0
    fi
    mkdir -p "$DIR"
    ip netns add "$NS" 2>/dev/null || true
    ip netns exec "$NS" ip link set lo up
    [ -e "$DIR/conf.db" ] || ovsdb-tool create "$DIR/conf.db" /usr/share/openvswitch/vswitch.ovsschema
    in_ns ovsdb-server "$DIR/conf.db" --remote="punix:$DIR/db.sock" --pidfile="$DIR/ovsdb-server.pid" \
        --detach --log-file="$DIR/ovsdb-server.log"
    in_ns ovs-vsctl --timeout=30 --no-wait init
    # jemalloc: scripts/emulator/ovs/vswitchd.py says why
    in_ns env LD_PRELOAD=libjemalloc.so.2 ovs-vswitchd "unix:$DIR/db.sock" --pidfile="$DIR/ovs-vswitchd.pid" --detach \
        --log-file="$DIR/ovs-vswitchd.log"
    echo "private OVS running in $DIR (namespace $NS)" ;;
exec)
    shift
    in_ns "$@" ;;
stop)
    for daemon in ovs-vswitchd ovsdb-server; do
        if [ -e "$DIR/$daemon.pid" ]; then
            kill "$(cat "$DIR/$daemon.pid")" 2>/dev/null || true
        fi
    done
    ip netns delete "$NS" 2>/dev/null || true
    echo "private OVS stopped" ;;
*)
    echo "usage: $0 start | exec CMD [ARGS...] | stop" >&2; exit 2 ;;
esac
