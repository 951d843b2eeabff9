"""The routing controller's reaction to a failure during a simulated run
(scripts/sim/failure_reaction.py, and fattree_sim applying it): the
driver's answer is the app's ordered diffs between the exports before and
after, in the stages the app plans; the simulated switches end holding the
export for the failure set; a bad answer stops the simulator with it named."""
import re
import subprocess

import pytest

from controller.fattree.failover import link_key
from controller.openflow.diff import ordered_diff
from controller.openflow.staging import update_stages
from scripts.sim import bisection_backend
from scripts.sim.controller_loop import ControllerLoop, ProtocolError, serve
from scripts.sim.failure_reaction import FailureReaction, op_line
from scripts.sim.scenario import SimFailure, SimFlow, SimSettings, scenario_lines
from scripts.sim.ns3 import build
from scripts.sim.rules_export import export_switches, group_line, rule_line
from topologies.fattree import FatTree

TOPO = FatTree(4)
# h0_0_2 -> h1_0_2 leaves e0_0 by its port 2 (fig. 3's suffix table), to a0_2.
LINK = ('e0_0', 'a0_2')
# with LINK, a failure set whose update takes five stages downstream first
OTHER_LINK = ('e0_1', 'a0_3')


def staged_diff(before, after):
    """The answer the app's update gives between two exports: each switch's
    ordered diff, stage by stage downstream first."""
    old = {name: (state['rules'], state['groups']) for name, state in before.items()}
    new = {name: (state['rules'], state['groups']) for name, state in after.items()}
    plan = update_stages(TOPO, old, {name: new[name] for name in old if old[name] != new[name]})
    lines = []
    for stage in plan:
        lines.append('stage')
        for name in stage:
            lines += [op_line(name, op) for op in ordered_diff(old[name][0], new[name][0], old[name][1], new[name][1])]
    return lines + ['end'], plan


def ports_down_question(at_s, *ends):
    return ('ports_down %r %s' % (at_s, ' '.join('%s %d' % end for end in ends))).split()


@pytest.mark.parametrize('scheme', ['twolevel', 'ecmp'])
@pytest.mark.parametrize('links, stage_count', [([LINK], 1), ([LINK, OTHER_LINK], 5)])
def test_lower_upper_failures_answer_the_staged_diff_of_the_exports(scheme, links, stage_count):
    reaction = FailureReaction.for_scheme(TOPO, scheme, {'link_mbps': 1000})
    expected, plan = staged_diff(export_switches(TOPO, scheme), export_switches(TOPO, scheme, links))
    assert expected.count('stage') == len(plan) == stage_count
    answer = reaction.ports_down(ports_down_question(0.3, *((a, TOPO.port_to(a, b)) for a, b in links)), [])
    assert answer == expected
    assert reaction.failed == {link_key(*link) for link in links}
    # the other ends' news changes nothing: the links are already failed
    assert reaction.ports_down(ports_down_question(0.31, *((b, TOPO.port_to(b, a)) for a, b in links)), []) == ['end']


def test_a_failure_known_from_the_start_is_no_news_and_a_dynamic_scheme_shares_its_strategy():
    loop = ControllerLoop(TOPO, 'classifier', {'link_mbps': 1000}, failed_links=[LINK])
    reaction = FailureReaction(TOPO, loop.strategy, [LINK])
    a, b = LINK
    assert reaction.ports_down(ports_down_question(0.2, (a, TOPO.port_to(a, b))), []) == ['end']
    handlers = dict(loop.handlers(), **reaction.handlers())
    assert set(handlers) == {'poll', 'packet_in', 'ports_down'}


@pytest.mark.parametrize('asked, problem', [
    (['ports_down 1', 'end'], 'expected "ports_down'),
    (['ports_down 1 e0_0', 'end'], 'expected "ports_down'),
    (['ports_down x e0_0 2', 'end'], 'bad time or port'),
    (['ports_down 1 e0_0 9', 'end'], 'no cabled switch port'),
    (['ports_down 1 h0_0_2 0', 'end'], 'no cabled switch port'),
    (['ports_down 1 e0_0 2', 'e0_1 2', 'end'], 'alone'),
])
def test_a_bad_question_is_named(asked, problem):
    reaction = FailureReaction.for_scheme(TOPO, 'twolevel', {'link_mbps': 1000})
    with pytest.raises(ProtocolError, match=problem):
        serve(iter(asked), lambda lines: None, reaction.handlers())


