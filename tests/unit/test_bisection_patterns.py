"""Traffic patterns of the bisection experiment, the experiment's summary
arithmetic and its argument checking."""
import argparse
import statistics
from collections import Counter

import pytest

from controller.fattree.twolevel import all_tables
from topologies.walk import walk
from scripts.experiments import bisection, bisection_report, patterns
from scripts.experiments.fair_share import two_level_fair_share
from scripts.argtypes import seeds_of
from scripts.experiments.patterns import PAPER_PATTERNS, PatternError, flows, label, seeded
from scripts.runner.records import RESULTS_SCHEMA
from topologies.fattree import FatTree

TOPO = FatTree(4)
HOSTS = [h.name for h in TOPO.hosts]


def where(host):
    pod, z, host_id = TOPO.node(host).coords
    return pod, z, host_id


@pytest.mark.parametrize('name', PAPER_PATTERNS)
def test_every_pattern_is_a_permutation_without_fixed_points(name):
    pairs = seeded(name, TOPO, 3)
    assert [s for s, _ in pairs] == HOSTS
    assert sorted(d for _, d in pairs) == sorted(HOSTS)
    assert all(s != d for s, d in pairs)
    assert seeded(name, TOPO, 3) == pairs  # a seed reproduces it


def test_stride_is_exact():
    assert seeded('stride-1', TOPO, 0)[:3] == [('h0_0_2', 'h0_0_3'), ('h0_0_3', 'h0_1_2'),
                                               ('h0_1_2', 'h0_1_3')]
    assert seeded('stride-8', TOPO, 0)[15] == ('h3_1_3', 'h1_1_3')


def test_staggered_categories():
    assert all(where(s)[:2] == where(d)[:2] for s, d in seeded('staggered-1.0-0.0', TOPO, 1))
    assert all(where(s)[0] != where(d)[0] for s, d in seeded('staggered-0.0-0.0', TOPO, 1))
    assert all(where(s)[0] == where(d)[0] and where(s)[1] != where(d)[1]
               for s, d in seeded('staggered-0.0-1.0', TOPO, 1))
    # (0.5, 0.3) over many seeds: about half stay under their lower switch
    same_edge = sum(where(s)[:2] == where(d)[:2]
                    for seed in range(50) for s, d in seeded('staggered-0.5-0.3', TOPO, seed))
    assert 0.4 < same_edge / (50 * 16) < 0.6


def two_level_link_use(pairs):
    tables = all_tables(TOPO)
    use = Counter()
    for s, d in pairs:
        for switch, port in walk(TOPO, lambda sw, _, dst: tables[sw].lookup(dst), s, d):
            use[(switch, TOPO.peer(switch, port)[0])] += 1
    return use


def test_interpod_incoming_collides_on_core_links_under_two_level_routing():
    pairs = seeded('interpod-incoming', TOPO, 5)
    assert all(where(s)[0] != where(d)[0] for s, d in pairs)
    use = two_level_link_use(pairs)
    into_pods = {link: n for link, n in use.items() if link[0].startswith('c')}
    assert into_pods and all(n == 2 for n in into_pods.values())


def test_sameid_outgoing_shares_lower_switch_uplinks_under_two_level_routing():
    pairs = seeded('sameid-outgoing', TOPO, 2)
    by_edge = {}
    for s, d in pairs:
        assert where(s)[0] != where(d)[0]
        by_edge.setdefault(where(s)[:2], set()).add(where(d)[2])
    assert all(len(ids) == 1 for ids in by_edge.values())
    use = two_level_link_use(pairs)
    assert all(use[('e%d_%d' % edge, 'a%d_%d' % (edge[0], 2 + (min(ids) - 2 + edge[1]) % 2))] == 2
               for edge, ids in by_edge.items())


@pytest.mark.parametrize('name', ['random', 'staggered-0.2-0.3', 'staggered-1.0-0.0', 'staggered-0.0-1.0',
                                  'interpod-incoming', 'sameid-outgoing'])
