# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the ground-truth adapters of vepd_ros.io.ins.

vepd_ros.io.ins: every ground-truth adapter gives the ENU velocity, horizontal speed and body vx it
should.
"""

from __future__ import annotations

import numpy as np
import pytest
from vepd_ros.frames import quaternion_from_rpy
from vepd_ros.io import ins
from vepd_ros.io.bags import Bag
from vepd_ros.io.write_bag import write_bag
from vepd_ros.streams import TOPIC_INS_VELOCITY, TOPIC_ODOM_FILTERED

T0 = 1_000_000_000


def test_sbg_ned_to_enu():
    lin = np.array([[2.0, 1.0, 0.5]])  # N, E, D
    tr = ins.truth_from_arrays('sbg_driver/msg/SbgGpsVel', [T0], [T0], lin, [[np.nan] * 4])
    assert (tr.v_east[0], tr.v_north[0], tr.v_up[0]) == (1.0, 2.0, -0.5)
    assert tr.speed[0] == pytest.approx(np.hypot(1, 2))  # horizontal, not 3-D
    assert np.isnan(tr.vx[0]) and not tr.has_body
    enu = ins.truth_from_arrays(
        'sbg_driver/msg/SbgEkfNav',
        [T0],
        [T0],
        lin,
        [[np.nan] * 4],
        ins.TruthOptions(sbg_frame='enu'),
    )
    assert (enu.v_east[0], enu.v_north[0], enu.v_up[0]) == (2.0, 1.0, 0.5)


def test_odometry_child_twist_rotated_to_world():
    yaw = np.deg2rad(30.0)
    q = quaternion_from_rpy(0.0, 0.0, yaw)
    tr = ins.truth_from_arrays(
        'nav_msgs/Odometry', [T0], [T0], [[1.5, 0.2, 0.0]], [q]
    )  # ROS 1 type name too
    assert tr.v_east[0] == pytest.approx(1.5 * np.cos(yaw) - 0.2 * np.sin(yaw))
    assert tr.v_north[0] == pytest.approx(1.5 * np.sin(yaw) + 0.2 * np.cos(yaw))
    assert (tr.vx[0], tr.vy[0]) == (1.5, 0.2)
    assert tr.speed[0] == pytest.approx(np.hypot(1.5, 0.2))
    w = ins.truth_from_arrays(
        'nav_msgs/msg/Odometry',
        [T0],
        [T0],
        [[1.0, 1.0, 0.0]],
        [q],
        ins.TruthOptions(odom_twist_frame='world'),
    )
    assert (w.v_east[0], w.v_north[0]) == (1.0, 1.0)
    assert w.vx[0] == pytest.approx(
        np.cos(yaw) + np.sin(yaw)
    )  # world → body with the pose orientation


def test_odometry_without_valid_orientation_falls_back_to_body_speed():
    tr = ins.truth_from_arrays(
        'nav_msgs/msg/Odometry', [T0], [T0], [[3.0, 4.0, 0.0]], [[0, 0, 0, 0]]
    )
    assert np.isnan(tr.v_east[0]) and tr.speed[0] == 5.0


def test_twist_frames():
    lin = [[1.0, 2.0, 0.0]]
    none = [[np.nan] * 4]
    w = ins.truth_from_arrays('geometry_msgs/msg/TwistStamped', [T0], [T0], lin, none)
    assert (w.v_east[0], w.v_north[0]) == (1.0, 2.0) and np.isnan(w.vx[0])
    b = ins.truth_from_arrays(
        'geometry_msgs/msg/TwistWithCovarianceStamped',
        [T0],
        [T0],
        lin,
        none,
        ins.TruthOptions(twist_frame='body'),
    )
    assert (
        np.isnan(b.v_east[0])
        and (b.vx[0], b.vy[0]) == (1.0, 2.0)
        and b.speed[0] == pytest.approx(np.sqrt(5))
    )
    n = ins.truth_from_arrays(
        'geometry_msgs/msg/TwistStamped',
        [T0],
        [T0],
        lin,
        none,
        ins.TruthOptions(twist_frame='ned'),
    )
    assert (n.v_east[0], n.v_north[0]) == (2.0, 1.0)
    with pytest.raises(ValueError, match='twist_frame'):
        ins.TruthOptions(twist_frame='sideways')


def test_chrono_body_world_velocity_and_bad_quaternion():
    q = quaternion_from_rpy(0.0, 0.0, np.pi / 2)
    tr = ins.truth_from_arrays(
        'chrono_ros_interfaces/msg/Body',
        [T0, 2 * T0],
        [T0, 2 * T0],
        [[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]],
        [q, [1.0, 0.0, 0.0, 0.5]],
    )
    assert tr.vx[0] == pytest.approx(2.0) and abs(tr.vy[0]) < 1e-12  # heading north, moving north
    assert np.isnan(tr.vx[1]) and tr.speed[1] == 2.0  # |q| != 1 (the fork's w-in-x bug)


def test_unknown_truth_type():
    with pytest.raises(
        ValueError, match='no ground-truth adapter for message type sensor_msgs/msg/Imu'
    ):
        ins.truth_from_arrays('sensor_msgs/msg/Imu', [T0], [T0], [[0, 0, 0]], [[0, 0, 0, 1]])


def test_adapters_on_real_messages(tmp_path):
    """
    Check the adapters on messages decoded from a written bag.

    Messages as rosbags decodes them from a written bag (SbgGpsVel, SbgEkfNav, Odometry, Body).
    """
    n = 20
    tn = T0 * 1_700_000_000 // T0 * T0 + np.arange(n, dtype=np.int64) * 200_000_000
    v_enu = np.tile([0.6, -0.8, 0.0], (n, 1))
    yaw = np.arctan2(-0.8, 0.6)
    q = np.tile(quaternion_from_rpy(0.0, 0.0, yaw), (n, 1))
    path = write_bag(
        tmp_path / 'b',
        {
            'gps_vel': {'t_ns': tn, 'v_enu': v_enu},
            'ekf_nav': {'t_ns': tn, 'v_enu': v_enu},
            'odom': {'t_ns': tn, 'orientation': q, 'linear': [1.0, 0.0, 0.0]},
            'body': {'t_ns': tn, 'position': np.zeros(3), 'orientation': q, 'v_world': v_enu},
        },
        storage='mcap',
    )
    for topic in (
        TOPIC_INS_VELOCITY,
        '/sbg/ekf_nav',
        TOPIC_ODOM_FILTERED,
        '/chrono_ros_node/output/vehicle/state',
    ):
        tr = ins.read_truth(path, topic)
        assert len(tr) == n and np.array_equal(tr.stamp_ns, tn)
        assert tr.v_east == pytest.approx(np.full(n, 0.6)) and tr.v_north == pytest.approx(
            np.full(n, -0.8)
        )
        assert tr.speed == pytest.approx(np.ones(n))
        if topic in (TOPIC_ODOM_FILTERED, '/chrono_ros_node/output/vehicle/state'):
            assert tr.vx == pytest.approx(np.ones(n)) and tr.has_body
    with Bag(path) as bag:
        assert bag.msgtype('/sbg/ekf_nav') == 'sbg_driver/msg/SbgEkfNav'


def test_window_and_arrival_stamp():
    tr = ins.truth_from_arrays(
        'sbg_driver/msg/SbgGpsVel',
        [10, 20, 30],
        [15, 25, 35],
        np.ones((3, 3)),
        np.full((3, 4), np.nan),
        ins.TruthOptions(stamp='arrival'),
    )
    assert list(tr.stamp_ns) == [15, 25, 35]
    assert len(tr.window(20, 30, on='arrival')) == 1
