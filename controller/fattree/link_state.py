"""Which switch links are failed, from the ports' carrier and liveness, and
one recompute per burst of port events (pure: no Ryu).

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
"""
from controller.fattree.failover import link_key


class PortStates:
    """Carrier and liveness of every switch-to-switch port of ``topo``."""

    def __init__(self, topo, grace_s=30.0):
        self.topo = topo
        self.grace_s = grace_s
        self.ports = {}  # (switch, model port) -> {'carrier', 'live', 'was_live', 'had_carrier', 'since', 'gave_up'}
        self.progress_at = None  # the latest start-up progress: a port first heard of, or live for the first time

    def update(self, switch, port, carrier, live, now):
        """Record one port's state. True when it is a switch link's port
        first heard of or whose carrier or liveness changed: only then can
        the failed links have changed (the live view re-reads every port's
        description every few seconds)."""
        peer = self.topo.peer(switch, port)
        if peer is None or self.topo.nodes[peer[0]].is_host:
            return False
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

    def port_is_up(self, switch, port, now):
        state = self.ports.get((switch, port))
        if state is None:
            return True
        if state['was_live']:
            return state['live']
        return self._coming_up(state, now)

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
        """Ports still coming up: not live once yet (carrier or BFD), not judged yet."""
        return sorted(key for key, s in self.ports.items() if not s['was_live'] and self._coming_up(s, now))

    def failed_links(self, now):
        return frozenset(link_key(link.node_a, link.node_b) for link in self.topo.switch_links()
                         if not (self.port_is_up(link.node_a, link.port_a, now)
                                 and self.port_is_up(link.node_b, link.port_b, now)))

    def state(self, switch, port):
        """The last reported {'carrier', 'live'} of a port, or None."""
        known = self.ports.get((switch, port))
        return None if known is None else {'carrier': known['carrier'], 'live': known['live']}


class Coalescer:
    """Run ``action`` once for a burst of notifications: the first
    notification schedules it ``delay_s`` later (``schedule(delay_s, fn)``,
    e.g. Ryu's hub.spawn_after); the ones that arrive before it runs only
    join that run."""

    def __init__(self, schedule, action, delay_s=0.05):
        self.schedule, self.action, self.delay_s = schedule, action, delay_s
        self.pending = False
        self.runs = 0

    def notify(self):
        if not self.pending:
            self.pending = True
            self.schedule(self.delay_s, self._run)

    def _run(self):
        self.pending = False
        self.runs += 1
        self.action()