def test_large_fabrics_draw_candidates_lazily_under_the_same_constraints(name, monkeypatch):
    """Beyond patterns.LISTED_HOSTS the candidates come from shared lists,
    drawn as needed: still a permutation without fixed points, each source's
    constraint kept, and a seed reproduces it."""
    monkeypatch.setattr(patterns, 'LISTED_HOSTS', 0)
    topo = FatTree(8)
    pairs = seeded(name, topo, 7)
    hosts = [h.name for h in topo.hosts]
    assert [s for s, _ in pairs] == hosts and sorted(d for _, d in pairs) == sorted(hosts)
    assert all(s != d for s, d in pairs) and seeded(name, topo, 7) == pairs
    at = {h: topo.node(h).coords for h in hosts}
    if name == 'staggered-1.0-0.0':
        assert all(at[s][:2] == at[d][:2] for s, d in pairs)
    if name == 'staggered-0.0-1.0':
        assert all(at[s][0] == at[d][0] and at[s][1] != at[d][1] for s, d in pairs)
    if name == 'interpod-incoming':
        assert all(at[s][0] != at[d][0] and (at[s][1] + at[d][2] - 2) % topo.half == 0 for s, d in pairs)
    if name == 'sameid-outgoing':
        assert all(at[s][0] != at[d][0] for s, d in pairs)
        assert all(len({at[d][2] for s, d in pairs if at[s][:2] == edge}) == 1 for edge in {at[h][:2] for h in hosts})


def test_a_long_augmenting_path_needs_no_recursion():
    # k=16's random seed 2 ran past Python's recursion limit when paths were searched recursively
    pairs = seeded('random', FatTree(16), 2)
    assert len({d for _, d in pairs}) == 1024 and all(s != d for s, d in pairs)


def test_labels_and_bad_patterns():
    assert [label(p) for p in ('random', 'stride-4', 'staggered-0.5-0.3', 'sameid-outgoing')] == [
        'Random', 'Stride(4)', 'Staggered Prob (0.5, 0.3)', 'Same-ID Outgoing']
    with pytest.raises(PatternError, match='unknown traffic pattern'):
        flows('bogus', TOPO, None)
    with pytest.raises(PatternError, match='multiple of 16'):
        flows('stride-16', TOPO, None)
    with pytest.raises(PatternError, match='at most 1'):
        flows('staggered-0.8-0.3', TOPO, None)


def test_summary_is_relative_to_the_nonblocking_run_of_the_same_flows():
    config = {'backend': 'emulator', 'k': 4, 'seeds': [1, 2], 'hosts': 16, 'bw': 2.0,
              'schemes': ['nonblocking', 'twolevel'], 'patterns': ['random']}
    cpu = {'cpu_busy_pct': 50.0, 'ovs_vswitchd_cpu_pct': 20.0}
    runs = [dict(scheme='nonblocking', pattern='random', rep=0, aggregate_mbps=30.0, **cpu),
            dict(scheme='nonblocking', pattern='random', rep=1, aggregate_mbps=20.0, **cpu),
            dict(scheme='twolevel', pattern='random', rep=0, aggregate_mbps=24.0, **cpu),
            dict(scheme='twolevel', pattern='random', rep=1, aggregate_mbps=18.0, **cpu)]
    row = bisection_report.summarize(runs, config)[('random', 'twolevel')]
    assert row['pct_of_nonblocking'] == pytest.approx(85.0)  # mean of 80% and 90%
    assert row['pct_of_nonblocking_std'] == pytest.approx(7.0710678)
    assert row['pct_of_line_rate'] == pytest.approx(100 * 21 / 32)
    assert row['seeds'] == '1 2'
    assert row['twolevel_fair_share_pct'] == pytest.approx(statistics.mean(
        two_level_fair_share(TOPO, seeded('random', TOPO, seed)) for seed in (1, 2)))
    table = bisection_report.format_table(bisection_report.summarize(runs, config), config)
    assert 'Random' in table and '85.0 +-  7.1' in table and '[75.0 / 76.3 / 93.5]' in table
    assert '78.1 line' in table  # the non-blocking switch against hosts x link rate
    assert '2 repetition(s), seed(s) 1 2' in table


