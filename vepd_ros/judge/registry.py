# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Judges selectable by name wherever a judge is chosen (``--judge NAME``, study configs).

``JUDGES = {'robot_localization': ..., 'bicycle': ...}``; each entry is a ``JudgeSpec`` with
* ``batch(ekf_params, navsat_params, imu, gps, **timing) -> dict`` — K runs with identical timing,
  inputs and output as ``vepd_ros.judge.graph.run_judge_batch`` (output: 'stamp_ns', 'state' …,
  'vx', 'vy', 'speed' (K, T));
* ``replay(ekf_config, input, **options) -> dict`` — a recording (see ``vepd_ros.judge.replay``).

``robot_localization``: the built-in robot_localization reproduction (ekf_node + navsat_transform).
``bicycle``: the 4-DOF bicycle-model EKF of the MPC paper (``vepd_ros.judge.bicycle``), a second
judge for sensitivity studies; it reads its own parameters from the ``bicycle_ekf`` section of the
ekf YAML when present and the frequency/frames from ekf_filter_node otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class JudgeSpec:
    name: str
    description: str
    batch: Callable
    replay: Callable


def _rl_batch(*a, **kw):
    from vepd_ros.judge.graph import run_judge_batch

    return run_judge_batch(*a, **kw)


def _rl_replay(*a, **kw):
    from vepd_ros.judge.replay import replay_robot_localization

    return replay_robot_localization(*a, **kw)


def _bicycle_batch(*a, **kw):
    from vepd_ros.judge.bicycle import run_bicycle_batch

    return run_bicycle_batch(*a, **kw)


def _bicycle_replay(*a, **kw):
    from vepd_ros.judge.bicycle import replay_bicycle

    return replay_bicycle(*a, **kw)


JUDGES: dict[str, JudgeSpec] = {
    'robot_localization': JudgeSpec(
        'robot_localization',
        'robot_localization ekf_node + navsat_transform (built-in reproduction)',
        _rl_batch,
        _rl_replay,
    ),
    'bicycle': JudgeSpec(
        'bicycle',
        '4-DOF bicycle-model EKF (x, y, heading, speed; GPS position + IMU yaw rate)',
        _bicycle_batch,
        _bicycle_replay,
    ),
}


def get_judge(name: str) -> JudgeSpec:
    key = (name or 'robot_localization').strip().lower().replace('-', '_')
    if key in ('rl', 'builtin', 'ekf'):
        key = 'robot_localization'
    if key not in JUDGES:
        raise ValueError(f'judge {name!r}: expected one of {", ".join(JUDGES)}')
    return JUDGES[key]
