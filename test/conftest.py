# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Shared fixtures: a fresh rclpy context on its own ROS_DOMAIN_ID per test, and ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path
import sys

import pytest

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_LOG_DIR', str(Path(__file__).resolve().parents[1] / '.ros_log'))
os.environ.setdefault('MPLBACKEND', 'Agg')
os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)  # the venv the package is installed in
os.environ.pop('RMW_IMPLEMENTATION', None)

from rl_judge import rl_judge  # noqa: E402, F401 - the fixture: robot_localization built here
from ros_helpers import DomainLease  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get('VEPD_SHARED_DATA', REPO.parent / 'shared' / 'data'))


@pytest.fixture
def shared_data() -> Path:
    """
    Return the shared data folder, or skip the test without it.

    ../shared/data beside the clone (CI has it); tests needing it skip with the reason otherwise.
    """
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f'shared data not found at {SHARED_DATA} (set VEPD_SHARED_DATA or put shared/ beside '
            f'the clone)'
        )
    return SHARED_DATA


@pytest.fixture
def domain_id():
    lease = DomainLease()
    try:
        yield lease.domain_id
    finally:
        lease.release()


@pytest.fixture
def ros_ctx(domain_id):
    """Give a fresh rclpy context on this test's own domain; shut down afterwards."""
    import rclpy

    ctx = rclpy.context.Context()
    rclpy.init(context=ctx, domain_id=domain_id)
    try:
        yield ctx
    finally:
        ctx.try_shutdown()


@pytest.fixture
def executor(ros_ctx):
    from rclpy.executors import SingleThreadedExecutor

    ex = SingleThreadedExecutor(context=ros_ctx)
    try:
        yield ex
    finally:
        ex.shutdown()
