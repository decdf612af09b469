# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Message layer and node loop edge cases, independent of rl_golden.

Message layer and node loop edge cases (reference §5, §6, §11.4, §11.8), rl_golden-independent.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_judge_core_msgs import imu_msg, odom_msg
from vepd_ros.frames import quaternion_from_rpy
from vepd_ros.judge.config import load_ekf_params
from vepd_ros.judge.filter import RosFilter
from vepd_ros.judge.measurements import MeasurementBuilder
from vepd_ros.judge.transforms import StaticTransforms

NS = 1_000_000_000
T0 = 1_000 * NS
IMU_CFG = [False] * 3 + [True] * 3 + [False] * 3 + [True] * 6
GPS_CFG = [True] * 3 + [False] * 12


def params(**kw):
    base = {
        'frequency': 10.0,
        'imu0': 'imu/data',
        'imu0_config': IMU_CFG,
        'imu0_remove_gravitational_acceleration': True,
        'odom0': 'odometry/gps',
        'odom0_config': GPS_CFG,
    }
    base.update(kw)
    return load_ekf_params(base)


def test_gravity_removed_with_message_orientation():
    b = MeasurementBuilder(params())
    roll = 0.2
    g = 9.80665
    a_body = (
        0.0,
        g * math.sin(roll),
        g * math.cos(roll),
    )  # level-free specific force of a tilted IMU at rest
    ms = b.from_message('imu0', imu_msg(T0, rpy=(roll, 0.0, 0.3), a=a_body))
    acc = [m for m in ms if m.topic == 'imu0_acceleration'][0]
    np.testing.assert_allclose(acc.z[12:15], 0.0, atol=1e-12)
    pose = ms[0]
    np.testing.assert_allclose(pose.z[3:6], [roll, 0.0, 0.3], atol=1e-12)


def test_sideways_imu_swaps_roll_and_pitch():
    """§6.3: mount yaw y0 = π/2; measured RPY minus mount RPY, rotated by Rz(y0)."""
    tf = StaticTransforms().add('base_link', 'imu_link', rpy=(0.0, 0.0, math.pi / 2))
    b = MeasurementBuilder(params(), tf)
    ms = b.from_message('imu0', imu_msg(T0, rpy=(0.1, 0.0, math.pi / 2 + 0.2), frame='imu_link'))
    np.testing.assert_allclose(ms[0].z[3:6], [0.0, 0.1, 0.2], atol=1e-12)
    # the IMU's angular velocity about its x axis is the robot's rate about y
    ms = b.from_message('imu0', imu_msg(T0 + 1, w=(0.5, 0.0, 0.0), frame='imu_link'))
    tw = [m for m in ms if m.topic == 'imu0_twist'][0]
    np.testing.assert_allclose(tw.z[9:12], [0.0, 0.5, 0.0], atol=1e-12)


