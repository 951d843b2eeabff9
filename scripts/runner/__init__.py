"""Between the experiments and the backends: one loop that executes an
experiment's plan of runs (in this process, on N local processes, or on a
Dask distributed cluster), one run record schema, and where each backend's
run of an experiment lives.

    experiments (scripts/experiments): options, flows, the plan, reports
        | a plan: [run, ...], each a dict with a stable 'id'
    runner (this package): loop.execute -> one record per run
        | backends.run(experiment, backend, config, run)
    backends: scripts/emulator, scripts/sim, scripts/flow, each
        <experiment>_backend.run_one(config, run, progress) -> record
"""
