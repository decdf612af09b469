# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""The judge step (pipelines.judge_step.judge): one result type whatever the judge's grouping."""

from pathlib import Path

import numpy as np
import pytest
from vepd_ros.judge.registry import get_judge
from vepd_ros.pipelines.judge_step import judge
from vepd_ros.streams import JudgeResult, Stream
from vepd_ros.testing.judge_inputs import circle_inputs

REPO = Path(__file__).resolve().parents[1]
EKF, NAVSAT = REPO / 'config' / 'ekf.yaml', REPO / 'config' / 'navsat.yaml'


def _streams(imu: dict, gps: dict, rows=None):
    rows = slice(None) if rows is None else rows

    def pick(d, kind, names):
        return Stream(
            kind,
            d['stamp_ns'],
            d.get('arrival_ns'),
            d['frame_id'],
            fields={k: np.asarray(d[k])[rows] for k in names if k in d},
        )

    return (
        pick(imu, 'imu', ('angular_velocity', 'linear_acceleration', 'orientation')),
        pick(gps, 'fix', ('latitude', 'longitude', 'altitude', 'status')),
    )


def test_split_batch_reads_like_each_group_judged_alone():
    """Runs with different GPS validity: each run's velocity is its own group's, bit for bit."""
    imu, gps, _ = circle_inputs(k=3, duration_s=6.0, gps_sigma=0.5, seed=4)
    gps['latitude'][1, 20:30] = np.nan  # run 1 loses 10 fixes: navsat timing differs
    res = judge(*_streams(imu, gps), ekf_yaml=EKF, navsat_yaml=NAVSAT)
    assert isinstance(res, JudgeResult) and res.k == 3 and len(res.estimates) == 3
    alone = {
        rows: judge(*_streams(imu, gps, list(rows)), ekf_yaml=EKF, navsat_yaml=NAVSAT)
        for rows in ((0, 2), (1,))
    }
    for run, (rows, row) in {0: ((0, 2), 0), 1: ((1,), 0), 2: ((0, 2), 1)}.items():
        for got, want in zip(res.velocity(run), alone[rows].velocity(row)):
            assert np.array_equal(got, want)
    assert len(res.velocity(1)[0]) == len(res.velocity(0)[0])  # same ticks, different content
    assert not np.array_equal(res.velocity(1)[1], res.velocity(0)[1])
    want_dropped = {}
    for r in alone.values():  # counted once per group, not once per run
        for reason, n in r.dropped.items():
            want_dropped[reason] = want_dropped.get(reason, 0) + n
    assert dict(res.dropped) == want_dropped


def test_one_group_shares_one_estimate_stream():
    imu, gps, _ = circle_inputs(k=2, duration_s=4.0)
    res = judge(*_streams(imu, gps), ekf_yaml=EKF, navsat_yaml=NAVSAT)
    assert len(res.estimates) == 1 and res.rows == ((0, 0), (0, 1))
    est = res.estimates[0]
    assert est.kind == 'estimate' and est.fields['state'].shape == (2, est.n, 15)
    assert np.all(np.diff(est.stamp_ns) > 0) and np.all(est.arrivals_ns >= est.stamp_ns)


def test_judges_by_one_vocabulary():
    imu, gps, _ = circle_inputs(k=1, duration_s=4.0)
    for name in ('builtin', 'bicycle'):
        st, vx, vy = judge(*_streams(imu, gps), judge=name).velocity(0)
        assert len(st) > 50 and np.isfinite(vx).all() and np.isfinite(vy).all()
    with pytest.raises(ValueError, match='upstream robot_localization node'):
        judge(*_streams(imu, gps), judge='robot_localization')
    with pytest.raises(ValueError, match='builtin, bicycle'):
        get_judge('ukf')
