"""A real Prometheus server (Debian's prometheus, on 127.0.0.1 with a
temporary configuration and data directory) scrapes the controller of a
running k=4 fat-tree; its HTTP API shows port_status and the failed-links
metric change when a link fails and return after recovery."""
import json
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

from scripts.emulator import faults
from scripts.emulator.controller_process import end_process
from scripts.emulator.fabric import Fabric
from tests.conftest import free_port
from topologies.fattree import FatTree
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

PREFIX = 'pm'  # Mininet names of its own (see test_fault_emulation.py)
PROMETHEUS = '/usr/bin/prometheus'
SCRAPE_CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: dcfabric
    static_configs:
      - targets: ['127.0.0.1:%d']
"""


@pytest.fixture(scope='module')
def k4(require_ovs):
    topo = renamed(FatTree(4), PREFIX)
    with Fabric(topo, 'controller.fattree.routing_app', {'k': 4}, ofp_port=free_port(),
                rest_port=free_port()) as fabric:
        yield topo, fabric


@pytest.fixture(scope='module')
def prometheus(k4):
    assert shutil.which(PROMETHEUS), 'prometheus missing: run scripts/setup.sh'
    _, fabric = k4
    port = free_port()
    with tempfile.TemporaryDirectory(prefix='dcfabric-prometheus-') as workdir:
        config = workdir + '/prometheus.yml'
        with open(config, 'w') as out:
            out.write(SCRAPE_CONFIG % fabric.controller.rest_port)
        with open(workdir + '/log', 'w') as log:
            process = subprocess.Popen(
                [PROMETHEUS, '--config.file=' + config, '--storage.tsdb.path=' + workdir + '/data',
                 '--web.listen-address=127.0.0.1:%d' % port], stdout=log, stderr=subprocess.STDOUT)
        try:
            api = 'http://127.0.0.1:%d' % port
            wait_until(lambda: ready(api), 30, 'prometheus not ready', lambda: open(workdir + '/log').read())
            yield api
        finally:
            end_process(process)


def ready(api):
    try:
        with urllib.request.urlopen(api + '/-/ready', timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def query(api, expression):
    """{labels as a sorted tuple: value} of an instant query."""
    with urllib.request.urlopen(api + '/api/v1/query?' + urllib.parse.urlencode({'query': expression}),
                                timeout=5) as reply:
        answer = json.load(reply)
    assert answer['status'] == 'success', answer
    return {tuple(sorted((k, v) for k, v in r['metric'].items() if k not in ('__name__', 'instance', 'job'))):
            float(r['value'][1]) for r in answer['data']['result']}


def wait_until(predicate, timeout, what, detail=lambda: ''):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, '%s\n%s' % (what, detail())
        time.sleep(0.25)


def failed_port_status(api):
    return query(api, 'port_status{dp_name="a0_2",port="3"} or port_status{dp_name="c1_1",port="1"}')


def test_prometheus_sees_a_link_fail_and_recover(k4, prometheus):
    topo, _ = k4
    api = prometheus
    wait_until(lambda: query(api, 'up{job="dcfabric"}') == {(): 1.0}, 30, 'target never scraped up')
    wait_until(lambda: len(query(api, 'dp_status == 1')) == 20, 30, 'not every switch connected')
    wait_until(lambda: len(query(api, 'port_status == 1')) == 80, 30, 'not every port reported up')
    assert query(api, 'dcfabric_failed_links') == {(): 0.0}
    a0_2 = (('dp_id', hex(FatTree(4).node('a0_2').dpid)), ('dp_name', 'a0_2'), ('port', '3'))
    assert failed_port_status(api)[a0_2] == 1.0
    flowmsgs = query(api, 'of_flowmsgs_sent_total')
    assert len(flowmsgs) == 20 and min(flowmsgs.values()) > 0
    broadcasts = query(api, 'dcfabric_recompute_secs_count')[()]

    faults.fail_link(topo, PREFIX + 'a0_2', PREFIX + 'c1_1')
    try:
        wait_until(lambda: set(failed_port_status(api).values()) == {0.0}
                   and query(api, 'dcfabric_failed_links') == {(): 1.0}, 15, 'failure not scraped')
        assert len(query(api, 'port_status == 1')) == 78
        wait_until(lambda: query(api, 'dcfabric_recompute_secs_count') == {(): broadcasts + 1}, 15,
                   'failure broadcast not in the recompute histogram')
    finally:
        faults.recover_link(topo, PREFIX + 'a0_2', PREFIX + 'c1_1')
    wait_until(lambda: set(failed_port_status(api).values()) == {1.0}
               and query(api, 'dcfabric_failed_links') == {(): 0.0}, 15, 'recovery not scraped')
    wait_until(lambda: query(api, 'dcfabric_recompute_secs_count') == {(): broadcasts + 2}, 5,
               'recovery broadcast not in the recompute histogram')
