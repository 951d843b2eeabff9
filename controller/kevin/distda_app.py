"""Ryu app: Kevin with DistDA (Algorithm 4) instead of a central scheduler.

    python -m controller.ryuapp.manager controller.kevin.distda_app --params \\
        '{"n": 8, "k_s": 2, "k_d": 1, "threshold": 100000, "reservation": 10,
          "delta": 1, "period": 1, "request_timeout": 1}'

The ToR tables and circuits are KevinApp's; what changes is who decides DA
links. Each ToR has a DistDaAgent that sees only that ToR's incoming demand
counters (polled every ``period`` s) and the DistDA messages punted by that
ToR. Messages are UDP packets (port DISTDA_UDP_PORT) between the ToRs' own
addresses, injected into the sending ToR's pipeline (packet-out to TABLE), so
they cross the static de Bruijn links hop by hop and can be delayed or lost.
The agents share this process only for convenience; none reads another's state.
REST: KevinApp's /kevin/state plus a ``distda`` section (distda.message_report).
"""
import time

from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.lib import hub
from ryu.lib.packet import ethernet, ipv4, packet, udp

from controller.ryuapp import ofp
from controller.kevin.distda import DistDaAgent, DistDaMessageError, Message, message_report
from controller.kevin.app import ACTIVATION_TICK, DEFAULT_THRESHOLD, KevinApp
from controller.kevin.rules import COOKIE_DEMAND_IN, DISTDA_UDP_PORT
from controller.kevin.scheduler import DemandMeter
from controller.openflow.rules import TABLE_FLOWS


class DistDaApp(KevinApp):

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        kevin, params = self.topo, self.params
        if self.scheduler is not None:
            raise ValueError('distda_app decides DA links itself: drop the "scheduler" parameter')
        self.agents = {kevin.index(v): DistDaAgent(
            kevin, v, threshold=params.get('threshold', DEFAULT_THRESHOLD),
            reservation=params.get('reservation', 10.0), delta=params.get('delta', 0.0),
            request_timeout=params.get('request_timeout', 1.0)) for v in kevin.addresses}
        self.meters = {i: DemandMeter() for i in self.agents}
        self.incoming = {i: {} for i in self.agents}
        self.due_neighbours = []  # (when, source index, spine, destination index)
        self.state_view.register('distda', lambda: message_report(self.agents.values()))
        hub.spawn(self._poll_loop)
        hub.spawn(self._neighbour_loop)

    def observed_state(self):
        report = message_report(self.agents.values())
        return dict(super().observed_state(), distda={'sent': report['sent'], 'received': report['received']})

    def _address(self, index):
        return self.topo.addresses[index]

    def _poll_loop(self):
        period = self.params.get('period', 1.0)
        while True:
            hub.sleep(period)
            for name, datapath in list(self.datapaths.items()):
                if self.topo.node(name).role == 'tor':
                    datapath.send_msg(ofp.flow_stats_request(datapath, TABLE_FLOWS, COOKIE_DEMAND_IN))
            hub.sleep(min(0.5, period / 2))
            now = time.monotonic()
            for index, agent in self.agents.items():
                rates = self.meters[index].update(now, self.incoming[index])
                self.apply(index, agent.on_rates(now, rates))

    @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
    def _incoming_stats(self, ev):
        node = self.topo.by_dpid(ev.msg.datapath.id)
        for stat in ev.msg.body:
            if stat.cookie == COOKIE_DEMAND_IN:
                source = self.topo.ip.tor_address(stat.match['ipv4_src'][0])
                self.incoming[self.topo.index(node.coords)][self.topo.index(source)] = \
                    stat.byte_count

    def apply(self, index, effects):
        """Carry out an agent's effects on its own ToR."""
        address = self._address(index)
        for spine, destination in effects.set_circuit:
            self.set_circuit(spine, address, self._address(destination))
        for spine in effects.remove_neighbour:
            if (spine, address) in self.routing.da_tx:
                self.routing.remove_da_link(spine, address)
                self.push_tor(address)
        for spine in effects.clear_circuit:
            if address in self.da_circuits[spine]:
                self.clear_circuit(spine, address)
        for when, spine, destination in effects.add_neighbour:
            self.due_neighbours.append((when, index, spine, destination))
        for message in effects.send:
            self.send_message(message)

    def send_message(self, message):
        sender = self.topo.node(self.topo.tor(self._address(message.sender)))
        receiver = self.topo.node(self.topo.tor(self._address(message.receiver)))
        datapath = self.datapaths.get(sender.name)
        if datapath is None:
            return
        pkt = packet.Packet()
        pkt.add_protocol(ethernet.ethernet(src=sender.mac, dst=receiver.mac))
        pkt.add_protocol(ipv4.ipv4(src=sender.ip, dst=receiver.ip, ttl=64, proto=17))
        pkt.add_protocol(udp.udp(src_port=DISTDA_UDP_PORT, dst_port=DISTDA_UDP_PORT))
        pkt.add_protocol(message.encode())
        pkt.serialize()
        # Into the sender's own pipeline: table 0 sends it to the static-only LPM.
        datapath.send_msg(ofp.packet_out_table(datapath, pkt.data))
        self.logger.info('distda: sent %s', message)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def _distda_packet_in(self, ev):
        pkt = packet.Packet(ev.msg.data)
        datagram = pkt.get_protocol(udp.udp)
        node = self.topo.by_dpid(ev.msg.datapath.id)
        if datagram is None or datagram.dst_port != DISTDA_UDP_PORT or node is None:
            return
        try:
            message = Message.decode(pkt.protocols[-1])
        except (DistDaMessageError, TypeError) as error:
            self.logger.warning('distda: %s dropped a bad message: %s', node.name, error)
            return
        index = self.topo.index(node.coords)
        agent = self.agents[index]
        self.logger.info('distda: %s received %s', node.name, message)
        setups = len(agent.setup_times)
        self.apply(index, agent.on_message(time.monotonic(), message))
        if len(agent.setup_times) > setups:
            self.logger.info('distda: elephant %d -> %d approved %.2fs after detection; '
                             'messages sent by %s: %s', agent.setup_times[-1][0], index,
                             agent.setup_times[-1][1], node.name, agent.sent)

    def _neighbour_loop(self):
        while True:
            hub.sleep(ACTIVATION_TICK)
            now = time.monotonic()
            due = [d for d in self.due_neighbours if d[0] <= now]
            self.due_neighbours = [d for d in self.due_neighbours if d[0] > now]
            for _, index, spine, destination in due:
                source, target = self._address(index), self._address(destination)
                if self.da_circuits[spine].get(source) != target:
                    continue  # released or replaced within delta
                holder = self.routing.da_rx.get((spine, target))
                if holder is not None:
                    # The circuit into ``target`` now comes from ``source``;
                    # the old sender's release may still be on its way.
                    self.routing.remove_da_link(spine, holder)
                    self.push_tor(holder)
                if (spine, source) in self.routing.da_tx:
                    self.routing.remove_da_link(spine, source)
                self.routing.add_da_link(spine, source, target)
                self.push_tor(source)
                self.mark_usable(spine, source, target)
                self.logger.info('distda: DA%d:%s->%s usable', spine, index, destination)

