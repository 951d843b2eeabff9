"""The layout's rules, checked over the tree itself.

Pure modules (every module of controller/ and topologies/ except the Ryu
shells, controller/ryuapp/* and controller/<system>/*app.py, and the Mininet
adapter topologies/mininet_topo.py; and the pure modules under scripts/ named
in PURE_SCRIPTS) never import ryu, eventlet or mininet, even transitively;
experiments above, backends below: the backends (the emulation runtime
scripts/emulator/, the simulator scripts/sim/, the flow-level model
scripts/flow/, LetFlow's leaf-spine simulator scripts/letflow/ns3/) never import an experiment, the runner or the command line,
and no two packages under scripts/ import each other (a backend's
benchmarks/ counts as a package of its own: it runs experiments on its
backend); and fat-tree cabling facts are asked of the model, never
recomputed in controller/.
"""
import ast
import concurrent.futures
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORBIDDEN = ('ryu', 'eventlet', 'mininet')


def _is_shell(module):
    parts = module.split('.')
    return (parts[:2] == ['controller', 'ryuapp'] or parts[-1].endswith('app')
            or parts[-1].startswith('mininet'))


def module_names(package):
    names = []
    for path in sorted((ROOT / package).rglob('*.py')):
        parts = path.relative_to(ROOT).with_suffix('').parts
        names.append('.'.join(parts[:-1] if parts[-1] == '__init__' else parts))
    return names


# Pure logic that lives beside the experiments that use it.
PURE_SCRIPTS = ['scripts.emulator.bfd.policy', 'scripts.cluster.placement', 'scripts.experiments.patterns',
                'scripts.fattree.outages_report', 'scripts.fattree.bfd_floor_report',
                'scripts.fattree.bfd_defaults_report', 'scripts.emulator.benchmarks.cluster_report',
                'scripts.emulator.benchmarks.rate_sweep_report', 'scripts.docs',
                'scripts.kevin.workload', 'scripts.kevin.emulation_stats', 'scripts.experiments.workload_report',
                'scripts.fattree.installed_check', 'scripts.fattree.fault_campaign_report',
                'scripts.fattree.fault_events', 'scripts.emulator.shaping', 'scripts.experiments.cross_validation',
                'scripts.experiments.datacenter_rates', 'scripts.experiments.datacenter_fcts',
                'scripts.experiments.defaults', 'scripts.runner.records', 'scripts.runner.loop',
                'scripts.runner.backends', 'scripts.runner.options', 'scripts.experiments.model_comparison',
                'scripts.flow.pipeline_walk', 'scripts.flow.max_min', 'scripts.flow.fabric',
                'scripts.flow.bisection_backend']
PURE = [m for package in ('controller', 'topologies') for m in module_names(package) if not _is_shell(m)] + PURE_SCRIPTS
# The backends: each runs one run and imports nothing above it. Their benchmarks
# (scripts/<backend>/benchmarks) run experiments to measure them: beside the backends, not in them.
BACKENDS = ('scripts/emulator', 'scripts/sim', 'scripts/flow', 'scripts/letflow/ns3')
BACKEND_MODULES = [m for package in BACKENDS for m in module_names(package) if '.benchmarks' not in m]
RUNTIME = [m for m in BACKEND_MODULES if m.startswith('scripts.emulator')]
# What a backend must not depend on: the experiments, the runner and the command lines that use it
# (LetFlow's ns-3 build, which the simulator's build shares, and the shared argument types are tools).
ABOVE_RUNTIME = ('scripts.experiments', 'scripts.runner', 'scripts.fattree', 'scripts.kevin', 'scripts.nbridge',
                 'scripts.letflow.ns3_experiments', 'scripts.p4', 'scripts.cluster', 'scripts.cli', 'scripts.browser')
CHECK = ('import importlib, sys; importlib.import_module(sys.argv[1]); '
         'print(" ".join(sorted(n for n in sys.modules if n.split(".")[0] in %r)))' % (FORBIDDEN,))


