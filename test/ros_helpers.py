# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test harness for rclpy over real DDS (loopback only).

- ``DomainLease`` (vepd_ros.graph.domain): a ROS_DOMAIN_ID held exclusively (flock) for one
  test, so concurrent pytest runs, xdist workers and ``vepd run`` on this machine never see each
  other's traffic.
- ``spin_until``: spin executors until a predicate holds or a timeout passes (discovery can take
  seconds); never a fixed sleep.
- ``ros_env``: the environment for node subprocesses (same domain, loopback discovery, local logs).
"""

from __future__ import annotations

import os
from pathlib import Path
import sys
import time

from vepd_ros.graph.domain import DOMAIN_RANGE, DomainLease, LOCK_DIR  # noqa: F401 - one lease

REPO = Path(__file__).resolve().parents[1]


def ros_env(domain_id: int) -> dict:
    env = dict(os.environ)
    env.update(
        ROS_DOMAIN_ID=str(domain_id),
        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
        ROS_LOG_DIR=str(REPO / '.ros_log'),
        PYTHONUNBUFFERED='1',
    )
    env.pop('RMW_IMPLEMENTATION', None)
    env.pop('ROS_LOCALHOST_ONLY', None)
    return env


def console_script(name: str) -> str:
    """Path of an installed console script in the running interpreter's environment."""
    path = Path(sys.prefix) / 'bin' / name
    if not path.exists():
        raise FileNotFoundError(f'{path} is missing: run `make venv` (pip install .) first')
    return str(path)


def spin_until(executor, predicate, timeout_s: float = 10.0, step_s: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        executor.spin_once(timeout_sec=step_s)
    return bool(predicate())


def wait_for_output(proc, text: str, timeout_s: float = 10.0) -> str:
    """
    Read a subprocess's stdout until a line contains ``text``; return what was read.

    Read a subprocess's stdout (text mode) until a line containing ``text`` appears; returns what
    was read. Raises AssertionError with the output on timeout or early exit.
    """
    import selectors

    seen = []
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if not sel.select(timeout=0.1):
                if proc.poll() is not None:
                    break
                continue
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            seen.append(line)
            if text in line:
                return ''.join(seen)
    finally:
        sel.close()
    raise AssertionError(f'{text!r} not seen within {timeout_s} s; output:\n' + ''.join(seen))
