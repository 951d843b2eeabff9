"""DistDA (seed 002, Algorithm 4): one agent per ToR, distributed
threshold-based greedy k-matching of DA links. Pure state machines and the
wire format of their messages; the Ryu companion app (controller.kevin.distda_app)
carries the messages as real UDP packets over the static de Bruijn links.

An agent knows only its own ToR: its incoming demand counters, its DA ports
and the messages it receives.

  destination t: a source s whose byte rate into t exceeds the threshold is
    an elephant. If t has DA receive ports that are free (never used, or past
    their reservation r) and no request outstanding, it sends
    PortRequest(ports) to s, holding those ports until the answer or a
    timeout (a lost message must not block t forever).
  source s: on PortRequest, takes the first offered DA spine whose transmit
    port is free, sets the circuit s -> t there, answers PortApprove(i), and
    uses the link after the reconfiguration delay delta. With no free port it
    answers PortDecline; t then asks its other elephants and asks s again
    only after r.
  Links are reserved for r and never torn down proactively. When t's
  receive port i goes to a new source, t sends PortRelease(i) to the old
  source so it stops sending into a circuit that no longer reaches t (the
  seed leaves this step implicit).
"""
from dataclasses import dataclass, field
import struct

from topologies.kevin import KevinParameterError

REQUEST, APPROVE, DECLINE, RELEASE = 1, 2, 3, 4
KINDS = {REQUEST: 'PortRequest', APPROVE: 'PortApprove', DECLINE: 'PortDecline',
         RELEASE: 'PortRelease'}
MAGIC = b'KVDA'
_HEADER = struct.Struct('!4sBHHIB')  # magic, kind, sender, receiver, seq, port count


class DistDaMessageError(ValueError):
    """Bytes that are not a DistDA message."""


@dataclass(frozen=True)
class Message:
    kind: int
    sender: int     # ToR index
    receiver: int   # ToR index
    seq: int        # the request this message belongs to
    ports: tuple = ()  # DA spine numbers (the offer, or the one approved/released)

    def encode(self):
        return _HEADER.pack(MAGIC, self.kind, self.sender, self.receiver, self.seq,
                            len(self.ports)) + bytes(self.ports)

    @classmethod
    def decode(cls, data):
        if len(data) < _HEADER.size:
            raise DistDaMessageError('DistDA message too short: %d bytes' % len(data))
        magic, kind, sender, receiver, seq, count = _HEADER.unpack_from(data)
        if magic != MAGIC or kind not in KINDS:
            raise DistDaMessageError('not a DistDA message (magic %r, kind %d)' % (magic, kind))
        ports = tuple(data[_HEADER.size:_HEADER.size + count])
        if len(ports) != count:
            raise DistDaMessageError('DistDA %s announces %d ports, carries %d'
                                     % (KINDS[kind], count, len(ports)))
        return cls(kind, sender, receiver, seq, ports)

    def __str__(self):
        return '%s(%s) %d->%d #%d' % (KINDS[self.kind], ','.join(map(str, self.ports)),
                                      self.sender, self.receiver, self.seq)


@dataclass
class Effects:
    """What an agent asks its ToR to do: messages to send; circuits to set
    (spine, destination index) or clear (spine); DA neighbours to add to or
    remove from the table at a time ((when, spine, destination index) / spine)."""
    send: list = field(default_factory=list)
    set_circuit: list = field(default_factory=list)
    clear_circuit: list = field(default_factory=list)
    add_neighbour: list = field(default_factory=list)
    remove_neighbour: list = field(default_factory=list)


