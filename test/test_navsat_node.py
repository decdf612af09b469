# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test navsat_node over real DDS, in process on its own domain.

navsat_node over real DDS (in-process, own domain): robot_localization's topics, parameter names
and SensorDataQoS depth-1 subscriptions; odometry/gps equals the core's computation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ros_helpers import spin_until
from vepd_ros.frames import quaternion_from_rpy
from vepd_ros.judge.navsat import utm_convergence_deg, utm_forward, utm_reverse
from vepd_ros.params import ParameterError
from vepd_ros.streams import TOPIC_GPS_FIX, TOPIC_IMU, TOPIC_ODOM_FILTERED

pytestmark = pytest.mark.ros
LAT0, LON0, ALT0 = 43.0731, -89.4012, 260.0


def _params(**kw):
    from rclpy.parameter import Parameter

    return [Parameter(k, value=v) for k, v in kw.items()]


def test_navsat_node_publishes_odometry_gps_and_gps_filtered(ros_ctx, executor):
    from nav_msgs.msg import Odometry
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Imu, NavSatFix
    from vepd_ros.nodes.navsat_node import NavSatNode

    nav = NavSatNode(
        context=ros_ctx,
        cli_args=['--ros-args', '-r', 'imu:=/imu/data'],
        parameter_overrides=_params(frequency=20.0, zero_altitude=True, yaw_offset=0.1),
    )
    executor.add_node(nav)
    # upstream's topic names and QoS
    subs = {s.topic_name: s for s in nav.subscriptions}
    assert set(subs) == {TOPIC_IMU, TOPIC_GPS_FIX, TOPIC_ODOM_FILTERED}
    assert all(s.qos_profile.depth == 1 for s in subs.values())
    pubs = {p.topic_name for p in nav.publishers}
    assert {'/odometry/gps', '/gps/filtered'} <= pubs

    io = rclpy.create_node('navsat_io', context=ros_ctx)
    executor.add_node(io)
    got = {'odom': [], 'fix': []}
    io.create_subscription(Odometry, '/odometry/gps', got['odom'].append, 10)
    io.create_subscription(NavSatFix, '/gps/filtered', got['fix'].append, 10)
    p_odom = io.create_publisher(Odometry, TOPIC_ODOM_FILTERED, qos_profile_sensor_data)
    p_fix = io.create_publisher(NavSatFix, TOPIC_GPS_FIX, qos_profile_sensor_data)
    p_imu = io.create_publisher(Imu, TOPIC_IMU, qos_profile_sensor_data)

    x0, y0, zone, north = utm_forward(LAT0, LON0)
    lat_e, lon_e = utm_reverse(
        int(zone), bool(north), float(x0) + 10.0, float(y0)
    )  # 10 m grid-east
    imu_yaw = 0.4
    step = [0]

    def publish():
        k = step[0]
        step[0] += 1
        o = Odometry()
        o.header.frame_id, o.child_frame_id = 'odom', 'base_link'
        o.header.stamp.sec = k
        o.pose.pose.orientation.w = 1.0
        p_odom.publish(o)
        i = Imu()
        i.header.frame_id = 'base_link'
        i.header.stamp.sec = k
        q = quaternion_from_rpy(0.0, 0.0, imu_yaw)
        i.orientation.x, i.orientation.y, i.orientation.z, i.orientation.w = (float(v) for v in q)
        p_imu.publish(i)
        f = NavSatFix()
        f.header.frame_id = 'base_link'
        f.header.stamp.sec = k
        datum = not nav.core.good[0]
        f.latitude, f.longitude, f.altitude = (
            (LAT0, LON0, ALT0) if datum else (float(lat_e), float(lon_e), ALT0)
        )
        p_fix.publish(f)

    timer = io.create_timer(0.05, publish)
    assert spin_until(
        executor, lambda: len(got['odom']) >= 3 and len(got['fix']) >= 1, timeout_s=20
    ), got
    timer.cancel()
    psi = imu_yaw + 0.1 + math.radians(utm_convergence_deg(LAT0, LON0))
    expected = np.array([math.cos(-psi), math.sin(-psi)]) * 10.0  # Rz(0 − ψ)·(10, 0)
    last = got['odom'][-1]
    assert last.header.frame_id == 'odom' and last.child_frame_id == ''
    np.testing.assert_allclose(
        [last.pose.pose.position.x, last.pose.pose.position.y], expected, atol=1e-3
    )
    assert last.pose.pose.position.z == 0.0 and not any(last.pose.covariance)
    f = got['fix'][-1]
    assert (
        f.status.status == 2
        and f.position_covariance_type == 3
        and f.header.frame_id == 'base_link'
    )
    assert f.latitude == pytest.approx(LAT0, abs=1e-6) and f.longitude == pytest.approx(
        LON0, abs=1e-6
    )
    assert nav.sub_imu is None  # the IMU subscription is dropped once the datum exists
    io.destroy_node()
    nav.destroy_node()


def test_navsat_node_parameter_errors(ros_ctx):
    from vepd_ros.nodes.navsat_node import NavSatNode

    with pytest.raises(ParameterError, match='zero_altitud'):
        NavSatNode(context=ros_ctx, parameter_overrides=_params(zero_altitud=True))
    with pytest.raises(ParameterError, match='static_transforms'):
        NavSatNode(
            context=ros_ctx, parameter_overrides=_params(static_transforms=['base_link gps 1 2'])
        )


def test_odometry_yaw_mode_has_no_imu_subscription(ros_ctx):
    from vepd_ros.nodes.navsat_node import NavSatNode

    nav = NavSatNode(context=ros_ctx, parameter_overrides=_params(use_odometry_yaw=True))
    assert {s.topic_name for s in nav.subscriptions} == {TOPIC_GPS_FIX, TOPIC_ODOM_FILTERED}
    nav.destroy_node()
