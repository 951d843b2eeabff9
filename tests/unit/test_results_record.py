"""results/ is a record: every committed file in it is cited (read by a
rendered table, named by a study's manifest, or named by a page or a test),
everything cited is there, and nothing a command redraws from it (the
plots) is committed."""
import builtins
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from scripts import docs
from scripts.letflow.ns3_experiments import RUN_SERIES
from scripts.runner.records import STUDIES_DIR, load_study

ROOT = docs.ROOT
PATH_MENTION = re.compile(r'results/[A-Za-z0-9_./-]*[A-Za-z0-9_-]')
RECORD_LIMIT_BYTES = 10 * 1024 * 1024


def committed_results():
    """The files under results/ that git tracks (skip outside a checkout)."""
    try:
        listed = subprocess.run(['git', 'ls-files', '-z', 'results'], cwd=ROOT, capture_output=True, check=True,
                                timeout=60)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip('not a git checkout')
    return sorted(p for p in listed.stdout.decode().split('\0') if p)


def read_by_the_tables():
    """Every file under results/ that rendering every table opens."""
    opened, real_open = set(), builtins.open

    def recording_open(path, *args, **kwargs):
        if isinstance(path, (str, os.PathLike)):
            opened.add(os.path.relpath(os.path.abspath(path), ROOT))
        return real_open(path, *args, **kwargs)

    builtins.open = recording_open
    try:
        for render in docs.TABLES.values():
            render(ROOT)
    finally:
        builtins.open = real_open
    return {p for p in opened if p.startswith('results' + os.sep)}


def studies():
    return sorted(os.path.basename(p)[:-len('.json')] for p in glob.glob(os.path.join(ROOT, STUDIES_DIR, '*.json')))


def named_by_manifests():
    """Every study's manifest, its runs and its results."""
    named = set()
    for study in studies():
        manifest = load_study(ROOT, study)
        named |= {os.path.join(STUDIES_DIR, study + '.json'), manifest['results'], *manifest['runs']}
    return named


def citing_texts():
    """{file: text} of every page and every test."""
    paths = docs.pages(ROOT) + [os.path.relpath(p, ROOT) for p in
                                glob.glob(os.path.join(ROOT, 'tests', '**', '*.py'), recursive=True)]
    texts = {}
    for path in paths:
        with open(os.path.join(ROOT, path)) as f:
            texts[path] = f.read()
    return texts


def named_by_pages_and_tests():
    named = set()
    for text in citing_texts().values():
        named |= {m.rstrip('./') for m in PATH_MENTION.findall(text)}
    return named


def collection(folder, files):
    """A folder that holds only other folders (results/bisection, one run
    folder each): naming it cites none of them."""
    inside = {os.path.relpath(f, folder).split(os.sep)[0] for f in files if f.startswith(folder + os.sep)}
    return all(os.path.isdir(os.path.join(ROOT, folder, entry)) for entry in inside)


def cited(path, names, files):
    """Whether ``path`` is one of ``names`` or inside a named folder that
    is not results/ itself, the manifests' folder or a collection."""
    if path in names:
        return True
    folder = os.path.dirname(path)
    while folder not in ('results', STUDIES_DIR, ''):
        if folder in names and not collection(folder, files):
            return True
        folder = os.path.dirname(folder)
    return False


def test_every_committed_file_under_results_is_cited():
    files = committed_results()
    names = read_by_the_tables() | named_by_manifests() | named_by_pages_and_tests()
    assert [p for p in files if not cited(p, names, files)] == []


def test_every_study_is_named_on_a_page():
    pages = [text for path, text in citing_texts().items() if path.endswith('.md')]
    assert [s for s in studies() if not any(re.search(r'\b%s\b' % re.escape(s), text) for text in pages)] == []


def test_what_the_tables_and_manifests_name_is_committed():
    files = set(committed_results())
    named = read_by_the_tables() | named_by_manifests()
    missing = [p for p in named if p not in files and not any(f.startswith(p + os.sep) for f in files)]
    assert sorted(missing) == []


def test_no_plot_is_committed_and_every_plot_a_page_shows_is_drawn_by_the_renderer():
    assert [p for p in committed_results() if p.endswith('.png')] == []
    drawn = set(docs.plots(ROOT))
    shown = set()
    for page in docs.pages(ROOT):
        text = citing_texts()[page]
        here = os.path.dirname(page)
        shown |= {os.path.normpath(os.path.join(here, target))
                  for target in re.findall(r'!\[[^\]]*\]\(([^)\s]+\.png)\)', text)}
    assert {p for p in shown if p.startswith('results' + os.sep)} - drawn == set()


def test_the_record_is_under_ten_megabytes():
    total = sum(os.path.getsize(os.path.join(ROOT, p)) for p in committed_results()
                if os.path.exists(os.path.join(ROOT, p)))
    assert total < RECORD_LIMIT_BYTES


def test_a_plot_is_drawn_from_its_committed_results_alone(tmp_path):
    """The load sweep's plot and a bisection run's, into a root that holds
    only their results files."""
    study = docs.BISECTION_STUDIES['bisection-sim-letflow']
    run_dir = load_study(ROOT, study)['results']
    for path in ('results/letflow/load/results.json', os.path.join(STUDIES_DIR, study + '.json'),
                 os.path.join(run_dir, 'results.json')):
        os.makedirs(tmp_path / os.path.dirname(path), exist_ok=True)
        shutil.copy(os.path.join(ROOT, path), tmp_path / path)
    for plot in ('results/letflow/load/load_sweep.png', os.path.join(run_dir, 'bisection.png')):
        docs.plots(ROOT)[plot](str(tmp_path), str(tmp_path / plot))
        with open(tmp_path / plot, 'rb') as f:
            assert f.read(8) == b'\x89PNG\r\n\x1a\n'


def test_a_named_folder_cites_its_files_but_a_collection_of_runs_does_not():
    files = ['results/rate_sweep/rate_sweep.json', 'results/rate_sweep/bw-5/results.json']
    assert cited('results/rate_sweep/bw-5/results.json', {'results/rate_sweep'}, files)
    assert not cited('results/bisection/20261203-222606/results.json', {'results/bisection'},
                     committed_results())
    assert not cited('results/studies/table2-1gbps.json', {'results/studies'}, [])


def test_the_load_sweep_keeps_what_its_table_and_plot_read():
    with open(os.path.join(ROOT, 'results/letflow/load/results.json')) as f:
        saved = json.load(f)
    assert saved['rows'] and saved['seeds'] and saved['workload']
    assert saved['runs'] and not any(set(RUN_SERIES) & set(run) for run in saved['runs'])
