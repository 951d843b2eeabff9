"""The emulator's fidelity verdict: figures from per-second samples, and when a run counts."""
import os
import subprocess

from scripts.emulator import fidelity


def samples(idle, busy, drops=0, backlog=0):
    return [{'idle_pct': i, 'daemon_busy_pct': [b, 10.0], 'qdisc_drops': drops, 'qdisc_backlog': backlog}
            for i, b in zip(idle, busy)]


def test_figures_are_medians_and_extremes_of_the_seconds():
    figures = fidelity.figures(samples([40, 30, 20], [50, 70, 90], drops=2, backlog=7), [1.0, 3.0, 2.0], 0.5, 4)
    assert figures == {'seconds': 3, 'idle_pct_median': 30, 'idle_pct_min': 20,
                       'daemon_busy_pct_median': 70, 'daemon_busy_pct_max': 90,
                       'qdisc_drops': 6, 'qdisc_backlog_max': 7,
                       'probe_rtt_ms_median': 2.0, 'probe_rtt_ms_p99': 2.0, 'idle_rtt_ms': 0.5,
                       'daemon_socket_drops': 4, 'kernel_backlog_drops': None}


def test_a_run_with_headroom_and_a_full_reference_is_faithful_however_busy_the_daemon_reads():
    result = fidelity.verdict(fidelity.figures(samples([30, 35], [97, 98]), socket_drops=0), reference_pct=93.0)
    assert result['ok'] and 'limited_by' not in result and result['reference_pct_of_line'] == 93.0


def test_an_overloaded_run_is_not():
    """No idle CPU, packets the daemon did not read, a reference short of its line rate: each is named."""
    result = fidelity.verdict(fidelity.figures(samples([2, 3, 1], [99, 100, 98]), socket_drops=120),
                              reference_pct=61.0)
    assert not result['ok']
    assert result['limited_by'] == ['machine idle 2.0% < 10%',
                                    'ovs-vswitchd dropped 120 packets it did not read in time',
                                    'non-blocking reference 61.0% < 90% of line rate']


def test_each_condition_alone_fails_the_run():
    assert not fidelity.verdict(fidelity.figures(samples([5, 5], [50, 50])))['ok']
    assert not fidelity.verdict(fidelity.figures(samples([50, 50], [50, 50]), socket_drops=1))['ok']
    assert not fidelity.verdict(fidelity.figures(samples([50, 50], [50, 50])), reference_pct=89.9)['ok']
    assert fidelity.verdict(fidelity.figures(samples([50, 50], [50, 50]), backlog_drops=3))['limited_by'] == [
        'the kernel dropped 3 packets from a full input backlog']
    assert fidelity.verdict(fidelity.figures(samples([50, 50], [50, 50])), reference_pct=None)['ok']


def test_a_run_with_no_sampled_second_is_not_judged_faithful():
    assert fidelity.verdict(fidelity.figures([]))['limited_by'] == ['no second was sampled']


SS = ('p_raw 0 0 [0]:* * users:(("ovs-vswitchd",pid=16695,fd=40)) skmem:(r0,rb212992,t0,tb655360000,f0,w0,o0,bl0,d3)\n'
      'p_raw 0 0 *:e0_0-eth1 * users:(("ovs-vswitchd",pid=16695,fd=43)) skmem:(r0,rb212992,t0,tb212992,f0,w0,o176,bl0,d40)\n'
      'p_raw 0 0 *:eth0 * users:(("tcpdump",pid=1,fd=3)) skmem:(r0,rb212992,t0,tb212992,f0,w0,o0,bl0,d500)\n')


def test_the_daemons_socket_drops_are_summed_from_ss(monkeypatch):
    monkeypatch.setattr(fidelity.subprocess, 'run',
                        lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=SS, stderr=''))
    monkeypatch.setattr(fidelity, 'daemon_namespaces', lambda pids: pids)
    assert fidelity.daemon_socket_drops([16695]) == 43


def test_daemons_sharing_a_namespace_are_read_once():
    here = os.getpid()
    assert fidelity.daemon_namespaces([here, here, 2 ** 22 + 1]) == [here]  # the last: no such process


def test_a_cell_over_runs_counts_the_limited_and_names_what_limited_them():
    limited = {'ok': False, 'limited_by': ['machine idle 3.0% < 10%',
                                           'ovs-vswitchd dropped 40 packets it did not read in time']}
    dropped = {'ok': False, 'limited_by': ['ovs-vswitchd dropped 7 packets it did not read in time']}
    runs = [{'fidelity': {'ok': True}}, {'fidelity': limited}, {'fidelity': dropped}, {'failure': 'unreachable'}]
    assert fidelity.runs_verdict_cell(runs) == 'LIMITED 2/4 runs: machine idle; ovs-vswitchd dropped'
    assert fidelity.runs_verdict_cell(runs[:1]) == 'faithful'
    assert fidelity.runs_verdict_cell(runs[3:]) == 'not judged'
