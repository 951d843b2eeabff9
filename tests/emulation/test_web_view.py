"""The live web view in a real browser (Debian's headless chromium driven
by selenium through Debian's chromium-driver) against a running k=4
fat-tree: every switch and link is drawn, a failed link changes its drawn
state within 2 s without a reload and returns after recovery; bad requests
get a 4xx with a message and leave the controller running."""
import json
import os
import threading
import time
import urllib.error
import urllib.request

import pytest

from scripts import REPO_ROOT
from scripts.emulator import faults, traffic
from scripts.browser import headless_chromium
from scripts.emulator.fabric import Fabric
from tests.conftest import free_port
from topologies.fattree import FatTree
from topologies.renamed import renamed

pytestmark = pytest.mark.emulation

# Mininet names of its own (see test_fault_emulation.py); the controller and
# so the page keep the model's names.
PREFIX = 'wv'
SCREENSHOT = os.path.join(REPO_ROOT, 'results', 'web_view_k4.png')


@pytest.fixture(scope='module')
def k4(require_ovs):
    topo = renamed(FatTree(4), PREFIX)
    with Fabric(topo, 'controller.fattree.routing_app', {'k': 4}, ofp_port=free_port(),
                rest_port=free_port()) as fabric:
        yield topo, fabric, 'http://127.0.0.1:%d' % fabric.controller.rest_port


@pytest.fixture(scope='module')
def browser():
    with headless_chromium() as driver:
        yield driver


def drawn_state(browser, link_id):
    return browser.execute_script(
        'const line = document.getElementById("link-" + arguments[0]);'
        'return line ? line.dataset.state : null;', link_id)


def wait_for(predicate, timeout, what, step=0.05):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(step)
    return time.monotonic()


def test_page_draws_the_fabric_and_follows_a_failure(k4, browser):
    topo, fabric, url = k4
    browser.get(url + '/view')
    count = lambda selector: browser.execute_script(
        'return document.querySelectorAll(arguments[0]).length', selector)
    # the first draw waits for the controller's topology answer: slower in a busy suite
    wait_for(lambda: count('#fabric .switch') == 20, 30, 'switches not drawn')
    assert count('#fabric .link') == 48 and count('#fabric .host') == 16
    wait_for(lambda: count('#fabric .switch.connected') == 20, 30, 'switches not all connected')
    wait_for(lambda: count('#fabric .link[data-state="up"]') == 48, 10, 'links not all reported up')
    browser.execute_script('window.dcfabricNotReloaded = true')
    # load between pods 3 and 2, away from the link failed below, drawn from port counters
    reports = []
    load = threading.Thread(target=lambda: reports.append(traffic.iperf3(
        fabric.net, PREFIX + 'h3_1_3', PREFIX + 'h2_0_2', seconds=10)))
    load.start()
    try:
        widest = lambda: browser.execute_script(
            'return Math.max(...[...document.querySelectorAll("#fabric .link:not([id*=\'-h\'])")].map('
            'l => parseFloat(l.getAttribute("stroke-width"))))')
        wait_for(lambda: widest() > 3, 9, 'no load drawn on a switch-to-switch link')  # idle: 1.5
        # the list follows the same counter poll as the widths, one draw later at most
        wait_for(lambda: count('#busiest li') >= 3, 5, 'busiest links not listed')  # host link, edge up, core...
        fail_and_recover(topo, browser, count)
    finally:
        load.join()
    assert reports and traffic.received_mbps(reports[0]) > 1
    assert browser.execute_script('return window.dcfabricNotReloaded === true')


def fail_and_recover(topo, browser, count):
    faults.fail_link(topo, PREFIX + 'a0_2', PREFIX + 'c1_1')
    try:
        failed_at = time.monotonic()
        seen = wait_for(lambda: drawn_state(browser, 'a0_2-c1_1') != 'up', 5, 'failure never drawn')
        assert seen - failed_at < 2.0, 'failure drawn after %.2f s' % (seen - failed_at)
        assert drawn_state(browser, 'a0_2-c1_1') == 'carrier_down'
        wait_for(lambda: browser.execute_script(
            'return document.getElementById("link-a0_2-c1_1").classList.contains("avoided")'), 5,
            'failed link not shown as avoided by the broadcast')
        assert count('#fabric .link[data-state="up"]') == 47
        wait_for(lambda: 'a0_2 port 3 (to c1_1): carrier down' in browser.find_element('id', 'events').text,
                 5, 'failure not in the event log')
        os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
        browser.save_screenshot(SCREENSHOT)
    finally:
        faults.recover_link(topo, PREFIX + 'a0_2', PREFIX + 'c1_1')
    wait_for(lambda: drawn_state(browser, 'a0_2-c1_1') == 'up', 5, 'recovery never drawn')


def status_and_body(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.mark.parametrize('path, status, message', [
    ('/view/state?since=soon', 400, "since= must be an event sequence number (integer >= 0), got 'soon'"),
    ('/view/state?colour=red', 400, 'unknown parameter(s) colour; this path takes since'),
    ('/metrics?format=json', 400, 'unknown parameter(s) format; this path takes none'),
    ('/view/static/../rest.py', 404, None),
    ('/view/static/jquery.js', 404, "no static file 'jquery.js'; there are view.css, view.js"),
    ('/fattree/state?sections=nope', 400, 'unknown state section(s) nope'),
    ('/no/such/page', 404, 'The resource could not be found.'),
])
def test_bad_requests_get_4xx_and_the_controller_keeps_running(k4, path, status, message):
    _, fabric, url = k4
    code, body = status_and_body(url + path)
    assert code == status
    if message is not None:
        assert message in (json.loads(body)['error'] if body.startswith('{') else body)
    assert fabric.controller.process.poll() is None
    assert status_and_body(url + '/view/state')[0] == 200
