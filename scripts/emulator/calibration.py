"""This machine's emulator, measured once and cached: what one
ovs-vswitchd forwards of shaped traffic, and what the hosts carry with no
daemon between them; and the defaults that follow (the link rate an
experiment runs at by default, the forwarding the daemon policy gives one
daemon, scripts/emulator/ovs/daemon_policy.py).

Why this measure: a k=4 fabric's runs on a few cores are limited first by
the one forwarding thread of ovs-vswitchd (it drops packets it did not read
in time), and the faithful rate differs between CPUs of one machine size
(docs/emulator.md, "Calibration"). So the calibration makes a fixed chain of
five shaped bridges (a fat-tree's longest path) with eight hosts at each
end, each sending one TCP flow to its peer at the other end (a permutation
of 16 hosts, as k=4's), on links shaped far above what the daemon forwards,
and counts the shaped switch hops per second the daemon carried. The same
chain on kernel bridges gives what the hosts' side (their TCP stacks,
shaped veths) carries on this machine's cores.

    dcfabric calibrate        measure again, cache and print

The cache is one JSON file per machine kind (CPU model, cores, Open vSwitch
version) under /var/lib/dcfabric/ when root may write there, else
$XDG_CACHE_HOME/dcfabric or ~/.cache/dcfabric. Pure but for ``this_machine``,
the cache's reading and writing, and ``measure``.
"""
import argparse
import dataclasses
import datetime
import json
import math
import os
import re
import subprocess
import sys
import time

from scripts.emulator.ovs import daemon_policy

SCHEMA = 1
# the chain: a fat-tree's longest path (edge, aggregation, core,
# aggregation, edge), a k=4 permutation's 16 hosts at its ends
CHAIN_SWITCHES = 5
HOSTS_PER_END = 8
# shaped, so every hop pays for its HTB class, but far above what the
# chain carries, so that the shaping never limits it
CHAIN_LINK_MBPS = 1000.0
CHAIN_QUEUE_PACKETS = 50  # the experiments' switch queues
FLOW_S, OMIT_S = 4, 1
# the machine's own load is sampled this long first, and said when above the share
BEFORE_S, BUSY_WARNING_PCT = 1, 20.0
# Share of the forwarding a daemon's thread carries when saturated that it
# carries without dropping packets unread. The quiet 2-core AMD EPYC's thread
# carried 1,437 Mbit/s of shaped hops and dropped packets from 10 Mbit/s
# (about 560 Mbit/s of hops) on; the 2-core Xeon's (1,300-1,450) held at
# 10 Mbit/s (715); 16 cores: 4 daemons held 50 Mbit/s (895 each). Where the
# thread saturates says less than when it starts to drop, which differs
# between CPUs: the share is the lowest seen.
FAITHFUL_SHARE = 0.38
# Share of what the hosts carry with no daemon that a reference run may
# ask of them and still reach 90% of its line rate.
HOST_FAITHFUL_SHARE = 0.5
# Below this a run is mostly TCP's start-up over deep queues: not worth emulating.
FLOOR_MBPS = 2.0
REFERENCE_SCHEME = 'nonblocking'  # the bisection's reference runs on a kernel bridge, without a daemon
CACHE_ROOT = '/var/lib/dcfabric'


class TooSmallToEmulate(ValueError):
    """This machine cannot emulate the asked fabric faithfully at a useful rate."""


@dataclasses.dataclass(frozen=True)
class Calibration:
    """What this machine's emulator forwards (Mbit/s), where and when it was measured."""
    machine: dict  # cpu_model, cores, ovs_version
    measured_at: str  # ISO time
    took_s: float
    daemon_hop_mbps: float  # shaped switch hops x Mbit/s one ovs-vswitchd carried, saturated
    host_mbps: float  # what the hosts carried through the same chain on kernel bridges
    chain: dict = dataclasses.field(default_factory=dict)  # the measurement's own figures
    schema: int = SCHEMA

    @property
    def key(self):
        return machine_key(self.machine)

    @property
    def faithful_mbps_per_daemon(self):
        """The forwarding the daemon policy gives one daemon."""
        return FAITHFUL_SHARE * self.daemon_hop_mbps

    def as_config(self):
        """The calibration as a run's config records it (JSON)."""
        return dict(dataclasses.asdict(self), key=self.key,
                    faithful_mbps_per_daemon=round(self.faithful_mbps_per_daemon))

    @classmethod
    def from_config(cls, config):
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{name: value for name, value in config.items() if name in names})


