"""The docs' measured tables are their results files, rendered
(scripts/docs.py), and the README is a front door that leads somewhere."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from scripts import docs

ROOT = docs.ROOT
ISSUE_WORDING = re.compile(r'issue ?#?[0-9]+', re.IGNORECASE)
SETUP_COMMANDS = ('bash scripts/setup.sh && .venv/bin/dcfabric run --k 4',
                  'bash scripts/setup.sh && .venv/bin/python -m pytest')


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def copy_of_pages(tmp_path, results=None):
    """A root holding copies of README.md and docs/*.md, and ``results``
    (default: the checkout's results/, linked)."""
    (tmp_path / 'docs' / 'studies').mkdir(parents=True)
    for page in docs.pages(ROOT):
        shutil.copy(os.path.join(ROOT, page), tmp_path / page)
    os.symlink(results or os.path.join(ROOT, 'results'), tmp_path / 'results')
    return str(tmp_path)


def test_every_page_matches_what_its_results_files_render_to():
    assert docs.check(ROOT) == [], 'run: python -m scripts.docs'


def test_a_hand_edited_figure_is_found_and_rewriting_restores_it(tmp_path, capsys):
    root = copy_of_pages(tmp_path)
    page = tmp_path / 'docs' / 'studies' / 'fault-detection.md'
    original = page.read_text()
    row = '| 16 | 2,048 | 4 | 1,024 | 2,050 ms | 1,998 | 6,150 ms |'
    assert row in original  # the bfd-defaults table as rendered from bfd_defaults.json
    page.write_text(original.replace(row, row.replace('6,150 ms', '6,000 ms')))
    assert docs.check(root) == [('docs/studies/fault-detection.md', ['bfd-defaults'])]
    assert docs.main(['--check', '--root', root]) == 1
    assert 'docs/studies/fault-detection.md: tables differ from their results: bfd-defaults' in capsys.readouterr().out
    assert docs.write(root) == ['docs/studies/fault-detection.md']
    assert page.read_text() == original and docs.check(root) == []


def test_a_rerun_that_changes_a_results_file_changes_the_page(tmp_path):
    results = tmp_path / 'results'
    results.mkdir()
    for name in os.listdir(os.path.join(ROOT, 'results')):
        if name != 'fattree':
            os.symlink(os.path.join(ROOT, 'results', name), results / name)
    (results / 'fattree').mkdir()
    for name in os.listdir(os.path.join(ROOT, 'results', 'fattree')):
        if name != 'ovs_port_cost.json':
            os.symlink(os.path.join(ROOT, 'results', 'fattree', name), results / 'fattree' / name)
    rows = json.loads(read('results/fattree/ovs_port_cost.json'))
    rows[0]['add_s'] += 1.0
    (results / 'fattree' / 'ovs_port_cost.json').write_text(json.dumps(rows))
    pages = tmp_path / 'pages'
    pages.mkdir()
    root = copy_of_pages(pages, results=str(results))
    assert docs.check(root) == [('docs/studies/emulator-capacity.md', ['ovs-port-cost'])]
    docs.write(root)
    assert '| {:,} ({}) | {:.1f} |'.format(rows[0]['ports'], rows[0]['bridges'], rows[0]['add_s']) in \
        (pages / 'docs' / 'studies' / 'emulator-capacity.md').read_text()


def render_stub(name):
    return '| rendered %s |' % name


def test_markers_are_replaced_with_blank_lines_around_the_table():
    text = 'before\n<!-- table: outages -->\nold\n<!-- end table -->\nafter'
    assert docs.render_text(text, render_stub) == (
        'before\n<!-- table: outages -->\n\n| rendered outages |\n\n<!-- end table -->\nafter')


@pytest.mark.parametrize('text,problem', [
    ('<!-- table: no-such-table -->\n<!-- end table -->', 'unknown table'),
    ('<!-- table: outages -->\n| a table never closed |', 'not closed'),
    ('<!-- table: outages -->\n<!-- table: bfd-floor -->\n<!-- end table -->', 'not closed'),
    ('text\n<!-- end table -->', 'without a table marker'),
    ('<!-- table: Outages Table -->\n<!-- end table -->', 'malformed'),
])
def test_malformed_markers_are_errors_naming_the_line(text, problem):
    with pytest.raises(docs.MarkerError, match=problem) as error:
        docs.render_text(text, render_stub, 'docs/x.md')
    assert 'docs/x.md:' in str(error.value)


def test_an_unknown_marker_in_a_page_fails_the_check(tmp_path):
    root = copy_of_pages(tmp_path)
    page = tmp_path / 'docs' / 'p4.md'
    page.write_text(page.read_text() + '\n<!-- table: p4-throughput -->\n<!-- end table -->\n')
    with pytest.raises(docs.MarkerError, match="docs/p4.md:.*unknown table 'p4-throughput'"):
        docs.check(root)
    assert docs.main(['--check', '--root', root]) == 2


def test_every_registered_table_is_shown_on_some_page():
    shown = {name for page in docs.pages(ROOT) for name in docs.table_names(read(page))}
    assert set(docs.TABLES) - shown == set()


def test_the_readme_is_a_front_door():
    lines = read('README.md').split('\n')
    assert len(lines) <= 300
    first_screen = '\n'.join(lines[:30])
    for command in SETUP_COMMANDS:
        assert command in first_screen


def test_the_readme_links_every_guide_and_a_guide_every_study():
    linked = set(re.findall(r'\]\((docs/[^)#]+\.md)', read('README.md')))
    guides = {page for page in docs.pages(ROOT) if os.path.dirname(page) == 'docs'}
    assert linked == guides
    for page in linked:
        assert os.path.exists(os.path.join(ROOT, page)), page
    from_guides = {os.path.normpath(os.path.join('docs', target)) for guide in guides
                   for target in re.findall(r'\]\((studies/[^)#]+\.md)', read(guide))}
    assert {page for page in docs.pages(ROOT) if page.startswith('docs/studies/')} <= from_guides


def slug(heading):
    """GitHub's anchor for a heading."""
    return re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')


def prose_lines(text):
    """The lines of a Markdown page outside code blocks."""
    fenced = False
    for line in text.split('\n'):
        if line.startswith('```'):
            fenced = not fenced
        elif not fenced and not line.startswith('    '):
            yield line


def anchors(path):
    return {slug(line.lstrip('#')) for line in prose_lines(open(path).read()) if line.startswith('#')}


def test_slugs_as_github_makes_them():
    assert slug(" Mininet's own `mn --custom`") == 'mininets-own-mn---custom'
    assert slug(' Any failure set: detours') == 'any-failure-set-detours'


def test_every_local_link_and_anchor_resolves():
    drawn = set(docs.plots(ROOT))  # not committed: python -m scripts.docs draws them
    broken = []
    for page in docs.pages(ROOT):
        here = os.path.dirname(os.path.join(ROOT, page))
        for line in prose_lines(read(page)):
            for target in re.findall(r'\]\(([^)\s]+)\)', line):
                if re.match(r'[a-z]+:', target):
                    continue
                path, _, anchor = target.partition('#')
                path = os.path.normpath(os.path.join(here, path)) if path else os.path.join(ROOT, page)
                if not os.path.exists(path) and os.path.relpath(path, ROOT) not in drawn:
                    broken.append('%s: %s (no such file)' % (page, target))
                elif anchor and anchor not in anchors(path):
                    broken.append('%s: %s (no such heading)' % (page, target))
    assert broken == []


def test_no_issue_numbers_in_the_readme_or_docs():
    word = 'issue'  # the examples are built, so that this file holds no such wording itself
    assert ISSUE_WORDING.search('as %s 5, item 5 asks' % word) and ISSUE_WORDING.search('%s #17.2' % word.title())
    found = ['%s: %s' % (page, line.strip()) for page in docs.pages(ROOT)
             for line in read(page).split('\n') if ISSUE_WORDING.search(line)]
    assert found == []


def test_rendering_imports_no_ryu_eventlet_or_mininet():
    check = ('import sys, scripts.docs as d; [f(d.ROOT) for f in d.TABLES.values()]; '
             'print(" ".join(m for m in sys.modules if m.split(".")[0] in ("ryu", "eventlet", "mininet")))')
    done = subprocess.run([sys.executable, '-c', check], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


def test_a_cluster_configuration_whose_every_run_failed_is_a_row_of_dashes():
    from scripts.emulator.benchmarks.cluster_report import emulator_cell, markdown
    rows = json.loads(read('results/cluster/measure.json'))
    failed = dict(rows[0], failed_runs=['run 2: not all pairs reachable'])
    del failed['aggregate_mbps']  # every run of a configuration failed
    assert markdown([failed]).splitlines()[-1].endswith('| 3 (1 failed: run 2: not all pairs reachable) |'
                                                        + ' - |' * 9 + ' %s |' % emulator_cell(failed))


GUIDE_PARTS = ('## How to run it', '## How to read the result', '## What it shows', '## Limits')
GUIDE_MAX_LINES = 250
NOTHING_TO_SHOW = {'docs/p4.md'}  # no committed measurement of the P4 data planes: the page says so


def guides():
    """Every docs/*.md but the design page, which may run longer for its diagrams."""
    return [page for page in docs.pages(ROOT) if os.path.dirname(page) == 'docs' and page != 'docs/design.md']


def sections(text, code=False):
    """{'## heading': its text up to the next '## ' heading}, in order;
    code blocks left out unless ``code``."""
    found, current = {}, None
    for line in (text.split('\n') if code else prose_lines(text)):
        if line.startswith('## '):
            current = line
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return {heading: '\n'.join(lines) for heading, lines in found.items()}


def test_every_guide_is_short_and_in_the_five_parts_in_order():
    wrong = []
    for page in guides():
        text = read(page)
        if text.count('\n') > GUIDE_MAX_LINES:
            wrong.append('%s: %d lines' % (page, text.count('\n')))
        before_first_part = text.split('\n## ')[0].split('\n')[1:]
        if not any(line.strip() and not line.startswith('#') for line in before_first_part):
            wrong.append('%s: no sentence on what it is before its first part' % page)
        headings = list(sections(text))
        at = [next((i for i, h in enumerate(headings) if h.startswith(part)), None) for part in GUIDE_PARTS]
        if None in at or at != sorted(at):
            wrong.append('%s: parts %s' % (page, dict(zip(GUIDE_PARTS, at))))
    assert wrong == []


def test_what_a_guide_shows_is_rendered():
    empty = []
    for page in guides():
        shown = next(body for heading, body in sections(read(page)).items() if heading.startswith('## What it shows'))
        if page not in NOTHING_TO_SHOW and not (docs.table_names(shown) or re.search(r'!\[[^\]]*\]\(', shown)):
            empty.append(page)
    assert empty == []


def test_the_readme_reaches_table_2_on_every_backend_and_its_verdict_in_one_click():
    readme = read('README.md')
    for anchor in ('table-2-on-each-backend', 'how-to-read-the-result'):
        assert '](docs/schemes.md#%s)' % anchor in readme
    guide = sections(read('docs/schemes.md'), code=True)
    run = guide['## How to run it']
    for command in ('dcfabric bisection ', 'dcfabric bisection --backend sim', 'dcfabric bisection --backend flow'):
        assert command in run
    reading = guide['## How to read the result']
    for word in ('faithful', 'LIMITED n/m runs', 'EMULATOR-LIMITED', '`!`', 'simulated', 'flow model'):
        assert word in reading


def test_every_other_file_in_docs_is_a_picture_a_page_shows_and_the_renderer_does_not_draw():
    try:
        listed = subprocess.run(['git', 'ls-files', 'docs'], cwd=ROOT, capture_output=True, text=True, check=True,
                                timeout=60).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip('not a git checkout')
    shown = {os.path.normpath(os.path.join(os.path.dirname(page), target)) for page in docs.pages(ROOT)
             for target in re.findall(r'!\[[^\]]*\]\(([^)\s]+)\)', read(page))}
    others = [path for path in listed if not path.endswith('.md')]
    assert [path for path in others if path not in shown or path in docs.plots(ROOT)] == []


@pytest.mark.parametrize('plot,results', [(docs.TABLE2_PLOT, docs.TABLE2_RESULTS), (docs.FCT_PLOT, docs.FCT_RESULTS),
                                          (docs.REACTION_PLOT, docs.REACTION_RESULTS)])
def test_a_guides_plot_is_drawn_from_its_results_file_alone_and_its_caption_checked(tmp_path, plot, results):
    os.makedirs(tmp_path / os.path.dirname(results))
    shutil.copy(os.path.join(ROOT, results), tmp_path / results)
    docs.plots(ROOT)[plot](str(tmp_path), str(tmp_path / plot))
    with open(tmp_path / plot, 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    name = {docs.TABLE2_PLOT: 'table2-plot', docs.FCT_PLOT: 'fct-load-plot', docs.REACTION_PLOT: 'reaction-plot'}[plot]
    caption = docs.TABLES[name](str(tmp_path))  # from the results file alone, so --check needs no plot
    assert '](../%s)' % plot in caption and '`%s`' % results in caption
