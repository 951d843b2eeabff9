"""Ryu app: Kevin's controller. Proactive greedy LPM tables on the ToRs,
circuits on the spine bridges, and (optionally) the central DA scheduler.

    python -m controller.ryuapp.manager controller.kevin.app --params \
        '{"n": 8, "k_s": 2, "k_d": 1, "hosts": 1, "scheduler": "bfs",
          "period": 2, "delta": 1, "reservation": 10}'

scheduler: "bfs" (Algorithm 2), "greedy" (Algorithm 3) or "none" (static
de Bruijn only, the default); threshold: demands below it (bytes/s, default
100 kB/s) are ignored. Every ``period`` s the app reads each ToR's
outgoing demand counters, turns them into byte rates (DemandMeter), runs the
scheduler and applies its plan: a replaced link first leaves its source's
table, then the spine circuit changes; a new link's circuit is set at once
and its source's table gains the DA neighbour ``delta`` s later.
Table changes are pushed as diffs to the one ToR concerned (Claim 1).

REST (ryu.app.wsgi, bound to 127.0.0.1 by controller.ryuapp.manager), read-only:
  GET /kevin/state          every section; GET /kevin/state/NAME one section
  sections: fabric (model and parameters), da_links (the usable DA links and
  every DA link ever set, with the times its circuit was set, it became usable
  and its circuit was cleared), distda (controller.kevin.distda_app only: message
  counts and detection-to-approve times). Times are time.monotonic(), i.e.
  the machine's CLOCK_MONOTONIC, so a process on the same machine can subtract
  its own time.monotonic() readings from them.
"""
import time

from ryu.app.wsgi import WSGIApplication, route
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.lib import hub

from controller.ryuapp import ofp
from controller.ryuapp.fabric_app import FabricApp
from controller.ryuapp.rest import VIEW_KEY, FatTreeRest, StateView
from controller.ryuapp.web import FabricViewMixin
from controller.kevin.routing import KevinRouting
from controller.openflow.diff import ADD_FLOW, DELETE_FLOW, DELETE_FLOWS, count
from controller.openflow.rules import TABLE_FLOWS
from controller.kevin.rules import (
    COOKIE_DEMAND_OUT, spine_rules, static_circuits, tor_rules)
from controller.kevin.scheduler import DaScheduler, DemandMeter
from topologies.kevin import Kevin, KevinParameterError, address_str

ACTIVATION_TICK = 0.1  # how often links past delta are looked for (s)
DEFAULT_THRESHOLD = 100e3  # bytes/s: well above pings, far below one iperf3 flow


class KevinRest(FatTreeRest):
    """The fat-tree app's read-only state view under /kevin/state."""

    @route('kevin', '/kevin/state', methods=['GET'])
    def state(self, req, **kwargs):
        return super().state(req, **kwargs)

    @route('kevin', '/kevin/state/{section}', methods=['GET'])
    def section(self, req, section, **kwargs):
        return super().section(req, section, **kwargs)