def machine_key(machine):
    """The cache's key of a machine kind: 'CPU model, N cores, OVS version' (pure)."""
    return '%s, %d cores, Open vSwitch %s' % (machine['cpu_model'], machine['cores'], machine['ovs_version'])


def cache_file_name(machine):
    """The machine kind's cache file name (pure)."""
    return 'calibration-%s.json' % re.sub(r'[^A-Za-z0-9.]+', '-', machine_key(machine)).strip('-').lower()


def cache_dirs(euid, environ):
    """Where the cache may live, in order of preference (pure)."""
    user = environ.get('XDG_CACHE_HOME') or os.path.join(environ.get('HOME') or '~', '.cache')
    return ([CACHE_ROOT] if euid == 0 else []) + [os.path.join(user, 'dcfabric')]


def nice_rate_at_most(mbps):
    """The highest of 1, 2, 5, 10, 20, 50, ... Mbit/s not above ``mbps``
    (None below 1): a rate a person would choose (pure)."""
    if mbps < 1:
        return None
    decade = 10 ** math.floor(math.log10(mbps) + 1e-9)
    return max(step * decade for step in (1, 2, 5) if step * decade <= mbps * (1 + 1e-9))


def describe(calibration):
    """The calibration in a line, as fabric commands print it."""
    return ('emulator calibration (%s, measured %s in %.0f s): one ovs-vswitchd forwards %s Mbit/s of shaped '
            'switch hops (%s faithfully), the hosts carry %s Mbit/s without it; `dcfabric calibrate` measures again'
            % (calibration.key, calibration.measured_at, calibration.took_s,
               '{:,.0f}'.format(calibration.daemon_hop_mbps), '{:,.0f}'.format(calibration.faithful_mbps_per_daemon),
               '{:,.0f}'.format(calibration.host_mbps)))


def forwarding_needed(topo, patterns):
    """(switch hops a flow crosses, what they are): the fabric's longest
    path for any pattern but Random, whose flows cross the fabric's mean
    (pure). Every other pattern of the bisection experiment can send all its
    flows across the core (Stride(k), Same-ID Outgoing), or most of them."""
    longest = daemon_policy.longest_switch_path(topo)
    if patterns and all(pattern == 'random' for pattern in patterns):
        return daemon_policy.mean_switch_hops(topo), 'the mean path of a random permutation'
    return longest, 'the longest path'


def predicted_faithful(calibration, topo, schemes, patterns, mbps, cores):
    """(whether a run of ``schemes`` on ``patterns`` at ``mbps`` is
    predicted faithful on ``topo``, why) (pure)."""
    hosts = len(topo.hosts)
    host_need = hosts * mbps
    host_room = HOST_FAITHFUL_SHARE * calibration.host_mbps
    if host_need > host_room:
        return False, ("%d hosts x %g Mbit/s = {:,.0f} Mbit/s is more than the hosts' side carries faithfully "
                       "here ({:,.0f}: %d%% of the {:,.0f} it carried)".format(
                           host_need, host_room, calibration.host_mbps) % (hosts, mbps, 100 * HOST_FAITHFUL_SHARE))
    if all(scheme == REFERENCE_SCHEME for scheme in schemes):
        return True, ("%d hosts x %g Mbit/s = {:,.0f} Mbit/s, within what the hosts' side carries faithfully "
                      "({:,.0f})".format(host_need, host_room) % (hosts, mbps))
    hops, which = forwarding_needed(topo, patterns)
    demand = hosts * mbps * hops
    per_daemon = calibration.faithful_mbps_per_daemon
    ports = daemon_policy.switch_ports(topo)
    # the daemons the policy gives a fabric whose flows cross ``hops`` switches
    daemons = daemon_policy.choose(cores, sum(ports.values()), len(ports), hosts, hops, mbps, per_daemon).count
    room = daemons * per_daemon
    return demand <= room, ('%d hosts x %g Mbit/s x %.1f switch hops (%s) = {:,.0f} Mbit/s of forwarding %s '
                            '%d daemon%s x {:,.0f} Mbit/s faithfully each'.format(demand, per_daemon)
                            % (hosts, mbps, hops, which, '<=' if demand <= room else '>', daemons,
                               '' if daemons == 1 else 's'))


