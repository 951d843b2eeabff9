"""Run records on disk: a plan's directory holds plan.json (the experiment,
its backend, its config and every run of the plan) and runs/, one record
per finished run, written the moment it finishes, so that an interrupted
plan keeps what it measured and ``--resume`` runs only what is missing.

Every record and plan file carries ``schema``; ``load_plan`` and
``finished`` are the one way to read them back. The report an experiment
writes from the records (the bisection's results.json, the workload's
summary.json and flows.csv) carries RESULTS_SCHEMA, and ``load_results``
is the one way to read it.
"""
import csv
import json
import os

SCHEMA = 'dcfabric.run/1'
PLAN_SCHEMA = 'dcfabric.plan/1'


class RecordError(ValueError):
    pass


def _record_path(out_dir, index):
    return os.path.join(out_dir, 'runs', '%05d.json' % index)


def _write_json(path, data):
    """Written whole or not at all: a reader never sees half a file."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = path + '.partial'
    with open(partial, 'w') as f:
        json.dump(data, f, indent=1)
    os.replace(partial, path)


def save_plan(out_dir, experiment, backend, config, plan):
    _write_json(os.path.join(out_dir, 'plan.json'), {'schema': PLAN_SCHEMA, 'experiment': experiment,
                                                      'backend': backend, 'config': config, 'runs': plan})


def load_plan(out_dir):
    """(experiment, backend, config, plan) of the plan directory ``out_dir``."""
    path = os.path.join(out_dir, 'plan.json')
    try:
        with open(path) as f:
            saved = json.load(f)
    except (OSError, ValueError) as err:
        raise RecordError('%s holds no plan (%s): --resume takes a directory a plan wrote' % (out_dir, err)) from None
    if saved.get('schema') != PLAN_SCHEMA:
        raise RecordError('%s is a %s file; this dcfabric reads %s' % (path, saved.get('schema'), PLAN_SCHEMA))
    return saved['experiment'], saved['backend'], saved['config'], saved['runs']


def save(out_dir, index, record):
    _write_json(_record_path(out_dir, index), dict(record, schema=SCHEMA))


def discard(out_dir, plan):
    """Remove ``plan`` and its runs' records from ``out_dir``, so that a new
    plan there starts with no run done."""
    for path in [_record_path(out_dir, index) for index in range(len(plan))] + [os.path.join(out_dir, 'plan.json')]:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def finished(out_dir, plan):
    """{run id: record} of the plan's runs that have a record in ``out_dir``."""
    records = {}
    for index, run in enumerate(plan):
        try:
            with open(_record_path(out_dir, index)) as f:
                record = json.load(f)
        except FileNotFoundError:
            continue
        if record.get('schema') != SCHEMA or record.get('id') != run['id']:
            raise RecordError('%s is not the record of run %s' % (_record_path(out_dir, index), run['id']))
        records[run['id']] = record
    return records


# An experiment's results directory: the report the experiment writes from
# its finished runs, one versioned schema for every backend.
RESULTS_SCHEMA = 'dcfabric.results/1'
# the experiment's results file in its directory
RESULTS_FILES = {'bisection': 'results.json', 'workload': 'summary.json'}
BACKENDS = ('emulator', 'sim', 'flow')
# what every results file's config holds, and a packet-simulated run's beside it
CONFIG_KEYS = ('experiment', 'backend', 'k', 'bw', 'queue', 'seeds')
SIM_CONFIG_KEYS = ('sender_queue', 'min_rto_ms')
WORKLOAD_SIM_CONFIG_KEYS = ('tcp', 'ecn_threshold_packets')
# what every run of the results file holds
RUN_KEYS = {'bisection': ('scheme', 'pattern', 'rep', 'aggregate_mbps', 'flows'),
            'workload': ('scheme', 'seed', 'load', 'flows', 'finished')}
# the workload's flows.csv: one row per flow of every run, numbers where typed, empty for a flow never finished
FLOW_COLUMNS = {'scheme': str, 'seed': int, 'load': float, 'src': str, 'dst': str, 'size_bytes': int,
                'start_s': float, 'fct_s': float, 'ideal_fct_s': float, 'slowdown': float}


def read_flow_rows(path):
    """flows.csv's rows: numbers as FLOW_COLUMNS types them, None where empty."""
    with open(path, newline='') as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != tuple(FLOW_COLUMNS):
            raise RecordError('%s has the columns %s; a workload\'s flows.csv has %s'
                              % (path, ', '.join(reader.fieldnames or ()), ', '.join(FLOW_COLUMNS)))
        return [{key: FLOW_COLUMNS[key](value) if value else None for key, value in row.items()} for row in reader]


