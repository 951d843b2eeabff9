"""The classifier-against-two-level model (scripts.fattree.
classifier_placement): the real classifier on the fabric model, rates from
max-min fair sharing, over every Table 2 pattern and many arrival orders."""
import csv
import json
import random

import pytest

from controller.fattree.classifier import FlowClassifier
from controller.fattree.fair_share import path_links
from controller.fattree.twolevel import all_tables
from scripts.fattree.classifier_placement import ARRIVALS, classifier_paths, main, run_order
from scripts.experiments.fair_share import two_level_fair_share
from scripts.experiments.patterns import PAPER_PATTERNS, seeded
from topologies.fattree import FatTree
from topologies.walk import walk

TOPO = FatTree(4)
TABLES = all_tables(TOPO)


@pytest.mark.parametrize('pattern', PAPER_PATTERNS)
def test_flows_starting_together_are_placed_exactly_as_two_level_routing_places_them(pattern):
    pairs = seeded(pattern, TOPO, 3)
    placed = classifier_paths(TOPO, FlowClassifier(TOPO, tolerance=0.1), pairs)
    assert placed == {(src, dst): path_links(TOPO, src, walk(TOPO, lambda sw, _, ip: TABLES[sw].lookup(ip), src, dst))
                      for src, dst in pairs}


@pytest.mark.parametrize('pattern', PAPER_PATTERNS)
@pytest.mark.parametrize('arrival', ARRIVALS)
def test_never_below_two_level_after_any_round(pattern, arrival):
    for seed in (1, 2, 3):
        pairs = seeded(pattern, TOPO, seed)
        rng = random.Random(seed)
        for _ in range(2):
            assert run_order(TOPO, pairs, rng, arrival, rounds=2)['min_margin_pct'] >= -1e-9


def test_rebalancing_gains_where_two_level_routing_collides():
    # Same-ID Outgoing: two-level routing puts a lower switch's two flows on one uplink
    pairs = seeded('sameid-outgoing', TOPO, 2)
    assert two_level_fair_share(TOPO, pairs) == 50.0
    # all placed on two-level paths, then rebalanced to no shared link at all
    assert run_order(TOPO, pairs, random.Random(1), 'together', rounds=1) == {
        'pct': 100.0, 'min_margin_pct': 50.0, 'moves': 16}


def test_results_record_seeds_orders_and_differences(tmp_path, capsys):
    main(['--seeds', '2', '5', '--orders', '2', '--rounds', '1', '--patterns', 'stride-4', '--out', str(tmp_path)])
    saved = json.loads((tmp_path / 'placement.json').read_text())
    assert saved['seeds'] == [2, 5] and [(r['seed'], r['arrival']) for r in saved['rows']] == [
        (2, 'together'), (2, 'staggered'), (5, 'together'), (5, 'staggered')]
    assert all(len(r['per_order']) == 2 for r in saved['rows'])
    with open(tmp_path / 'difference.csv') as f:
        rows = list(csv.DictReader(f))
    assert [(r['pattern'], r['arrival'], r['seeds'], float(r['difference_mean_pct'])) for r in rows] == [
        ('stride-4', 'together', '2 5', 0.0), ('stride-4', 'staggered', '2 5', 0.0)]
    assert 'seeds 2 5' in capsys.readouterr().out