def default_link_mbps(calibration, topo, schemes, patterns, cores=None):
    """(link rate in Mbit/s, why): the highest rate a person would choose
    (1, 2, 5, 10, ...) at which ``schemes`` on ``patterns`` are predicted
    faithful on ``topo`` on this machine (``cores``: this process's unless
    given). TooSmallToEmulate below FLOOR_MBPS (pure)."""
    cores = daemon_policy.machine_cores() if cores is None else cores
    # down from what the hosts carry with no daemon at all, one step at a time
    rate = nice_rate_at_most(max(1.0, calibration.host_mbps))
    above = None
    while rate is not None and rate >= 1:
        ok, why = predicted_faithful(calibration, topo, schemes, patterns, rate, cores)
        if ok:
            break
        above = (rate, why)
        rate = nice_rate_at_most(rate * 0.99)
    if rate is None or rate < FLOOR_MBPS:
        _, at_floor = predicted_faithful(calibration, topo, schemes, patterns, FLOOR_MBPS, cores)
        raise TooSmallToEmulate(
            '%s: this machine (%s) emulates it faithfully only below %g Mbit/s per link (%s). Run it on the '
            'packet simulator instead (--backend sim), or choose a rate with --bw and read each run\'s '
            'fidelity verdict' % (topo.name, calibration.key, FLOOR_MBPS, at_floor))
    reason = 'the highest rate predicted faithful by this machine\'s calibration: ' + why
    if above:
        reason += '; at %g Mbit/s %s' % above
    return rate, reason


def this_machine():
    """{cpu_model, cores, ovs_version} of this machine (cores: this process's)."""
    cpu_model = 'unknown CPU'
    with open('/proc/cpuinfo') as cpuinfo:
        for line in cpuinfo:
            if line.startswith('model name'):
                cpu_model = line.split(':', 1)[1].strip()
                break
    try:
        version = subprocess.run(['ovs-vswitchd', '--version'], capture_output=True, text=True,
                                 timeout=10).stdout.split('\n', 1)[0].split()[-1]
    except (OSError, IndexError):
        version = 'unknown'
    return {'cpu_model': cpu_model, 'cores': daemon_policy.machine_cores(), 'ovs_version': version}


def cached(machine):
    """The machine kind's cached Calibration, or None."""
    for directory in cache_dirs(os.geteuid(), os.environ):
        path = os.path.join(os.path.expanduser(directory), cache_file_name(machine))
        try:
            with open(path) as f:
                config = json.load(f)
        except (OSError, ValueError):
            continue
        if config.get('schema') == SCHEMA and config.get('machine') == machine:
            return Calibration.from_config(config)
    return None


def save(calibration):
    """Write ``calibration`` to the first cache directory that takes it; its path."""
    errors = []
    for directory in cache_dirs(os.geteuid(), os.environ):
        directory = os.path.expanduser(directory)
        try:
            os.makedirs(directory, exist_ok=True)
            path = os.path.join(directory, cache_file_name(calibration.machine))
            with open(path + '.tmp', 'w') as f:
                json.dump(calibration.as_config(), f, indent=1)
            os.replace(path + '.tmp', path)
            return path
        except OSError as error:
            errors.append('%s: %s' % (directory, error))
    raise OSError('no cache directory takes the calibration (%s)' % '; '.join(errors))


def current(progress=print):
    """This machine's Calibration: the cached one, or measured now (said,
    with how long it took) and cached."""
    machine = this_machine()
    found = cached(machine)
    if found is not None:
        return found
    progress('no emulator calibration for this machine (%s) yet: measuring it once (about 30 s)'
             % machine_key(machine))
    calibration = measure(machine, progress)
    path = save(calibration)
    progress('calibrated in %.1f s, cached in %s' % (calibration.took_s, path))
    return calibration


# --- measuring (root, Mininet, Open vSwitch) ---

def forwarding_chain():
    """The chain's model: CHAIN_SWITCHES switches in a line, HOSTS_PER_END
    hosts on each end switch."""
    from topologies.model import Node, Topology
    model = Topology('forwarding chain (%d switches, %d hosts)' % (CHAIN_SWITCHES, 2 * HOSTS_PER_END))
    switches = ['cal%d' % i for i in range(CHAIN_SWITCHES)]
    for index, name in enumerate(switches):
        model.add_node(Node(name, 'switch', '10.254.255.%d' % (index + 1), (index,), 0xca1 << 32 | index + 1))
    for index in range(CHAIN_SWITCHES - 1):  # port 0 towards the first switch, 1 towards the last
        model.add_link(switches[index], 1, switches[index + 1], 0)
    for end, switch, first_port in ((0, switches[0], 2), (1, switches[-1], 2)):
        for index in range(HOSTS_PER_END):
            host = 'calh%d_%d' % (end, index)
            model.add_node(Node(host, 'host', '10.254.%d.%d' % (end, index + 1), (end, index)))
            model.add_link(switch, first_port + index, host, 0)
    return model


