# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Property-test the judge's message layer and the models' samplers.

Property tests (hypothesis, bounded and derandomised) of the judge's message layer and the
models' samplers (issue 17): any message field values -- NaN, Inf, huge, tiny or zero quaternions
-- never raise, never let a numpy warning out and never leave a non-finite filter state; a
poisoned flagged value is always counted; finite model inputs give finite samples of the right
shape, the same bits for the same seed.
"""

import math
from types import SimpleNamespace as NS
import warnings

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
from vepd_ros.judge.config import load_ekf_params
from vepd_ros.judge.filter import RosFilter
from vepd_ros.judge.navsat import NavSatCore
from vepd_ros.models.gps import GPS_MODELS, make_gps_model
from vepd_ros.models.imu import IMU_MODELS, make_imu_model

PROPS = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

CFG = load_ekf_params(
    {
        'ekf_filter_node': {
            'ros__parameters': {
                'frequency': 30.0,
                'two_d_mode': True,
                'imu0': '/imu',
                'imu0_config': [False] * 3 + [True] * 3 + [False] * 3 + [True] * 3 + [True] * 3,
                'imu0_remove_gravitational_acceleration': True,
                'odom0': '/odom',
                'odom0_config': [True] * 2 + [False] * 4 + [True] * 3 + [False] * 6,
                'odom0_pose_rejection_threshold': 3.0,
            }
        }
    }
)

# any float a message could carry, weighted toward the troublesome ones
WILD = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [0.0, -0.0, 1e-200, 1e-320, 1e300, -1e300, math.nan, math.inf, -math.inf, 1.0]
    ),
    st.floats(-10.0, 10.0),
)
TAME = st.floats(-10.0, 10.0)
VAR = st.one_of(st.floats(1e-6, 10.0), WILD)


def _header(t_ns, frame):
    return NS(stamp=NS(sec=t_ns // 10**9, nanosec=t_ns % 10**9), frame_id=frame)


@st.composite
def imu_msgs(draw, t_ns, wild):
    v = wild if draw(st.booleans()) else TAME
    q = draw(
        st.one_of(
            st.tuples(*[v] * 4),
            st.just((0.0, 0.0, 0.0, 1.0)),
            st.just((0.0, 0.0, 0.0, 0.0)),
            st.just((1e-200, 0.0, 0.0, 0.0)),
        )
    )
    cov = [draw(VAR if v is wild else st.floats(1e-6, 10.0)) for _ in range(3)]
    return NS(
        header=_header(t_ns, 'base_link'),
        orientation=NS(x=q[0], y=q[1], z=q[2], w=q[3]),
        angular_velocity=NS(x=draw(v), y=draw(v), z=draw(v)),
        linear_acceleration=NS(x=draw(v), y=draw(v), z=draw(v) + 9.8),
        orientation_covariance=list(np.diag([cov[0]] * 3).ravel()),
        angular_velocity_covariance=list(np.diag([cov[1]] * 3).ravel()),
        linear_acceleration_covariance=list(np.diag([cov[2]] * 3).ravel()),
    )


@st.composite
def odom_msgs(draw, t_ns, wild):
    v = wild if draw(st.booleans()) else TAME
    var = VAR if v is wild else st.floats(1e-6, 10.0)
    q = draw(st.one_of(st.tuples(*[v] * 4), st.just((0.0, 0.0, 0.0, 1.0))))
    return NS(
        header=_header(t_ns, 'odom'),
        child_frame_id='base_link',
        pose=NS(
            pose=NS(
                position=NS(x=draw(v), y=draw(v), z=draw(v)),
                orientation=NS(x=q[0], y=q[1], z=q[2], w=q[3]),
            ),
            covariance=list(np.diag([draw(var) for _ in range(6)]).ravel()),
        ),
        twist=NS(
            twist=NS(
                linear=NS(x=draw(v), y=draw(v), z=draw(v)),
                angular=NS(x=draw(v), y=draw(v), z=draw(v)),
            ),
            covariance=list(np.diag([draw(var) for _ in range(6)]).ravel()),
        ),
    )


@st.composite
def streams(draw):
    n = draw(st.integers(2, 25))
    stamps = sorted(draw(st.lists(st.integers(10**9, 60 * 10**9), min_size=n, max_size=n)))
    out = []
    for t in stamps:
        # some stamps out of order
        jitter = draw(st.sampled_from([0, 0, 0, -5 * 10**9, 10**6]))
        kind = draw(st.sampled_from(['imu0', 'odom0']))
        gen = imu_msgs if kind == 'imu0' else odom_msgs
        out.append((t, kind, draw(gen(t + jitter, WILD))))
    return out


@PROPS
@given(streams())
def test_message_layer_never_raises_and_keeps_the_state_finite(stream):
    f = RosFilter(CFG)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for t, kind, msg in stream:
            f.feed(kind, msg)
            out = f.tick(t + 1)
            if out is not None:
                assert np.isfinite(out.x).all() and np.isfinite(out.P).all(), f.dropped
    assert all(isinstance(v, int) and v > 0 for v in f.dropped.values())


@PROPS
@given(
    st.integers(0, 5),
    st.sampled_from(['x', 'y']),
    st.sampled_from([math.nan, math.inf, 1e300, -1e12]),
)
def test_a_poisoned_flagged_odometry_value_is_always_counted(i, axis, bad):
    f = RosFilter(CFG)
    for k in range(6):
        t = 10**9 + k * 10**8
        pos = NS(x=0.1 * k, y=0.0, z=0.0)
        if k == i:
            setattr(pos, axis, bad)
        msg = NS(
            header=_header(t, 'odom'),
            child_frame_id='base_link',
            pose=NS(
                pose=NS(position=pos, orientation=NS(x=0.0, y=0.0, z=0.0, w=1.0)),
                covariance=list(np.eye(6).ravel() * 0.1),
            ),
            twist=NS(
                twist=NS(linear=NS(x=1.0, y=0.0, z=0.0), angular=NS(x=0.0, y=0.0, z=0.0)),
                covariance=list(np.eye(6).ravel() * 0.1),
            ),
        )
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            f.feed('odom0', msg)
            out = f.tick(t + 1)
    # a non-finite value is ignored and counted; a finite one of any size is fused or gated as
    # robot_localization fuses or gates it (here the first pose initialises the filter with it)
    assert sum(f.dropped.values()) >= (0 if math.isfinite(bad) else 1)
    assert np.isfinite(out.x).all()


@PROPS
@given(st.lists(st.tuples(WILD, WILD, WILD, VAR), min_size=1, max_size=10))
def test_navsat_fixes_never_raise_and_bad_ones_are_counted(fixes):
    nav = NavSatCore({}, k=1)
    n_bad = 0
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for j, (lat, lon, alt, var) in enumerate(fixes):
            # a NaN position is ignored as upstream does, and counted like any other bad fix
            nan_pos = math.isnan(lat) or math.isnan(lon) or math.isnan(alt)
            # dropped where robot_localization fails (latitude beyond ±90° throws, an infinite
            # longitude has no zone, a non-finite covariance makes the EKF's state NaN)
            bad = nan_pos or not (abs(lat) <= 90 and abs(lon) < math.inf and abs(var) < math.inf)
            n_bad += bad
            nav.on_fix(10**9 * (j + 1), lat, lon, alt, cov=[var, 0, 0, 0, var, 0, 0, 0, var])
    assert sum(nav.dropped.values()) == n_bad
    assert np.isfinite(nav.fix_utm[:, :2]).all() and np.isfinite(nav.fix_cov).all()


@st.composite
def time_grids(draw):
    n = draw(st.integers(1, 40))
    dts = draw(st.lists(st.floats(1e-3, 2.0), min_size=n, max_size=n))
    return np.cumsum(dts) + draw(st.floats(0.0, 100.0))


@PROPS
@given(
    st.sampled_from(GPS_MODELS), st.integers(0, 2**32 - 1), time_grids(), st.floats(-50.0, 50.0)
)
def test_gps_samplers_finite_shaped_and_reproducible(name, seed, t, offset):
    truth = np.column_stack([t * 2.0 + offset, np.sin(t), np.zeros_like(t)])
    a = make_gps_model(name, seed).sample(t, truth)
    b = make_gps_model(name, seed).sample(t, truth)
    assert a.position_enu.shape == (len(t), 3) and a.covariance_enu.shape == (len(t), 3, 3)
    fixed = a.status >= 0
    assert np.isfinite(a.position_enu[fixed]).all() and np.isfinite(a.covariance_enu[fixed]).all()
    for f in ('position_enu', 'covariance_enu', 'status', 'hdop', 'published', 'stamp_s'):
        assert getattr(a, f).tobytes() == getattr(b, f).tobytes(), f


@PROPS
@given(st.sampled_from(IMU_MODELS), st.integers(0, 2**32 - 1), time_grids(), st.floats(-3.0, 3.0))
def test_imu_samplers_finite_shaped_and_reproducible(name, seed, t, yaw_rate):
    n = len(t)
    w = np.tile([0.0, 0.0, yaw_rate], (n, 1))
    f = np.tile([0.1, 0.0, 9.80665], (n, 1))
    half = yaw_rate * t / 2
    q = np.column_stack([np.zeros(n), np.zeros(n), np.sin(half), np.cos(half)])
    a = make_imu_model(name, seed).sample_arrays(t, w, f, q)
    b = make_imu_model(name, seed).sample_arrays(t, w, f, q)
    assert a.angular_velocity.shape == (n, 3) and a.linear_acceleration.shape == (n, 3)
    assert a.orientation.shape == (n, 4)
    for fld in ('angular_velocity', 'linear_acceleration', 'orientation'):
        assert np.isfinite(getattr(a, fld)).all(), fld
        assert getattr(a, fld).tobytes() == getattr(b, fld).tobytes(), fld
