# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The real robot_localization built by `make rl` starts, filters and stops on the pip runtime.

Smoke tests of the build (the comparisons with the built-in judge live elsewhere): ekf_node with
the suite's config/ekf.yaml, fed rclpy Imu and Odometry messages over DDS, publishes
/odometry/filtered whose forward speed follows the odometry's 1 m/s, and exits 0 on SIGINT;
navsat_transform_node with config/navsat.yaml, given a fix, the filter's odometry and a static TF
from tf2_ros' static_transform_publisher (also built here), publishes odometry/gps.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
import subprocess
import sys

import pytest
from ros_helpers import spin_until
from vepd_ros import rl_install
from vepd_ros.streams import TOPIC_GPS_FIX, TOPIC_IMU, TOPIC_ODOM_FILTERED

pytestmark = [pytest.mark.ros, pytest.mark.slow]

SPEED = 1.0  # m/s along x in the fed odometry


def _stamp(node):
    return node.get_clock().now().to_msg()


def _imu(node):
    from sensor_msgs.msg import Imu

    msg = Imu()
    msg.header.stamp = _stamp(node)
    msg.header.frame_id = 'base_link'
    msg.orientation.w = 1.0
    msg.orientation_covariance = [1e-3, 0.0, 0.0, 0.0, 1e-3, 0.0, 0.0, 0.0, 1e-3]
    msg.angular_velocity_covariance = [1e-4, 0.0, 0.0, 0.0, 1e-4, 0.0, 0.0, 0.0, 1e-4]
    msg.linear_acceleration.z = 9.80665  # at rest on level ground: specific force +g
    msg.linear_acceleration_covariance = [1e-2, 0.0, 0.0, 0.0, 1e-2, 0.0, 0.0, 0.0, 1e-2]
    return msg


def _odometry(node, x: float):
    from nav_msgs.msg import Odometry

    msg = Odometry()
    msg.header.stamp = _stamp(node)
    msg.header.frame_id = 'odom'
    msg.child_frame_id = 'base_link'
    msg.pose.pose.position.x = x
    msg.pose.pose.orientation.w = 1.0
    cov = [0.0] * 36
    for i in range(6):
        cov[i * 7] = 1e-2
    msg.pose.covariance = cov
    return msg


def _listener(ros_ctx, executor, name: str, topic: str):
    """Return (node, received): a node on the test's context keeping every Odometry on topic."""
    from nav_msgs.msg import Odometry
    from rclpy.node import Node

    node = Node(name, context=ros_ctx)
    executor.add_node(node)
    received = []
    node.create_subscription(Odometry, topic, received.append, 50)
    return node, received


def _await(executor, proc, done, what: str, timeout_s: float = 90.0) -> None:
    """Spin until done() holds; fail naming `what` if it does not or the process exits."""
    got = spin_until(executor, done, timeout_s=timeout_s)
    assert proc.poll() is None, f'{proc.args[0]} exited with {proc.returncode}:\n{_output(proc)}'
    assert got, f'{what} within {timeout_s} s'


def _output(proc) -> str:
    if hasattr(proc, 'output'):  # stopped by rl_judge.stop, which read the pipe to its end
        return proc.output
    try:
        return proc.communicate(timeout=5)[0] or ''
    except subprocess.TimeoutExpired:
        return '(no output)'


def test_ekf_node_filters_imu_and_odometry_and_stops_on_sigint(
    rl_judge, ros_ctx, executor, domain_id
):
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu

    proc = rl_judge.start('ekf_node', '--ros-args', '-r', '__node:=ekf_filter_node',
                          '--params-file', str(rl_judge.config('ekf.yaml')), domain_id=domain_id)
    node, filtered = _listener(ros_ctx, executor, 'rl_smoke_feeder', TOPIC_ODOM_FILTERED)
    imu_pub = node.create_publisher(Imu, TOPIC_IMU, 50)
    odom_pub = node.create_publisher(Odometry, '/odometry/gps', 10)
    t0 = node.get_clock().now()
    ticks = [0]

    def tick():
        ticks[0] += 1
        imu_pub.publish(_imu(node))
        if ticks[0] % 10 == 0:
            elapsed = (node.get_clock().now() - t0).nanoseconds * 1e-9
            odom_pub.publish(_odometry(node, SPEED * elapsed))

    node.create_timer(0.01, tick)
    try:
        _await(executor, proc, lambda: len(filtered) >= 100, '100 /odometry/filtered messages')
        last = filtered[-1]
        assert (last.header.frame_id, last.child_frame_id) == ('odom', 'base_link')
        # odom0_differential: consecutive positions become body velocities. Each position and
        # its stamp come from one clock reading, so every differential velocity is 1 m/s however
        # late the timer fires; a smoke bound (the comparisons with the built-in judge are
        # elsewhere): the estimate within 30 % of it once 100 estimates are out.
        assert math.isfinite(last.twist.twist.linear.x)
        assert abs(last.twist.twist.linear.x - SPEED) < 0.3 * SPEED, last.twist.twist.linear
    finally:
        rc = rl_judge.stop(proc)
        node.destroy_node()
    assert rc == 0, _output(proc)


