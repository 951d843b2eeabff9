"""The N-Bridge experiment's per-phase figures (scripts.nbridge.leaf_fault.
phase_stats): which blocks count for a phase's hops, and failed pairs; and
the README table made from them, with each run's emulator verdict."""
from scripts.emulator.fidelity import verdict
from scripts.nbridge.leaf_fault import markdown, phase_stats

CROSS = ('10.0.0.1', '10.0.0.2')
OTHER = ('10.0.0.3', '10.0.0.4')


def block(pair, sent, hops, lat_s=0.001, ok=True):
    return {'src': pair[0], 'dst': pair[1], 'block': int(sent * 10), 'sent': sent, 'ok': ok,
            'ttl': 64 - hops if ok else None, 'lat_us': lat_s * 1e6 if ok else None}


def test_hops_count_blocks_settled_and_delivered_within_the_phase():
    phases = [('normal', 0.0), ('shielded', 10.0)]
    blocks = [block(CROSS, 0.2, 7),               # before settling: the old path, a transition
              block(CROSS, 2.0, 5), block(CROSS, 5.0, 5),
              block(CROSS, 9.5, 7, lat_s=1.0),    # queued past the change: forwarded after it
              block(CROSS, 12.0, 7), block(CROSS, 14.0, 9),
              block(OTHER, 3.0, 3), block(OTHER, 12.0, 3)]
    stats = phase_stats(blocks, phases, {CROSS: (5, 7)}, period=0.1)
    normal, shielded = stats['normal']['crossing'], stats['shielded']['crossing']
    assert normal['hops'] == [5] and normal['arrived_after_end'] == 1
    assert normal['transition_hops'] == [7] and normal['settled_after_s'] == 0.2
    assert normal['mean_hops'] == 5 and normal['median_latency_us'] == 1000
    assert shielded['hops'] == [7, 9] and shielded['arrived_after_end'] == 0
    assert stats['normal']['other']['hops'] == [3]
    assert stats['normal']['failed_pairs'] == [] and stats['normal']['lost_blocks'] == 0


def test_a_pair_fails_only_on_an_outage_of_consecutive_blocks():
    phases = [('off', 0.0)]
    lost = [block(CROSS, 1.0 + 0.5 * i, 0, ok=False) for i in range(4)]      # 2 s, 4 blocks
    blip = [block(OTHER, 1.0, 0, ok=False), block(OTHER, 1.5, 3), block(OTHER, 2.0, 0, ok=False)]
    stats = phase_stats(lost + blip, phases, {}, period=0.5)
    assert stats['off']['failed_pairs'] == [list(CROSS)]
    assert stats['off']['lost_blocks'] == 6 and stats['off']['pairs_with_loss'] == 2


def test_markdown_row_from_a_finished_run():
    names = ('normal', 'shielded', 'off', 'on', 'renewed')
    phases = [(name, 10.0 * i) for i, name in enumerate(names)]
    hops = {'normal': 5, 'shielded': 7, 'off': 7, 'on': 7, 'renewed': 5}
    blocks = [block(CROSS, begin + 2.0, hops[name], lat_s=0.002 if hops[name] == 5 else 0.004)
              for name, begin in phases]
    blocks.append(block(OTHER, 22.0, 0, ok=False))
    result = {'fabric': 'nbridge(3x3, Q=1, H=1)', 'target': 'LSW(1,1)', 'nodes': 4, 'pairs': 12,
              'crossing_pairs': 1, 'build_s': 1.8, 'loadavg_1m': [0.5, 0.75],
              'phases': phase_stats(blocks, phases, {CROSS: (5, 7)}, period=0.5)}
    faithful = dict(result, fidelity=verdict({'idle_pct_median': 40.0, 'daemon_socket_drops': 0}))
    limited = dict(result, fidelity=verdict({'idle_pct_median': 4.0, 'daemon_socket_drops': 12}))
    header, rule, *rows = markdown([faithful, limited, result]).split('\n')
    assert header.endswith('| emulator |')
    assert header.count('|') == rule.count('|') == 10 and all(row.count('|') == 10 for row in rows)
    measured = ('| nbridge(3x3, Q=1, H=1), LSW(1,1) | 4 / 12 / 1 | 1.8 | 0.50, 0.75 | 0, 0, 0, 0, 0 '
                '| 1 / 6 | 5 -> 7 | 2.0, 4.0, 2.0 | ')
    assert rows == [measured + 'faithful |',
                    measured + 'LIMITED 1/1 runs: machine idle; ovs-vswitchd dropped |',
                    # recorded before runs carried a verdict: never shown as faithful
                    measured + 'not judged |']
