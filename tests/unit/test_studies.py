"""Study manifests and the one results loader: every table the docs render
from experiment runs names its runs in a manifest, every committed results
file of the bisection and the workload loads under the one schema, and no
page names a timestamped run folder outside its rendered tables."""
import glob
import json
import os
import re

import pytest

from scripts import docs, studies
from scripts.runner.records import RESULTS_SCHEMA, RecordError, load_results, load_study

ROOT = docs.ROOT
TIMESTAMPED = re.compile(r'results/[\w/.-]*\d{8}-\d{6}')


def outside_tables(text):
    """``text`` without what sits between table markers (rendered from the manifests)."""
    kept, inside = [], False
    for line in text.split('\n'):
        if docs.START.fullmatch(line.strip()):
            inside = True
        elif line.strip() == docs.END:
            inside = False
        elif not inside:
            kept.append(line)
    return '\n'.join(kept)


def test_no_page_names_a_timestamped_run_folder_in_its_prose_or_commands():
    named = [(page, match) for page in docs.pages(ROOT)
             for match in TIMESTAMPED.findall(outside_tables(open(os.path.join(ROOT, page)).read()))]
    assert named == []


def test_the_check_sees_a_timestamped_folder_in_prose_and_not_in_a_table():
    text = ('The run `results/bisection/20261201-073900` showed it.\n<!-- table: bisection -->\n'
            'Run `results/bisection/20261201-063512`\n<!-- end table -->\n')
    assert TIMESTAMPED.findall(outside_tables(text)) == ['results/bisection/20261201-073900']


def test_every_study_loads_and_names_runs_that_load():
    for name in studies.names(ROOT):
        manifest = load_study(ROOT, name)
        assert manifest['study'] == name and manifest['runs']
        for run in manifest['runs']:
            assert load_results(os.path.join(ROOT, run))['config']['experiment'] in ('bisection', 'workload')


def test_every_table_rendered_from_runs_is_a_studys():
    rendered_from_studies = set(docs.BISECTION_STUDIES.values()) | set(docs.WORKLOAD_STUDIES.values()) | set(
        docs.STUDY_TABLES) | {'classifier-difference'}
    assert rendered_from_studies <= set(studies.names(ROOT))


@pytest.mark.parametrize('path', sorted(glob.glob(os.path.join(ROOT, 'results', '*', '*', 'results.json'))
                                        + glob.glob(os.path.join(ROOT, 'results', 'workload', '*', 'summary.json'))))
def test_every_committed_results_file_has_the_schema(path):
    if '/letflow/' in path:
        return  # LetFlow's own ns-3 experiments write another file of that name
    saved = load_results(os.path.dirname(path))
    assert saved['schema'] == RESULTS_SCHEMA


def _bisection_dir(tmp_path, change=lambda saved: None):
    """A simulated bisection's results directory, ``change`` applied to its content."""
    config = {'experiment': 'bisection', 'backend': 'sim', 'k': 4, 'bw': 10.0, 'queue': 50, 'seeds': [1],
              'sender_queue': 'fq', 'min_rto_ms': 200.0}
    runs = [{'scheme': 'nonblocking', 'pattern': 'random', 'rep': 0, 'aggregate_mbps': 150.0, 'flows': [],
             'ran_on': {'wall_s': 1.0}}]
    saved = {'schema': RESULTS_SCHEMA, 'config': config, 'runs': runs}
    change(saved)
    (tmp_path / 'results.json').write_text(json.dumps(saved))
    return str(tmp_path)


def test_the_loader_reads_a_results_file_of_the_schema(tmp_path):
    assert load_results(_bisection_dir(tmp_path))['config']['sender_queue'] == 'fq'


@pytest.mark.parametrize('change, named', [
    (lambda saved: saved.update(schema=None), "schema is None, not 'dcfabric.results/1'"),
    (lambda saved: saved['config'].update(backend='ns2'), "config backend 'ns2' is none of emulator, sim, flow"),
    (lambda saved: saved['config'].update(seeds=1), 'config seeds 1 is not a list of integers'),
    (lambda saved: saved['config'].pop('sender_queue'), "a simulated run's config has no 'sender_queue'"),
    (lambda saved: saved['runs'][0].pop('aggregate_mbps'), "run 0 has no 'aggregate_mbps'"),
    (lambda saved: saved['runs'][0].update(ran_on={'host': 'h'}), "run 0's ran_on has no wall_s"),
])
def test_the_loader_names_what_breaks_the_schema(tmp_path, change, named):
    with pytest.raises(RecordError) as error:
        load_results(_bisection_dir(tmp_path, change))
    assert named in str(error.value) and 'results.json' in str(error.value)


def test_a_workload_without_its_flows_csv_is_named(tmp_path):
    config = {'experiment': 'workload', 'backend': 'emulator', 'k': 4, 'bw': 20.0, 'queue': 50, 'seeds': [37]}
    (tmp_path / 'summary.json').write_text(json.dumps({'schema': RESULTS_SCHEMA, 'config': config, 'runs': []}))
    with pytest.raises(RecordError, match='flows.csv'):
        load_results(str(tmp_path))


def test_a_manifest_naming_a_missing_run_is_refused(tmp_path):
    (tmp_path / 'results' / 'studies').mkdir(parents=True)
    (tmp_path / 'results' / 'studies' / 'gone.json').write_text(json.dumps(
        {'schema': 'dcfabric.study/1', 'study': 'gone', 'made_by': [], 'runs': ['results/bisection/x'],
         'results': 'results/bisection/x', 'command': None}))
    with pytest.raises(RecordError, match='run results/bisection/x is not there'):
        load_study(str(tmp_path), 'gone')


def test_a_run_keeps_its_aggregates_without_its_flows(tmp_path):
    def with_flows(saved):
        saved['runs'][0]['flows'] = [{'src': 'h0_0_2', 'dst': 'h1_0_2', 'mbps': 75.0}] * 2
        saved['config'].update(experiment='bisection')
    run_dir = _bisection_dir(tmp_path, with_flows)
    from scripts.runner.records import keep_aggregates
    assert keep_aggregates(run_dir) == 2
    run = load_results(run_dir)['runs'][0]
    assert run['flows'] == [] and run['flows_dropped'] == 2 and run['aggregate_mbps'] == 150.0
    assert keep_aggregates(run_dir) == 0  # already kept so: nothing more to drop
