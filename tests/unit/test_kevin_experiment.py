"""Kevin's CLI and the emulated experiment's pure parts: the seed's Figure 4
table through `dcfabric kevin tables`, clear errors before anything starts,
the hot-spot elephant choice, and reading a DA link's readiness from the
controller's state."""
import pytest

from controller.kevin.routing import KevinRouting
from scripts.cli import main
from scripts.kevin import experiments_cli as experiment
from scripts.kevin.emulation_stats import da_ready_s, ping_summary
from scripts.kevin.workload import mice_pairs, pick_elephants
from topologies.kevin import Kevin


def test_kevin_tables_show_the_seed_figure_4_table(capsys):
    main(['kevin', 'tables', '--tor', '011', '--da', '011:100'])
    out = capsys.readouterr().out
    assert '00* -> 2' in out and '0** -> 0,2' in out
    assert '6 routing entries; bound (ports x d) 3 x 3 = 9' in out


@pytest.mark.parametrize('args, message', [
    (['cli', '--n', '10'], 'must be a power of k_s=2'),
    (['cli', '--scheduler', 'greedy', '--k-d', '0'], 'no DA spines to schedule'),
    (['cli', '--scheduler', 'distda', '--delta', '-1'], 'delta must be a number >= 0'),
    (['cli', '--scheduler', 'bfs', '--period', '0'], 'period must be > 0'),
    (['tables', '--da', '011:100:1'], 'DA spines 0..0, not 1'),
    (['tables', '--tor', '012'], 'not a ToR address')])
def test_bad_kevin_parameters_fail_before_anything_starts(args, message):
    with pytest.raises(SystemExit, match=message):
        main(['kevin'] + args)


def test_elephants_share_one_static_link_and_no_ports():
    kevin = Kevin(8, 2, 1)
    elephants = pick_elephants(kevin, 3)
    assert len(elephants) == 3
    assert len({s for s, _ in elephants}) == 3 and len({t for _, t in elephants}) == 3
    routing = KevinRouting(kevin)
    links = [set(zip(routing.path(s, t), routing.path(s, t)[1:])) for s, t in elephants]
    assert set.intersection(*links)
    assert all(routing.hops(s, t) == kevin.d for s, t in elephants)


def test_da_ready_is_the_last_da_link_on_the_final_path():
    kevin = Kevin(8, 2, 1)
    state = {'da_links': {
        'usable': [{'spine': 0, 'source': '011', 'destination': '100'}],
        'history': [{'spine': 0, 'source': '011', 'destination': '100', 'set_at': 5.0,
                     'usable_at': 6.0, 'cleared_at': 7.0},
                    {'spine': 0, 'source': '011', 'destination': '100', 'set_at': 8.0,
                     'usable_at': 9.5, 'cleared_at': None}]}}
    # 011 -> 100 -> 001 (seed, Figure 4): the newest record of the link counts
    assert da_ready_s(kevin, state, ((0, 1, 1), (0, 0, 1)), 2.0) == (3, 7.5)
    assert da_ready_s(kevin, state, ((0, 0, 0), (1, 1, 1)), 2.0) == (4, None)


def test_ping_summary_with_and_without_replies():
    assert ping_summary('20 packets transmitted, 19 received, 5% packet loss, time 3800ms\n'
                        'rtt min/avg/max/mdev = 0.1/2.5/9.0/1.0 ms') == {
        'sent': 20, 'received': 19, 'rtt_avg_ms': 2.5, 'rtt_max_ms': 9.0}
    assert ping_summary('5 packets transmitted, 0 received, 100% packet loss')['rtt_avg_ms'] is None


def test_each_seed_draws_its_own_mice_and_repeats_them():
    kevin = Kevin(8, 2, 1)
    assert mice_pairs(kevin, 8, 1) == mice_pairs(kevin, 8, 1) != mice_pairs(kevin, 8, 2)
    assert len(set(mice_pairs(kevin, 8, 1))) == 8