def test_the_model_column_reads_the_pairs_a_run_recorded():
    """A run's own flows give the model its pairs (drawing a k=48 pattern
    again takes minutes); a record without them has them drawn from the seed."""
    config = {'backend': 'flow', 'k': 4, 'seeds': [1], 'hosts': 16, 'bw': 1000.0,
              'schemes': ['nonblocking'], 'patterns': ['random']}
    recorded = [{'src': s, 'dst': d, 'mbps': 1000.0} for s, d in seeded('stride-8', TOPO, 1)]
    run = dict(scheme='nonblocking', pattern='random', rep=0, aggregate_mbps=16000.0)
    with_pairs = bisection_report.summarize([dict(run, flows=recorded)], config)[('random', 'nonblocking')]
    assert with_pairs['twolevel_fair_share_pct'] == 100.0  # stride-8's pairs, not random's
    drawn = bisection_report.summarize([dict(run, flows=[])], config)[('random', 'nonblocking')]
    assert drawn['twolevel_fair_share_pct'] == pytest.approx(two_level_fair_share(TOPO, seeded('random', TOPO, 1)))


def test_two_level_fair_share_model():
    # no shared link: every flow at link rate
    assert two_level_fair_share(TOPO, seeded('stride-8', TOPO, 1)) == 100.0
    # every lower switch's two flows share one uplink
    assert two_level_fair_share(TOPO, seeded('sameid-outgoing', TOPO, 1)) == 50.0
    # one collision: two flows on e0_0's uplink to a0_2 get half each, the rest are alone
    pairs = [('h0_0_2', 'h1_0_2'), ('h0_0_3', 'h2_1_2'), ('h1_1_2', 'h3_1_3')]
    assert two_level_fair_share(TOPO, pairs) == pytest.approx(100 * 2 / 3)


@pytest.mark.parametrize('argv, message', [
    (['--k', '5'], 'even'), (['--duration', '0'], 'must be positive, got 0'), (['--omit', '-1'], 'zero or more'),
    (['--duration', 'x'], 'not a number'), (['--bw', '-2'], 'must be positive, got -2'),
    (['--schemes', 'bogus'], 'invalid choice'), (['--reps', '-1'], 'must be >= 1')])
def test_bad_arguments_are_refused(argv, message, capsys):
    parser = argparse.ArgumentParser()
    bisection.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(argv)
    assert message in capsys.readouterr().err


def test_unknown_pattern_fails_before_any_emulation():
    with pytest.raises(SystemExit, match='unknown traffic pattern'):
        bisection.main(['--patterns', 'random', 'nope', '--out', '/nonexistent'])


@pytest.mark.parametrize('argv, seeds', [
    ([], [1, 2, 3]), (['--seeds', '23', '29'], [23, 29]), (['--reps', '2', '--seed-base', '7'], [7, 8]),
    (['--seed-base', '4'], [4, 5, 6])])
def test_seeds_are_a_list_or_counted_from_a_base(argv, seeds):
    parser = argparse.ArgumentParser()
    bisection.add_arguments(parser)
    assert seeds_of(parser.parse_args(argv)) == seeds


@pytest.mark.parametrize('argv, message', [
    (['--seeds', '1', '--reps', '2'], 'either --seeds or --reps/--seed-base'),
    (['--seeds', '3', '3'], 'repeats a seed: 3 3'),
    (['--min-rto', '5'], r"--min-rto is the simulator's \(--backend sim\)"),
    (['--backend', 'sim', '--min-rto', '0'], 'must be positive, got 0'),
    (['--duration', '0.5'], "the emulator's iperf3 runs whole seconds"),
    (['--period', '0.01'], r"--period is the simulator's \(--backend sim\)"),
    (['--control-delay', '2'], r"--control-delay is the simulator's \(--backend sim\)"),
    (['--flowlet-timeout', '50'], r"--flowlet-timeout is the simulator's \(--backend sim\)"),
    (['--sender-queue', 'fq'], r"--sender-queue is the simulator's \(--backend sim\)"),
    (['--backend', 'sim', '--control-delay', '-1'], 'must not be negative, got -1'),
    (['--backend', 'sim', '--ovs-instances', '2'], r'the sim backend has none'),
    (['--backend', 'sim', '--flowlet-timeout', '50'], '--schemes has no letflow')])
def test_ambiguous_seeds_are_refused_before_any_emulation(argv, message):
    with pytest.raises(SystemExit, match=message):
        bisection.main(argv + ['--out', '/nonexistent'])