def results_problems(saved):
    """What in a results file's content ``saved`` breaks RESULTS_SCHEMA, one
    phrase each (empty: none)."""
    if saved.get('schema') != RESULTS_SCHEMA:
        return ['schema is %r, not %r' % (saved.get('schema'), RESULTS_SCHEMA)]
    config, runs = saved.get('config'), saved.get('runs')
    if not isinstance(config, dict) or not isinstance(runs, list):
        return ['no config object or no runs list']
    problems = ['config has no %r' % key for key in CONFIG_KEYS if key not in config]
    if problems:
        return problems
    if config['experiment'] not in RESULTS_FILES:
        problems.append('config experiment %r is none of %s' % (config['experiment'], ', '.join(RESULTS_FILES)))
    if config['backend'] not in BACKENDS:
        problems.append('config backend %r is none of %s' % (config['backend'], ', '.join(BACKENDS)))
    if not isinstance(config['seeds'], list) or not all(isinstance(s, int) for s in config['seeds']):
        problems.append('config seeds %r is not a list of integers' % (config['seeds'],))
    if config['backend'] == 'sim':
        wanted = SIM_CONFIG_KEYS + (WORKLOAD_SIM_CONFIG_KEYS if config['experiment'] == 'workload' else ())
        problems += ['a simulated run\'s config has no %r' % key for key in wanted if key not in config]
    for index, run in enumerate(runs):
        missing = [key for key in RUN_KEYS.get(config['experiment'], ()) if key not in run]
        if missing:
            problems.append('run %d has no %s' % (index, ', '.join(map(repr, missing))))
        elif 'ran_on' in run and 'wall_s' not in run['ran_on']:
            problems.append('run %d\'s ran_on has no wall_s' % index)
    return problems


def load_results(run_dir):
    """The results in ``run_dir``: its results file's content (config,
    runs, the summary) and, for a workload, 'rows', flows.csv's rows.
    RecordError names the file and everything in it that breaks
    RESULTS_SCHEMA."""
    present = [name for name in RESULTS_FILES.values() if os.path.exists(os.path.join(run_dir, name))]
    if not present:
        raise RecordError('%s holds no experiment results (%s)' % (run_dir, ' or '.join(RESULTS_FILES.values())))
    path = os.path.join(run_dir, present[0])
    try:
        with open(path) as f:
            saved = json.load(f)
    except (OSError, ValueError) as err:
        raise RecordError('%s is not readable JSON: %s' % (path, err)) from None
    problems = results_problems(saved)
    if not problems and RESULTS_FILES[saved['config']['experiment']] != present[0]:
        problems = ['a %s experiment\'s results are in %s' % (saved['config']['experiment'],
                                                               RESULTS_FILES[saved['config']['experiment']])]
    if problems:
        raise RecordError('%s: %s' % (path, '; '.join(problems)))
    if saved['config']['experiment'] == 'workload':
        try:
            saved['rows'] = read_flow_rows(os.path.join(run_dir, 'flows.csv'))
        except OSError as err:
            raise RecordError('%s: a workload\'s flows are in its flows.csv (%s)' % (run_dir, err)) from None
    return saved


def keep_aggregates(run_dir):
    """Rewrite ``run_dir``'s bisection results without each run's per-flow
    rates: every run keeps its aggregate and the number of flows it had
    (``flows_dropped``). What a committed record of thousands of flows a run
    keeps (a k=32 table's whole record is 45 MB); the run's command makes
    the whole one again. The number of flows dropped."""
    saved = load_results(run_dir)
    if saved['config']['experiment'] != 'bisection':
        raise RecordError('%s: only a bisection\'s runs keep their aggregates alone' % run_dir)
    dropped = 0
    for run in saved['runs']:
        if run['flows']:
            run['flows_dropped'] = len(run['flows'])
            dropped += len(run['flows'])
            run['flows'] = []
    _write_json(os.path.join(run_dir, RESULTS_FILES['bisection']), saved)
    return dropped


# A study: the finished runs one docs table renders, named in its manifest
# results/studies/NAME.json, so that no page or command lists run folders.
STUDY_SCHEMA = 'dcfabric.study/1'
STUDIES_DIR = os.path.join('results', 'studies')


def load_study(root, name):
    """The manifest of study ``name`` under ``root``: 'made_by' (the
    command lines that made its runs, with their options), 'runs' (their
    directories), 'results' (what its tables render: a run directory or a
    file made from the runs) and 'command' (the command that makes
    'results' from the runs; None where it is a run's own report).
    RecordError names the manifest and what is wrong with it."""
    path = os.path.join(root, STUDIES_DIR, name + '.json')
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as err:
        raise RecordError('study %s: %s is not a readable manifest (%s)' % (name, path, err)) from None
    problems = [] if manifest.get('schema') == STUDY_SCHEMA else ['schema is %r, not %r' % (manifest.get('schema'),
                                                                                          STUDY_SCHEMA)]
    problems += ['no %r' % key for key in ('made_by', 'runs', 'results', 'command') if key not in manifest]
    if not problems:
        problems += ['run %s is not there' % run for run in manifest['runs']
                     if not os.path.isdir(os.path.join(root, run))]
        if not os.path.exists(os.path.join(root, manifest['results'])):
            problems.append('its results %s are not there' % manifest['results'])
    if problems:
        raise RecordError('%s: %s' % (path, '; '.join(problems)))
    return manifest
