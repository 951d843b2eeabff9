"""DistDA in Mininet: the companion app's agents detect an elephant from
their own counters, exchange PortRequest/PortApprove as real UDP packets over
the static de Bruijn links, set the DA circuit, and the elephant's path (read
from the TTL) gets shorter; the controller's REST state reports the messages
and when the link was set and became usable. A separate module so that the central-scheduler
fabric of test_kevin_emulation is gone before this one starts."""
import time

import pytest

from scripts.emulator import traffic
from scripts.emulator.fabric import Fabric
from scripts.kevin.emulation_run import controller_state
from tests.conftest import free_port
from tests.emulation.test_kevin_emulation import circuits, path_tors
from topologies.kevin import Kevin

pytestmark = pytest.mark.emulation


def test_distda_sets_a_da_link_for_an_elephant_over_real_messages(require_ovs):
    kevin = Kevin(8, 2, 1)
    params = {'n': 8, 'k_s': 2, 'k_d': 1, 'period': 1, 'delta': 1, 'reservation': 30,
              'request_timeout': 1}
    with Fabric(kevin, 'controller.kevin.distda_app', params, ofp_port=free_port(),
                rest_port=free_port()) as fabric:
        traffic.wait_all_pairs(fabric.net, [h.name for h in kevin.hosts], progress=lambda m: None)
        assert path_tors(fabric.net, 'kvh011_0', 'kvh001_0') == 4
        started = time.monotonic()
        traffic.iperf3(fabric.net, 'kvh011_0', 'kvh001_0', seconds=4)
        deadline = time.time() + 5
        while circuits('kvd0').get('4') != '2' and time.time() < deadline:
            time.sleep(0.2)
        assert circuits('kvd0').get('4') == '2'
        time.sleep(params['delta'] + 0.5)
        assert path_tors(fabric.net, 'kvh011_0', 'kvh001_0') == 2
        log = fabric.controller.log_tail(200)
        assert 'received PortRequest(0) 1->3' in log and 'received PortApprove(0) 3->1' in log
        state = controller_state(fabric)
        # At unshaped rates the ACK stream 001 -> 011 is an elephant too, and may get its own link.
        distda = state['distda']
        assert distda['sent'] == distda['received'] and distda['sent']['PortApprove'] >= 1
        assert 3 in [x['source'] for x in distda['setups'] if x['destination'] == 1]
        assert {'spine': 0, 'source': '011', 'destination': '001'} in state['da_links']['usable']
        (link,) = [x for x in state['da_links']['history'] if x['source'] == '011']
        assert started < link['set_at'] < started + 5
        assert link['usable_at'] - link['set_at'] >= params['delta']
