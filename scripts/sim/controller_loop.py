"""The fat-tree controller's dynamic schemes in simulated time: the driver
that answers scripts/sim/ns3/fattree_sim's questions with the very strategy
objects the Ryu app runs (controller.fattree.scheme_strategies; nothing here
decides anything).

The app (controller.fattree.scheme_mixin_app) does, every polling period: a
scheme round (``tick``), then a flow-stats request to each polled switch for
its per-flow entries, each reply fed to ``counters``; and on a packet-in,
``new_flow`` and, for schemes that hold the first packet, a packet-out
through table 0. The simulator pauses at the same moments and asks; this
driver makes the same calls, with the strategies' clock reading simulated
time, and answers with their EntryChanges as flow records (rules_export's
``rule_line``: what the simulator's AddFlow/DeleteFlowStrict take).

The simulator applies an answer ``control_delay_s`` after the question: it
stands for what the messages take on a real control channel (stats reply,
or packet-in, then flow-mods and their barrier, packet-out); the
strategies' own computing takes no simulated time.

Protocol (lines; the simulator asks, one question at a time):

    poll T                                     a period's round at T s
    entry SWITCH PACKETS BYTES AGE_S RECORD    a polled switch's per-flow entry
    end
    packet_in T SWITCH PROTO SRC DST SPORT DPORT   addresses as integers
    end
    done                                       then the simulator's JSON

answered with ``add SWITCH RECORD``, ``delete SWITCH RECORD`` and
``packet_out`` lines, then ``end``. One driver process answers every
question of a run (``serve``): these and, when failures happen during the
run, the routing controller's (scripts/sim/failure_reaction.py).
"""
from controller.fattree.classifier import FlowKey
from controller.fattree.scheme_parameters import DEFAULTS as SCHEME_DEFAULTS, scheme_config, timers_for_period
from controller.fattree.scheme_strategies import DYNAMIC_SCHEMES
from controller.fattree.scheme_table0_rules import COOKIE_FLOW
from scripts.sim.rules_export import rule_line, scheme_strategy
from topologies.addressing import int_to_ip

CONTROL_DELAY_S = 0.001
_PORT_FIELDS = ('tcp_dst', 'udp_dst')


class ProtocolError(RuntimeError):
    """The simulator said something the protocol has no place for."""


class SimulatorEnded(ProtocolError):
    """The simulator's output ended before "done" (its exit status says why)."""


def flow_of_record(record):
    """The FlowKey a per-flow entry's ``flow`` record matches (the
    simulator's counterpart of the app's flow_of_match)."""
    tokens = record.split()
    try:
        fields = dict(token.split('=', 1) for token in tokens[4:tokens.index('actions')])
        dport = next(int(fields[f], 0) for f in _PORT_FIELDS if f in fields)
        return FlowKey(int_to_ip(int(fields['ipv4_src'], 0)), int_to_ip(int(fields['ipv4_dst'], 0)),
                       int(fields['ip_proto'], 0), dport)
    except (KeyError, StopIteration, ValueError) as err:
        raise ProtocolError('not a per-flow entry (%s): %s' % (err, record)) from None


def change_lines(changes):
    """EntryChanges as ``add``/``delete SWITCH RECORD`` lines."""
    return ['%s %s %s' % ('delete' if c.remove else 'add', c.switch, rule_line(c.rule)) for c in changes]


def answer_lines(changes, packet_out=False):
    """EntryChanges (and a packet-out) as the answer's lines, ``end`` last."""
    return change_lines(changes) + (['packet_out'] if packet_out else []) + ['end']


