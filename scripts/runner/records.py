"""Run records on disk: a plan's directory holds plan.json (the experiment,
its backend, its config and every run of the plan) and runs/, one record
per finished run, written the moment it finishes, so that an interrupted
plan keeps what it measured and ``--resume`` runs only what is missing.

Every record and plan file carries ``schema``; ``load_plan`` and
``finished`` are the one way to read them back.
"""
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
