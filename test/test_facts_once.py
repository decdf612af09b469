# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Facts spelled once: a value that names a fact appears as a literal only where it is defined.

Checked on the package's source (string constants, docstrings aside): the default IMU model
(``models.DEFAULT_IMU_MODEL``) and the ART vehicle's bag topics (``streams.TOPIC_ART_*``); and on
the tests: every topic of ``streams.TOPIC_*`` (a test names a topic by its constant, so a renamed
topic moves the tests with it). Run by ``make lint`` and ``make test``.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / 'vepd_ros'
TESTS = Path(__file__).resolve().parent

OWNERS = {
    'ch_drift_paper': {'models/__init__.py'},
    '/fix': {'streams.py'},
    # Gazebo's own IMU topic happens to be spelled as ART's: another fact (io/profiles 'gazebo')
    '/imu': {'streams.py', 'io/profiles.py'},
}


def _string_literals(path: Path):
    """Yield (line, value) of the string constants of a file that are not docstrings."""
    tree = ast.parse(path.read_text(encoding='utf-8'))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, 'body', None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            docstrings.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            docstrings.add(id(node.value))  # attribute docstrings (a string after a constant)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            yield node.lineno, node.value


@pytest.mark.parametrize('value', sorted(OWNERS))  # not 'linter': that marks ament's linters
def test_a_fact_is_a_literal_only_where_it_is_defined(value):
    found = sorted(
        f'{p.relative_to(PACKAGE).as_posix()}:{line}'
        for p in PACKAGE.rglob('*.py')
        for line, v in _string_literals(p)
        if v == value and p.relative_to(PACKAGE).as_posix() not in OWNERS[value]
    )
    assert found == [], f'{value!r} spelled outside {sorted(OWNERS[value])}: {found}'


def test_the_ban_sees_a_literal():
    """The check finds what it bans (a literal in the defining module itself)."""
    lines = [v for _, v in _string_literals(PACKAGE / 'streams.py')]
    assert '/fix' in lines and '/imu' in lines


def _topics() -> dict:
    """{topic: its constant} of ``streams.TOPIC_*`` (read from the module's source, no import)."""
    tree = ast.parse((PACKAGE / 'streams.py').read_text(encoding='utf-8'))
    return {
        node.value.value: node.targets[0].id
        for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith('TOPIC_')
        and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def test_tests_name_the_suites_topics_by_their_constants():
    topics = _topics()
    assert '/fix' in topics and '/ground_truth/odometry' in topics  # the reader sees them
    found = sorted(
        f'{p.name}:{line} {v!r} (streams.{topics[v]})'
        for p in TESTS.glob('*.py')
        if p.name != Path(__file__).name  # this file spells what it bans
        for line, v in _string_literals(p)
        if v in topics
    )
    assert found == [], f'topic literals in tests: {found}'