class ControllerLoop:
    """One scheme's strategy answering one simulation. ``params`` are the
    app's scheme parameters (scheme_parameters; the polling period among them),
    the timers not given following the period (timers_for_period);
    ``failed_links`` (pairs of switch names) are down from the start, and
    the strategy knows it, as the app's after its failure report."""

    def __init__(self, topo, scheme, params, control_delay_s=CONTROL_DELAY_S, log=None, failed_links=()):
        if scheme not in DYNAMIC_SCHEMES:
            raise ValueError('%r has no controller in the loop; the dynamic schemes are %s'
                             % (scheme, ', '.join(DYNAMIC_SCHEMES)))
        if control_delay_s < 0:
            raise ValueError('the control delay must not be negative, got %r' % (control_delay_s,))
        self.topo, self.control_delay_s = topo, control_delay_s
        timers = timers_for_period(params.get('period', SCHEME_DEFAULTS['period']))
        self.conf = scheme_config(dict(timers, **params, scheme=scheme), simulated=True)
        self.now = 0.0
        self.strategy, _ = scheme_strategy(topo, self.conf, lambda: self.now, failed_links, log=log)
        self.polled = [s.name for s in topo.switches if s.role in self.strategy.polled_roles]

    def scenario_lines(self):
        """What the scenario file tells the simulator of its controller."""
        return (['controller %r %r %#x' % (float(self.conf['period']), float(self.control_delay_s), COOKIE_FLOW)]
                + ['poll %s' % name for name in self.polled])

    def _time(self, token, line):
        try:
            self.now = float(token)
        except ValueError:
            raise ProtocolError('bad time in %r' % line) from None

    def poll(self, header, entries):
        """A period's round: the scheme's round, then every polled switch's
        counters, as the app's poll loop and flow-stats replies."""
        self._time(header[1], ' '.join(header))
        gathered = {name: {} for name in self.polled}
        for line in entries:
            words = line.split(None, 5)
            if len(words) != 6 or words[0] != 'entry' or words[1] not in gathered:
                raise ProtocolError('expected "entry SWITCH PACKETS BYTES AGE RECORD" of a polled '
                                    'switch, got %r' % line)
            try:
                packets, count, age = int(words[2]), int(words[3]), float(words[4])
            except ValueError:
                raise ProtocolError('bad counters in %r' % line) from None
            gathered[words[1]][flow_of_record(words[5])] = (count, packets, age)
        return answer_lines(self.round(gathered))

    def round(self, gathered):
        """The EntryChanges of a period's round at ``now``: the scheme's
        round, then each polled switch's counters ``gathered`` {switch:
        {FlowKey: (bytes, packets, age)}}, as the app's poll loop."""
        changes = list(self.strategy.tick())
        for name in self.polled:
            changes += self.strategy.counters(name, gathered[name], self.now)
        return changes

    def handlers(self):
        """The questions this loop answers, for ``serve``."""
        return {'poll': self._poll_question, 'packet_in': self._packet_in_question}

    def _poll_question(self, words, body):
        if len(words) != 2:
            raise ProtocolError('expected "poll T", got %r' % ' '.join(words))
        return self.poll(words, body)

    def _packet_in_question(self, words, body):
        if body:
            raise ProtocolError('a packet_in has no further lines, got %r' % body[0])
        return self.packet_in(words)

    def packet_in(self, words):
        """The first packet of a flow the switch does not know."""
        line = ' '.join(words)
        if len(words) != 8 or words[2] not in self.topo.nodes:
            raise ProtocolError('expected "packet_in T SWITCH PROTO SRC DST SPORT DPORT", got %r' % line)
        self._time(words[1], line)
        try:
            proto, src, dst, _, dport = (int(w) for w in words[3:])
            flow = FlowKey(int_to_ip(src), int_to_ip(dst), proto, dport)
        except ValueError as err:
            raise ProtocolError('bad packet_in %r: %s' % (line, err)) from None
        return answer_lines(self.strategy.new_flow(words[2], flow), self.strategy.resends_first_packet)



def serve(questions, answer, handlers):
    """Answers the simulator until it says ``done``: ``questions`` yields
    its lines, ``answer(lines)`` sends ours; ``handlers`` {a question's
    first word: callable(its words, its further lines) -> the answer's
    lines}. ProtocolError if it stops early or says something else."""
    lines = iter(questions)
    for line in lines:
        words = line.split()
        if words == ['done']:
            return
        body = []
        for more in lines:
            if more.strip() == 'end':
                break
            body.append(more.rstrip('\n'))
        else:
            raise SimulatorEnded('the simulator stopped in the middle of %r' % line.strip())
        handler = handlers.get(words[0]) if words else None
        if handler is None:
            raise ProtocolError('unexpected message from the simulator: %r' % line.strip())
        answer(handler(words, body))
    raise SimulatorEnded('the simulator ended without "done"')