def chain_flows(model):
    """Each host's flow to its peer at the other end, both ways."""
    pairs = [('calh0_%d' % i, 'calh1_%d' % i) for i in range(HOSTS_PER_END)]
    return pairs + [(b, a) for a, b in pairs]


def carried(fabric, model, progress):
    """(Mbit/s the chain's flows carried in all, the fidelity monitor's figures)."""
    from scripts.emulator import traffic
    from scripts.emulator.fidelity import FidelityMonitor
    pairs = chain_flows(model)
    traffic.limit_queues(fabric.net, CHAIN_QUEUE_PACKETS)
    traffic.wait_all_pairs(fabric.net, [h.name for h in model.hosts], pairs=pairs, deadline_s=30,
                           progress=progress)
    monitor = FidelityMonitor(settle_s=OMIT_S + 1).start()
    reports = traffic.iperf3_flows(fabric.net, pairs, FLOW_S, OMIT_S)
    figures = monitor.stop()
    return sum(traffic.received_mbps(report) for report in reports), figures


def measure(machine, progress=print):
    """Measure this machine's Calibration (root; no fabric may be running)."""
    from scripts.emulator.cpu_sample import CpuSample
    from scripts.emulator.fabric import Fabric, KernelBridgeFabric
    from scripts.emulator.ports import free_port
    started = time.monotonic()
    before = CpuSample().start()
    time.sleep(BEFORE_S)
    others = before.stop()  # what other work took of the machine just before
    if others['cpu_busy_pct'] > BUSY_WARNING_PCT:
        progress('warning: the machine is %.0f%% busy with other work: the calibration will measure less than a '
                 'quiet machine forwards (`dcfabric calibrate` again when it is quiet)' % others['cpu_busy_pct'])
    model = forwarding_chain()
    own = daemon_policy.DaemonChoice(1, 'the calibration measures one daemon')
    progress('calibration: %d flows through %d shaped bridges on one ovs-vswitchd'
             % (2 * HOSTS_PER_END, CHAIN_SWITCHES))
    with Fabric(model, None, None, ofp_port=free_port(), bw=CHAIN_LINK_MBPS, controller=False,
                ovs_instances=own) as fabric:
        for switch in model.switches:  # the chain has no loop: the switches learn where hosts are
            subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', 'add-flow', switch.name, 'priority=0,actions=NORMAL'],
                           check=True, capture_output=True, timeout=30)
        daemon_mbps, daemon_figures = carried(fabric, model, progress)
    progress('calibration: the same flows through %d kernel bridges' % CHAIN_SWITCHES)
    with KernelBridgeFabric(model, bw=CHAIN_LINK_MBPS) as fabric:
        host_mbps, host_figures = carried(fabric, model, progress)
    keep = ('idle_pct_median', 'daemon_busy_pct_median', 'daemon_socket_drops', 'kernel_backlog_drops')
    return Calibration(
        machine=machine, measured_at=datetime.datetime.now().isoformat(timespec='seconds'),
        took_s=round(time.monotonic() - started, 1),
        daemon_hop_mbps=round(daemon_mbps * CHAIN_SWITCHES, 1), host_mbps=round(host_mbps, 1),
        chain={'switches': CHAIN_SWITCHES, 'flows': 2 * HOSTS_PER_END, 'link_mbps': CHAIN_LINK_MBPS,
               'seconds': FLOW_S, 'omit_s': OMIT_S, 'daemon_flows_mbps': round(daemon_mbps, 1),
               'daemon_run': {k: daemon_figures.get(k) for k in keep},
               'kernel_bridge_run': {k: host_figures.get(k) for k in keep},
               'before': {key: others[key] for key in ('cpu_busy_pct', 'loadavg_1m', 'ovs_bridges')}})


def rerun(progress=print):
    """Measure this machine's calibration again, cache it and print it."""
    calibration = measure(this_machine(), progress)
    path = save(calibration)
    print('calibrated in %.1f s, cached in %s' % (calibration.took_s, path))
    print(describe(calibration))
    print(json.dumps(calibration.as_config(), indent=1))
    return calibration


def main(argv=None):
    parser = argparse.ArgumentParser(prog='dcfabric calibrate', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    from scripts.emulator.command import run_command
    from scripts.emulator.progress import progress
    run_command('calibrate', lambda: rerun(progress))
    return 0


if __name__ == '__main__':
    sys.exit(main())
