"""The fat-tree controller's reaction to a failure in simulated time: the
driver that answers scripts/sim/ns3/fattree_sim's ``ports_down`` questions
with the state the Ryu app computes (pure: no Ryu; nothing here routes).

The app (controller/fattree/routing_app.py apply_failures) keeps every
port's liveness in its tracker (controller.openflow.port_states: a link is
failed while an end is not live), recomputes the tables under the failure
set (FailureRouting.update, compile_table), tells the scheme
(links_changed, whose per-flow changes go out at once), and moves every
switch whose state changed from what it holds by its ordered diff
(controller.openflow.diff), stage by stage downstream first
(controller.openflow.staging). This driver makes the same calls: the
tracker, the routing, the ARP rules and the scheme's strategy are the
app's own classes, a switch's state is put together as rules_export's
(``switch_state``), and what each switch holds starts as the export the
simulator loaded.

Protocol (the simulator asks once its debounce of ``batch_s`` passed):

    ports_down T SWITCH PORT [SWITCH PORT]...   model ports gone not live
    end

answered stage by stage:

    stage
    add SWITCH FLOW_RECORD | delete SWITCH FLOW_RECORD       strict
    delete_table SWITCH TABLE METADATA/MASK                  non-strict
    group SWITCH GROUP_RECORD                                 add or modify
    delete_group SWITCH ID
    ...
    end

The simulator applies stage i (i + 1) control delays after it asked.
"""
from controller.fattree.failover import FailureRouting
from controller.fattree.pipeline import compile_table, fabric_arp_rules
from controller.fattree.scheme_parameters import scheme_config
from controller.openflow.diff import (
    ADD_FLOW, ADD_GROUP, DELETE_FLOW, DELETE_FLOWS, DELETE_GROUP, MODIFY_GROUP, metadata_term, ordered_diff)
from controller.openflow.port_states import PortStates
from controller.openflow.staging import update_stages
from scripts.sim.controller_loop import CONTROL_DELAY_S, ProtocolError, change_lines
from scripts.sim.rules_export import group_line, rule_line, scheme_strategy, switch_state

BATCH_S = 0.05  # the app's debounce: a burst of port events is quiet this long (routing_app batch_ms)


def op_line(switch, op):
    """One op of an ordered diff (controller.openflow.diff) as an answer's line."""
    kind, item = op
    if kind == ADD_FLOW:
        return 'add %s %s' % (switch, rule_line(item))
    if kind == DELETE_FLOW:
        return 'delete %s %s' % (switch, rule_line(item))
    if kind == DELETE_FLOWS:
        return 'delete_table %s %d %#x/%#x' % ((switch, item.table) + metadata_term(item))
    if kind in (ADD_GROUP, MODIFY_GROUP):
        return 'group %s %s' % (switch, group_line(item))
    if kind == DELETE_GROUP:
        return 'delete_group %s %d' % (switch, item.group_id)
    raise ValueError('no line for op %r' % (kind,))


class FailureReaction:
    """The routing controller of one simulation. ``strategy`` is the scheme's
    (rules_export.scheme_strategy), already told of ``failed_links`` (pairs
    of switch names, down from the start: the export the switches hold was
    computed for them); a dynamic scheme's is its ControllerLoop's, so that
    one strategy answers both."""

    def __init__(self, topo, strategy, failed_links=(), batch_s=BATCH_S, control_delay_s=CONTROL_DELAY_S):
        if batch_s < 0 or control_delay_s < 0:
            raise ValueError('the batch and the control delay must not be negative, got %r and %r'
                             % (batch_s, control_delay_s))
        self.topo, self.strategy = topo, strategy
        self.batch_s, self.control_delay_s = batch_s, control_delay_s
        down = {(a, topo.port_to(a, b)) for pair in failed_links for a, b in (pair, pair[::-1])}
        self.ports = PortStates(topo)
        for link in topo.switch_links():  # every port up once, so that not live is failed at once
            for end in ((link.node_a, link.port_a), (link.node_b, link.port_b)):
                self.ports.update(*end, True, True, 0.0)
                if end in down:
                    self.ports.update(*end, True, False, 0.0)
        self.failed = self.ports.failed_links(0.0)
        self.routing = FailureRouting(topo)
        self.routing.update(self.failed)
        self.compiled = {name: compile_table(table) for name, table in self.routing.tables.items()}
        self.arp_rules = fabric_arp_rules(topo)
        self.installed = {name: self.state(name) for name in self.compiled}

    @classmethod
    def for_scheme(cls, topo, scheme, params, failed_links=(), **timing):
        """The reaction for a scheme with no controller in the loop (its
        strategy as export_switches makes it)."""
        conf = scheme_config(dict(params, scheme=scheme), simulated=True)
        strategy, _ = scheme_strategy(topo, conf, lambda: 0.0, failed_links)
        return cls(topo, strategy, failed_links, **timing)

    def state(self, name):
        return switch_state(name, self.compiled[name], self.arp_rules[name], self.strategy)

    def scenario_line(self):
        """What the scenario file tells the simulator of this controller."""
        return 'routing_controller %r %r' % (float(self.batch_s), float(self.control_delay_s))

    def handlers(self):
        """The questions this controller answers, for controller_loop.serve."""
        return {'ports_down': self.ports_down}

    def ports_down(self, words, body):
        """Ports gone not live: the new failure set's changes, in stages."""
        line = ' '.join(words)
        if len(words) < 4 or len(words) % 2 or body:
            raise ProtocolError('expected "ports_down T SWITCH PORT [SWITCH PORT]..." alone, got %r' % line)
        try:
            now = float(words[1])
            ends = [(name, int(port)) for name, port in zip(words[2::2], words[3::2])]
        except ValueError:
            raise ProtocolError('bad time or port in %r' % line) from None
        for name, port in ends:
            if name not in self.installed or self.topo.peer(name, port) is None:
                raise ProtocolError('%s port %d is no cabled switch port of %s (in %r)'
                                    % (name, port, self.topo.name, line))
            self.ports.update(name, port, True, False, now)
        return self.react(self.ports.failed_links(now))

    def react(self, failed):
        """The answer's lines moving every switch to its state under
        ``failed`` (link keys), as apply_failures and the staged update."""
        if failed == self.failed:
            return ['end']
        self.compiled.update({name: compile_table(table) for name, table in self.routing.update(failed).items()})
        self.failed = failed
        entry_changes = self.strategy.links_changed(failed, self.routing.tables)
        new = {name: self.state(name) for name in self.installed}
        new = {name: state for name, state in new.items() if state != self.installed[name]}
        plan = update_stages(self.topo, self.installed, new) or ([[]] if entry_changes else [])
        lines = []
        for index, stage in enumerate(plan):
            lines.append('stage')
            if not index:  # the app sends the scheme's per-flow changes at once, beside the first stage
                lines += change_lines(entry_changes)
            for name in stage:
                (old_rules, old_groups), (rules, groups) = self.installed[name], new[name]
                lines += [op_line(name, op) for op in ordered_diff(old_rules, rules, old_groups, groups)]
                self.installed[name] = new[name]
        return lines + ['end']
