# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Import direction between the cores: checked on the source, lazy imports included."""

import ast
from pathlib import Path
import re

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / 'vepd_ros'
CORES = ('models', 'judge', 'truth', 'metrics', 'runs', 'io', 'report')


def _imports(path: Path) -> set:
    """Return every vepd_ros module a file imports, at module level or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f'{node.module}.{a.name}' for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith('vepd_ros')}


def _importers(package: str, banned: tuple) -> list:
    return sorted(
        f'{p.relative_to(PACKAGE.parent)} imports {m}'
        for p in (PACKAGE / package).rglob('*.py')
        for m in _imports(p)
        if m.startswith(banned)
    )


def test_models_import_nothing_from_io():
    """The noise models take arrays; reading logs and bags is io's (io may import models)."""
    assert _importers('models', ('vepd_ros.io',)) == []


def test_metrics_import_nothing_from_runs():
    """Issue 26: the metric core takes arrays (``metrics.records``); run files are runs/'s."""
    assert _importers('metrics', ('vepd_ros.runs',)) == []


def test_models_import_nothing_from_runs():
    """Models know no run files; generic file helpers are the leaf ``vepd_ros.fileio``'s."""
    assert _importers('models', ('vepd_ros.runs',)) == []


def test_importers_sees_function_level_imports(tmp_path, monkeypatch):
    """The check above reads imports inside functions too (a lazy import is still a dependency)."""
    pkg = tmp_path / 'vepd_ros' / 'models'
    pkg.mkdir(parents=True)
    (pkg / 'm.py').write_text('def f():\n    from vepd_ros.runs.atomic import x\n')
    monkeypatch.setitem(globals(), 'PACKAGE', tmp_path / 'vepd_ros')
    assert _importers('models', ('vepd_ros.runs',)) == [
        'vepd_ros/models/m.py imports vepd_ros.runs.atomic',
        'vepd_ros/models/m.py imports vepd_ros.runs.atomic.x',
    ]


@pytest.mark.parametrize('core', CORES)
def test_no_core_imports_the_test_data_generators(core):
    assert _importers(core, ('vepd_ros.testing',)) == []


FRONTS = (
    'vepd_ros.pipelines',
    'vepd_ros.commands',
    'vepd_ros.nodes',
    'vepd_ros.graph',
    'vepd_ros.cli',
    'vepd_ros.ros_graph',
    'vepd_ros.launch_support',
)


@pytest.mark.parametrize('core', CORES)
def test_no_core_imports_orchestration_or_a_front(core):
    """Cores are imported by pipelines, commands and nodes, never the reverse."""
    assert _importers(core, FRONTS) == []


def test_pipelines_import_no_front():
    """Orchestration sits below the fronts: the graph description and the CLI use it, not back."""
    assert _importers('pipelines', FRONTS[1:]) == []


def _module_graph() -> dict:
    """Return {module: the vepd_ros modules it imports}, lazy imports included."""
    modules = {}
    for p in PACKAGE.rglob('*.py'):
        parts = p.relative_to(PACKAGE.parent).with_suffix('').parts
        modules['.'.join(parts[:-1] if parts[-1] == '__init__' else parts)] = p

    def resolve(name):  # 'vepd_ros.io.bags.Bag' -> 'vepd_ros.io.bags'
        while name and name not in modules:
            name = name.rpartition('.')[0]
        return name

    return {
        m: {t for t in map(resolve, _imports(p)) if t not in ('', m, 'vepd_ros')}
        for m, p in modules.items()
    }


def _cycles(graph: dict) -> list:
    """Return the strongly connected components of more than one node (Tarjan), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_cycle_finder_finds_a_cycle():
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}, 'e': set()}
    assert _cycles(graph) == [['a', 'b', 'c']]
    assert _cycles({'a': {'b'}, 'b': set()}) == []


def test_no_import_cycle_between_modules():
    """No two modules import each other, directly or around a loop, even lazily."""
    assert _cycles(_module_graph()) == []


def test_no_import_cycle_between_subpackages():
    """
    Between subpackages (io, judge, ...) and top-level modules the imports form no loop.

    A loop of subpackages (io -> judge -> io) is layering inverted even when the modules
    involved differ.
    """
    units = {}
    for m, targets in _module_graph().items():
        unit = '.'.join(m.split('.')[:2])
        units.setdefault(unit, set()).update('.'.join(t.split('.')[:2]) for t in targets)
    for unit, targets in units.items():
        targets.discard(unit)
    assert _cycles(units) == []


PRIVATE_RCLPY = re.compile(r'_parameter_overrides|\._parameters\b|\btake_message\b')
"""rclpy's private API (issue 24): the overrides dict, the parameters dict, a raw take."""


def test_no_private_rclpy_api():
    """The package uses rclpy's public API only; a private attribute may change in any release."""
    hits = sorted(
        f'{p.relative_to(PACKAGE.parent)}:{n}: {line.strip()}'
        for p in PACKAGE.rglob('*.py')
        for n, line in enumerate(p.read_text(encoding='utf-8').splitlines(), 1)
        if PRIVATE_RCLPY.search(line)
    )
    assert not hits, '\n'.join(hits)


def test_every_module_over_600_lines_gives_its_reason_in_developing_md():
    """Issue 26: no vepd_ros/ module over ~600 lines without a one-line reason in DEVELOPING.md."""
    import re

    text = (ROOT / 'DEVELOPING.md').read_text()
    section = text.split('## Modules over 600 lines, and why', 1)[1].split('\n## ', 1)[0]
    listed = dict(re.findall(r'^- `([^`]+)`: (.+)$', section, re.M))
    long = {
        str(f.relative_to(ROOT)): n
        for f in sorted((ROOT / 'vepd_ros').rglob('*.py'))
        if (n := len(f.read_text().splitlines())) > 600
    }
    missing = sorted(set(long) - set(listed))
    assert not missing, f'over 600 lines with no reason in DEVELOPING.md: {missing}'
    stale = sorted(set(listed) - set(long))
    assert not stale, f'listed in DEVELOPING.md but no longer over 600 lines: {stale}'
    assert all(len(r) > 20 for r in listed.values()), listed
