"""The classifier-placement model of issue 17.2 (scripts.fattree.
classifier_placement): the classifier's count-based first placement against
two-level routing's paths, under max-min fair sharing."""
import json
import random

import pytest

from scripts.fattree.classifier_placement import classifier_share, main
from scripts.fattree.fair_share import two_level_fair_share
from scripts.fattree.patterns import seeded
from topologies.fattree import FatTree

TOPO = FatTree(4)


@pytest.mark.parametrize('pattern', ['stride-1', 'stride-4', 'stride-8'])
def test_strides_stay_collision_free_in_any_arrival_order(pattern):
    pairs = seeded(pattern, TOPO, 1)
    assert all(classifier_share(TOPO, pairs, random.Random(order)) == 100.0 for order in range(10))


def test_a_pattern_where_the_classifier_placement_is_below_two_level_in_every_order():
    pairs = seeded('staggered-0.5-0.3', TOPO, 3)
    assert two_level_fair_share(TOPO, pairs) == pytest.approx(93.75)
    assert max(classifier_share(TOPO, pairs, random.Random(order)) for order in range(20)) < 93.75


def test_results_record_seeds_and_orders(tmp_path, capsys):
    main(['--seeds', '2', '5', '--orders', '3', '--patterns', 'random', '--out', str(tmp_path)])
    saved = json.loads((tmp_path / 'placement.json').read_text())
    assert saved['seeds'] == [2, 5] and [r['seed'] for r in saved['rows']] == [2, 5]
    assert all(len(r['classifier_pct_per_order']) == 3 for r in saved['rows'])
    assert 'seeds 2 5' in capsys.readouterr().out