def test_the_rule_sorts_every_module():
    shells = [m for package in ('controller', 'topologies') for m in module_names(package) if _is_shell(m)]
    assert {'controller.fattree.routing_app', 'controller.fattree.scheme_mixin_app', 'controller.kevin.distda_app',
            'controller.ryuapp.ofp', 'topologies.mininet_topo'} <= set(shells)
    assert {'controller.openflow.diff', 'controller.fattree.scheme_strategies', 'controller.fattree.twolevel',
            'controller.kevin.rules', 'controller.nbridge.routing', 'controller.letflow.markov',
            'controller.p4.entries', 'topologies.addressing', 'scripts.emulator.bfd.policy'} <= set(PURE)
    assert {'scripts.emulator.fabric', 'scripts.emulator.faults', 'scripts.emulator.bfd.sessions',
            'scripts.emulator.ovs.vswitchd', 'scripts.emulator.ovs.instances'} <= set(RUNTIME)


def _imported(module, check=CHECK):
    done = subprocess.run([sys.executable, '-c', check, module], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, '%s does not import: %s' % (module, done.stderr)
    return done.stdout.split()


def _forbidden_imports(module):
    return _imported(module)


ABOVE_CHECK = ('import importlib, sys; importlib.import_module(sys.argv[1]); '
               'print(" ".join(sorted(n for n in sys.modules if n.startswith(%r))))' % (ABOVE_RUNTIME,))


def test_the_backends_import_no_experiment_runner_or_command_line():
    """Each backend module in a fresh interpreter: nothing above it is pulled in, transitively."""
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        found = dict(zip(BACKEND_MODULES, pool.map(lambda m: _imported(m, ABOVE_CHECK), BACKEND_MODULES)))
    assert {m: names for m, names in found.items() if names} == {}


def package_of(module):
    """The package under scripts/ a module belongs to for the import rule:
    scripts.X, or scripts.X.benchmarks for a backend's benchmarks; a module
    directly under scripts/ is its own."""
    parts = module.split('.')
    return '.'.join(parts[:3] if len(parts) > 2 and parts[2] == 'benchmarks' else parts[:2])


def scripts_imports(path):
    """The scripts.* modules a file imports, at its top or inside functions."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + ['%s.%s' % (node.module, alias.name) for alias in node.names]
    return [name for name in names if name.startswith('scripts.')]


def package_imports():
    """{package: the other packages it imports} over every module under scripts/."""
    modules = set(module_names('scripts'))
    edges = {}
    for path in sorted((ROOT / 'scripts').rglob('*.py')):
        parts = path.relative_to(ROOT).with_suffix('').parts
        module = '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)
        for name in scripts_imports(path):
            while name not in modules and '.' in name:  # `from package import name` of a function
                name = name.rsplit('.', 1)[0]
            if name in modules and package_of(name) != package_of(module):
                edges.setdefault(package_of(module), set()).add(package_of(name))
    return edges


def mutual(edges):
    return sorted((a, b) for a, targets in edges.items() for b in targets if a < b and a in edges.get(b, ()))


def test_no_two_packages_under_scripts_import_each_other():
    assert mutual(package_imports()) == []


def test_the_mutual_import_rule_catches_a_pair():
    assert mutual({'scripts.sim': {'scripts.experiments'}, 'scripts.experiments': {'scripts.sim'}}) == [
        ('scripts.experiments', 'scripts.sim')]
    assert package_of('scripts.sim.benchmarks.speed') == 'scripts.sim.benchmarks'
    assert package_of('scripts.sim.scenario') == 'scripts.sim'


def test_nothing_outside_the_runner_loops_over_a_plan():
    """A backend runs one run: none has the loop over seeds and schemes the runner owns."""
    paths = [path for package in BACKENDS for path in (ROOT / package).rglob('*.py') if 'benchmarks' not in path.parts]
    assert [str(p) for p in paths if 'def run_experiment(' in p.read_text()] == []


def test_the_runtime_check_catches_an_experiment_import():
    assert _imported('scripts.emulator.benchmarks.rate_sweep', ABOVE_CHECK) != []


def test_pure_modules_never_import_ryu_eventlet_or_mininet():
    """Each pure module in a fresh interpreter: what it pulls in, transitively."""
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        found = dict(zip(PURE, pool.map(_forbidden_imports, PURE)))
    assert {m: names for m, names in found.items() if names} == {}


# Cabling recomputed instead of asked of the model (topologies.fattree):
# "up-ports are k/2..k-1", "edge port = host ID - 2", "core port = pod",
# "upper port = subnet index", switch names built from coordinates.
RECOMPUTED = [re.compile(p) for p in (
    r'range\(\s*[\w.]*half\s*,\s*[\w.]*\bk\s*\)',
    r'%\s*[\w.]*half\s*\+\s*[\w.]*half',
    r'host_id\s*-\s*2\s*[,)]',
    r'port\s*=\s*(pod|subnet)\b',
    r'\b(edge|aggregation|core)_name\(',
    r"'[eac]%d_%d'",
)]


def test_no_fattree_cabling_is_recomputed_in_controller():
    hits = []
    for path in sorted((ROOT / 'controller').rglob('*.py')):
        name = str(path.relative_to(ROOT))
        for number, line in enumerate(path.read_text().splitlines(), 1):
            hits += ['%s:%d: %s' % (name, number, line.strip()) for p in RECOMPUTED if p.search(line)]
    assert hits == []


@pytest.mark.parametrize('line', [
    'up = range(topo.half, topo.k)', "table.add_suffix('hostid', v, 8, (i - 2 + z) % half + half)",
    'table.add_prefix(p, 32, port=host_id - 2)', "table.add_prefix('10.%d.0.0' % pod, 16, port=pod)",
    'agg = aggregation_name(src_pod, z)', "other = 'e%d_%d' % (pod, z)"])
def test_the_recomputation_patterns_catch_the_old_code(line):
    assert any(p.search(line) for p in RECOMPUTED)


def _calls_without_timeout(text):
    """Line numbers of subprocess.run/check_output/check_call/call calls in ``text`` without ``timeout=``."""
    return [node.lineno for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == 'subprocess'
            and node.func.attr in ('run', 'check_output', 'check_call', 'call')
            and not any(keyword.arg == 'timeout' for keyword in node.keywords)]


# an argv naming ovs-vsctl or ovs-appctl with no --timeout on the same line (not a which('ovs-vsctl'))
OVS_TOOL_WITHOUT_TIMEOUT = re.compile(r"""['"]ovs-(vsctl|appctl)['"](?!\s*\))(?![^\n]*--timeout)""")


def test_every_subprocess_and_ovs_tool_has_a_timeout():
    """A command that never answers (ovs-vsctl waits forever by default) must not hang a run or its teardown."""
    hits = []
    for package in ('scripts', 'controller', 'topologies', 'tests'):
        for path in sorted((ROOT / package).rglob('*.py')):
            text = path.read_text()
            name = str(path.relative_to(ROOT))
            hits += ['%s:%d subprocess without timeout' % (name, n) for n in _calls_without_timeout(text)]
            if path != pathlib.Path(__file__):  # this file's own examples
                hits += ['%s:%d %s' % (name, text.count('\n', 0, m.start()) + 1, m.group())
                         for m in OVS_TOOL_WITHOUT_TIMEOUT.finditer(text)]
    assert hits == []


def test_the_timeout_rule_catches_both_kinds():
    assert _calls_without_timeout("import subprocess\nsubprocess.run(['ip', 'link'])\n") == [2]
    assert _calls_without_timeout("import subprocess\nsubprocess.run(['ip'], timeout=5)\n") == []
    assert OVS_TOOL_WITHOUT_TIMEOUT.search("run('ovs-vsctl', 'list-br')")
    assert not OVS_TOOL_WITHOUT_TIMEOUT.search("run('ovs-vsctl', '--timeout=5', 'list-br')")