def test_plot_labels_the_paper_marks_and_names_the_seeds(tmp_path, monkeypatch):
    config = {'backend': 'emulator', 'k': 4, 'seeds': [23, 29], 'hosts': 16, 'bw': 2.0, 'duration': 15,
              'schemes': ['nonblocking', 'twolevel', 'scheduler'], 'patterns': ['random', 'stride-4']}
    cpu = {'cpu_busy_pct': 50.0, 'ovs_vswitchd_cpu_pct': 20.0}
    runs = [dict(scheme=s, pattern=p, rep=r, aggregate_mbps=30.0, **cpu)
            for s in config['schemes'] for p in config['patterns'] for r in (0, 1)]
    import matplotlib.figure
    saved = []
    monkeypatch.setattr(matplotlib.figure.Figure, 'savefig', lambda fig, *a, **k: saved.append(fig))
    bisection_report.plot(str(tmp_path / 'b.png'), bisection_report.summarize(runs, config), config)
    (ax,) = saved[0].axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(labels) == ['paper: Al-Fares et al. Table 2 (on its scheme\'s bar)', 'scheduler', 'twolevel']
    assert '2 repetition(s), seed(s) 23 29' in ax.get_title()


def test_a_runs_controller_decisions_are_the_scheme_lines_of_its_log(tmp_path):
    from scripts.emulator.bisection_backend import logged_decisions
    log = tmp_path / 'controller.log'
    log.write_text('fat-tree routing scheme: classifier\n'
                   'installed 24 rules on e0_0 (dpid 0x10a000001)\n'
                   'classifier: a1_3 10.1.0.2->10.2.0.3 tcp/5201 port 2 -> 3\n'
                   'scheduler: 10.0.0.2->10.1.0.2 tcp/5201 released\n'
                   'scheme round failed: classifier: not a decision\n')
    assert logged_decisions(str(log)) == ['classifier: a1_3 10.1.0.2->10.2.0.3 tcp/5201 port 2 -> 3',
                                          'scheduler: 10.0.0.2->10.1.0.2 tcp/5201 released']


def write_finished_run(path, seeds, patterns, rates, **settings):
    """A finished bisection run directory: every scheme of every pattern and
    seed at ``rates[scheme]`` Mbit/s (the non-blocking switch at 32)."""
    import json
    config = dict({'experiment': 'bisection', 'backend': 'emulator', 'k': 4, 'bw': 2.0, 'queue': 50, 'duration': 10,
                   'omit': 3, 'hosts': 16,
                   'schemes': ['nonblocking', 'twolevel', 'classifier']}, seeds=seeds, patterns=patterns, **settings)
    measured = {'cpu_busy_pct': 50.0, 'cpu_nice_pct': 0.0, 'ovs_vswitchd_cpu_pct': 20.0, 'loadavg_1m': 1.0,
                'ovs_bridges': 20, 'flows': []}
    runs = [dict(scheme=s, pattern=p, rep=rep, aggregate_mbps=32.0 if s == 'nonblocking' else rates[s][rep],
                 **measured)
            for rep in range(len(seeds)) for p in patterns for s in config['schemes']]
    path.mkdir()
    (path / 'results.json').write_text(json.dumps({'schema': RESULTS_SCHEMA, 'config': config, 'runs': runs}))
    return str(path)


