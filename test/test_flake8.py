# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""ament_flake8 over the package with ament's own configuration, as `colcon test` runs it."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8(monkeypatch):
    """No flake8 error under ament_flake8.ini (99 columns, single quotes, google import order)."""
    main_with_errors = pytest.importorskip(
        'ament_flake8.main',
        reason='ament_flake8 not installed (make venv installs it from '
        '../shared/ros2_tooling/lint; a ROS 2 install has it)',
    ).main_with_errors
    pytest.importorskip('flake8_quotes', reason='flake8 plugins missing (requirements-dev.txt)')
    monkeypatch.chdir(REPO)  # ament_flake8 walks the working directory for its excludes
    rc, errors = main_with_errors(argv=[])
    assert rc == 0, 'Found %d code style errors / warnings:\n' % len(errors) + '\n'.join(errors)
