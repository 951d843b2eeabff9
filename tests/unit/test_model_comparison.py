"""scripts/experiments/model_comparison.py: the flow model's Table 2 cells
beside the packet simulator's, each of its own reference, within 5 points
or not; runs of two plans refused."""
import pytest

from scripts.experiments import model_comparison


def loaded(backend, aggregates, seeds=(1,)):
    """A loaded bisection result: the reference carries 16 flows of 1000 Mbit/s x 0.9, a scheme ``aggregates``."""
    config = {'backend': backend, 'k': 4, 'bw': 1000.0, 'seeds': list(seeds), 'patterns': ['random', 'stride-4'],
              'schemes': ['nonblocking', 'twolevel', 'ecmp'], 'hosts': 16, 'sender_queue': 'fq'}
    runs = [{'scheme': 'nonblocking', 'pattern': p, 'rep': 0, 'aggregate_mbps': 14400.0} for p in config['patterns']]
    runs += [{'scheme': s, 'pattern': p, 'rep': 0, 'aggregate_mbps': a} for (p, s), a in aggregates.items()]
    return {'config': config, 'runs': runs}


def test_cells_are_each_of_their_own_reference_and_judged_within_5_points():
    sim = loaded('sim', {('random', 'twolevel'): 7200.0, ('random', 'ecmp'): 7200.0,
                         ('stride-4', 'twolevel'): 14400.0, ('stride-4', 'ecmp'): 9000.0})
    flow = loaded('flow', {('random', 'twolevel'): 7920.0, ('random', 'ecmp'): 7956.0,
                           ('stride-4', 'twolevel'): 14400.0, ('stride-4', 'ecmp'): 9000.0})
    rows = model_comparison.compare(sim, flow)
    assert [(r['pattern'], r['scheme'], r['simulated_pct'], r['flow_pct'], r['within']) for r in rows] == [
        ('random', 'twolevel', 50.0, 55.0, True), ('random', 'ecmp', 50.0, 55.2, False),
        ('stride-4', 'twolevel', 100.0, 100.0, True), ('stride-4', 'ecmp', 62.5, 62.5, True)]
    text = model_comparison.markdown({'k': 4, 'bw': 1000.0, 'seeds': [1], 'sender_queue': 'fq',
                                      'tolerance_points': 5.0, 'rows': rows})
    assert '**3 of 4 cells** lie within 5 points' in text and '| Random | ecmp | 50.0 | 55.2 | +5.2 | **no** |' in text


def test_two_plans_or_the_wrong_backends_are_refused():
    with pytest.raises(ValueError, match='differ in seeds'):
        model_comparison.compare(loaded('sim', {}), loaded('flow', {}, seeds=(2,)))
    with pytest.raises(ValueError, match='got backends emulator and flow'):
        model_comparison.compare(loaded('emulator', {}), loaded('flow', {}))