class KevinApp(FabricViewMixin, FabricApp):
    _CONTEXTS = {'wsgi': WSGIApplication}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.static = KevinRouting(self.topo)
        algorithm = self.params.get('scheduler', 'none')
        self.scheduler = None
        if algorithm != 'none':
            self.scheduler = DaScheduler(
                self.topo, algorithm, period=self.params.get('period', 2.0),
                delta=self.params.get('delta', 0.0),
                reservation=self.params.get('reservation', 10.0),
                threshold=self.params.get('threshold', DEFAULT_THRESHOLD), now=time.monotonic())
        self.routing = self.scheduler.routing if self.scheduler else KevinRouting(self.topo)
        self.da_circuits = {j: {} for j in range(self.topo.k_d)}  # spine -> {src: dst}
        self.meter = DemandMeter()
        self.counters = {}
        self.da_history = []  # one dict per DA link set, oldest first (da_links section)
        self.state_view = StateView()
        self.state_view.register('fabric', lambda: {'name': self.topo.name, 'params': self.params})
        self.state_view.register('da_links', self.da_link_state)
        kwargs['wsgi'].register(KevinRest, {VIEW_KEY: self.state_view})
        if self.scheduler:
            hub.spawn(self._schedule_loop)
            hub.spawn(self._activation_loop)

    def build_topology(self, params):
        known = {'n', 'k_s', 'k_d', 'hosts', 'scheduler', 'period', 'delta', 'reservation',
                 'threshold', 'request_timeout'}
        unknown = set(params) - known
        if unknown:
            raise KevinParameterError('unknown Kevin parameters %s (known: %s)'
                                      % (sorted(unknown), ', '.join(sorted(known))))
        return Kevin(params.get('n', 8), params.get('k_s', 2), params.get('k_d', 1),
                     hosts_per_tor=params.get('hosts', 1))

    # -- compiled state -------------------------------------------------

    def _tor_state(self, address):
        return tor_rules(self.topo, self.routing.tables[address], self.static.tables[address])

    def rules_for(self, switch):
        node = self.topo.node(switch)
        if node.role == 'tor':
            return self._tor_state(node.coords)[0]
        spine = node.coords[0]
        circuits = (static_circuits(self.topo, spine) if spine < self.topo.k_s
                    else self.da_circuits[spine - self.topo.k_s])
        return spine_rules(self.topo, circuits)

    def groups_for(self, switch):
        node = self.topo.node(switch)
        return self._tor_state(node.coords)[1] if node.role == 'tor' else []

    def push_tor(self, address):
        """Send one ToR the diff between what it has and its current table."""
        name = self.topo.tor(address)
        pushed = self.push_switch(name)
        if pushed is None:
            return
        ops = pushed[0]
        # a delete of one metadata value's entries (DELETE_FLOWS) removes several rules in one message
        self.logger.info('%s: table now %d entries (%d deletes sent, %d rules added)', name,
                         len(self.routing.tables[address].entries),
                         count(ops, DELETE_FLOW) + count(ops, DELETE_FLOWS), count(ops, ADD_FLOW))

    def da_link_state(self):
        return {'usable': [{'spine': j, 'source': address_str(s), 'destination': address_str(t)}
                           for j, s, t in self.routing.da_links()],
                'history': self.da_history}

    def observed_state(self):
        """The live view's overlay (controller.ryuapp.web): the usable DA links."""
        return {'da_links': [(self.topo.tor(s), self.topo.spine_name(self.topo.k_s + j), self.topo.tor(t))
                             for j, s, t in self.routing.da_links()]}

    def _stamp(self, spine, source, destination, event):
        """Set ``event`` ('usable_at' or 'cleared_at') of the newest record of
        the DA link, unless already set."""
        key = (spine, address_str(source), address_str(destination))
        self.observation.log('da_link', 'DA link %s -> %s on DA spine %d %s'
                             % (key[1], key[2], spine, event.replace('_at', '')))
        for entry in reversed(self.da_history):
            if (entry['spine'], entry['source'], entry['destination']) == key:
                if entry[event] is None:
                    entry[event] = time.monotonic()
                return

    def mark_usable(self, spine, source, destination):
        """Source's table now uses the DA link (called after push_tor)."""
        self._stamp(spine, source, destination, 'usable_at')

    def set_circuit(self, spine, source, destination):
        """DA spine ``spine`` carries source -> destination (replacing what
        source sent there before)."""
        previous = self.da_circuits[spine].get(source)
        if previous not in (None, destination):
            self._stamp(spine, source, previous, 'cleared_at')
        self.da_circuits[spine][source] = destination
        self.observation.log('da_link', 'DA link %s -> %s on DA spine %d set'
                             % (address_str(source), address_str(destination), spine))
        self.da_history.append({'spine': spine, 'source': address_str(source),
                                'destination': address_str(destination),
                                'set_at': time.monotonic(), 'usable_at': None, 'cleared_at': None})
        self.push_switch(self.topo.spine_name(self.topo.k_s + spine))

    def clear_circuit(self, spine, source):
        destination = self.da_circuits[spine].pop(source)
        self._stamp(spine, source, destination, 'cleared_at')
        self.push_switch(self.topo.spine_name(self.topo.k_s + spine))

    # -- central scheduling ---------------------------------------------

    def _schedule_loop(self):
        while True:
            hub.sleep(self.scheduler.period)
            self.counters = {}
            for name, datapath in list(self.datapaths.items()):
                if self.topo.node(name).role == 'tor':
                    datapath.send_msg(ofp.flow_stats_request(datapath, TABLE_FLOWS, COOKIE_DEMAND_OUT))
            hub.sleep(min(0.5, self.scheduler.period / 2))  # replies arrive meanwhile
            now = time.monotonic()
            demand = self.meter.update(now, self.counters)
            plan = self.scheduler.schedule(demand, now)
            for link in plan.removed:
                self.logger.info('DA link %s replaced', link)
                self.push_tor(link.source)
                self.clear_circuit(link.spine, link.source)
            for link in plan.added:
                self.logger.info('DA link %s set (usable in %.1fs)', link, self.scheduler.delta)
                self.set_circuit(link.spine, link.source, link.destination)

    @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
    def _flow_stats(self, ev):
        node = self.topo.by_dpid(ev.msg.datapath.id)
        for stat in ev.msg.body:
            if stat.cookie != COOKIE_DEMAND_OUT:
                continue
            destination = self.topo.ip.tor_address(stat.match['ipv4_dst'][0])
            if destination is not None:
                self.counters[(node.coords, destination)] = stat.byte_count

    def _activation_loop(self):
        while True:
            hub.sleep(ACTIVATION_TICK)
            for link in self.scheduler.activate(time.monotonic()):
                self.logger.info('DA link %s usable', link)
                self.push_tor(link.source)
                self.mark_usable(link.spine, link.source, link.destination)