def test_nan_quaternion_drops_orientation_keeps_rest():
    """A NaN quaternion gives NaN RPY; the core drops NaN entries and fuses the other parts."""
    f = RosFilter(params())
    f.feed('imu0', imu_msg(T0))
    f.tick(T0)
    f.feed('imu0', imu_msg(T0 + NS // 100, q=(math.nan,) * 4, w=(0.0, 0.0, 0.5)))
    out = f.tick(T0 + NS // 10)
    assert np.isfinite(out.x).all()
    assert out.x[0, 11] > 0.1  # yaw rate still fused
    assert out.stamp_ns == T0 + NS // 100


def test_zero_and_unnormalised_quaternions():
    b = MeasurementBuilder(params())
    m = b.from_message('imu0', imu_msg(T0, q=(0.0, 0.0, 0.0, 0.0)))[0]
    np.testing.assert_allclose(m.z[3:6], 0.0, atol=0)  # all-zero → identity
    # kept, as upstream's "Correcting..." diagnostic keeps it, and counted
    zero = 'imu0_pose: all-zero orientation quaternion read as identity'
    assert [n for r, n in b.dropped.items() if r.startswith(zero)] == [1]
    q = 1.5 * np.array(quaternion_from_rpy(0.0, 0.0, 0.4))
    m = b.from_message('imu0', imu_msg(T0 + 1, q=tuple(q)))[0]
    assert m.z[5] == pytest.approx(0.4, abs=1e-12)
    assert [n for r, n in b.dropped.items() if r.startswith(zero)] == [1]  # a real one: not


def test_zero_quaternion_not_counted_when_the_imu_declares_no_orientation():
    """orientation_covariance[0] = -1: the quaternion is never read, so a zero one is no fault."""
    b = MeasurementBuilder(params())
    msg = imu_msg(T0, q=(0.0, 0.0, 0.0, 0.0))
    msg.orientation_covariance[0] = -1.0
    b.from_message('imu0', msg)
    assert not any('quaternion' in r for r in b.dropped), b.dropped


def test_negative_variance_fused_as_its_absolute_value():
    def run(var):
        f = RosFilter(params())
        f.feed('odom0', odom_msg(T0, x=0.0, pvar=1.0))
        f.tick(T0)
        msg = odom_msg(T0 + NS // 100, x=1.0, pvar=var)
        f.feed('odom0', msg)
        return f.tick(T0 + NS // 10).x[0, 0]

    assert run(-0.5) == run(0.5)
    assert 0.0 < run(-0.5) < 1.0


def test_c8_older_stamp_dropped_per_topic_equal_stamp_accepted():
    f = RosFilter(params())
    f.feed('odom0', odom_msg(T0 + 2 * NS // 100, x=0.0))
    f.feed('odom0', odom_msg(T0 + NS // 100, x=5.0))  # older → dropped before the queue
    f.feed('odom0', odom_msg(T0 + 2 * NS // 100, x=0.0))  # equal → accepted
    assert f.queued == 2
    assert sum(f.dropped.values()) == 1
    f.feed('imu0', imu_msg(T0))  # other topic: own guard
    assert f.queued == 5


def test_late_measurement_waits_for_its_tick_and_out_of_order_is_applied_without_prediction():
    f = RosFilter(params())
    f.feed('odom0', odom_msg(T0, x=0.0))
    f.feed('odom0', odom_msg(T0 + NS, x=1.0), arrival_ns=T0 + NS)
    assert f.tick(T0).stamp_ns == T0
    assert f.tick(T0 + NS // 2).stamp_ns == T0 + NS // 2  # nothing arrived: timeout prediction
    out = f.tick(T0 + NS)
    assert out.stamp_ns == T0 + NS
    f.feed('imu0', imu_msg(T0 + NS // 4))  # stamped before last_time (other topic)
    out2 = f.tick(T0 + NS + NS // 10)
    assert (
        out2.stamp_ns == T0 + NS and not out2.published
    )  # corrected, no time progress → no publish


def test_c4_output_stamp_is_measurement_time_and_no_publication_without_progress():
    p = params(sensor_timeout=10.0)
    f = RosFilter(p)
    f.feed('odom0', odom_msg(T0 + 123, x=0.0))
    o1 = f.tick(T0 + NS // 10)
    assert o1.stamp_ns == T0 + 123 and o1.published
    o2 = f.tick(T0 + 2 * NS // 10)
    assert o2.stamp_ns == T0 + 123 and not o2.published


def test_clock_jump_backwards_resets_filter():
    f = RosFilter(params())
    f.feed('odom0', odom_msg(T0 + NS, x=3.0))
    assert f.tick(T0 + NS).x[0, 0] == 3.0
    assert f.tick(T0) is None and f.resets == 1  # reset: uninitialised again
    f.feed('odom0', odom_msg(T0 + 10, x=-1.0))  # older than before the jump: accepted after reset
    out = f.tick(T0 + NS // 10)
    assert out.x[0, 0] == -1.0 and out.published


def test_stamp_zero_ignored_like_last_reset_time():
    f = RosFilter(params())
    f.feed('odom0', odom_msg(0, x=1.0))
    assert f.queued == 0 and f.tick(NS) is None


def test_relative_and_differential_modes():
    p = load_ekf_params(
        {
            'pose0': 'p',
            'pose0_config': [True, True] + [False] * 3 + [True] + [False] * 9,
            'pose0_relative': True,
        }
    )
    b = MeasurementBuilder(p)
    pos = np.array([[10.0, 5.0, 0.0], [11.0, 5.0, 0.0]])
    q = np.array([quaternion_from_rpy(0, 0, math.pi / 2)] * 2)
    ser = b.pose_arrays(
        'pose0', [T0, T0 + NS], pos, q, np.tile(np.eye(6).ravel() * 0.1, (2, 1)), 'odom'
    )[0]
    np.testing.assert_allclose(ser.z[:, [0, 1, 5]], [[0, 0, 0], [0, -1, 0]], atol=1e-12)
    p = load_ekf_params(
        {
            'pose0': 'p',
            'pose0_config': [True, True] + [False] * 3 + [True] + [False] * 9,
            'pose0_differential': True,
        }
    )
    b = MeasurementBuilder(p)
    ser = b.pose_arrays(
        'pose0', [T0, T0 + NS // 2], pos, q, np.tile(np.eye(6).ravel() * 0.1, (2, 1)), 'odom'
    )[0]
    assert (
        len(ser) == 1 and ser.update_vector[6] and ser.update_vector[7] and ser.update_vector[11]
    )
    np.testing.assert_allclose(
        ser.z[0, [6, 7, 11]], [0.0, -2.0, 0.0], atol=1e-12
    )  # Δ in the previous pose frame
    np.testing.assert_allclose(np.diagonal(ser.Rsub[0]), 0.2 * 0.5)  # (R+R)·dt


def test_message_path_equals_array_path():
    rng = np.random.default_rng(0)
    p = params(two_d_mode=True)
    stamps = T0 + np.arange(5) * NS // 50
    rpy = rng.normal(0, 0.1, (5, 3))
    q = np.array([quaternion_from_rpy(*r) for r in rpy])
    w, a = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)) + [0, 0, 9.8]
    cov = np.tile(np.eye(3).ravel() * 1e-3, (5, 1))
    series = MeasurementBuilder(p).imu_arrays('imu0', stamps, q, w, a, cov, cov, cov)
    b = MeasurementBuilder(p)
    for i in range(5):
        ms = b.from_message(
            'imu0',
            imu_msg(
                int(stamps[i]),
                q=tuple(q[i]),
                w=tuple(w[i]),
                a=tuple(a[i]),
                ocov=1e-3,
                wcov=1e-3,
                acov=1e-3,
            ),
        )
        for m, s in zip(ms, series):
            np.testing.assert_array_equal(m.z, s.z[i])
            np.testing.assert_array_equal(m.R[np.ix_(s.idx, s.idx)], s.Rsub[i])
