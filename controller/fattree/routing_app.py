"""Ryu app: the fat-tree's central routing entity (Al-Fares et al. 3.5, 3.8).

Start it with ``dcfabric controller --k K`` (or
``python -m controller.ryuapp.manager controller.fattree.routing_app --params '{"k": K}'``).

It routes around the switch links the base app's port-state tracker finds
failed (controller.openflow.port_states: a link is failed while either end
is down, OFPPS_LIVE being carrier and, where enabled, BFD; a port whose BFD
has not come up yet since start is coming up, not failed, until the
fabric's start-up has stopped progressing for ``bfd_grace_s``).
Port events come in bursts (start-up, a switch failure): a burst costs one
incremental recompute from the failure set (controller.fattree.failover.
FailureRouting) once it has been quiet for ``batch_ms`` (50) or at the latest
``batch_max_ms`` (1000) after its first event (controller.openflow.debounce),
and only switches whose state changed are sent the differences, downstream
first (controller.openflow.staging); the switches' fast-failover groups
have already repaired what they could see locally.

The ``ready`` state section says when the fabric is ready: every switch has
confirmed its current tables (the barrier after the last change sent to it
answered, no OpenFlow error outstanding against them), no recompute or
staged update is pending and no port is still waiting for its BFD session.
"""
import time

from ryu.lib import hub

from controller.ryuapp.fabric_app import FabricApp
from controller.ryuapp.web import FabricViewMixin
from controller.fattree.failover import FailureRouting, link_key
from controller.fattree.pipeline import compile_table, fabric_arp_rules
from controller.fattree.scheme_mixin_app import SchemeMixin
from controller.openflow.debounce import Debounce
from topologies.fattree import FatTree


class FatTreeApp(SchemeMixin, FabricViewMixin, FabricApp):

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.recompute = Debounce(hub.spawn_after, time.monotonic, self.apply_failures,
                                  quiet_s=self.params.get('batch_ms', 50) / 1000.0,
                                  max_delay_s=self.params.get('batch_max_ms', 1000) / 1000.0)
        self.failed = frozenset()
        self._judgement_armed = False  # a timer waits to judge ports still coming up
        self.routing = FailureRouting(self.topo)  # the tables under self.failed, kept between bursts
        self.compiled = self.compile_all(self.routing.tables)
        self.arp_rules = fabric_arp_rules(self.topo)
        self.link_listeners = []  # callables(failed_links, tables) told of every change
        self.link_listeners.append(self.scheme_links_changed)
        self.state_view.register('links', self.link_state)
        self.state_view.register('ready', self.ready_state)

    def build_topology(self, params):
        return FatTree(params.get('k', 4))

    def compile_all(self, tables):
        return {name: compile_table(table) for name, table in tables.items()}

    def rules_for(self, switch):
        return self.compiled[switch][0] + self.arp_rules[switch] + self.scheme.rules(switch)

    def groups_for(self, switch):
        return self.compiled[switch][1] + self.scheme.groups(switch)

    def port_changed(self, switch, port, before):
        super().port_changed(switch, port, before)
        self.recompute.notify()
        if not self._judgement_armed:
            self._judgement_armed = True
            hub.spawn_after(self.ports.grace_s + 0.1, self._judge_start_up)

    def _judge_start_up(self):
        """Ports whose BFD never came up fail once start-up stopped
        progressing (link_state): wait until then, as long as it moves."""
        remaining = self.ports.judgement_due() - time.time()
        if remaining > 0:
            hub.spawn_after(remaining + 0.1, self._judge_start_up)
            return
        self._judgement_armed = False
        self.recompute.notify()

    def apply_failures(self):
        failed = self.ports.failed_links(time.time())
        if failed == self.failed:
            return
        started = time.monotonic()
        self.compiled.update(self.compile_all(self.routing.update(failed)))  # the changed tables only
        self.failed, tables = failed, self.routing.tables
        for listener in self.link_listeners:  # the scheme's state follows the tables
            listener(failed, tables)
        changed = [name for name in self.datapaths
                   if (self.rules_for(name), self.groups_for(name)) != self.installed.get(name)]
        self.logger.info('failed links now %s; updating %s',
                         sorted('-'.join(sorted(l)) for l in failed) or 'none', ' '.join(changed) or 'nothing')
        self.update_switches()  # downstream first, stage by stage
        self.observe_broadcast(failed, changed, time.monotonic() - started)

    def link_state(self):
        """Every switch-to-switch link with both ends' carrier and liveness."""
        rows = []
        for link in self.topo.switch_links():
            ends = [self.ports.state(link.node_a, link.port_a), self.ports.state(link.node_b, link.port_b)]
            rows.append({'a': link.node_a, 'port_a': link.port_a, 'b': link.node_b, 'port_b': link.port_b,
                         'a_state': ends[0], 'b_state': ends[1],
                         'up': link_key(link.node_a, link.node_b) not in self.failed})
        return rows

    def ready_state(self):
        """Whether the fabric is ready, and what it still waits for."""
        waiting = self.ports.waiting_for_first_live(time.time())
        unconfirmed = [s.name for s in self.topo.switches if not self.confirmations.confirmed(s.name)]
        errors = self.confirmations.outstanding_errors()
        return {'ready': not unconfirmed and not errors and not waiting and not self.recompute.pending
                and not self.updating,
                'switches': len(self.topo.switches), 'programmed': len(self.topo.switches) - len(unconfirmed),
                'unconfirmed': unconfirmed[:20], 'outstanding_errors': len(errors), 'errors': errors[:20],
                'ports_waiting_for_bfd': len(waiting),
                'recompute_pending': self.recompute.pending, 'recomputes': self.recompute.runs,
                'updating': self.updating,
                'failed_links': len(self.failed)}
