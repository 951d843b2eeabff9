"""The simulated hosts' TCP survives ns-3's duplicate-ACK count left over
from CWR (host_tcp.h, HostTcpSocket): DCTCP senders whose packets LetFlow
spreads over every path at a 2 us flowlet timeout (so they arrive out of
order, SACKed, while the ECN response holds the senders in CWR). With
ns-3's own sockets this run stops 1.06 ms in on NS_ASSERT "From
OPEN->DISORDER but with 4 dup ACKs", as the classifier on DCTCP at 70%
web-search load did at 10 Gbit/s."""
from scripts.sim import bisection_backend
from scripts.sim.scenario import SimFlow, SimSettings
from topologies.fattree import FatTree


def test_dctcp_through_reordering_paths_runs_to_its_end():
    topo = FatTree(4)
    hosts = [h.name for h in topo.hosts]
    flows = [SimFlow(hosts[i], hosts[(i + shift) % len(hosts)], 0.0, 0.005)
             for shift in (5, 9) for i in range(len(hosts))]
    result = bisection_backend.simulate(
        topo, 'letflow', flows,
        SimSettings(link_mbps=1000, stop_s=0.005, queue_packets=30, tcp='dctcp', ecn_threshold_packets=5,
                    min_rto_ms=1.0),
        progress=lambda line: None, scheme_params={'flowlet_timeout_us': 2.0})
    assert all(f['goodput_mbps'] > 0 for f in result['flows'])
