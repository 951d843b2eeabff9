"""The layout's rules, checked over the tree itself.

Pure modules (every module of controller/ and topologies/ except the Ryu
shells, controller/ryuapp/* and controller/<system>/*app.py, and the Mininet
adapter topologies/mininet_topo.py; and the pure modules under scripts/ named
in PURE_SCRIPTS) never import ryu, eventlet or mininet, even transitively;
the emulation runtime (scripts/emulator/) never imports an experiment
package or the command line; and fat-tree cabling facts are asked of the
model, never recomputed in controller/.
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
PURE_SCRIPTS = ['scripts.emulator.bfd.policy', 'scripts.cluster.placement', 'scripts.fattree.patterns',
                'scripts.fattree.outages_report', 'scripts.fattree.bfd_floor_report',
                'scripts.fattree.bfd_defaults_report', 'scripts.cluster.measure_report',
                'scripts.emulator.benchmarks.rate_sweep_report', 'scripts.docs',
                'scripts.kevin.workload', 'scripts.kevin.emulation_stats', 'scripts.fattree.workload_report',
                'scripts.fattree.installed_check', 'scripts.fattree.fault_campaign_report',
                'scripts.fattree.fault_events', 'scripts.emulator.shaping', 'scripts.fattree.cross_validation',
                'scripts.sim.datacenter_rates', 'scripts.sim.datacenter_fcts']
PURE = [m for package in ('controller', 'topologies') for m in module_names(package) if not _is_shell(m)] + PURE_SCRIPTS
# The emulator's benchmarks (scripts/emulator/benchmarks) run experiments to measure the emulator:
# they sit beside the runtime, not in it.
RUNTIME = [m for m in module_names('scripts/emulator') if not m.startswith('scripts.emulator.benchmarks')]
# What the runtime must not depend on: the experiments and the command line that use it.
ABOVE_RUNTIME = ('scripts.fattree', 'scripts.kevin', 'scripts.nbridge', 'scripts.letflow', 'scripts.p4',
                 'scripts.cluster', 'scripts.cli', 'scripts.argtypes', 'scripts.browser')
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


def test_the_runtime_imports_no_experiment_and_not_the_command_line():
    """Each runtime module in a fresh interpreter: no experiment package is pulled in, transitively."""
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        found = dict(zip(RUNTIME, pool.map(lambda m: _imported(m, ABOVE_CHECK), RUNTIME)))
    assert {m: names for m, names in found.items() if names} == {}


def test_the_runtime_check_catches_an_experiment_import():
    assert _imported('scripts.fattree.bisection_measure', ABOVE_CHECK) != []


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
