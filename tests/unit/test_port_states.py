"""Port states to failed links and link conditions, with BFD's start-up
semantics (controller.openflow.port_states)."""
from controller.fattree.failover import link_key
from controller.openflow.port_states import PortStates
from topologies.fattree import FatTree


def k4():
    topo = FatTree(4)
    return topo, PortStates(topo, grace_s=30.0)


def test_host_ports_and_unreported_ports_are_not_failures():
    topo, ports = k4()
    host_port = topo.port_to('e0_0', 'h0_0_2')
    assert ports.update('e0_0', host_port, False, False, 0) is True  # recorded for the view and metrics
    assert ports.failed_links(0) == frozenset() and ports.waiting_for_first_live(0) == []
    host_link = next(l for l in topo.links if {l.node_a, l.node_b} == {'e0_0', 'h0_0_2'})
    assert ports.link_condition(host_link, 0) == 'coming_up'
    assert ports.link_condition(host_link, 30) == 'carrier_down'
    assert ports.reported() == {('e0_0', host_port): {'carrier': False, 'live': False}}


def test_bfd_not_up_yet_at_start_is_not_a_failure_until_the_grace_ends():
    topo, ports = k4()
    port = topo.port_to('a0_2', 'c1_1')
    ports.update('a0_2', port, True, False, now=100.0)  # carrier, BFD still coming up
    assert ports.failed_links(100.0) == frozenset()
    assert ports.waiting_for_first_live(129.0) == [('a0_2', port)]
    # never came up: a silent failure during start-up is avoided after the grace
    assert ports.failed_links(130.0) == {link_key('a0_2', 'c1_1')}
    assert ports.waiting_for_first_live(130.0) == []


def test_once_live_a_port_fails_as_soon_as_it_is_not_live():
    topo, ports = k4()
    port = topo.port_to('a0_2', 'c1_1')
    ports.update('a0_2', port, True, False, 0.0)
    ports.update('a0_2', port, True, True, 1.0)  # BFD up
    assert ports.failed_links(1.0) == frozenset() and ports.waiting_for_first_live(1.0) == []
    ports.update('a0_2', port, True, False, 2.0)  # BFD down: silent failure
    assert ports.failed_links(2.0) == {link_key('a0_2', 'c1_1')}
    ports.update('a0_2', port, True, True, 3.0)
    assert ports.failed_links(3.0) == frozenset()


def test_a_port_added_before_its_peer_is_up_is_coming_up_not_failed():
    topo, ports = k4()
    port = topo.port_to('c1_1', 'a2_2')
    ports.update('c1_1', port, False, False, 0.0)  # no carrier yet: the veth peer is being set up
    assert ports.failed_links(29.0) == frozenset()
    assert ports.waiting_for_first_live(29.0) == [('c1_1', port)]
    ports.update('c1_1', port, True, True, 29.0)
    assert ports.failed_links(31.0) == frozenset() and ports.waiting_for_first_live(31.0) == []


def test_a_port_that_never_gets_carrier_fails_when_the_grace_ends():
    topo, ports = k4()
    ports.update('c1_1', topo.port_to('c1_1', 'a2_2'), False, False, 0.0)
    assert ports.failed_links(30.0) == {link_key('c1_1', 'a2_2')}
    assert ports.waiting_for_first_live(30.0) == []


def test_the_grace_runs_from_when_both_ends_were_heard_of():
    topo, ports = k4()
    ports.update('a0_2', topo.port_to('a0_2', 'c1_1'), True, False, 0.0)
    ports.update('c1_1', topo.port_to('c1_1', 'a0_2'), True, False, 20.0)  # c1_1 connects later
    assert ports.failed_links(49.0) == frozenset()
    assert len(ports.waiting_for_first_live(49.0)) == 2
    assert ports.failed_links(50.0) == {link_key('a0_2', 'c1_1')}


def test_ports_are_judged_once_start_up_has_made_no_progress_for_the_grace():
    topo, ports = k4()
    stuck = topo.port_to('a0_2', 'c1_1')
    ports.update('a0_2', stuck, True, False, 0.0)
    # the rest of the fabric is still coming up: sessions go live at 25 s and 50 s
    for now, (switch, peer) in ((25.0, ('e0_0', 'a0_2')), (50.0, ('e0_1', 'a0_3'))):
        ports.update(switch, topo.port_to(switch, peer), True, True, now)
    assert ports.judgement_due() == 80.0
    assert ports.failed_links(79.0) == frozenset()
    assert ports.failed_links(80.0) == {link_key('a0_2', 'c1_1')}
    # judged for good: a switch coming up later does not revive it
    ports.update('c2_1', topo.port_to('c2_1', 'a3_3'), True, False, 90.0)
    assert ports.failed_links(91.0) == {link_key('a0_2', 'c1_1')}
    assert ports.waiting_for_first_live(91.0) == [('c2_1', topo.port_to('c2_1', 'a3_3'))]
    ports.update('a0_2', stuck, True, True, 95.0)  # it comes up after all
    assert ports.failed_links(95.0) == frozenset()


