# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The judge step: sensor streams in, the judge's /odometry/filtered out, for K runs at once.

``judge(imu, gps, judge='builtin', ...)`` is the one orchestration of the judge that the study
(``pipeline``), ``vepd bag`` and the hybrid experiments call: the judge is chosen by name
(``judge.registry``: 'builtin' or 'bicycle'), robot_localization's own YAML files are the default
configuration (``config/ekf.yaml``, ``config/navsat.yaml``), and the result is always one
``streams.JudgeResult`` (callers never see the judge's grouping of runs).
"""

from __future__ import annotations

import numpy as np
from vepd_ros.params_file import config_file
from vepd_ros.streams import JudgeResult, Stream


def stack_runs(per_run: list) -> dict:
    """Return the fields of several runs (``imu_fields``/``fix_fields`` each) on a run axis."""
    return {k: np.stack([f[k] for f in per_run]) for k in per_run[0]}


def batch_inputs(stream: Stream | None) -> dict | None:
    """Return a ``Stream`` as the dict of a judge's ``batch`` (run_judge_batch's layout)."""
    if stream is None:
        return None
    d = {'stamp_ns': stream.stamp_ns}
    if stream.arrival_ns is not None:
        d['arrival_ns'] = stream.arrival_ns
    d.update(stream.fields)
    d['frame_id'] = stream.frame_id
    return d


def _estimate(res: dict) -> Stream:
    cov = 'P' if 'P' in res else 'p_diag'
    return Stream(
        'estimate',
        np.asarray(res['stamp_ns'], np.int64),
        np.asarray(res['tick_ns'], np.int64),
        fields={'state': res['state'], cov: res[cov]},
    )


def judge(
    imu: Stream,
    gps: Stream | None,
    *,
    judge: str = 'builtin',
    ekf_yaml=None,
    navsat_yaml=None,
    tf=None,
    gravity_frame: str = 'imu',
) -> JudgeResult:
    """
    Run the judge ``judge`` over K runs of IMU and GPS with identical timing.

    ``ekf_yaml``/``navsat_yaml``: robot_localization YAML paths (None: the package's own);
    ``tf``: static transforms (``judge.navsat.StaticTF``) or None. A judge that splits the runs
    into groups of equal output timing (the builtin one, by GPS validity) gives one estimate
    stream per group; ``JudgeResult.velocity(k)`` reads any run.
    """
    from vepd_ros.judge.registry import get_judge

    spec = get_judge(judge)
    ekf = str(ekf_yaml or config_file('ekf.yaml'))
    nav = str(navsat_yaml or config_file('navsat.yaml'))
    res = spec.batch(
        ekf, nav, batch_inputs(imu), batch_inputs(gps), tf, gravity_frame=gravity_frame
    )
    if not res.get('split'):
        est = _estimate(res)
        k = est.fields['state'].shape[0]
        return JudgeResult((est,), tuple((0, row) for row in range(k)), res.get('dropped') or {})
    estimates, rows, dropped, counted = [], [], {}, set()
    for r in res['runs']:  # one dict per run: its row of its group's result
        estimates.append(
            _estimate({key: (v[None] if key in ('state', 'p_diag', 'P') else v)
                       for key, v in r.items()})
        )
        rows.append((len(estimates) - 1, 0))
        group_dropped = r.get('dropped') or {}
        if id(group_dropped) not in counted:  # the runs of a group share its counts
            counted.add(id(group_dropped))
            for reason, n in group_dropped.items():
                dropped[reason] = dropped.get(reason, 0) + n
    return JudgeResult(tuple(estimates), tuple(rows), dropped)