def test_summarize_unites_the_seeds_of_several_runs_into_a_new_directory(tmp_path, capsys):
    import json
    one = write_finished_run(tmp_path / 'one', [1], ['stride-4'], {'twolevel': [32.0], 'classifier': [24.0]})
    rest = write_finished_run(tmp_path / 'rest', [2, 3], ['stride-4', 'random'],
                              {'twolevel': [16.0, 32.0], 'classifier': [32.0, 32.0]})
    out = tmp_path / 'out'
    bisection.main(['--summarize', one, rest, '--out', str(out)])
    (merged,) = out.iterdir()
    saved = json.loads((merged / 'results.json').read_text())
    assert saved['config']['seeds'] == [1, 2, 3] and saved['config']['patterns'] == ['stride-4', 'random']
    assert [(r['run'], r['seeds']) for r in saved['config']['summarized_from']] == [(one, [1]), (rest, [2, 3])]
    rows = {(r['pattern'], r['scheme']): r for r in saved['summary']}
    # stride-4: two-level 100, 50, 100 and classifier 75, 100, 100 over seeds 1 2 3; random only seeds 2 3
    assert (rows[('stride-4', 'twolevel')]['seeds'], rows[('random', 'twolevel')]['seeds']) == ('1 2 3', '2 3')
    assert rows[('stride-4', 'twolevel')]['pct_of_nonblocking'] == pytest.approx(250 / 3)
    assert rows[('random', 'twolevel')]['pct_of_nonblocking'] == 75.0
    # random's model is over the seeds it ran with only
    assert rows[('random', 'twolevel')]['twolevel_fair_share_pct'] == pytest.approx(statistics.mean(
        two_level_fair_share(TOPO, seeded('random', TOPO, seed)) for seed in (2, 3)))
    table = (merged / 'summary.md').read_text().splitlines()
    assert 'n = 3 seed(s) (1 2 3)' in table[0] and '10 s flows after 3 s left out' in table[0]
    assert table[1] == ('The machine during the 15 runs (each run\'s sample, `results.json`): load average (1 min) '
                        '1.0-1.0, CPU busy 50.0-50.0%, ovs-vswitchd 20.0-20.0% of a core.')
    assert table[2].startswith('Emulator: "faithful" when every run')
    assert table[4] == ('| pattern | twolevel | classifier | 2L fair | paper | non-blocking, % of line rate '
                        '| emulator |')
    assert table[6] == ('| Stride(4) | 83.3 +- 28.9 | 91.7 +- 14.4 | 100.0 | 100.0 / 100.0 / 100.0 | 100.0 '
                        '| not judged |')
    assert table[7].startswith('| Random | 75.0 +- 35.4 (n=2) | 100.0 +- 0.0 (n=2) |')
    assert table[7].endswith('| 75.0 / 76.3 / 93.5 | 100.0 | not judged |')
    assert 'results in %s' % merged in capsys.readouterr().out


def test_summarize_of_one_run_rewrites_it_in_place(tmp_path):
    one = write_finished_run(tmp_path / 'one', [5], ['stride-2'], {'twolevel': [32.0], 'classifier': [16.0]})
    bisection.main(['--summarize', one, '--out', str(tmp_path / 'out')])
    assert not (tmp_path / 'out').exists()
    assert '| Stride(2) | 100.0 | 50.0 | 100.0 |' in (tmp_path / 'one' / 'summary.md').read_text()


@pytest.mark.parametrize('settings, seeds, message', [
    ({'omit': 5}, [2], r"rest ran with omit 5, .*one with 3: only runs with the same k, bw, queue"),
    ({'schemes': ['nonblocking', 'twolevel']}, [2], 'rest ran with schemes'),
    ({}, [2, 1], r'seed 1 was run in both .*one and .*rest')])
def test_summarize_refuses_runs_that_differ_or_repeat_a_seed(tmp_path, settings, seeds, message):
    one = write_finished_run(tmp_path / 'one', [1], ['stride-4'], {'twolevel': [32.0], 'classifier': [32.0]})
    rest = write_finished_run(tmp_path / 'rest', seeds, ['stride-4'],
                              {'twolevel': [32.0] * len(seeds), 'classifier': [32.0] * len(seeds)}, **settings)
    with pytest.raises(SystemExit, match=message):
        bisection.main(['--summarize', one, rest, '--out', str(tmp_path / 'out')])
    assert not (tmp_path / 'out').exists()