def test_carrier_lost_during_start_up_fails_at_once():
    topo, ports = k4()
    port = topo.port_to('c1_1', 'a2_2')
    ports.update('c1_1', port, True, False, 0.0)  # carrier, BFD still coming up
    ports.update('c1_1', port, False, False, 1.0)  # cut before BFD came up
    assert ports.failed_links(1.0) == {link_key('c1_1', 'a2_2')}
    assert ports.waiting_for_first_live(1.0) == []


def test_only_a_new_or_changed_port_state_asks_for_a_recompute():
    topo, ports = k4()
    port = topo.port_to('a0_2', 'c1_1')
    assert ports.update('a0_2', port, True, False, 0.0) is True  # first heard of
    assert ports.update('a0_2', port, True, False, 1.0) is False  # the same again (a port-description poll)
    assert ports.update('a0_2', port, True, True, 2.0) is True  # BFD up
    assert ports.update('a0_2', port, True, True, 3.0) is False
    assert ports.update('a0_2', port, False, False, 4.0) is True  # carrier lost
    assert ports.failed_links(4.0) == {link_key('a0_2', 'c1_1')}


def test_link_conditions_agree_with_the_failed_links_at_every_stage():
    topo, ports = k4()
    link = next(l for l in topo.switch_links() if {l.node_a, l.node_b} == {'a0_2', 'c1_1'})
    stages = []
    ports.update('a0_2', topo.port_to('a0_2', 'c1_1'), True, True, 0.0)
    stages.append(ports.link_condition(link, 0.0))  # the other end not reported yet
    ports.update('c1_1', topo.port_to('c1_1', 'a0_2'), True, False, 1.0)
    stages.append(ports.link_condition(link, 1.0))  # its BFD still coming up
    stages.append(ports.link_condition(link, 31.0))  # judged: never came up
    ports.update('c1_1', topo.port_to('c1_1', 'a0_2'), True, True, 32.0)
    stages.append(ports.link_condition(link, 32.0))
    ports.update('a0_2', topo.port_to('a0_2', 'c1_1'), False, False, 33.0)
    stages.append(ports.link_condition(link, 33.0))
    assert stages == ['up', 'coming_up', 'bfd_down', 'up', 'carrier_down']
    assert ports.failed_links(33.0) == {link_key('a0_2', 'c1_1')}


def test_a_controller_started_into_a_running_fabric_fails_old_ports_that_are_not_live_at_once():
    topo, ports = k4()
    silent, hard, fine = (topo.port_to('a0_2', 'c1_1'), topo.port_to('a0_2', 'e0_0'),
                          topo.port_to('a0_2', 'c1_2'))
    ports.update('a0_2', silent, True, False, now=500.0)   # BFD down, carrier up
    ports.update('a0_2', hard, False, False, now=500.0)    # carrier down
    ports.update('a0_2', fine, True, True, now=500.0)
    assert ports.failed_links(500.0) == frozenset()  # first heard of: coming up, as at a start
    # the switch says how long each port had been there: far longer than any start-up
    assert [ports.port_age('a0_2', port, 400.0) for port in (silent, hard, fine)] == [True, True, False]
    assert ports.port_age('a0_2', silent, 400.0) is False  # no news the second time
    assert ports.failed_links(500.0) == {link_key('a0_2', 'c1_1'), link_key('a0_2', 'e0_0')}
    assert ports.waiting_for_first_live(500.0) == []
    ports.update('a0_2', silent, True, True, now=501.0)  # repaired: up as usual
    assert ports.failed_links(501.0) == {link_key('a0_2', 'e0_0')}


def test_a_young_port_is_still_coming_up_whatever_its_age_says():
    topo, ports = k4()
    port = topo.port_to('a0_2', 'c1_1')
    ports.update('a0_2', port, True, False, now=100.0)
    assert ports.port_age('a0_2', port, 29.9) is False  # younger than the grace: start-up
    assert ports.failed_links(100.0) == frozenset()
    assert ports.waiting_for_first_live(100.0) == [('a0_2', port)]
