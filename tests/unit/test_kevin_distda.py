"""DistDA agents (Algorithm 4) exchanging messages over an in-memory bus,
with an injected clock: elephant -> PortRequest -> PortApprove -> link after
delta; declined requests, busy ports, lost messages, releases; wire format."""
import pytest

from controller.kevin.distda import (
    APPROVE, DECLINE, RELEASE, REQUEST, DistDaAgent, DistDaMessageError, Message, message_report)
from topologies.kevin import Kevin, KevinParameterError


def A(text):
    return tuple(int(c) for c in text)


class Bus:
    """All agents of a fabric; delivers messages unless told to drop them."""

    def __init__(self, kevin, **params):
        self.kevin = kevin
        self.agents = {kevin.index(v): DistDaAgent(kevin, v, **params) for v in kevin.addresses}
        self.log, self.neighbours, self.circuits = [], {}, {}

    def apply(self, now, index, effects, drop=()):
        for spine, destination in effects.set_circuit:
            self.circuits[(spine, index)] = destination
        for spine in effects.clear_circuit:
            del self.circuits[(spine, index)]
        for spine in effects.remove_neighbour:
            self.neighbours.pop((index, spine), None)
        for when, spine, destination in effects.add_neighbour:
            self.neighbours[(index, spine)] = (when, destination)
        for message in effects.send:
            self.log.append(message)
            if message.kind not in drop:
                self.apply(now, message.receiver,
                           self.agents[message.receiver].on_message(now, message), drop)

    def rates(self, now, destination, rates, drop=()):
        t = self.kevin.index(A(destination))
        self.apply(now, t, self.agents[t].on_rates(
            now, {self.kevin.index(A(s)): r for s, r in rates.items()}), drop)

    def kinds(self):
        return [(m.kind, m.sender, m.receiver, m.ports) for m in self.log]


PARAMS = dict(threshold=1000, reservation=10, delta=0.5, request_timeout=1)


def test_elephant_gets_a_link_usable_after_delta():
    kevin = Kevin(8, 2, 2)
    bus = Bus(kevin, **PARAMS)
    bus.rates(0, '001', {'011': 500})  # a mouse: nothing
    assert bus.log == []
    bus.rates(1, '001', {'011': 5000, '110': 2000})
    assert bus.kinds() == [(REQUEST, 1, 3, (0, 1)), (APPROVE, 3, 1, (0,))]
    assert bus.circuits == {(0, 3): 1}
    assert bus.neighbours == {(3, 0): (1.5, 1)}  # 011 uses DA spine 0 towards 001 from t=1.5
    assert bus.agents[1].setup_times == [(3, 0)]
    bus.rates(2, '001', {'011': 5000, '110': 2000})  # next elephant on the other port
    assert bus.kinds()[2:] == [(REQUEST, 1, 6, (1,)), (APPROVE, 6, 1, (1,))]
    bus.rates(3, '001', {'011': 5000, '110': 2000})  # no free receive port: silence
    assert len(bus.log) == 4
    assert bus.agents[1].sent[REQUEST] == 2 and bus.agents[3].received[REQUEST] == 1


def test_busy_source_declines_and_is_asked_again_only_after_r():
    kevin = Kevin(8, 2, 1)
    bus = Bus(kevin, **PARAMS)
    bus.rates(0, '001', {'011': 5000})  # 011's only transmit port now goes to 001
    bus.rates(1, '000', {'011': 9000, '110': 3000})
    assert bus.kinds()[2:] == [(REQUEST, 0, 3, (0,)), (DECLINE, 3, 0, ()),]
    bus.rates(2, '000', {'011': 9000, '110': 3000})  # the next elephant instead
    assert bus.kinds()[4:] == [(REQUEST, 0, 6, (0,)), (APPROVE, 6, 0, (0,))]


def test_lost_answer_times_out_and_late_approve_is_released_when_port_taken():
    kevin = Kevin(8, 2, 1)
    bus = Bus(kevin, **PARAMS)
    bus.rates(0, '001', {'011': 5000}, drop=(APPROVE,))
    assert bus.kinds() == [(REQUEST, 1, 3, (0,)), (APPROVE, 3, 1, (0,))]
    bus.rates(0.5, '001', {'011': 5000})  # still pending: no duplicate request
    assert len(bus.log) == 2
    bus.rates(1.5, '001', {'110': 5000})  # timed out: offer the port to 110
    assert bus.kinds()[2:] == [(REQUEST, 1, 6, (0,)), (APPROVE, 6, 1, (0,))]
    late = Message(APPROVE, 3, 1, 1, (0,))  # 011's lost approve finally arrives
    bus.apply(2, 1, bus.agents[1].on_message(2, late))
    assert bus.kinds()[-1] == (RELEASE, 1, 3, (0,))
    assert (0, 3) not in bus.circuits and (3, 0) not in bus.neighbours


def test_message_report_counts_lost_messages_and_setup_times():
    kevin = Kevin(8, 2, 1)
    bus = Bus(kevin, **PARAMS)
    bus.rates(0, '001', {'011': 5000}, drop=(APPROVE,))  # 011 takes the link, 001 never hears
    bus.rates(1, '001', {'011': 5000})  # timed out, asks again: 011's only port is taken
    bus.rates(1.5, '000', {'110': 5000}, drop=(REQUEST,))  # the request is lost
    bus.rates(3, '000', {'110': 5000})  # timed out, asks again: approved
    report = message_report(bus.agents.values())
    assert report['sent'] == {'PortRequest': 4, 'PortApprove': 2, 'PortDecline': 1, 'PortRelease': 0}
    assert report['received'] == {'PortRequest': 3, 'PortApprove': 1, 'PortDecline': 1,
                                  'PortRelease': 0}
    assert report['per_tor'][1]['sent'] == {'PortRequest': 2, 'PortApprove': 0, 'PortDecline': 0,
                                            'PortRelease': 0}
    # measured from the first detection, across the lost request
    assert report['setups'] == [{'source': 6, 'destination': 0, 'detection_to_approve_s': 1.5}]


def test_reassigned_receive_port_releases_the_old_source():
    kevin = Kevin(8, 2, 1)
    bus = Bus(kevin, **dict(PARAMS, reservation=1))
    bus.rates(0, '001', {'011': 5000})
    bus.rates(2, '001', {'011': 0, '110': 5000})  # reservation over: port 0 goes to 110
    assert bus.kinds()[2:] == [(REQUEST, 1, 6, (0,)), (APPROVE, 6, 1, (0,)), (RELEASE, 1, 3, (0,))]
    assert bus.circuits == {(0, 6): 1} and list(bus.neighbours) == [(6, 0)]


def test_wire_format_round_trip_and_errors():
    message = Message(REQUEST, 5, 200, 70000, (0, 3, 5))
    assert Message.decode(message.encode()) == message
    assert str(message) == 'PortRequest(0,3,5) 5->200 #70000'
    with pytest.raises(DistDaMessageError, match='too short'):
        Message.decode(b'KVDA')
    with pytest.raises(DistDaMessageError, match='not a DistDA message'):
        Message.decode(b'XXXX' + message.encode()[4:])
    with pytest.raises(DistDaMessageError, match='announces 3 ports, carries 1'):
        Message.decode(message.encode()[:-2])
    with pytest.raises(KevinParameterError, match='threshold must be a number'):
        DistDaAgent(Kevin(8, 2, 1), A('000'), threshold=-1, reservation=1, delta=0)
