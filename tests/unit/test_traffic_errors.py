"""A traffic tool that fails to run is an error naming the tool and its
message, not a result: fping, ping and iperf3 replaced by stub scripts on
PATH (or missing from it), run the way Mininet's host.popen runs them."""
import stat
import subprocess

import pytest

from scripts.emulator import traffic


class StubHost:
    """A Mininet host as traffic.py uses it: popen through an exec, as
    mnexec does, with PATH = the stubs' directory only."""

    def __init__(self, ip, path):
        self.ip, self.path = ip, path

    def IP(self):
        return self.ip

    def popen(self, cmd):
        return subprocess.Popen(['/bin/sh', '-c', 'exec "$0" "$@"'] + cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={'PATH': str(self.path)})


class StubNet:
    def __init__(self, path):
        self.hosts = {'h1': StubHost('10.0.0.1', path), 'h2': StubHost('10.0.0.2', path)}

    def get(self, name):
        return self.hosts[name]


@pytest.fixture
def stub(tmp_path):
    """stub(tool, script body) puts an executable ``tool`` on the stub PATH."""
    def make(tool, body):
        script = tmp_path / tool
        script.write_text('#!/bin/sh\n' + body + '\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    make.net = StubNet(tmp_path)
    return make


def test_missing_fping_is_an_error_not_unreachable_pairs(stub):
    with pytest.raises(traffic.ToolError, match=r'fping failed on h1: exit code 127: .*fping.*not found'):
        traffic.reachability(stub.net, ['h1', 'h2'])


def test_fping_refusing_its_options_is_an_error(stub):
    # fping exits 1 for a bad option, as it does when a target is unreachable
    stub('fping', "echo \"fping: invalid option -- 'z'\" >&2; exit 1")
    with pytest.raises(traffic.ToolError, match="fping failed on h1: fping: invalid option -- 'z'"):
        traffic.reachability(stub.net, ['h1', 'h2'])


def test_fping_unreachable_targets_are_results(stub):
    # both kinds of line fping -a writes to stderr about targets (duplicate
    # replies were seen in the Kevin emulations)
    stub('fping', 'echo "ICMP Host Unreachable from 10.0.0.9 for ICMP Echo sent to 10.0.0.2" >&2; '
                  'echo "10.0.0.1 : duplicate for [0], 64 bytes, 13.4 ms" >&2; '
                  'case "$*" in *10.0.0.1*) echo 10.0.0.1;; esac; exit 1')
    assert traffic.reachability(stub.net, ['h1', 'h2']) == {('h1', 'h2'): False, ('h2', 'h1'): True}


def test_iperf3_without_a_json_report_is_an_error(stub):
    stub('iperf3', 'case "$*" in *-s*) sleep 5;; *) echo "iperf3: unrecognized option --J" >&2; exit 1;; esac')
    with pytest.raises(traffic.ToolError, match='iperf3 failed on h1 -> h2: no JSON report: '
                                                'iperf3: unrecognized option --J'):
        traffic.iperf3(stub.net, 'h1', 'h2', seconds=1)


def test_iperf3_error_report_is_a_failed_transfer(stub):
    stub('iperf3', 'case "$*" in *-s*) sleep 5;; '
                   '*) echo \'{"error": "control socket has closed unexpectedly"}\'; exit 1;; esac')
    with pytest.raises(traffic.TransferError, match='h1 -> h2: control socket has closed'):
        traffic.iperf3_flows(stub.net, [('h1', 'h2')], seconds=1)


def test_iperf3_flows_return_every_report(stub):
    stub('iperf3', 'case "$*" in *-s*) sleep 5;; '
                   '*) echo \'{"end": {"sum_received": {"bits_per_second": 2e6}}}\';; esac')
    reports = traffic.iperf3_flows(stub.net, [('h1', 'h2'), ('h2', 'h1')], seconds=1)
    assert [traffic.received_mbps(r) for r in reports] == [2.0, 2.0]


def test_ping_error_is_an_error_and_no_reply_is_none(stub):
    stub('ping', 'echo "ping: invalid argument: \'-W2\'" >&2; exit 2')
    with pytest.raises(traffic.ToolError, match="ping failed on h1 -> h2: exit code 2: ping: invalid"):
        traffic.reply_ttl(stub.net, 'h1', 'h2')
    stub('ping', 'echo "1 packets transmitted, 0 received, 100% packet loss, time 0ms"; exit 1')
    assert traffic.reply_ttl(stub.net, 'h1', 'h2') is None
    with pytest.raises(RuntimeError, match='h1 cannot ping h2'):
        traffic.ping_ttl(stub.net, 'h1', 'h2')
    stub('ping', 'echo "64 bytes from 10.0.0.2: icmp_seq=1 ttl=61 time=0.1 ms"; '
                 'echo "1 packets transmitted, 1 received, 0% packet loss, time 0ms"')
    assert traffic.ping_ttl(stub.net, 'h1', 'h2') == 61


def test_missing_ping_is_an_error(stub):
    with pytest.raises(traffic.ToolError, match='ping failed on h1 -> h2: exit code 127'):
        traffic.reply_ttl(stub.net, 'h1', 'h2')


def test_a_tool_that_does_not_end_is_a_failed_transfer(stub):
    stub('ping', 'exec /bin/sleep 30')
    proc = traffic.start_ping(stub.net, 'h1', 'h2')
    with pytest.raises(traffic.TransferError, match='ping on h1 -> h2 did not finish within 1s'):
        traffic.ping_output('h1', 'h2', proc, 1)
    assert proc.returncode is not None  # killed, not left behind