def test_simulated_runs_merge_only_with_the_same_hosts_and_controller_settings(tmp_path):
    import json
    sim = {'backend': 'sim', 'min_rto_ms': 10.0, 'control_delay_ms': 1.0, 'period_s': 0.01,
           'duration': 0.1, 'omit': 0.05, 'sender_queue': 'drop-tail'}
    one = write_finished_run(tmp_path / 'one', [1], ['stride-4'], {'twolevel': [32.0], 'classifier': [32.0]}, **sim)
    two = write_finished_run(tmp_path / 'two', [2], ['stride-4'], {'twolevel': [32.0], 'classifier': [32.0]}, **sim)
    other = write_finished_run(tmp_path / 'other', [3], ['stride-4'], {'twolevel': [32.0], 'classifier': [32.0]},
                               **dict(sim, min_rto_ms=200.0))
    with pytest.raises(SystemExit, match='other ran with min_rto_ms 200.0'):
        bisection.main(['--summarize', one, other, '--out', str(tmp_path / 'out')])
    fq = write_finished_run(tmp_path / 'fq', [3], ['stride-4'], {'twolevel': [32.0], 'classifier': [32.0]},
                            **dict(sim, sender_queue='fq'))
    with pytest.raises(SystemExit, match="fq ran with sender_queue 'fq', .*one with 'drop-tail'"):
        bisection.main(['--summarize', one, fq, '--out', str(tmp_path / 'out')])
    bisection.main(['--summarize', one, two, '--out', str(tmp_path / 'out')])
    (merged,) = (tmp_path / 'out').iterdir()
    config = json.loads((merged / 'results.json').read_text())['config']
    assert (config['min_rto_ms'], config['control_delay_ms'], config['period_s']) == (10.0, 1.0, 0.01)
    summary = (merged / 'summary.md').read_text().splitlines()
    assert '0.1 s flows after 0.05 s left out' in summary[0]
    assert summary[1] == ('Simulated on ns-3 (docs/simulator.md): hosts\' minimum RTO 10 ms, hosts\' send queues '
                          'drop-tail, control delay 1 ms, the dynamic schemes polled every 0.01 s.')


def test_durations_are_whole_seconds_unless_they_have_a_fraction():
    parser = argparse.ArgumentParser()
    bisection.add_arguments(parser)
    args = parser.parse_args(['--duration', '10', '--omit', '0'])
    assert (args.duration, args.omit) == (10, 0) and isinstance(args.duration, int)
    args = parser.parse_args(['--backend', 'sim', '--duration', '0.1', '--omit', '0.05', '--period', '0.01'])
    assert (args.duration, args.omit, args.period) == (0.1, 0.05, 0.01)


def test_summarize_names_a_directory_that_is_not_a_finished_run(tmp_path):
    with pytest.raises(SystemExit, match='nothing holds no experiment results'):
        bisection.main(['--summarize', str(tmp_path / 'nothing')])


def test_a_run_the_emulator_limited_is_left_out_of_the_means_and_marked():
    config = {'backend': 'emulator', 'k': 4, 'seeds': [1, 2], 'hosts': 16, 'bw': 20.0,
              'schemes': ['nonblocking', 'twolevel'], 'patterns': ['random']}
    cpu = {'cpu_busy_pct': 50.0, 'ovs_vswitchd_cpu_pct': 20.0}
    ok, limited = {'ok': True}, {'ok': False, 'limited_by': ['machine idle 2.0% < 10%']}
    runs = [dict(scheme='nonblocking', pattern='random', rep=0, aggregate_mbps=300.0, fidelity=ok, **cpu),
            dict(scheme='nonblocking', pattern='random', rep=1, aggregate_mbps=300.0, fidelity=ok, **cpu),
            dict(scheme='twolevel', pattern='random', rep=0, aggregate_mbps=240.0, fidelity=ok, **cpu),
            dict(scheme='twolevel', pattern='random', rep=1, aggregate_mbps=30.0, fidelity=limited, **cpu)]
    summary = bisection_report.summarize(runs, config)
    row = summary[('random', 'twolevel')]
    assert row['pct_of_nonblocking'] == pytest.approx(80.0) and row['reps'] == 1
    assert (row['runs_limited'], row['all_limited']) == (1, False)
    assert bisection_report.fidelity_cell(summary, 'random') == 'LIMITED 1/4 runs'
    # every run limited: the cell keeps its value but carries the mark
    all_limited = [dict(r, fidelity=limited) for r in runs]
    summary = bisection_report.summarize(all_limited, config)
    assert summary[('random', 'twolevel')]['all_limited']
    assert '45.0 +- 49.5!' in bisection_report.format_table(summary, config)
    assert bisection_report.fidelity_cell(summary, 'random') == 'LIMITED 4/4 runs'
    faithful = [dict(r, fidelity=ok) for r in runs]
    assert bisection_report.fidelity_cell(bisection_report.summarize(faithful, config), 'random') == 'faithful'