def test_model_experiment_records_its_seeds(tmp_path):
    import json
    experiment.main(['model', '--n', '64', '--loads', '0.2', '--seeds', '4', '7', '--out', str(tmp_path)])
    saved = json.loads((tmp_path / 'model_path_length.json').read_text())
    assert saved['seeds'] == [4, 7] and sorted({r['seed'] for r in saved['runs']}) == [4, 7]
    assert (tmp_path / 'model_path_length.csv').read_text().splitlines()[1].startswith('4 7,64,0.2,')


def test_emulation_refuses_seeds_beside_a_base_before_anything_starts():
    with pytest.raises(SystemExit):
        experiment.main(['emulation', '--seeds', '1', '--seed-base', '2'])


def test_report_prints_the_markdown_table_of_a_finished_run(tmp_path, capsys):
    import json
    from scripts.kevin.emulation_stats import summarise
    cpu = {'cpu_busy_pct': 50.0, 'ovs_vswitchd_cpu_pct': 20.0, 'loadavg_1m': 1.5, 'ovs_bridges': 11}
    mice = [{'sent': 100, 'received': 99, 'rtt_avg_ms': 40.0}]
    faithful, limited = {'ok': True}, {'ok': False, 'limited_by': ['machine idle 2.0% < 10%']}

    def run(scheme, seed, mbps, da_ready_s, fidelity=faithful):
        elephants = [{'tors_before': 4, 'tors_after': 2 if da_ready_s else 4, 'da_ready_s': da_ready_s,
                      'mbps': m, 'mbps_second_half': m + 1} for m in mbps]
        return {'scheme': scheme, 'seed': seed, 'elephants': elephants, 'mice': mice, 'cpu': cpu,
                'fidelity': fidelity}
    runs = [run('none', 1, [3.0, 3.0, 3.0], None, limited), run('bfs', 1, [8.0, 7.0, 6.0], 3.0),
            run('bfs', 2, [6.0, 6.0, 6.0], 4.0), run('bfs', 3, [1.0, 1.0, 1.0], 9.0, limited)]
    path = tmp_path / 'emulation.json'
    path.write_text(json.dumps({'summary': [summarise(runs, 'none'), summarise(runs, 'bfs')]}))
    experiment.main(['report', str(path)])
    header, rule, none, bfs = capsys.readouterr().out.strip().split('\n')
    assert header.count('|') == rule.count('|') == none.count('|') == bfs.count('|') == 11
    # its only run limited: shown, and marked as such
    assert none == ('| none (static de Bruijn) | 1 (1) | 4 -> 4 | - | 9.0 / 12.0 | 9.0 | 3.0 | 40 / 1.0 | 1.5, 50 '
                    '| LIMITED 1/1 runs: machine idle |')
    # seed 3's limited run is left out of the means
    assert bfs == ('| BFS-DA-links | 2 (1 2) | 4 -> 2 | 3.5 / 4.0 | 19.5 / 22.5 | 21.0, 18.0 | 6.0 | 40 / 1.0 '
                   '| 1.5, 50 | LIMITED 1/3 runs: machine idle |')


def test_a_row_of_runs_without_verdicts_is_not_judged():
    from scripts.kevin.emulation_stats import summarise
    from scripts.kevin.report import markdown_emulation
    run = {'scheme': 'none', 'seed': 1, 'mice': [], 'cpu': {'cpu_busy_pct': 1.0, 'ovs_vswitchd_cpu_pct': 1.0,
                                                          'loadavg_1m': 0.1},
           'elephants': [{'tors_before': 4, 'tors_after': 4, 'da_ready_s': None, 'mbps': 1.0,
                          'mbps_second_half': 1.0}]}
    row = summarise([run], 'none')
    assert row['emulator'] == 'not judged'
    assert markdown_emulation([row]).endswith('| not judged |')
