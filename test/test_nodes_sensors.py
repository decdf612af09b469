# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test gps_noise_node and imu_noise_node over real DDS.

gps_noise_node and imu_noise_node over real DDS: rates on received stamps, identity with the
library, bad input dropped and counted, start-up errors naming the parameter.
"""

import os
import signal
import subprocess

import numpy as np
import pytest
from ros_helpers import console_script, ros_env, spin_until, wait_for_output
from vepd_ros.streams import TOPIC_GPS_FIX, TOPIC_GROUND_TRUTH, TOPIC_GROUND_TRUTH_IMU, TOPIC_IMU

pytestmark = pytest.mark.ros

RUN_S = 3.0
TRUTH_HZ = 100.0


def _truth_trajectory(t0_ns=1_000_000_000):
    from vepd_ros.truth import generate

    tr = generate('circle', RUN_S + 2.0, seed=2)
    k = np.arange(int(RUN_S * TRUTH_HZ) + 1)
    stamps_ns = t0_ns + k * 10_000_000
    t = stamps_ns / 1e9
    shifted = tr.sample(t - t0_ns / 1e9)
    shifted.t_s = t
    return shifted, stamps_ns


def _truth_msgs(traj, stamps_ns):
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu
    from vepd_ros.nodes.stamps import ns_to_stamp

    out = []
    pos, q, v, w, f = (
        traj.position_enu,
        traj.quaternion,
        traj.velocity_body,
        traj.angular_velocity_body,
        traj.specific_force_body,
    )
    for k, ns in enumerate(stamps_ns):
        o = Odometry()
        o.header.stamp, o.header.frame_id, o.child_frame_id = (
            ns_to_stamp(int(ns)),
            'odom',
            'base_link',
        )
        o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z = (
            float(x) for x in pos[k]
        )
        oo = o.pose.pose.orientation
        oo.x, oo.y, oo.z, oo.w = (float(x) for x in q[k])
        o.twist.twist.linear.x, o.twist.twist.linear.y, o.twist.twist.linear.z = (
            float(x) for x in v[k]
        )
        o.twist.twist.angular.x, o.twist.twist.angular.y, o.twist.twist.angular.z = (
            float(x) for x in w[k]
        )
        i = Imu()
        i.header = o.header
        i.orientation = oo
        i.angular_velocity.x, i.angular_velocity.y, i.angular_velocity.z = (float(x) for x in w[k])
        i.linear_acceleration.x, i.linear_acceleration.y, i.linear_acceleration.z = (
            float(x) for x in f[k]
        )
        out.append((o, i))
    return out


class _Harness:

    def __init__(self, ros_ctx, executor, gps_over, imu_over):
        from nav_msgs.msg import Odometry
        import rclpy
        from rclpy.parameter import Parameter
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import Imu, NavSatFix
        from vepd_ros.nodes.gps_noise_node import GpsNoiseNode
        from vepd_ros.nodes.imu_noise_node import ImuNoiseNode

        self.gps = GpsNoiseNode(
            context=ros_ctx,
            parameter_overrides=[Parameter(k, value=v) for k, v in gps_over.items()],
        )
        self.imu = ImuNoiseNode(
            context=ros_ctx,
            parameter_overrides=[Parameter(k, value=v) for k, v in imu_over.items()],
        )
        self.test = rclpy.create_node('sensor_test', context=ros_ctx)
        rel = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
        self.pub_odom = self.test.create_publisher(Odometry, TOPIC_GROUND_TRUTH, rel)
        self.pub_imu = self.test.create_publisher(Imu, TOPIC_GROUND_TRUTH_IMU, rel)
        be = QoSProfile(depth=2000, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.fixes, self.imus = [], []
        self.test.create_subscription(NavSatFix, TOPIC_GPS_FIX, self.fixes.append, be)
        self.test.create_subscription(Imu, TOPIC_IMU, self.imus.append, be)
        self.ex = executor
        for n in (self.gps, self.imu, self.test):
            executor.add_node(n)
        assert spin_until(
            executor,
            lambda: (
                self.pub_odom.get_subscription_count() >= 2
                and self.pub_imu.get_subscription_count()
                >= (imu_over.get('truth_source') != 'odometry')
                and self.gps.pub.get_subscription_count() >= 1
                and self.imu.pub.get_subscription_count() >= 1
            ),
            15.0,
        ), 'graph did not match'

    def feed(self, msgs, imu=True):
        for o, i in msgs:
            self.pub_odom.publish(o)
            if imu:
                self.pub_imu.publish(i)
            for _ in range(4):
                self.ex.spin_once(timeout_sec=0.0)

    def drain(self, n_gps, n_imu, timeout=10.0):
        return spin_until(
            self.ex, lambda: len(self.fixes) >= n_gps and len(self.imus) >= n_imu, timeout
        )


def _stamps(msgs):
    return np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in msgs])


def test_nodes_rates_and_identity_with_the_library(ros_ctx, executor):
    from vepd_ros.models.sensors import simulate_sensors

    traj, stamps = _truth_trajectory()
    h = _Harness(
        ros_ctx,
        executor,
        {'model': 'ch_rw+airsim', 'seed': 7},
        {'model': 'ch_drift_paper', 'seed': 7},
    )
    h.feed(_truth_msgs(traj, stamps))
    n_gps, n_imu = int(RUN_S * 10) + 1, int(RUN_S * 100) + 1
    assert h.drain(n_gps, n_imu), (len(h.fixes), len(h.imus))
    sg, si = _stamps(h.fixes), _stamps(h.imus)
    assert (len(sg) - 1) / (sg[-1] - sg[0]) == pytest.approx(10.0, abs=0.1)
    assert (len(si) - 1) / (si[-1] - si[0]) == pytest.approx(100.0, abs=1.0)
    lib = simulate_sensors(traj, 'ch_rw+airsim', 'ch_drift_paper', seed=7)
    assert len(lib.gps) == len(h.fixes) and len(lib.imu) == len(h.imus)
    np.testing.assert_allclose(sg, lib.gps.stamp_s, atol=1e-9)
    lla = np.array([[m.latitude, m.longitude, m.altitude] for m in h.fixes])
    np.testing.assert_allclose(lla[:, :2], lib.gps_lla[:, :2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(lla[:, 2], lib.gps_lla[:, 2], rtol=0, atol=1e-9)
    cov = np.array([m.position_covariance for m in h.fixes]).reshape(-1, 3, 3)
    np.testing.assert_array_equal(cov, lib.gps.covariance_enu)
    assert all(m.position_covariance_type == 1 for m in h.fixes)
    w = np.array(
        [[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z] for m in h.imus]
    )
    a = np.array(
        [
            [m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]
            for m in h.imus
        ]
    )
    np.testing.assert_array_equal(w, lib.imu.angular_velocity)
    np.testing.assert_array_equal(a, lib.imu.linear_acceleration)
    assert all(m.orientation_covariance[0] == -1.0 for m in h.imus)


def test_bad_truth_is_dropped_counted_and_the_node_keeps_running(ros_ctx, executor):
    traj, stamps = _truth_trajectory()
    msgs = _truth_msgs(traj, stamps)
    h = _Harness(
        ros_ctx, executor, {'model': 'ch_gauss', 'seed': 1}, {'model': 'ch_drift', 'seed': 1}
    )
    h.feed(msgs[:50])
    bad_nan, _ = _truth_msgs(traj, stamps[50:51])[0]
    bad_nan.pose.pose.position.x = float('nan')
    back, back_imu = msgs[10]  # a stamp going backwards
    far, _ = _truth_msgs(traj, stamps[50:51])[0]
    far.pose.pose.position.x = 1e7  # far outside the datum's neighbourhood
    h.feed([(bad_nan, back_imu), (back, back_imu), (far, back_imu)])
    assert spin_until(executor, lambda: h.gps.drops.total >= 3 and h.imu.drops.total >= 3, 5.0)
    assert h.gps.drops.counts == {'non_finite': 1, 'stamp_not_increasing': 1, 'out_of_range': 1}
    before = len(h.fixes)
    h.feed(msgs[50:])
    assert h.drain(int(RUN_S * 10) + 1, int(RUN_S * 100) + 1 - 0)
    assert len(h.fixes) > before


def test_imu_from_odometry_when_imu_truth_absent(ros_ctx, executor):
    traj, stamps = _truth_trajectory()
    h = _Harness(
        ros_ctx, executor, {'model': 'none'}, {'model': 'none', 'truth_source': 'odometry'}
    )
    h.feed(_truth_msgs(traj, stamps), imu=False)
    assert h.drain(int(RUN_S * 10) + 1, int(RUN_S * 100))
    a = np.array(
        [
            [m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]
            for m in h.imus
        ]
    )
    ti = _stamps(h.imus)
    want = traj.sample(ti).specific_force_body
    assert np.median(np.abs(a - want)) < 0.05  # backward differences of the 100 Hz twist
    assert np.abs(a[:, 2] - 9.80665).max() < 0.05


def test_startup_errors_name_the_parameter(ros_ctx):
    from rclpy.parameter import Parameter
    from vepd_ros.nodes.gps_noise_node import GpsNoiseNode
    from vepd_ros.nodes.imu_noise_node import ImuNoiseNode
    from vepd_ros.params import ParameterError

    with pytest.raises(ParameterError, match="'rw_sigma'"):
        GpsNoiseNode(context=ros_ctx, parameter_overrides=[Parameter('rw_sigma', value=-0.1)])
    with pytest.raises(ParameterError, match="'model'"):
        GpsNoiseNode(context=ros_ctx, parameter_overrides=[Parameter('model', value='gaussian')])
    with pytest.raises(ParameterError, match="'datum'"):
        GpsNoiseNode(
            context=ros_ctx, parameter_overrides=[Parameter('datum', value=[95.0, 0.0, 0.0])]
        )
    with pytest.raises(ParameterError, match="'model'"):
        ImuNoiseNode(context=ros_ctx, parameter_overrides=[Parameter('model', value='bosch')])


def test_console_script_exit_codes(domain_id):
    env = ros_env(domain_id)
    bad = subprocess.run(
        [
            console_script('gps_noise_node'),
            '--ros-args',
            '-p',
            'gauss_sigma_m:=[-1.0, 0.0, 0.0]',
            '-p',
            'model:=ch_gauss',
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bad.returncode == 2 and 'gauss_sigma_m' in bad.stderr
    proc = subprocess.Popen(
        [console_script('imu_noise_node')],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for_output(proc, 'spinning; waiting for truth', 20.0)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()


def test_simulator_models_from_an_sdf_run_in_the_nodes(ros_ctx, executor, tmp_path):
    """A node given a Gazebo SDF (config_file) publishes what the library computes from it."""
    from test_simconfig import GZ_SDF
    from vepd_ros.io.simconfig import read_sdf
    from vepd_ros.models.sensors import simulate_sensors

    path = tmp_path / 'robot.sdf'
    path.write_text(GZ_SDF)
    gps, imu = read_sdf(path)
    traj, stamps = _truth_trajectory()
    # the nodes read the SDF themselves (config_file): the model and its values come from it
    h = _Harness(ros_ctx, executor, {'config_file': str(path), 'seed': 7},
                 {'config_file': str(path), 'seed': 7})
    assert h.gps.get_parameter('position_sensing.vertical.stddev').value == 0.4
    assert h.imu.get_parameter('angular_velocity.stddev').value == [0.01, 0.02, 0.03]
    h.feed(_truth_msgs(traj, stamps))
    assert h.drain(int(RUN_S * 10) + 1, int(RUN_S * 100) + 1), (len(h.fixes), len(h.imus))
    lib = simulate_sensors(traj, gps.model, imu.model, seed=7, gps_params=gps.params,
                           imu_params=imu.params)
    lla = np.array([[m.latitude, m.longitude, m.altitude] for m in h.fixes])
    np.testing.assert_allclose(lla[:, :2], lib.gps_lla[:, :2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(lla[:, 2], lib.gps_lla[:, 2], rtol=0, atol=1e-9)
    w = np.array([[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z]
                  for m in h.imus])
    np.testing.assert_array_equal(w, lib.imu.angular_velocity)
    assert all(m.position_covariance_type == 0 for m in h.fixes)
