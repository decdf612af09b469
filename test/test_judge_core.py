# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the EKF core and node loop against the reference and its section 11.

EKF core and node loop: reference §2-§5 and each numbered consequence of §11
(rl_golden-independent).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_judge_core_msgs import imu_msg, odom_msg
from vepd_ros.judge.config import load_ekf_params
from vepd_ros.judge.ekf import Ekf, wrap
from vepd_ros.judge.filter import RosFilter

NS = 1_000_000_000
T0 = 1_000 * NS
FULL = [True] * 15


def test_wrap_matches_normalize_angle():
    assert wrap(math.pi) == pytest.approx(math.pi)
    assert wrap(-math.pi) == pytest.approx(math.pi)
    assert wrap(3 * math.pi / 2) == pytest.approx(-math.pi / 2)
    np.testing.assert_allclose(
        wrap(np.array([0.1, 7.0, -7.0])), [0.1, 7.0 - 2 * math.pi, -7.0 + 2 * math.pi]
    )


def test_upstream_test_ekf_two_measurements():
    """
    Initialise x and P as upstream test_ekf.cpp does.

    Upstream test_ekf.cpp: first full measurement initialises x, P exactly; after the second,
    every entry is within 1e-3 of the measurement.
    """
    ekf = Ekf()
    z = np.arange(15) * 0.1
    R = 1e-9 * np.eye(15)
    assert ekf.process(T0, z, R, FULL)[0] == 2
    np.testing.assert_array_equal(ekf.x[0], z)
    np.testing.assert_array_equal(ekf.P[0], R)
    z2 = z.copy()
    ekf.process(T0 + NS // 10, z2, R, FULL)
    assert np.max(np.abs(wrap(ekf.x[0] - z2))) < 1e-3


def test_c1_zero_covariance_initialises_exact_zero_and_fuses_at_1e9():
    """§11.1: zero covariance → P exactly 0 at initialisation; later fused as σ² = 1e-9."""
    ekf = Ekf()
    flags = [True, True] + [False] * 13
    ekf.process(T0, np.zeros(15), np.zeros((15, 15)), flags)
    assert ekf.P[0, 0, 0] == 0.0 and ekf.P[0, 1, 1] == 0.0
    ekf.P[0, 0, 0] = 1.0  # make the clamp visible: gain = 1/(1+1e-9)
    ekf.correct(np.full(15, 2.0), np.zeros((15, 15)), [True] + [False] * 14)
    assert ekf.x[0, 0] == pytest.approx(2.0 * 1.0 / (1.0 + 1e-9), rel=1e-15)


def test_c2_q_scaled_by_dt_and_timeout_splits_dt():
    """§11.2: P grows by Q·dt; a timeout prediction splits the interval (J, Q use each dt)."""
    ekf = Ekf()
    ekf.process(T0, np.zeros(15), np.eye(15), FULL)
    P0 = ekf.P[0].copy()
    ekf.x[:] = 0
    ekf.predict(0.5)
    # with zero state J = A(dt); the diagonal growth of an angle-rate entry is exactly Q·dt
    assert ekf.P[0, 11, 11] == pytest.approx(P0[11, 11] + 0.5 * 0.02)
    a, b = Ekf(), Ekf()
    x = np.zeros(15)
    x[[6, 11, 12]] = [1.0, 0.3, 0.2]
    for e in (a, b):
        e.process(T0, x, np.eye(15) * 0.1, FULL)
    a.predict_to(T0 + NS)
    b.predict_to(T0 + NS // 2)
    b.predict_to(T0 + NS)
    assert not np.allclose(a.x, b.x) and b.last_time_ns == a.last_time_ns == T0 + NS


def test_dynamic_process_noise_scales_pose_block():
    """Same prior, dynamic on vs off: P differs by dt·(‖x[6:12]‖² − 1)·Q on the pose block only."""
    e1, e2 = Ekf(dynamic_process_noise=True), Ekf()
    x = np.zeros(15)
    x[6], x[11] = 2.0, 1.0  # ‖v‖² = 5
    for e in (e1, e2):
        e.process(T0, x, np.eye(15), FULL)
        e.predict(0.5)
    diff = e1.P[0] - e2.P[0]
    expect = np.zeros((15, 15))
    expect[:6, :6] = 0.5 * 4.0 * e2.Q[:6, :6]
    np.testing.assert_allclose(diff, expect, atol=1e-12)


def test_c3_late_measurement_corrects_current_state_without_moving_time():
    """§11.3 / §4: δ < 0 → correct only; last_time unchanged; no prediction."""
    ekf = Ekf()
    ekf.process(T0, np.zeros(15), np.eye(15), FULL)
    ekf.process(T0 + NS, np.zeros(15), np.eye(15), FULL)
    x_before, P_before = ekf.x.copy(), ekf.P.copy()
    z = np.zeros(15)
    z[0] = 1.0
    ekf.process(T0 + NS // 2, z, np.eye(15), [True] + [False] * 14)
    assert ekf.last_time_ns == T0 + NS
    K = P_before[0, :, 0] / (P_before[0, 0, 0] + 1.0)
    np.testing.assert_allclose(ekf.x[0], x_before[0] + K * 1.0, atol=1e-15)


def test_mahalanobis_gate_rejects_whole_and_threshold_semantics():
    ekf = Ekf()
    ekf.process(T0, np.zeros(15), np.eye(15), FULL)
    x0, P0 = ekf.x.copy(), ekf.P.copy()
    z = np.zeros(15)
    z[0], z[1] = 3.0, 0.0  # d² = 9/2 = 4.5 with S = 2
    flags = [True, True] + [False] * 13
    acc = ekf.correct(z, np.eye(15), flags, threshold=math.sqrt(4.5))  # d² ≥ thr² → reject
    assert not acc[0]
    np.testing.assert_array_equal(ekf.x, x0)
    np.testing.assert_array_equal(ekf.P, P0)
    assert ekf.correct(z, np.eye(15), flags, threshold=math.sqrt(4.5) * 1.0001)[0]


def test_c5_two_d_mode_pseudo_measurements_change_gate():
    """
    Gate the zero two_d_mode entries of a measurement with the rest.

    §11.5: a two_d_mode measurement carries Z/ROLL/PITCH/... = 0, var 1e-6; they join the gate.
    """
    params = load_ekf_params(
        {
            'two_d_mode': True,
            'odom0': 'o',
            'odom0_config': [True] + [False] * 14,
            'odom0_pose_rejection_threshold': 3.0,
        }
    )
    f = RosFilter(params)
    f.feed('odom0', odom_msg(T0, x=0.0))
    f.tick(T0)
    f.ekf.x[0, 2] = 0.01  # z off by 10 σ of the pseudo-measurement (σ = 1e-3)
    f.ekf.P[0, 2, 2] = 0.0
    f.feed('odom0', odom_msg(T0 + 1, x=0.0))
    seen = []
    f.on_update = lambda topic, t, st, now: seen.append(int(st[0]))
    f.tick(T0 + NS)
    assert seen == [0]  # rejected because of the pseudo z entry


def test_c6_imu_triple_shares_stamp_with_zero_delta():
    params = load_ekf_params(
        {'imu0': 'imu', 'imu0_config': [False] * 3 + [True] * 3 + [False] * 3 + [True] * 6}
    )
    updates = []
    f = RosFilter(
        params, on_update=lambda topic, t, st, now: updates.append((topic, t, f.ekf.last_time_ns))
    )
    f.feed('imu0', imu_msg(T0))
    f.feed('imu0', imu_msg(T0 + NS // 50))
    f.tick(T0 + NS)
    assert [u[0] for u in updates] == ['imu0_pose', 'imu0_twist', 'imu0_acceleration'] * 2
    assert len({u[1] for u in updates[3:]}) == 1


def test_c7_nan_entry_dropped_rest_fused():
    ekf = Ekf()
    ekf.process(T0, np.zeros(15), np.eye(15), FULL)
    z = np.zeros(15)
    z[0], z[1] = np.nan, 1.0
    ekf.correct(z, np.eye(15), [True, True] + [False] * 13)
    assert np.isfinite(ekf.x).all() and ekf.x[0, 1] > 0.4 and ekf.x[0, 0] == 0.0


def test_batched_runs_equal_single_runs():
    """
    Filter K runs together as each run alone.

    K runs filtered together equal each run filtered alone, bit for bit (incl. a NaN in one run
    and a gate): the batch runs K = 1's arithmetic (judge/kernel.py).
    """
    rng = np.random.default_rng(1)
    K = 4
    zs = rng.normal(size=(30, K, 15))
    zs[7, 2, 4] = np.nan
    flags = [True] * 6 + [False] * 3 + [True] * 6
    batch = Ekf(k=K)
    singles = [Ekf() for _ in range(K)]
    for n in range(30):
        t = T0 + n * NS // 10
        batch.process(t, zs[n], np.eye(15) * 0.5, flags, threshold=2.5)
        for k, e in enumerate(singles):
            e.process(t, zs[n, k], np.eye(15) * 0.5, flags, threshold=2.5)
    for k, e in enumerate(singles):
        assert batch.x[k].tobytes() == e.x[0].tobytes()
        assert batch.P[k].tobytes() == e.P[0].tobytes()


# ---------------------------------------------------------------------------------------------- K
# = 1 fast paths
def _schedule_case(seed=3, gates=True):
    """
    Build a schedule exercising every branch of the node loop.

    A schedule exercising every branch of the node loop: IMU triple with a pose gate, a second IMU
    without orientation (state-dependent gravity term) behind a lever arm (twist / acceleration
    lever terms), GPS-like odometry with NaN entries, late arrivals (δ < 0) and sensor-timeout
    ticks.
    """
    from vepd_ros.frames import quaternion_from_rpy
    from vepd_ros.judge.filter import ticks_for
    from vepd_ros.judge.measurements import MeasurementBuilder
    from vepd_ros.judge.transforms import StaticTransforms

    p = load_ekf_params(
        {
            'frequency': 30.0,
            'sensor_timeout': 0.05,
            'imu0': 'imu/a',
            'imu0_config': [False] * 3 + [True] * 3 + [False] * 3 + [True] * 6,
            'imu0_remove_gravitational_acceleration': True,
            'imu1': 'imu/b',
            'imu1_config': [False] * 9 + [True] * 6,
            'imu1_remove_gravitational_acceleration': True,
            'odom0': 'gps',
            'odom0_config': [True] * 3 + [False] * 12,
            **(
                {'imu0_pose_rejection_threshold': 1.5, 'odom0_pose_rejection_threshold': 4.0}
                if gates
                else {}
            ),
        }
    )
    tf = StaticTransforms().add(
        'base_link', 'imu_b', translation=(0.3, -0.1, 0.2), rpy=(0.0, 0.0, 0.4)
    )
    rng = np.random.default_rng(seed)
    n, ng = 150, 12
    ti = T0 + 1_000_000 + np.arange(n, dtype=np.int64) * (NS // 50)
    t = (ti - T0) * 1e-9
    q = quaternion_from_rpy(0.05 * np.sin(t), 0 * t, 3.0 + 0.5 * t) + rng.normal(0, 2e-2, (n, 4))
    w = np.stack([0 * t, 0 * t, 0 * t + 0.5], -1) + rng.normal(0, 0.02, (n, 3))
    a = np.stack([0 * t, 0.5 + 0 * t, 9.80665 + 0 * t], -1) + rng.normal(0, 0.1, (n, 3))
    cov = np.tile(np.eye(3).ravel() * 1e-3, (n, 1))
    ocov_b = cov.copy()
    ocov_b[:, 0] = -1.0  # imu1: no orientation
    b = MeasurementBuilder(p, tf)
    series = b.imu_arrays('imu0', ti, q, w, a, cov, cov, cov)
    series += b.imu_arrays(
        'imu1', ti[::3], q[::3], w[::3], a[::3], ocov_b[::3], cov[::3], cov[::3], frame_id='imu_b'
    )
    tg = T0 + 7_000_000 + np.arange(ng, dtype=np.int64) * (NS // 4)
    pos = rng.normal(0, 1.0, (ng, 3))
    pos[4, 1] = np.nan
    pos[7] = np.nan
    pcov = np.zeros((ng, 36))
    pcov[:, [0, 7, 14]] = 0.5
    gps = b.odometry_arrays(
        'odom0',
        tg,
        pos,
        np.tile([0, 0, 0, 1.0], (ng, 1)),
        pcov,
        np.zeros((ng, 3)),
        np.zeros((ng, 3)),
        np.zeros((ng, 36)),
        'odom',
        'base_link',
        arrivals=tg + rng.integers(0, 3 * NS // 10, ng),
    )  # late: δ < 0 at times
    for s in series:
        s.arrivals = s.stamps
    series += gps
    assert any(s.state_terms is not None for s in series)
    ticks = ticks_for(p, T0 + p.period_ns, 120)  # runs past the data: timeout predictions
    return p, series, ticks


@pytest.mark.parametrize('full', [False, True])
@pytest.mark.parametrize('gates', [True, False])
def test_k1_schedule_loop_equals_batch_loop(monkeypatch, full, gates):
    """
    Match the array path with the K = 1 float path.

    The K = 1 float path of engine.run (with and without fusing same-stamp ungated parts) equals
    its array path: same accept/reject statuses in the same order, same output rows, x and P to
    1e-12.
    """
    import functools

    import vepd_ros.judge.engine as engine
    import vepd_ros.judge.filter as flt

    p, series, ticks = _schedule_case(gates=gates)
    fused_groups = []

    class CountingFuser(engine._Fuser):

        def __call__(self, group, t, Rc3):
            fused_groups.append(tuple(j for j, _, _ in group))
            return super().__call__(group, t, Rc3)

    monkeypatch.setattr(engine, '_Fuser', CountingFuser)
    run = engine.run
    runs = []
    for fuse, scalar in ((True, None), (False, None), (True, False)):
        # scalar=False: every measurement through the array path (the reference)
        monkeypatch.setattr(engine, 'run', functools.partial(run, scalar=scalar))
        seen = []
        res = flt.run_schedule(
            p,
            series,
            ticks,
            full_covariance=full,
            on_update=lambda j, t, st, now: seen.append((j, t, st.tolist(), now)),
            fuse_same_stamp=fuse,
        )
        runs.append((res, seen))
    # imu0 twist + acceleration are always fused; the pose part only when imu0 has no gate
    assert (
        (0, 1, 2) in fused_groups
        if not gates
        else (1, 2) in fused_groups and (0, 1, 2) not in fused_groups
    )
    ref, sref = runs[-1]
    statuses = [s[2][0] for s in sref]
    assert statuses.count(1) > 0 and statuses.count(2) == 1 and (statuses.count(0) > 0) == gates
    assert ref.timeout_predict.any()
    for res, seen in runs[:-1]:
        assert seen == sref
        for f in ('tick_ns', 'stamp_ns', 'published', 'timeout_predict'):
            np.testing.assert_array_equal(getattr(res, f), getattr(ref, f))
        np.testing.assert_allclose(res.x, ref.x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.P, ref.P, rtol=0, atol=1e-12)


def test_message_with_lever_arm_state_terms_single_run():
    """
    Prepare a single-run message that needs the state with the (1, 15) state.

    A single-run message whose measurement needs the state (IMU behind a lever arm) is prepared
    with the (1, 15) filter state (regression: z without a run axis did not broadcast).
    """
    from vepd_ros.judge.transforms import StaticTransforms

    p = load_ekf_params({'imu0': 'imu', 'imu0_config': [False] * 9 + [True] * 6})
    tf = StaticTransforms().add('base_link', 'imu_b', translation=(0.3, -0.1, 0.2))
    f = RosFilter(p, tf)
    for n in range(3):
        m = imu_msg(T0 + n * NS // 50)
        m.header.frame_id = 'imu_b'
        f.feed('imu0', m)
    out = f.tick(T0 + NS)
    assert out is not None and np.isfinite(out.x).all() and out.x.shape == (1, 15)


# ---------------------------------------------------------------------------------------------- K
# > 1 batch paths
def _random_batch(rng, k, dynamic=False):
    x = rng.normal(size=(k, 15))
    x[:, 3:6] = rng.uniform(-math.pi, math.pi, (k, 3))
    x[:, 4] = rng.uniform(-1.3, 1.3, k)
    A = rng.normal(size=(k, 15, 15))
    P = A @ A.transpose(0, 2, 1) * 0.1 + 0.01 * np.eye(15)
    e = Ekf(k=k, dynamic_process_noise=dynamic)
    e.x, e.P = x.copy(), P.copy()
    e.initialized, e.last_time_ns = True, T0
    singles = []
    for i in range(k):
        s = Ekf(dynamic_process_noise=dynamic)
        s.x, s.P = x[i: i + 1].copy(), P[i: i + 1].copy()
        s.initialized, s.last_time_ns = True, T0
        singles.append(s)
    return e, singles


@pytest.mark.parametrize('dynamic', [False, True])
def test_batch_predict_equals_dense_single_runs(dynamic):
    """Predict K runs at once: each run gets the bits of its own K = 1 prediction."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        e, singles = _random_batch(rng, 5, dynamic)
        dt = float(rng.uniform(1e-4, 0.5))
        e.predict(dt)
        for i, s in enumerate(singles):
            s.predict(dt)
            assert np.array_equal(e.x[i], s.x[0]) and np.array_equal(e.P[i], s.P[0])


def test_batch_controlled_predict_equals_single_runs():
    """Control in the batch prediction, x⁺ = A(x)(x + δ), equals each run alone bit for bit."""
    from vepd_ros.judge.rl_graph import _ControlledEkf, ControlParams

    ctl = ControlParams(
        (True, False, False, False, False, True),
        (1.3, 0, 0, 0, 0, 3.4),
        (0.8, 0, 0, 0, 0, 0.9),
        (1.3, 0, 0, 0, 0, 4.5),
        (1.0, 0, 0, 0, 0, 1.0),
    )
    rng = np.random.default_rng(12)
    x = rng.normal(size=(4, 15))
    x[:, 4] = rng.uniform(-1.3, 1.3, 4)
    b = _ControlledEkf(ctl, k=4)
    b.x = x.copy()
    singles = []
    for i in range(4):
        s = _ControlledEkf(ctl, k=1)
        s.x = x[i: i + 1].copy()
        singles.append(s)
    for dt in (0.01, 0.1, 0.03):
        b.predict(dt)
        for i, s in enumerate(singles):
            s.predict(dt)
            assert np.array_equal(b.x[i], s.x[0]) and np.array_equal(b.P[i], s.P[0])


@pytest.mark.parametrize(
    'idx',
    [(3, 5), (2, 3, 4, 8, 9, 10, 11, 14), (2, 3, 4, 8, 9, 10, 12, 13, 14), (0, 1, 2, 3, 4, 5)],
)
def test_batch_correct_equals_single_runs_with_mixed_gates(idx):
    """
    Update only the accepted runs, each equal to its own K = 1 update.

    Gate by solve, gain and Joseph form on the accepted runs only: every run equals its own K = 1
    update (same decision; rejected runs unchanged bit for bit), also through ``rows``.
    """
    from vepd_ros.judge.ekf import clamp_variances, index_set

    rng = np.random.default_rng(len(idx))
    s = index_set([i in idx for i in range(15)])
    m = len(idx)
    seen = set()
    for trial in range(30):
        k = 6
        e, singles = _random_batch(rng, k)
        z = rng.normal(size=(k, m)) * 2
        B = rng.normal(size=(k, m, m))
        R = clamp_variances(B @ B.transpose(0, 2, 1) * 0.1 + 0.01 * np.eye(m))
        thr2 = math.inf if trial % 4 == 0 else float(rng.chisquare(m))
        rows = None if trial % 3 else np.array([0, 2, 3, 5])
        x0, P0 = e.x.copy(), e.P.copy()
        use = range(k) if rows is None else rows
        sel = slice(None) if rows is None else rows
        acc = e.correct_subset(s, z[sel], R[sel], thr2, rows=rows, clamped=True)
        for n, i in enumerate(use):
            a = singles[i].correct_k1_checked(s, z[i].tolist(), R[i], thr2)
            assert a == acc[n]
            seen.add(bool(a))
            assert np.array_equal(e.x[i], singles[i].x[0])
            assert np.array_equal(e.P[i], singles[i].P[0])
            if not a:
                assert np.array_equal(e.x[i], x0[i]) and np.array_equal(e.P[i], P0[i])
        if rows is not None:
            rest = np.setdiff1d(np.arange(k), rows)
            assert np.array_equal(e.x[rest], x0[rest]) and np.array_equal(e.P[rest], P0[rest])
    assert seen == {True, False}


@pytest.mark.parametrize(
    'idx', [(2, 3, 4, 8, 9, 10, 11, 14), (2, 3, 4, 8, 9, 10, 12, 13, 14), (3, 5, 11)]
)
def test_early_gate_decides_as_the_full_distance(idx):
    """
    Give the verdict and state of the one-entry rejection as the general gate.

    The one-entry rejection (ν_k² ≥ thr²·S_kk, R positive definite) gives the verdict and the state
    of the full Mahalanobis computation — also a hair either side of the threshold — and is skipped
    (full computation) when R is not diagonally dominant.
    """
    from vepd_ros.judge.ekf import clamp_variances, gate_bound_variances, index_set

    rng = np.random.default_rng(sum(idx))
    s = index_set([i in idx for i in range(15)])
    m = len(idx)
    verdicts, early = set(), 0
    for trial in range(120):
        _, (a, b) = _random_batch(rng, 2)
        b.x, b.P = a.x.copy(), a.P.copy()  # the same filter twice
        if trial % 3 == 0:  # diagonal R
            R = np.diag(rng.uniform(1e-3, 1.0, m))
        else:  # full SPD R; diagonally dominant or not
            B = rng.normal(size=(m, m)) * (0.05 if trial % 3 == 1 else 1.0)
            R = B @ B.T + np.eye(m) * (0.5 if trial % 3 == 1 else 1e-3)
        R = clamp_variances(R)
        rd = gate_bound_variances(R[None])[0]
        dominant = (np.diag(R) > np.abs(R).sum(1) - np.diag(R)).all()
        assert (rd is None) != dominant
        thr2 = 0.64
        nu = rng.normal(size=m)
        S = a.P[0][np.ix_(idx, idx)] + R
        d2 = float(nu @ np.linalg.solve(S, nu))
        nu *= math.sqrt(thr2 / d2) * (
            1.0 + (rng.uniform(-1e-9, 1e-9) if trial % 2 else rng.uniform(-0.9, 2.0))
        )
        if trial % 4 == 3:  # diagonal S, one entry: d² is the bound itself,
            a.P[0] = b.P[0] = np.diag(np.diag(a.P[0]))  # a millionth either side of the threshold
            S = a.P[0][np.ix_(idx, idx)] + R
            k = int(rng.integers(m))
            nu = np.zeros(m)
            nu[k] = math.sqrt(thr2 * S[k, k] * (1.0 + (1e-6 if trial % 8 == 3 else -1e-6)))
        z = (a.x[0][list(idx)] + nu).tolist()
        one_entry = rd is not None and (nu**2 / np.diag(S)).max() >= thr2 * (1 + 1e-9)
        got = a.correct_k1_checked(s, z, R, thr2, rd)
        want = b.correct_k1_checked(s, z, R, thr2, None)
        assert got == want and not (one_entry and got)
        assert np.array_equal(a.x, b.x) and np.array_equal(a.P, b.P)
        verdicts.add(got)
        early += one_entry
    assert verdicts == {True, False} and early > 10


def test_clamp_variances_on_the_diagonal_view():
    from vepd_ros.judge.ekf import clamp_variances

    R = np.array([[[-2.0, 0.5], [-0.5, 1e-12]], [[np.nan, -3.0], [1.0, -0.0]]])
    out = clamp_variances(R)
    np.testing.assert_array_equal(out, [[[2.0, 0.5], [-0.5, 1e-9]], [[np.nan, -3.0], [1.0, 1e-9]]])
    assert R[0, 0, 0] == -2.0  # input untouched
    F = np.asfortranarray(np.array([[-1.0, 2.0], [3.0, 0.0]]))
    np.testing.assert_array_equal(clamp_variances(F), [[1.0, 2.0], [3.0, 1e-9]])


def _controlled_predict_k1_array_form(e, dt):
    """
    Predict K = 1 with control as it was written with (1,)-arrays.

    The K = 1 controlled prediction as it was written with (1,)-arrays (the reference the scalar
    form must reproduce bit for bit): base prediction, then A·δ with numpy's sin/cos/tan.
    """
    from vepd_ros.judge.ekf import Ekf

    x = e.x
    delta = np.zeros_like(x)
    c = e.ctl
    for i in e._idx:
        v = x[:, 6 + i]
        err = -v
        dec = np.abs(v) > 0.0
        lim = np.where(dec, c.deceleration_limits[i], c.acceleration_limits[i])
        gain = np.where(dec, c.deceleration_gains[i], c.acceleration_gains[i])
        acc = np.minimum(np.maximum(gain * err, -lim), lim)
        if i >= 3:
            delta[:, 6 + i] = acc * dt
        else:
            delta[:, 12 + i] = acc - x[:, 12 + i]
    r, p, y = x[:, 3].copy(), x[:, 4].copy(), x[:, 5].copy()
    Ekf.predict(e, dt)
    if not delta.any():
        return
    sr, cr, sp, cp, sy, cy = np.sin(r), np.cos(r), np.sin(p), np.cos(p), np.sin(y), np.cos(y)
    tp, cpi, h = np.tan(p), 1.0 / cp, 0.5 * dt * dt
    d = delta
    out = e.x
    out += d
    out[:, 3] += d[:, 9] * dt + d[:, 10] * sr * tp * dt + d[:, 11] * cr * tp * dt
    out[:, 4] += d[:, 10] * cr * dt - d[:, 11] * sr * dt
    out[:, 5] += d[:, 10] * sr * cpi * dt + d[:, 11] * cr * cpi * dt
    R = np.stack(
        [
            np.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], -1),
            np.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], -1),
            np.stack([-sp, cp * sr, cp * cr], -1),
        ],
        -2,
    )
    out[:, 0:3] += h * np.einsum('kij,kj->ki', R, d[:, 12:15])
    out[:, 6:9] += dt * d[:, 12:15]
    out[:, 3:6] = wrap(out[:, 3:6])


def _same_bits(a, b) -> bool:
    """
    Compare bit for bit, allowing any NaN sign or payload.

    Bit for bit, except that a NaN may carry another sign/payload (NaN in, NaN out either way).
    """
    a, b = np.asarray(a), np.asarray(b)
    differ = a.view(np.int64) != b.view(np.int64)
    return a.shape == b.shape and bool(np.all(np.isnan(a[differ]) & np.isnan(b[differ])))


@pytest.mark.parametrize(
    'axes',
    [
        (False,) * 5 + (True,),
        (True, False, False, False, False, True),
        (True, True, False, True, True, True),
    ],
)
def test_k1_controlled_predict_is_the_array_form_bit_for_bit(axes):
    """
    Match the scalar K = 1 control with the array version bit for bit.

    The scalar K = 1 control (δ, then A·δ after the base prediction) gives the same bits as the
    array form it replaced — random states, zero and signed-zero rates and positions, large pitch;
    a NaN state stays NaN (its sign bit is not defined by either form).
    """
    from vepd_ros.judge.rl_graph import _ControlledEkf, ControlParams

    ctl = ControlParams(
        axes,
        (1.3, 0.5, 0.7, 0.4, 0.3, 3.4),
        (0.8, 0.6, 0.5, 0.9, 0.9, 0.9),
        (1.3, 0.6, 0.8, 0.5, 0.4, 4.5),
        (1.0, 0.7, 0.6, 1.0, 1.0, 1.0),
    )
    rng = np.random.default_rng(21)
    for trial in range(300):
        x = rng.normal(size=(1, 15)) * rng.choice([1e-3, 1.0, 30.0])
        x[0, 4] = rng.uniform(-1.5, 1.5)
        if trial % 5 == 0:
            x[0, [0, 1, 2, 6, 7, 8, 9, 10, 11]] = rng.choice([0.0, -0.0], 9)
        if trial % 7 == 0:
            x[0, 4] = 0.0 if trial % 2 else -0.0
        if trial == 299:
            x[0, 11] = np.nan
        fast, ref = _ControlledEkf(ctl, k=1), _ControlledEkf(ctl, k=1)
        A = rng.normal(size=(15, 15))
        for e in (fast, ref):
            e.x = x.copy()
            e.P = (A @ A.T)[None] * 0.01
        for dt in (0.01, float(rng.uniform(1e-4, 0.3)), 0.01):
            fast.predict(dt)
            _controlled_predict_k1_array_form(ref, dt)
            # the NaN trial turns both wild (refusing the next step): this compares the arithmetic
            fast.wild = ref.wild = False
            assert _same_bits(fast.x, ref.x) and _same_bits(fast.P, ref.P)


def test_singular_s_in_a_large_update_is_refused_and_counted():
    """
    Refuse a singular S (m > 3) in the gated and the ungated update, and count it.

    S by one gather equals P[idx, idx]; the state is kept.
    """
    from vepd_ros.judge.ekf import index_set

    rng = np.random.default_rng(4)
    P = rng.normal(size=(15, 15))
    s = index_set([i in (2, 3, 4, 8, 9, 10, 11, 14) for i in range(15)])
    assert P.take(s.block).tobytes() == P[np.ix_(s.idx, s.idx)].tobytes()
    e = Ekf()
    e.initialise(0, np.zeros(15), np.zeros((15, 15)), [True] * 15)
    e.P = np.zeros((1, 15, 15))
    zero = np.zeros((8, 8))
    for n, thr2 in enumerate((0.64, math.inf), 1):  # a singular S, gated and ungated
        assert not e.correct_k1_checked(s, [1.0] * 8, zero, thr2)
        assert e.drops == {'update refused: singular innovation covariance': n}
        assert not e.x.any() and not e.P.any()
