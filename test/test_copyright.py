# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""ament_copyright over the package, as `colcon test` runs it: a notice in every source file."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.copyright
@pytest.mark.linter
def test_copyright(monkeypatch):
    """Every .py file carries the BSD-3-Clause notice of LICENSE (ament's bsd_3clause)."""
    main = pytest.importorskip(
        'ament_copyright.main',
        reason='ament_copyright not installed (make venv installs it '
        'from ../shared/ros2_tooling/lint; a ROS 2 install has it)',
    ).main
    monkeypatch.chdir(REPO)
    rc = main(argv=['.', 'test'])
    assert rc == 0, 'Found errors'
