# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Import direction between the cores: checked on the source, lazy imports included."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / 'vepd_ros'
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


@pytest.mark.parametrize('core', CORES)
def test_no_core_imports_the_test_data_generators(core):
    assert _importers(core, ('vepd_ros.testing',)) == []
