"""A small bisection run on the simulator (k=4, 1 Gbit/s, tens of
milliseconds): a flow alone on its path gets line rate, two flows that
two-level routing puts on one uplink share it."""
from scripts.sim import bisection_backend
from scripts.sim.scenario import DROP_TAIL, SimFlow, SimSettings
from topologies.fattree import FatTree


def test_alone_at_line_rate_and_sharing_an_uplink_halved():
    # Destination host ID 2 from both hosts of edge e0_0: two-level routing
    # sends both up the same port; h0_1_2 -> h3_0_3 shares no link with them.
    flows = [SimFlow('h0_0_2', 'h1_0_2', 0.0, 0.06), SimFlow('h0_0_3', 'h2_0_2', 0.0002, 0.06),
             SimFlow('h0_1_2', 'h3_0_3', 0.0001, 0.06)]
    result = bisection_backend.simulate(FatTree(4), 'twolevel', flows,
                                        SimSettings(link_mbps=1000, stop_s=0.06, measure_from_s=0.01),
                                        progress=lambda line: None)
    shared_a, shared_b, alone = (f['goodput_mbps'] for f in result['flows'])
    assert alone > 900
    assert 850 < shared_a + shared_b < 1000
    assert 300 < shared_a < 700 and 300 < shared_b < 700


def scheduled_pair(**config):
    """The record of one run of the scheduler with one flow, h0_0_2 to h1_0_2."""
    config = dict({'k': 4, 'queue': 50, 'min_rto_ms': 200.0, 'sender_queue': 'fq', 'seeds': [7], 'patterns': ['pair'], 'schemes': ['scheduler']}, **config)
    return bisection_backend.run_one(config, {'id': 'seed7/pair/scheduler', 'scheme': 'scheduler', 'pattern': 'pair',
                                              'rep': 0, 'seed': 7, 'flows': [['h0_0_2', 'h1_0_2']]},
                                     progress=lambda line: None)


def test_a_dynamic_scheme_runs_with_its_controller_and_delay():
    # 100 Mbit/s: a second of simulated time costs about a second. The scheduler's
    # first poll at 1 s; the run stops at 2 s, before its second.
    run = scheduled_pair(bw=100, omit=1, duration=1, control_delay_ms=2.0)
    assert run['simulation']['controller']['polls'] == 1
    assert run['simulation']['controller']['packet_ins'] == 2  # the connection's two directions at their edges
    assert 90 < run['aggregate_mbps'] <= 100


def test_the_dynamic_schemes_poll_at_the_configured_period():
    # 1 Gbit/s for 35 ms with a 10 ms period: polls at 10, 20 and 30 ms (the app's 1 s: none)
    run = scheduled_pair(bw=1000, omit=0.015, duration=0.02, period_s=0.01)
    assert run['simulation']['controller']['polls'] == 3
    assert 900 < run['aggregate_mbps'] <= 1000


def test_two_hosts_sending_to_each_other_at_10_mbit_s_carry_most_of_their_line_rate():
    # ns-3's drop-tail send queues (no longer the default). Each host's queue holds its own flow's data ahead of the other flow's ACKs: the RTT
    # grows by tens of ms. With Linux's 200 ms minimum RTO (the default) both flows carry
    # most of their line rate (9.2 and 7.5 Mbit/s); with 5 ms one times out again and
    # again (0.5 Mbit/s). Every loss is at the senders' own device queues (155 and 72
    # packets), none at a switch: ns-3's TCP fills them, where Linux's would hold back.
    flows = [SimFlow('h0_0_2', 'h2_0_2', 0.0, 4.0), SimFlow('h2_0_2', 'h0_0_2', 0.0005, 4.0)]

    def run(**settings):
        result = bisection_backend.simulate(
            FatTree(4), 'twolevel', flows,
            SimSettings(link_mbps=10, stop_s=4.0, measure_from_s=1.0, sender_queue=DROP_TAIL, **settings),
            progress=lambda line: None)
        return [f['goodput_mbps'] for f in result['flows']], bisection_backend.simulation_record(result)

    (linux_rto, linux_simulation), (short_rto, short_simulation) = run(), run(min_rto_ms=5.0)
    assert all(rate > 7.0 for rate in linux_rto)
    assert min(short_rto) < 2.0
    for simulation in (linux_simulation, short_simulation):
        assert simulation['queue_drops'] == 0 and simulation['host_queue_drops'] > 0


def test_a_linux_like_send_queue_loses_nothing_at_the_senders():
    # The same two hosts with fq send queues: nothing is lost at a sender, and both flows
    # carry 9.31 Mbit/s, the goodput of a 10 Mbit/s link at 1514-byte frames less ACKs in
    # the other direction (the emulator's reference carried 93.1-93.6% of line rate).
    flows = [SimFlow('h0_0_2', 'h2_0_2', 0.0, 4.0), SimFlow('h2_0_2', 'h0_0_2', 0.0005, 4.0)]
    result = bisection_backend.simulate(
        FatTree(4), 'twolevel', flows,
        SimSettings(link_mbps=10, stop_s=4.0, measure_from_s=1.0, sender_queue='fq'), progress=lambda line: None)
    assert all(9.0 < f['goodput_mbps'] < 9.6 for f in result['flows'])
    simulation = bisection_backend.simulation_record(result)
    assert simulation['queue_drops'] == 0 and simulation['host_queue_drops'] == 0
