"""What a fat-tree promises while its controller is away: the switches hold
every route and answer ARP themselves, so a fresh fabric (no host has an
ARP entry yet) reaches every pair with the controller stopped; and TCP
flows keep their rate while the controller is killed and started again
(it reconnects to every switch and rewrites its tables)."""
import statistics
import threading
import time

import pytest

from controller.fattree import APP, READY_PATH
from scripts.emulator import traffic
from scripts.emulator.bfd import policy as bfd_policy
from scripts.emulator.fabric import Fabric
from tests.conftest import free_port
from topologies.fattree import FatTree
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

PREFIX = 'co'


def fabric(bw=None):
    model = FatTree(4)
    return Fabric(renamed(model, PREFIX), APP, {'k': 4}, ofp_port=free_port(), rest_port=free_port(), bw=bw,
                  bfd_ms=bfd_policy.interval_for(len(model.switch_links())), ready_path=READY_PATH)


def test_a_fresh_fabric_reaches_every_pair_with_the_controller_down(require_ovs):
    with fabric() as running:
        hosts = [h.name for h in running.model.hosts]
        assert all('lladdr' not in running.net.get(h).cmd('ip -4 neigh show') for h in hosts)
        running.controller.stop()
        assert running.controller.process.poll() is not None
        results = traffic.reachability(running.net, hosts)
        assert len(results) == 16 * 15 and all(results.values()), \
            [pair for pair, ok in results.items() if not ok][:5]


def test_tcp_flows_keep_their_rate_through_a_controller_restart(require_ovs):
    seconds, restart_at = 16, 5
    bw = 5  # Mbit/s: the faithful rate (docs/emulator.md)
    pairs = [(PREFIX + 'h0_0_2', PREFIX + 'h2_1_3'), (PREFIX + 'h1_1_2', PREFIX + 'h3_0_2')]
    with fabric(bw=bw) as running:
        traffic.wait_all_pairs(running.net, [h.name for h in running.model.hosts], progress=lambda m: None)
        restarted = {}

        def restart():
            time.sleep(restart_at)
            restarted['at'] = time.time()
            running.controller.stop()
            running.controller.start()
            restarted['ready'] = running.controller.wait_ready(60)
            restarted['took'] = time.time() - restarted['at']

        worker = threading.Thread(target=restart)
        worker.start()
        reports = traffic.iperf3_flows(running.net, pairs, seconds)
        worker.join()
    assert restarted['ready']['ready'] and restarted['ready']['programmed'] == 20, restarted
    assert restarted['took'] < seconds - restart_at - 3, restarted  # the flows outlived it
    for (client, server), report in zip(pairs, reports):
        rates = [interval['sum']['bits_per_second'] / 1e6 for interval in report['intervals']]
        before = statistics.median(rates[1:restart_at])
        after = rates[restart_at:]
        # each second after the restart keeps most of the rate before it
        assert before > 0.8 * bw / 2 and min(after) > 0.7 * before, (client, server, before, rates)
