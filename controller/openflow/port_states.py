"""The one tracker of every switch port's carrier and liveness, and which
switch links are failed (pure: no Ryu). The Ryu side feeds it port
descriptions and port-status messages; routing, the live view and the
metrics all read it, so they never disagree about a link.

Start-up semantics. With BFD on, Open vSwitch reports a port not live
(OFPPS_LIVE clear) until its BFD session first comes up, and a port
being added while its veth peer is not up yet is first reported without
carrier (at k=16 thousands are, in one burst). Neither is a failure to
broadcast: a port that has not been live once is coming up. It is failed
when it loses a carrier it had (a link cut during start-up is avoided at
once), or when the fabric's start-up has made no progress for
``grace_s``: no port first reported and none live for the first time
(at k=16 ovs-vswitchd needs minutes to add 5,120 ports and bring their
sessions up, so no fixed time fits every size). A link that breaks
silently during start-up is avoided ``grace_s`` after the rest of the
fabric came up; a port judged so stays failed until it is live (later
start-up elsewhere does not revive it). A port that has been live once is
failed as soon as it is not live (carrier down or BFD down). A port never
reported at all (its switch has not connected) is up.

A controller started into a fabric that was already running hears of
every port for the first time too, but its ports are not starting: a port
that had been in its switch for ``grace_s`` or more when the switch
connected (``port_age``, from the port statistics' duration) is past
start-up, and not live means failed at once instead of after the grace.

Ports are the model's port numbers (topologies.model.model_port).
"""
from controller.fattree.failover import link_key

# What a port is, from best to worst: a link is as bad as its worse reported
# switch end ('unknown' only when neither end was reported).
CONDITIONS = ('unknown', 'up', 'coming_up', 'bfd_down', 'carrier_down')
FAILED = ('bfd_down', 'carrier_down')


class PortStates:
    """Carrier and liveness of every reported switch port of ``topo``."""

    def __init__(self, topo, grace_s=30.0):
        self.topo = topo
        self.grace_s = grace_s
        self.ports = {}  # (switch, model port) -> {'carrier', 'live', 'was_live', 'had_carrier', 'since', 'gave_up'}
        self.progress_at = None  # the latest start-up progress: a port first heard of, or live for the first time
        self.established = set()  # (switch, port) in its switch for grace_s or more when the switch connected

    def update(self, switch, port, carrier, live, now):
        """Record one port's state. True when the port is first heard of or
        its carrier or liveness changed (the live view re-reads every
        port's description every few seconds: repeats are no news)."""
        known = self.ports.get((switch, port))
        if known is not None and (known['carrier'], known['live']) == (carrier, live):
            return False
        if known is None or (live and not known['was_live']):
            self.progress_at = now
        self.ports[(switch, port)] = {
            'carrier': carrier, 'live': live,
            'was_live': live or (known is not None and known['was_live']),
            'had_carrier': carrier or (known is not None and known['had_carrier']),
            'since': now if known is None else known['since'],
            'gave_up': known is not None and known['gave_up']}
        return True

    def port_age(self, switch, port, age_s):
        """Record how long a port had been in its switch when the switch
        connected. True when that makes a port not live failed now (the
        routing must hear of it)."""
        if age_s < self.grace_s or (switch, port) in self.established:
            return False
        self.established.add((switch, port))
        state = self.ports.get((switch, port))
        return state is not None and not state['live'] and not state['was_live']

    def condition(self, switch, port, now):
        """'up' (live), 'unknown' (never reported), 'coming_up' (not live
        once yet, not judged), or failed: 'bfd_down' (carrier up) or 'carrier_down'."""
        state = self.ports.get((switch, port))
        if state is None:
            return 'unknown'
        if state['live']:
            return 'up'
        if not state['was_live'] and (switch, port) not in self.established and self._coming_up(state, now):
            return 'coming_up'
        return 'bfd_down' if state['carrier'] else 'carrier_down'

    def link_condition(self, link, now):
        """A link's condition: its worse switch end's (a host end reports nothing; an
        end not reported yet counts as up, as for routing)."""
        ends = [self.condition(node, port, now) for node, port in ((link.node_a, link.port_a),
                                                                    (link.node_b, link.port_b))
                if not self.topo.nodes[node].is_host]
        return max(ends, key=CONDITIONS.index)

    def _coming_up(self, state, now):
        """Not live yet, with carrier or never had it, while start-up progresses."""
        if state['gave_up'] or (state['had_carrier'] and not state['carrier']):
            return False
        if now - max(state['since'], self.progress_at) < self.grace_s:
            return True
        state['gave_up'] = True  # judged once, for good
        return False

    def judgement_due(self):
        """When ports still coming up are judged if nothing progresses (None: no port heard of)."""
        return None if self.progress_at is None else self.progress_at + self.grace_s

    def waiting_for_first_live(self, now):
        """Switch-link ports still coming up: not live once yet (carrier or BFD), not judged yet."""
        return sorted(key for key, s in self.ports.items()
                      if not s['was_live'] and key not in self.established and self._is_switch_link_port(*key)
                      and self._coming_up(s, now))

    def _is_switch_link_port(self, switch, port):
        peer = self.topo.peer(switch, port)
        return peer is not None and not self.topo.nodes[peer[0]].is_host

    def failed_links(self, now):
        return frozenset(link_key(link.node_a, link.node_b) for link in self.topo.switch_links()
                         if self.link_condition(link, now) in FAILED)

    def state(self, switch, port):
        """The last reported {'carrier', 'live'} of a port, or None."""
        known = self.ports.get((switch, port))
        return None if known is None else {'carrier': known['carrier'], 'live': known['live']}

    def reported(self):
        """Every reported port: {(switch, model port): {'carrier', 'live'}}."""
        return {key: {'carrier': s['carrier'], 'live': s['live']} for key, s in self.ports.items()}
