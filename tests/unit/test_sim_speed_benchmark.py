"""The simulator's speed benchmark: a real case (k=4, 1 Gbit/s, 5 ms,
about a second) and the target verdict of its table."""
import pytest

from scripts.sim.benchmarks import speed as speed_benchmark


def test_a_case_counts_the_running_fabric_beyond_its_start():
    (case,) = speed_benchmark.benchmark([(4, 1000, 0.005)], None, progress=lambda line: None)['cases']
    assert case['flows'] == 16
    assert case['events'] > case['start_events'] > 0
    assert case['cpu_s'] > case['start_cpu_s'] > 0
    # what the 4 ms after the flows' start cost, per event and per simulated second
    assert case['events_per_cpu_s'] > 0 and case['cpu_per_simulated_s'] > 0
    assert 10 < case['carried_pct'] <= 100


def _result(target_wall_s, target_cpu_s):
    case = {'k': 4, 'flows': 16, 'link_mbps': 1000, 'simulated_s': 10.0, 'wall_s': target_wall_s,
            'cpu_s': target_cpu_s, 'start_cpu_s': 0.1, 'events': 1000, 'events_per_cpu_s': 1e6,
            'cpu_per_simulated_s': 1.0, 'carried_pct': 50.0, 'start_simulated_s': 0.0, 'start_events': 0}
    return {'cases': [case], 'target': dict(case, target_wall_s=120.0), 'scheme': 'ecmp', 'pattern': 'random',
            'seed': 1,
            'queue_packets': 50, 'tcp': 'cubic', 'load_average_before': [0.1], 'load_average_after': [0.2],
            'build': 'b', 'machine': {'cpu_count': 2, 'processor': 'p'}}


def test_the_target_is_met_only_when_wall_and_cpu_time_are_both_within_it():
    assert 'within the target of 120 s' in speed_benchmark.markdown(_result(100.0, 99.0))
    assert 'over the target of 120 s' in speed_benchmark.markdown(_result(130.0, 99.0))
    assert 'over the target of 120 s' in speed_benchmark.markdown(_result(100.0, 121.0))


def test_link_crossings_counts_two_events_per_link_a_segment_and_its_ack_cross():
    # Stride(8) at k=4: every pair crosses pods, 6 links each way
    case = {'k': 4, 'flows': 16, 'link_mbps': 1000, 'simulated_s': 10.5, 'start_simulated_s': 0.5,
            'carried_pct': 50.0, 'events': 1000 + 69_060_773, 'start_events': 1000, 'events_per_cpu_s': 1_000_000}
    spent = speed_benchmark.link_crossings({'pattern': 'stride-8', 'seed': 1}, case)
    segments = 0.5 * 16 * 1e9 * 10 / (8 * 1448)  # 6,906,077.3 full segments
    assert spent['segments'] == pytest.approx(segments)
    assert spent['events_per_segment'] == pytest.approx(69_060_773 / segments)
    assert spent['crossings_per_segment'] == 12
    assert spent['crossing_cpu_s'] == pytest.approx(24 * segments / 1e6)
