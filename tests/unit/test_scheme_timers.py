"""The schemes' timers follow the polling period (scheme_parameters.
timers_for_period), as the simulator's controller applies them: a
scheduler polled every 10 ms frees a finished flow's links within a few
periods and places a waiting flow on them; with the app's 3 s gc_timeout
it never does in a run of tens of milliseconds."""
import argparse

import pytest

from controller.fattree.classifier import FlowKey
from controller.fattree.scheme_parameters import DEFAULTS, SchemeParameterError, timers_for_period
from scripts.sim import controller_options
from scripts.sim.controller_loop import ControllerLoop
from topologies.fattree import FatTree

TOPO = FatTree(4)
PERIOD_S = 0.01
LINE_BYTES_PER_PERIOD = int(1e9 / 8 * PERIOD_S)
# Two flows fill e0_0's two uplinks; WAITING, from the same edge, finds none
# free until FINISHED's reservation is freed.
FINISHED = FlowKey('10.0.0.2', '10.1.0.2', 6, 5201)
STAYING = FlowKey('10.0.0.3', '10.1.1.2', 6, 5201)
WAITING = FlowKey('10.0.0.2', '10.2.0.2', 6, 5202)


def test_timers_keep_the_apps_number_of_periods():
    assert timers_for_period(DEFAULTS['period']) == {'gc_timeout': 3.0, 'flow_idle': 5.0}
    assert timers_for_period(0.01) == pytest.approx({'gc_timeout': 0.03, 'flow_idle': 0.05})
    with pytest.raises(SchemeParameterError, match='period must be a positive number'):
        timers_for_period(0)


def test_a_runs_config_records_the_timers_of_its_period():
    parser = argparse.ArgumentParser()
    controller_options.add_arguments(parser)
    entries = controller_options.config(parser.parse_args(['--period', '0.002']))
    assert entries['gc_timeout_s'] == pytest.approx(0.006) and entries['flow_idle_s'] == pytest.approx(0.01)
    assert entries['sender_queue'] == 'fq'
    assert controller_options.config(parser.parse_args([]))['gc_timeout_s'] == 3.0


def _poll(loop, now, sent):
    """One period's round at ``now``; ``sent`` {flow: bytes so far} of e0_0's entries."""
    loop.now = now
    gathered = {name: {} for name in loop.polled}
    gathered['e0_0'] = {flow: (count, count // 1500, now) for flow, count in sent.items()}
    loop.round(gathered)


def _first_placement_of_waiting(params, until_s=0.2):
    loop = ControllerLoop(TOPO, 'scheduler', dict(params, link_mbps=1000))
    scheduler = loop.strategy.scheduler
    sent = {FINISHED: 0, STAYING: 0}
    freed_uplink = None
    for n in range(1, int(round(until_s / PERIOD_S)) + 1):
        now = n * PERIOD_S
        if n == 2:  # FINISHED ends (its entry stays, its counter stops); WAITING starts
            freed_uplink = scheduler.placements[FINISHED].links[0]
            sent[WAITING] = 0
        for flow in sent:
            if flow != FINISHED or n < 2:
                sent[flow] += LINE_BYTES_PER_PERIOD
        _poll(loop, now, sent)
        if n == 2:
            assert WAITING not in scheduler.placements  # both uplinks are reserved
        if WAITING in scheduler.placements:
            return now, scheduler.placements[WAITING].links[0] == freed_uplink
    return None, False


def test_a_10ms_scheduler_frees_a_finished_flows_links_and_reuses_them():
    placed_at, on_freed_uplink = _first_placement_of_waiting({'period': PERIOD_S})
    # last reported at 10 ms, freed by the first round 30 ms (gc_timeout) later
    assert 0.04 - 1e-9 <= placed_at <= 0.05 + 1e-9 and on_freed_uplink
    assert _first_placement_of_waiting({'period': PERIOD_S, 'gc_timeout': 3.0}) == (None, False)
