# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Judges selectable by name wherever a judge is chosen offline (``--judge NAME``, study configs).

One vocabulary everywhere (``vepd study``, ``vepd bag``, ``vepd judge replay``):

* ``builtin``: the built-in robot_localization reproduction (ekf_node + navsat_transform,
  ``vepd_ros.judge.rl_graph``), the default;
* ``bicycle``: the 4-DOF bicycle-model EKF of the MPC paper (``vepd_ros.judge.bicycle``), a second
  judge for sensitivity studies; it reads its own parameters from the ``bicycle_ekf`` section of
  the ekf YAML when present and the frequency/frames from ekf_filter_node otherwise.

``robot_localization`` names ONLY the upstream node (the ROS graph: ``vepd run ... judge:=``,
launch files); asking for it here is an error that says so.

Each entry is a ``JudgeSpec`` with
* ``batch(ekf_params, navsat_params, imu, gps, tf, **timing) -> dict``: K runs with identical
  timing, inputs and output as ``vepd_ros.judge.rl_graph.run_judge_batch``; callers go through
  ``vepd_ros.pipelines.judge_step.judge``, which returns a ``streams.JudgeResult``.

Replaying a recording (``vepd judge replay``) is orchestration: ``vepd_ros.pipelines.replay``
holds each judge's replay (``REPLAYS``, by the names here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

DEFAULT_JUDGE = 'builtin'
UPSTREAM_JUDGE = 'robot_localization'
"""The upstream robot_localization node: a ROS graph judge, never one of ``JUDGES``."""


@dataclass(frozen=True)
class JudgeSpec:
    """A judge by name: its batch entry point."""

    name: str
    description: str
    batch: Callable


def _builtin_batch(*a, **kw):
    from vepd_ros.judge.rl_graph import run_judge_batch

    return run_judge_batch(*a, **kw)


def _bicycle_batch(*a, **kw):
    from vepd_ros.judge.bicycle import run_bicycle_batch

    return run_bicycle_batch(*a, **kw)


JUDGES: dict[str, JudgeSpec] = {
    'builtin': JudgeSpec(
        'builtin',
        'robot_localization ekf_node + navsat_transform (built-in reproduction)',
        _builtin_batch,
    ),
    'bicycle': JudgeSpec(
        'bicycle',
        '4-DOF bicycle-model EKF (x, y, heading, speed; GPS position + IMU yaw rate)',
        _bicycle_batch,
    ),
}


def get_judge(name: str | None) -> JudgeSpec:
    """Return the judge called ``name`` (None: the default, builtin); a clear error otherwise."""
    key = DEFAULT_JUDGE if name is None else str(name).strip().lower().replace('-', '_')
    if key == UPSTREAM_JUDGE:
        raise ValueError(
            f'judge {name!r} is the upstream robot_localization node, not available offline: '
            f'use the ROS graph (`vepd run sim_judge judge:=robot_localization`, launch files); '
            f'offline judges: {", ".join(JUDGES)}'
        )
    if key not in JUDGES:
        raise ValueError(f'judge {name!r}: expected one of {", ".join(JUDGES)}')
    return JUDGES[key]