class DistDaAgent:
    def __init__(self, kevin, address, threshold, reservation, delta, request_timeout=1.0):
        for name, value in (('threshold', threshold), ('reservation', reservation),
                            ('delta', delta), ('request_timeout', request_timeout)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise KevinParameterError('DistDA %s must be a number >= 0, got %r' % (name, value))
        self.kevin, self.address = kevin, kevin.check_address(address)
        self.index = kevin.index(self.address)
        self.threshold, self.reservation, self.delta = threshold, reservation, delta
        self.request_timeout = request_timeout
        self.tx = {}  # DA spine -> (destination index, reserved until)
        self.rx = {}  # DA spine -> (source index, reserved until)
        self.pending = None  # (Message sent, sent at)
        self.declined = {}  # source index -> do not ask before
        self.elephant_since = {}  # source index -> first time seen above threshold
        self.seq = 0
        self.sent, self.received = {k: 0 for k in KINDS}, {k: 0 for k in KINDS}
        self.setup_times = []  # (source, seconds from elephant detection to PortApprove)

    def counts(self):
        """{'sent'|'received': {message name: count}} of this agent."""
        return {'sent': {KINDS[k]: n for k, n in self.sent.items()},
                'received': {KINDS[k]: n for k, n in self.received.items()}}

    def _free(self, table, spine, now):
        return spine not in table or table[spine][1] <= now

    def _send(self, effects, message):
        self.sent[message.kind] += 1
        effects.send.append(message)

    def on_rates(self, now, rates):
        """Destination side: ``rates`` {source index: bytes/s into this ToR}."""
        effects = Effects()
        if self.pending and now - self.pending[1] >= self.request_timeout:
            self.pending = None  # lost request or answer: offer again
        connected = {source for source, _ in self.rx.values()}
        elephants = sorted((rate, source) for source, rate in rates.items()
                           if rate > self.threshold and source != self.index)
        for _, source in elephants:
            self.elephant_since.setdefault(source, now)
        if self.pending:
            return effects
        ports = tuple(j for j in range(self.kevin.k_d) if self._free(self.rx, j, now))
        for _, source in reversed(elephants):
            if source in connected or self.declined.get(source, 0) > now or not ports:
                continue
            self.seq += 1
            message = Message(REQUEST, self.index, source, self.seq, ports)
            self.pending = (message, now)
            self._send(effects, message)
            break
        return effects

    def on_message(self, now, message):
        """Either side: react to a received message."""
        if message.receiver != self.index:
            raise DistDaMessageError('%s delivered to ToR %d' % (message, self.index))
        self.received[message.kind] += 1
        effects = Effects()
        handler = {REQUEST: self._on_request, APPROVE: self._on_approve,
                   DECLINE: self._on_decline, RELEASE: self._on_release}[message.kind]
        handler(now, message, effects)
        return effects

    def _on_request(self, now, message, effects):
        offered = [j for j in message.ports if j < self.kevin.k_d]
        for j in offered:
            if self._free(self.tx, j, now):
                if j in self.tx:
                    effects.remove_neighbour.append(j)
                self.tx[j] = (message.sender, now + self.reservation)
                effects.set_circuit.append((j, message.sender))
                effects.add_neighbour.append((now + self.delta, j, message.sender))
                self._send(effects, Message(APPROVE, self.index, message.sender, message.seq, (j,)))
                return
        self._send(effects, Message(DECLINE, self.index, message.sender, message.seq))

    def _answer_to_pending(self, message):
        if self.pending is None or self.pending[0].seq != message.seq \
                or self.pending[0].receiver != message.sender:
            return False  # late answer to a request that timed out
        self.pending = None
        return True

    def _on_approve(self, now, message, effects):
        (j,) = message.ports
        if not self._answer_to_pending(message):
            # The source set the circuit anyway: accept it if the port is
            # still free, else tell the source to stop using it.
            if not self._free(self.rx, j, now):
                self._send(effects, Message(RELEASE, self.index, message.sender, message.seq, (j,)))
                return
        old = self.rx.get(j)
        if old is not None and old[0] != message.sender:
            self._send(effects, Message(RELEASE, self.index, old[0], message.seq, (j,)))
        self.rx[j] = (message.sender, now + self.reservation)
        if message.sender in self.elephant_since:
            self.setup_times.append((message.sender, now - self.elephant_since.pop(message.sender)))

    def _on_decline(self, now, message, effects):
        if self._answer_to_pending(message):
            self.declined[message.sender] = now + self.reservation

    def _on_release(self, now, message, effects):
        (j,) = message.ports
        if self.tx.get(j, (None,))[0] == message.sender:
            del self.tx[j]
            effects.remove_neighbour.append(j)
            effects.clear_circuit.append(j)


def message_report(agents):
    """What a fabric's agents did, for the experiment: message counts per
    kind summed over all agents (sent minus received is what was lost or is
    still in flight), the same per ToR index, and every established link's
    time from elephant detection at the destination to its PortApprove."""
    per_tor = {agent.index: agent.counts() for agent in agents}
    total = {way: {name: sum(c[way][name] for c in per_tor.values()) for name in KINDS.values()}
             for way in ('sent', 'received')}
    setups = [{'source': source, 'destination': agent.index, 'detection_to_approve_s': seconds}
              for agent in agents for source, seconds in agent.setup_times]
    return dict(total, per_tor=per_tor, setups=setups)
