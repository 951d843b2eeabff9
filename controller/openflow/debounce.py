"""One run per burst of notifications (pure: no Ryu): a debounce with a
maximum delay. A burst is notifications closer together than ``quiet_s``;
the action runs once the burst has been quiet for ``quiet_s``, or at the
latest ``max_delay_s`` after its first notification, so that a burst that
never ends (a flapping link) still gets answered. A fabric's port events
come in such bursts: a switch failure, BFD sessions going down one by one
within their detection time, start-up.
"""


class Debounce:
    """``schedule(delay_s, fn)`` runs fn later (e.g. Ryu's hub.spawn_after);
    ``clock()`` is monotonic seconds."""

    def __init__(self, schedule, clock, action, quiet_s=0.05, max_delay_s=1.0):
        self.schedule, self.clock, self.action = schedule, clock, action
        self.quiet_s, self.max_delay_s = quiet_s, max_delay_s
        self.pending = False
        self.runs = 0
        self._first = self._last = None  # the pending burst's first and latest notification

    def notify(self):
        now = self.clock()
        self._last = now
        if not self.pending:
            self.pending, self._first = True, now
            self.schedule(self.quiet_s, self._check)

    def _due(self):
        return min(self._last + self.quiet_s, self._first + self.max_delay_s)

    def _check(self):
        # The timer set for the first notification wakes up and, while the
        # burst goes on, sleeps again until the burst's current due time.
        wait = self._due() - self.clock()
        if wait > 1e-9:
            self.schedule(wait, self._check)
            return
        self.pending = False
        self.runs += 1
        self.action()
