"""One recompute per burst of port events: a debounce with a maximum delay
(controller.openflow.debounce), driven by a simulated clock and timer queue."""
import heapq

from controller.fattree.failover import link_key
from controller.openflow.debounce import Debounce
from controller.openflow.port_states import PortStates
from topologies.fattree import FatTree


class Timers:
    """A clock and hub.spawn_after stand-in: ``run_until(t)`` fires the timers due by t in order."""

    def __init__(self):
        self.now, self._queue, self._seq = 0.0, [], 0

    def __call__(self):
        return self.now

    def schedule(self, delay, fn):
        heapq.heappush(self._queue, (self.now + delay, self._seq, fn))
        self._seq += 1

    def run_until(self, until):
        while self._queue and self._queue[0][0] <= until:
            self.now, _, fn = heapq.heappop(self._queue)
            fn()
        self.now = until


def debounced(action, quiet_s=0.05, max_delay_s=1.0):
    timers = Timers()
    return timers, Debounce(timers.schedule, timers, action, quiet_s=quiet_s, max_delay_s=max_delay_s)


def test_a_long_burst_of_port_events_costs_one_recompute():
    topo = FatTree(4)
    ports, recomputes = PortStates(topo, grace_s=30.0), []
    timers, batch = debounced(lambda: recomputes.append((timers.now, ports.failed_links(timers.now))))
    links = topo.switch_links()
    for link in links:  # the fabric is up: every port has been live
        ports.update(link.node_a, link.port_a, True, True, 0.0)
    # 500 events over 0.8 s (every 1.6 ms), as BFD sessions time out one by
    # one: 16 times the quiet period, and a fixed 50 ms window would have cut it into 16 recomputes
    for event in range(500):
        timers.run_until(0.0016 * event)
        link = links[event % len(links)]
        ports.update(link.node_a, link.port_a, event % 2 == 0, event % 2 == 0, timers.now)
        batch.notify()
    timers.run_until(5.0)
    assert batch.runs == 1 and not batch.pending
    (at, failed), = recomputes
    assert abs(at - (0.0016 * 499 + 0.05)) < 1e-9  # once the burst has been quiet for 50 ms
    # the recompute sees the last event of each port: down where that event was odd
    last_event = {j: max(e for e in range(500) if e % len(links) == j) for j in range(len(links))}
    assert failed == {link_key(l.node_a, l.node_b) for j, l in enumerate(links) if last_event[j] % 2}


def test_a_burst_that_never_ends_is_answered_every_maximum_delay():
    runs = []
    timers, batch = debounced(lambda: runs.append(round(timers.now, 6)), quiet_s=0.05, max_delay_s=1.0)
    for tick in range(250):  # a link flapping every 10 ms for 2.5 s
        timers.run_until(0.01 * tick)
        batch.notify()
    timers.run_until(10.0)
    assert runs == [1.0, 2.0, 2.54]  # at most 1 s after a burst's first event; the tail after 50 ms quiet


def test_separate_bursts_run_separately_and_a_lone_event_after_the_quiet_period():
    runs = []
    timers, batch = debounced(lambda: runs.append(round(timers.now, 6)))
    batch.notify()
    assert batch.pending
    timers.run_until(0.03)
    batch.notify()
    timers.run_until(1.0)
    batch.notify()
    timers.run_until(2.0)
    assert runs == [0.08, 1.05] and batch.runs == 2 and not batch.pending