# BFD detects a failure at k=4 after 210 ms (network.detection_delay_ms); the
# controller's update goes out 50 ms later; measured well after both.
FAIL_AT_S = 0.05
SETTINGS = SimSettings(link_mbps=100, stop_s=0.8, measure_from_s=0.5, min_rto_ms=5.0)


@pytest.mark.parametrize('scheme, links, switches, stage_count', [
    ('twolevel', [LINK], [], 1),
    ('twolevel', [LINK, OTHER_LINK], [], 5),
    ('ecmp', [], ['a0_2'], 1),  # every op kind but the strict delete: groups modified and deleted, tables deleted
])
def test_a_flow_across_a_failure_keeps_delivering_and_the_switches_end_with_the_export(
        scheme, links, switches, stage_count):
    failures = ([SimFailure(FAIL_AT_S, a, TOPO.port_to(a, b)) for a, b in links]
                + [SimFailure(FAIL_AT_S, name) for name in switches])
    result = bisection_backend.simulate(TOPO, scheme, [SimFlow('h0_0_2', 'h1_0_2', 0.0, 0.8, src_port=40001)],
                                        SETTINGS, progress=lambda line: None, failures=failures)
    # delivering after the failure: the fast-failover repair at detection, then
    # the controller's update
    (flow,) = result['flows']
    assert flow['goodput_mbps'] > 80, flow
    # one recompute for the burst of ports going down together
    assert result['routing_controller']['recomputes'] == 1
    assert result['routing_controller']['stages'] == stage_count
    export = export_switches(TOPO, scheme, links, switches)
    for name, state in export.items():
        held = result['switches'][name]
        assert sorted(held['flows']) == sorted(rule_line(r) for r in state['rules']), name
        assert sorted(held['groups']) == sorted(group_line(g) for g in state['groups']), name


def test_without_the_routing_controller_the_switches_keep_their_export():
    # failures unknown to the controller: local repair only, the tables as loaded
    result = bisection_backend.simulate(TOPO, 'twolevel', [SimFlow('h0_0_2', 'h1_0_2', 0.0, 0.05)],
                                        SimSettings(link_mbps=100, stop_s=0.05), progress=lambda line: None)
    assert 'routing_controller' not in result and 'flows' not in result['switches']['e0_0']


@pytest.mark.parametrize('reply, problem', [
    ('add e0_0 flow 0 1 0x0 actions', 'an op before the first stage'),
    ('stage\nfrobnicate e0_0', 'expected stage, add'),
    ('stage\nadd x9 flow 0 1 0x0 actions', 'no switch named x9'),
    ('stage\nadd e0_0 nonsense', 'not a flow record'),
    ('stage\ngroup e0_0 group 7 teleport bucket - output=1', 'unsupported group type'),
    ('stage\ndelete_table e0_0 2 0x5', 'METADATA/MASK'),
    ('stage\ndelete_group e0_0 seven', 'not a number|stoull'),
])
def test_a_bad_answer_stops_the_simulator_with_it_named(tmp_path, reply, problem):
    rules, scenario = tmp_path / 'rules.txt', tmp_path / 'scenario.txt'
    bisection_backend.export_rules(TOPO, 'twolevel', str(rules))
    a, b = LINK
    lines = scenario_lines(TOPO, str(rules), SimSettings(link_mbps=100, stop_s=0.3), [],
                           [SimFailure(0.01, a, TOPO.port_to(a, b))], 'routing_controller 0.05 0.001')
    scenario.write_text('\n'.join(lines) + '\n')
    run = subprocess.run([str(build.simulator()), str(scenario)], input=reply + '\nend\n', text=True,
                         capture_output=True, timeout=60)
    assert run.returncode != 0
    assert run.stdout.startswith('ports_down ')
    assert 'bad routing controller reply' in run.stderr
    assert re.search(problem, run.stderr), run.stderr


def test_the_scenario_names_the_routing_controller_only_with_failures_during_the_run():
    line = FailureReaction.for_scheme(TOPO, 'twolevel', {'link_mbps': 100}).scenario_line()
    assert line == 'routing_controller 0.05 0.001'
    a, b = LINK
    with_failure = scenario_lines(TOPO, 'rules.txt', SETTINGS, [], [SimFailure(0.1, a, TOPO.port_to(a, b))], line)
    assert with_failure[-1] == line
    assert line not in scenario_lines(TOPO, 'rules.txt', SETTINGS, [], [], line)
