# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""ament_pep257 over the package (pydocstyle, ament's convention), as `colcon test` runs it."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257(monkeypatch):
    """Every docstring follows PEP 257 as ament configures pydocstyle."""
    main = pytest.importorskip(
        'ament_pep257.main',
        reason='ament_pep257 not installed (make venv installs it from '
        '../shared/ros2_tooling/lint; a ROS 2 install has it)',
    ).main
    monkeypatch.chdir(REPO)
    rc = main(argv=['.', 'test'])
    assert rc == 0, 'Found code style errors / warnings'
