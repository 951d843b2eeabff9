"""A fabric of switches running the controller's exported rules, carrying
long-lived flows as fluids: each flow's path is walked through the rules
(scripts.flow.pipeline_walk), rates are the max-min fair share of every
directed link and host NIC (scripts.flow.max_min), and the per-flow
entries' byte counters integrate those rates over simulated time.

A dynamic scheme's controller (a scripts.sim.controller_loop.ControllerLoop:
the app's own strategy objects) is asked as the simulator's is: a flow's
first packet meeting a to-controller rule is a packet-in (answered once
per switch and flow, then the packet walks again: a held one is sent back
through table 0, a copied one has gone on); a poll hands it the polled
switches' per-flow entries. Its flow-mods change the switches' tables, and
the flows whose entries changed walk again.

What the fluid leaves out: TCP's dynamics (slow start, losses, timeouts),
queues and their drops, and ACK streams (a few percent of the bytes; both
dynamic schemes leave measured ACK streams alone).
"""
import time

import numpy

from controller.fattree.scheme_table0_rules import COOKIE_FLOW, flow_of_match
from scripts.flow.max_min import incidence_matrix, max_min_rates
from scripts.flow.pipeline_walk import compiled_switches, trace_packet
from controller.fattree.classifier import FlowKey, TCP

# Full-size frames: a data flow's counters read as data, never as an ACK stream.
FRAME_BYTES = 1500


def entry_id(switch, rule):
    """What names an entry for replacement and strict deletion."""
    return switch, rule.table, rule.priority, rule.match


class FlowFabric:
    """``flows`` [(src host, dst host, source port, destination port)] of
    TCP over ``topo`` holding ``export`` (rules_export.export_switches);
    every link carries ``capacity_bps``. ``controller`` (a ControllerLoop,
    or None for a static scheme) answers packet-ins and polls; its ``now``
    is kept at the fabric's time."""

    def __init__(self, topo, export, flows, capacity_bps, controller=None):
        self.topo, self.flows, self.controller = topo, list(flows), controller
        self.switches = compiled_switches(export)
        self.capacity_bps = capacity_bps
        self.resources = {}  # directed link (from node, to node) -> index
        for link in topo.links:
            for ends in ((link.node_a, link.node_b), (link.node_b, link.node_a)):
                self.resources.setdefault(ends, len(self.resources))
        ip = {name: node.ip for name, node in topo.nodes.items() if node.is_host}
        self.keys = [FlowKey(ip[src], ip[dst], TCP, dport) for src, dst, _, dport in self.flows]
        self.by_key = {}
        for i, key in enumerate(self.keys):
            self.by_key.setdefault(key, []).append(i)
        self.polled = set(controller.polled) if controller else set()
        self.traces = [None] * len(self.flows)
        self.asked = set()  # (switch, flow index) packet-ins answered
        self.entries = {}  # entry_id of a counted entry -> [bytes, installed at]
        self.rates_bps = numpy.zeros(len(self.flows))
        self.now = 0.0
        self.packet_ins = self.flow_mods = 0
        self.round_cpu_s = []  # the controller's CPU time in each poll's round
        self._hits = None  # (flow indices, counted entries) of every counted entry met

    # -- paths ------------------------------------------------------------

    def route(self, order=None):
        """Walk every flow (in ``order``: the order their first packets
        arrive), answering packet-ins; then the rates."""
        for i in (range(len(self.flows)) if order is None else order):
            self._walk(i)
        self._rerate()

    def _walk(self, i):
        src, dst, sport, dport = self.flows[i]
        for _ in range(len(self.switches) + 1):
            trace = trace_packet(self.topo, self.switches, src, dst, TCP, sport, dport)
            fresh = [s for s in trace.packet_ins if (s, i) not in self.asked]
            if not fresh or self.controller is None:
                break
            switch = fresh[0]
            self.asked.add((switch, i))
            self.packet_ins += 1
            self.controller.now = self.now
            self._apply(self.controller.strategy.new_flow(switch, self.keys[i]), rewalk=False)
        self.traces[i] = trace
        self._hits = None

    def delivered(self, i):
        return self.traces[i].delivered

    def path(self, i):
        """The resource indices flow ``i`` crosses (none if not delivered)."""
        trace = self.traces[i]
        if not trace.delivered:
            return ()
        src = self.flows[i][0]
        links = [(src, trace.hops[0][0])] + [(s, self.topo.peer(s, p)[0]) for s, p in trace.hops]
        return [self.resources[link] for link in links]

    def _rerate(self):
        incidence = incidence_matrix([self.path(i) for i in range(len(self.flows))], len(self.resources))
        self.rates_bps = max_min_rates(incidence, numpy.full(len(self.resources), float(self.capacity_bps)))

    # -- the controller's flow-mods ------------------------------------------

    def _counted(self, switch, rule):
        return switch in self.polled and rule.table == 0 and rule.cookie == COOKIE_FLOW

    def _apply(self, changes, rewalk=True):
        """Apply EntryChanges now; with ``rewalk``, walk again the flows
        they match and rate them all. The flows touched."""
        touched = set()
        for change in changes:
            self.flow_mods += 1
            pipeline, key = self.switches[change.switch], entry_id(change.switch, change.rule)
            if change.remove:
                pipeline.delete_strict(change.rule)
                self.entries.pop(key, None)
            else:
                pipeline.add(change.rule)
                if self._counted(change.switch, change.rule):
                    self.entries.setdefault(key, [0.0, self.now])  # a replaced entry keeps its counters
            if change.rule.cookie == COOKIE_FLOW:
                touched.update(self.by_key.get(flow_of_match(dict(change.rule.match)), ()))
            else:  # not a per-flow entry: any flow may take it
                touched.update(range(len(self.flows)))
        if rewalk and touched:
            for i in sorted(touched):
                self._walk(i)
            self._rerate()
        return touched

    # -- time ---------------------------------------------------------------

    def _hit_arrays(self):
        if self._hits is None:
            flows, entries, names = [], [], list(self.entries)
            index = {key: n for n, key in enumerate(names)}
            for i, trace in enumerate(self.traces):
                for switch, rule in trace.rules:
                    n = index.get(entry_id(switch, rule))
                    if n is not None:
                        flows.append(i)
                        entries.append(n)
            self._hits = (numpy.array(flows, dtype=numpy.int64), numpy.array(entries, dtype=numpy.int64), names)
        return self._hits

    def advance(self, until):
        """Integrate the counted entries' bytes from now to ``until`` at the current rates."""
        if until <= self.now:
            return
        flows, entries, names = self._hit_arrays()
        if len(names):
            added = numpy.bincount(entries, weights=self.rates_bps[flows] / 8.0 * (until - self.now),
                                   minlength=len(names))
            for key, more in zip(names, added):
                self.entries[key][0] += more
        self.now = until

    def poll(self):
        """A period's round at now: the controller's EntryChanges (not applied)."""
        gathered = {name: {} for name in self.controller.polled}
        for (switch, _, _, match), (count, installed) in self.entries.items():
            count = int(count)
            gathered[switch][flow_of_match(dict(match))] = (count, -(-count // FRAME_BYTES), self.now - installed)
        self.controller.now = self.now
        started = time.process_time()
        changes = self.controller.round(gathered)
        self.round_cpu_s.append(time.process_time() - started)
        return changes

    def apply(self, changes):
        """Apply a round's EntryChanges now; the flows they touched."""
        return self._apply(changes)