def test_navsat_transform_publishes_odometry_gps(rl_judge, ros_ctx, executor, domain_id):
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import NavSatFix, NavSatStatus

    tf = rl_judge.start('static_transform_publisher', '--x', '0.2', '--frame-id', 'base_link',
                        '--child-frame-id', 'gps', domain_id=domain_id)
    proc = rl_judge.start('navsat_transform_node', '--ros-args', '-r', '__node:=navsat_transform',
                          '--params-file', str(rl_judge.config('navsat.yaml')),
                          domain_id=domain_id)
    node, gps_odom = _listener(ros_ctx, executor, 'rl_smoke_gps', '/odometry/gps')
    fix_pub = node.create_publisher(NavSatFix, TOPIC_GPS_FIX, 10)
    odom_pub = node.create_publisher(Odometry, TOPIC_ODOM_FILTERED, 10)

    def tick():
        odom_pub.publish(_odometry(node, 0.0))
        fix = NavSatFix()
        fix.header.stamp = _stamp(node)
        fix.header.frame_id = 'gps'
        fix.status.status = NavSatStatus.STATUS_FIX
        fix.latitude, fix.longitude, fix.altitude = 43.0731, -89.4012, 270.0
        fix.position_covariance = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 4.0]
        fix.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
        fix_pub.publish(fix)

    node.create_timer(0.1, tick)
    try:
        _await(executor, proc, lambda: len(gps_odom) >= 5, '5 odometry/gps messages')
        last = gps_odom[-1]
        assert last.header.frame_id == 'odom'
        # The datum is the first fix: later fixes at the same place map near the origin (the
        # static TF's 0.2 m lever arm is all that separates the gps antenna from base_link).
        assert math.hypot(last.pose.pose.position.x, last.pose.pose.position.y) < 0.5
    finally:
        rc = rl_judge.stop(proc)
        rl_judge.stop(tf)
        node.destroy_node()
    assert rc == 0, _output(proc)


def test_the_build_runs_from_another_venv_path(rl_judge, ros_ctx, executor, domain_id, tmp_path):
    """
    The cache is keyed by wheel versions, not by the venv's path: a venv elsewhere runs the nodes.

    A fresh clone's .venv holds the same pinned wheels at another path. Here the other prefix
    holds this venv's files under another path (symlinks: what the loader and the ament index
    see is the other path), and the environment names only it: ekf_node joins the graph.
    """
    other = tmp_path / 'other-venv'
    site = rl_install.site_packages(other)
    site.parent.mkdir(parents=True)
    site.symlink_to(rl_install.site_packages(Path(sys.prefix)))
    (other / 'share').symlink_to(Path(sys.prefix) / 'share')
    for lib in (Path(sys.prefix) / 'lib').glob('*.so*'):
        (other / 'lib' / lib.name).symlink_to(lib)
    base = {k: v for k, v in rl_judge.env(domain_id).items()
            if k not in ('AMENT_PREFIX_PATH', 'LD_LIBRARY_PATH', 'PYTHONPATH')}
    env = rl_install.rl_environment(base=base, venv=other, root=rl_judge.root)
    assert not [v for v in env.values() if sys.prefix in v.split(os.pathsep)]
    proc = subprocess.Popen([str(rl_judge.executable('ekf_node')), '--ros-args', '-r',
                             '__node:=ekf_from_other_venv'], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    node, _ = _listener(ros_ctx, executor, 'rl_smoke_probe', TOPIC_ODOM_FILTERED)
    try:
        # up means initialised: its /odometry/filtered publisher exists (ros_filter.cpp creates
        # it last but the timer). The node's name shows before that, and a SIGINT while it still
        # creates publishers aborts it (RCLError, status -6: seen in CI)
        _await(executor, proc, lambda: any(
            i.node_name == 'ekf_from_other_venv'
            for i in node.get_publishers_info_by_topic(TOPIC_ODOM_FILTERED)),
            'ekf_node in the graph with its /odometry/filtered publisher')
    finally:
        rc = rl_judge.stop(proc)
        node.destroy_node()
    assert rc == 0, _output(proc)
