#!/usr/bin/env bash
# Idempotent installer for dcfabric on a fresh Debian 12/13 machine (run as root).
# Installs the system tools the project calls, builds the Python environment in
# .venv and starts Open vSwitch in userspace mode (no kernel module here).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: must run as root (Mininet and Open vSwitch need it)" >&2
  exit 1
fi

# Every tool the project runs, named explicitly (a minimal Debian lacks iproute2).
# chromium, chromium-driver and prometheus: the live view's browser test and
# the metrics test's Prometheus server; python3-networkx: Debian's `mn` reading
# topologies/mininet_topo.py (Kevin's model needs it); openssh-server and sudo:
# Mininet's cluster edition reaches servers through them (--cluster).
# socat: the controller relay of private Open vSwitch instances (scripts/emulator/ovs/instances.py).
# libjemalloc2: ovs-vswitchd's allocator (scripts/emulator/ovs/vswitchd.py says why).
APT_PACKAGES="openvswitch-switch mininet iperf3 iputils-ping ethtool iproute2
  procps psmisc net-tools fping curl python3 python3-venv python3-dev gcc g++ make
  chromium chromium-driver prometheus python3-networkx openssh-server sudo socat libjemalloc2 tmux"
missing=$(for p in $APT_PACKAGES; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
  grep -q 'install ok installed' || echo "$p"; done)
if [ -n "$missing" ]; then
  echo "== apt: installing $(echo $missing)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# Python: Debian's interpreter, so the venv sees Debian's mininet package.
if [ ! -x .venv/bin/python ]; then
  echo "== venv: creating .venv"
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
PY=.venv/bin/python
stamp=.venv/.dcfabric-installed
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ setup.cfg -nt "$stamp" ]; then
  echo "== pip: installing requirements"
  # Ryu 4.34 needs an old setuptools and no build isolation to install on 3.13.
  $PY -m pip install -q "setuptools<67" wheel pbr
  $PY -m pip install -q --no-build-isolation ryu==4.34
  $PY -m pip install -q -r requirements.txt
  $PY -m pip install -q --no-build-isolation --no-deps -e .
  touch "$stamp"
fi

# LetFlow's ns-3 load balancer (C++ against the ns3 wheel); rebuilds only when sources changed.
$PY -m scripts.letflow.ns3.build
# The simulated fat-tree and its pipeline's path driver (C++ against the ns3 wheel).
$PY -m scripts.sim.ns3.build

# Open vSwitch in userspace mode: ovs-ctl skips the missing kernel module.
# Userspace TSO is read only when ovs-vswitchd starts: turned off before it
# starts, also where an earlier set-up turned it on (scripts/emulator/ovs/vswitchd.py
# says why).
if ! ovs-vsctl --timeout=5 show >/dev/null 2>&1; then
  echo "== ovs: starting ovsdb-server and ovs-vswitchd (with jemalloc, without userspace TSO)"
  /usr/share/openvswitch/scripts/ovs-ctl start --no-ovs-vswitchd --system-id=random >/dev/null 2>&1 || true
  ovs-vsctl --timeout=10 --no-wait set Open_vSwitch . other_config:userspace-tso-enable=false
  LD_PRELOAD=libjemalloc.so.2 /usr/share/openvswitch/scripts/ovs-ctl start --no-ovsdb-server \
    --system-id=random >/dev/null 2>&1 || true
  ovs-vsctl --timeout=10 show >/dev/null || { echo "setup.sh: Open vSwitch did not start" >&2; exit 1; }
fi
if ! grep -q libjemalloc "/proc/$(cat /run/openvswitch/ovs-vswitchd.pid)/maps"; then
  echo "== note: ovs-vswitchd was already running, with glibc's malloc; restart it as" \
       "'LD_PRELOAD=libjemalloc.so.2 /usr/share/openvswitch/scripts/ovs-ctl restart' for the" \
       "README's throughput (scripts/emulator/ovs/vswitchd.py)"
fi
echo "== ready: $($PY --version), $(ovs-vsctl --version | head -1)"
