"""The simulated network's scenario file (pure): what
scripts/sim/ns3/fattree_sim.cc reads, written from a topology model.

Switches, hosts and cabling are the model's own (topologies.model): ports
as the model numbers them, host addresses as it gives them; nothing here
recomputes cabling. Beside them: one link rate and propagation delay,
drop-tail queues in packets, the ECN marking threshold, the hosts' TCP,
bulk flows and failures at a time.

    lines = scenario_lines(FatTree(4), 'rules.txt', SimSettings(link_mbps=1000),
                           [SimFlow('h0_0_2', 'h1_0_2', 0.0, 3.0)])
"""
from dataclasses import dataclass

from scripts.emulator.bfd.policy import detection_ms, interval_for

TCP_VARIANTS = ('cubic', 'dctcp')
# The hosts' device queues: fq (the default), as Linux leaves a sender's
# queue: never dropping, its flows served in turn (fattree_sim.cc,
# SenderQueue); or ns-3's drop-tail, of --queue packets, whose drops the
# hosts' TCP is not told of.
FQ = 'fq'
DROP_TAIL = 'drop-tail'
SENDER_QUEUES = (FQ, DROP_TAIL)


LINUX_MIN_RTO_MS = 200.0


@dataclass(frozen=True)
class SimSettings:
    link_mbps: float
    stop_s: float = 1.0
    measure_from_s: float = 0.0  # goodput counts bytes received in [measure_from_s, stop_s]
    queue_packets: int = 50  # as the emulator's shaped interfaces
    link_delay_us: float = 1.0
    ecn_threshold_packets: int = 0  # 0: no marking
    tcp: str = 'cubic'  # the emulator's hosts run CUBIC
    sender_queue: str = FQ
    # Linux's TCP_RTO_MIN, as the emulator's hosts and the paper's testbed run: with 5 ms
    # a 10 Mbit/s run's flows, whose RTT grows by 60 ms per full 50-packet queue, timed out
    # again and again (the non-blocking reference 53.6% of line rate on Stride(8)).
    min_rto_ms: float = LINUX_MIN_RTO_MS
    seed: int = 1

    def check(self):
        if self.link_mbps <= 0 or self.stop_s <= 0 or self.link_delay_us < 0 or self.min_rto_ms <= 0:
            raise ValueError('link rate, stop time and minimum RTO must be positive and the link delay '
                             'not negative: %r' % (self,))
        if not 0 <= self.measure_from_s < self.stop_s:
            raise ValueError('the measurement must start in [0, stop_s=%g), got %g'
                             % (self.stop_s, self.measure_from_s))
        if self.queue_packets < 1 or self.ecn_threshold_packets < 0:
            raise ValueError('queue must hold at least one packet and the ECN threshold be >= 0: %r' % (self,))
        if self.tcp not in TCP_VARIANTS:
            raise ValueError('unknown TCP %r; the simulated hosts run %s' % (self.tcp, ', '.join(TCP_VARIANTS)))
        if self.sender_queue not in SENDER_QUEUES:
            raise ValueError('unknown sender queue %r; the simulated hosts have %s'
                             % (self.sender_queue, ', '.join(SENDER_QUEUES)))
        if self.tcp == 'dctcp' and not self.ecn_threshold_packets:
            raise ValueError('DCTCP needs an ECN marking threshold (ecn_threshold_packets > 0)')


@dataclass(frozen=True)
class SimFlow:
    src: str
    dst: str
    start_s: float
    stop_s: float
    bytes: int = 0  # 0: sends until stop_s
    src_port: int = 0  # 0: ns-3's next ephemeral port (the same on every host)


@dataclass(frozen=True)
class SimFailure:
    """A link (``port`` of switch ``node``) or, with ``port`` None, a whole
    switch failing at ``at_s``."""
    at_s: float
    node: str
    port: int = None


def detection_delay_ms(topo):
    """When the switches at a failed link's ends read its port not live:
    BFD's detection time at the interval the emulator's policy gives the
    fabric's switch links (scripts/emulator/bfd/policy.py); a fabric of one
    switch has none, and gets the policy's floor."""
    return detection_ms(interval_for(max(len(topo.switch_links()), 1)))


def scenario_lines(topo, pipeline_path, settings, flows, failures=(), routing_controller=None):
    """The scenario file's lines for ``flows`` on ``topo``, whose switches
    run the rules exported to ``pipeline_path``. ``routing_controller``
    (the line of scripts/sim/failure_reaction.FailureReaction's
    scenario_line) makes ``failures`` reach the controller, which the
    simulation then asks. ValueError names a flow or failure the topology
    cannot have."""
    settings.check()
    lines = ['seed %d' % settings.seed, 'link_mbps %r' % float(settings.link_mbps),
             'link_delay_us %r' % float(settings.link_delay_us), 'queue_packets %d' % settings.queue_packets,
             'ecn_threshold_packets %d' % settings.ecn_threshold_packets, 'tcp %s' % settings.tcp,
             'sender_queue %s' % settings.sender_queue,
             'min_rto_ms %r' % float(settings.min_rto_ms), 'stop_s %r' % float(settings.stop_s),
             'measure_from_s %r' % float(settings.measure_from_s),
             'detection_ms %r' % float(detection_delay_ms(topo)), 'pipeline %s' % pipeline_path]
    lines += ['switch %s' % node.name for node in topo.switches]
    lines += ['host %s %s' % (node.name, node.ip) for node in topo.hosts]
    lines += ['link %s %d %s %d' % (l.node_a, l.port_a, l.node_b, l.port_b) for l in topo.links]
    for index, flow in enumerate(flows):
        for host in (flow.src, flow.dst):
            if host not in topo.nodes:
                raise ValueError('flow %d: unknown node %r in %s' % (index, host, topo.name))
            if not topo.node(host).is_host:
                raise ValueError('flow %d: %s is a switch, not a host' % (index, host))
        if (flow.src == flow.dst or not 0 <= flow.start_s < flow.stop_s or flow.bytes < 0
                or not 0 <= flow.src_port < 65536):
            raise ValueError('flow %d (%s -> %s) needs two hosts, 0 <= start < stop and a port: %r'
                             % (index, flow.src, flow.dst, flow))
        lines.append('flow %d %s %s %r %r %d %d' % (index, flow.src, flow.dst, float(flow.start_s),
                                                    float(flow.stop_s), flow.bytes, flow.src_port))
    for failure in failures:
        if failure.node not in topo.nodes:
            raise ValueError('failure at %g s: unknown node %r in %s' % (failure.at_s, failure.node, topo.name))
        if topo.node(failure.node).is_host:
            raise ValueError('failure at %g s: %s is a host; fail its link at the switch end'
                             % (failure.at_s, failure.node))
        if failure.port is None:
            lines.append('fail_switch %r %s' % (float(failure.at_s), failure.node))
        elif topo.peer(failure.node, failure.port) is None:
            raise ValueError('failure at %g s: %s has no cabled port %d; its ports are %s'
                             % (failure.at_s, failure.node, failure.port, topo.ports(failure.node)))
        else:
            lines.append('fail_link %r %s %d' % (float(failure.at_s), failure.node, failure.port))
    if failures and routing_controller:
        lines.append(routing_controller)
    return lines
