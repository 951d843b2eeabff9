"""What each switch has confirmed of what the controller sent it, and what
it rejected (pure: no Ryu; the Ryu side reports sends, barrier replies,
errors and disconnections).

Every batch of table changes sent to a switch ends with a barrier; its
messages are kept by xid until the barrier's reply, so that an OpenFlow
error (which names the xid of the message it rejects) is reported together
with that message. A switch's state counts only once every batch sent to it
is confirmed by its barrier and no error it reported against its current
state is outstanding. An error is outstanding until the switch's whole
state is sent again (it reconnects and is reinstalled), since the diffs that
follow assume the rejected entry is in place. An error about a message
that is not kept (a counter request, a message sent before any batch) is
reported and counted but concerns no table state.
"""
from collections import deque

from controller.openflow.diff import ADD_FLOW, ADD_GROUP, DELETE_FLOW, DELETE_FLOWS, DELETE_GROUP, MODIFY_GROUP
from controller.openflow.rules import group_to_ofctl, to_ofctl

RECENT_ERRORS = 100


def describe(what):
    """A sent message as a log line: an ordered-diff op (controller.openflow.diff)
    in ovs-ofctl syntax, anything else as its text."""
    if isinstance(what, tuple):
        operation, item = what
        if operation in (ADD_FLOW, DELETE_FLOW, DELETE_FLOWS):
            return '%s %s' % (operation, to_ofctl(item))
        if operation in (ADD_GROUP, MODIFY_GROUP):
            return '%s %s' % (operation, group_to_ofctl(item))
        if operation == DELETE_GROUP:
            return '%s group_id=%d' % (operation, item.group_id)
    return str(what)


class Confirmations:
    """Per switch: batches awaiting their barrier, whether its state is
    confirmed, the errors outstanding against it; and every error seen."""

    def __init__(self, clock):
        self.clock = clock
        self._batches = {}      # switch -> [(barrier xid, {xid: what})], oldest first
        self._installed = set()  # switches sent their whole state since they connected
        self.outstanding = {}   # switch -> [error record] against its current state
        self.recent = deque(maxlen=RECENT_ERRORS)  # every error record, newest last
        self.counts = {}        # (switch, error name) -> errors reported

    def sent(self, switch, messages, barrier_xid, whole_state=False):
        """A batch ``messages`` [(xid, what)] went to ``switch``, followed by
        the barrier ``barrier_xid``. ``whole_state``: the batch replaces
        everything on the switch (errors against its old state are moot)."""
        if whole_state:
            self._installed.add(switch)
            self.outstanding.pop(switch, None)
        self._batches.setdefault(switch, []).append((barrier_xid, dict(messages)))

    def barrier_reply(self, switch, xid):
        """The switch processed everything sent before barrier ``xid``.
        True when that barrier ended a batch this tracks."""
        batches = self._batches.get(switch, [])
        for index, (barrier_xid, _) in enumerate(batches):
            if barrier_xid == xid:
                del batches[:index + 1]
                return True
        return False

    def error(self, switch, xid, name):
        """The switch rejected the message ``xid`` with error ``name`` (e.g.
        'OFPET_BAD_MATCH/OFPBMC_BAD_WILDCARDS'). Returns the error record:
        {'time', 'switch', 'xid', 'error', 'message'}, message None when the
        xid is not one of a batch awaiting its barrier."""
        what = next((messages[xid] for _, messages in self._batches.get(switch, []) if xid in messages), None)
        record = {'time': self.clock(), 'switch': switch, 'xid': xid, 'error': name,
                  'message': None if what is None else describe(what)}
        if what is not None:
            self.outstanding.setdefault(switch, []).append(record)
        self.recent.append(record)
        self.counts[(switch, name)] = self.counts.get((switch, name), 0) + 1
        return record

    def disconnected(self, switch):
        """No reply can come any more; the switch is sent its whole state when it reconnects."""
        self._batches.pop(switch, None)
        self._installed.discard(switch)

    def confirmed(self, switch):
        """The switch confirmed everything sent to it and rejected none of its current state."""
        return switch in self._installed and not self._batches.get(switch) and not self.outstanding.get(switch)

    def awaiting(self, switch):
        """Messages sent to the switch whose barrier has not been answered."""
        return sum(len(messages) for _, messages in self._batches.get(switch, []))

    def outstanding_errors(self):
        return [record for switch in sorted(self.outstanding) for record in self.outstanding[switch]]
