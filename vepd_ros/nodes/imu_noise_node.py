# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
IMU noise node: ground truth in, simulated ``/imu/data`` out.

imu_noise_node: ground truth → an IMU noise model → ``/imu/data`` (sensor_msgs/Imu) at ``rate_hz``
(100).

Truth: ``/ground_truth/imu`` (noise-free Imu: body rates, specific force incl. gravity,
orientation); while no message has come on it (``truth_source: auto``), rates and specific force
are derived from ``/ground_truth/odometry`` (twist.angular; f = Rᵀ(d(R·v_body)/dt) + Rᵀg by
backward differences). Sampling is on the sensor's own clock (ticks k/rate_hz in the truth time
base, interpolated between bracketing truth messages; orientation by normalised linear
interpolation, exact on a truth stamp). REP-145 fields: covariances of the model, orientation
covariance[0] = −1 when orientation is not provided. Bad truth (NaN/Inf, stamps not increasing) is
dropped, counted (also on ``/diagnostics``) and warned about (throttled); no truth after
``topic_timeout_s`` is reported by topic name.
"""

from __future__ import annotations

import math

from nav_msgs.msg import Odometry
import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import Imu
from vepd_ros.frames import GRAVITY_MPS2, rotation_matrix_from_quaternion
from vepd_ros.models.sensors import TruthResampler
from vepd_ros.models.spec import IMU_NODE_PARAMS
from vepd_ros.nodes.health import DiagnosticsPublisher, DropCounter, TopicWatchdog
from vepd_ros.nodes.lifecycle import run_node
from vepd_ros.nodes.params import declare_params, MODEL_PARAMS_NOTE, NODE_KWARGS, node_spec
from vepd_ros.nodes.qos import SENSOR_QOS, TRUTH_QOS
from vepd_ros.nodes.run_events import RunEvents
from vepd_ros.nodes.stamps import ns_to_stamp, stamp_to_ns
from vepd_ros.streams import TOPIC_GROUND_TRUTH, TOPIC_GROUND_TRUTH_IMU, TOPIC_IMU


class ImuNoiseNode(Node):

    def __init__(self, **kwargs):
        super().__init__('imu_noise_node', **{**NODE_KWARGS, **kwargs})
        self.p = p = declare_params(self, IMU_NODE_PARAMS)
        self.spec = node_spec(self, 'imu', p)  # unknown or bad parameters: refused, named
        name = p['model']
        self.model = self.spec.make_model(p['seed'])
        self.resampler = TruthResampler(p['rate_hz'], p['max_gap_s'])
        self.drops = DropCounter(self)
        self.runs = (
            RunEvents(self, 'imu', p['seed'], p['label'], self._restart, self.drops)
            if p['label']
            else None
        )
        self.source = None  # 'imu' or 'odometry' once truth arrives
        self._odom_prev = None
        self.published = 0
        self.received = {'imu': 0, 'odometry': 0}
        self.pub = self.create_publisher(Imu, TOPIC_IMU, SENSOR_QOS)
        if p['truth_source'] in ('auto', 'imu'):
            self.create_subscription(Imu, TOPIC_GROUND_TRUTH_IMU, self._on_imu, TRUTH_QOS)
        self._odom_sub = (
            self.create_subscription(Odometry, TOPIC_GROUND_TRUTH, self._on_odom, TRUTH_QOS)
            if p['truth_source'] in ('auto', 'odometry')
            else None
        )
        self._hello = self.create_timer(0.01, self._on_spinning)
        self.diagnostics = DiagnosticsPublisher(
            self,
            self.drops,
            lambda: {
                'truth_imu_messages': self.received['imu'],
                'truth_odometry_messages': self.received['odometry'],
                'truth_source': self.source or 'none',
                'published': self.published,
            },
        )
        self.watchdog = TopicWatchdog(self, p['topic_timeout_s'])
        topics = [
            self.resolve_topic_name(topic)
            for s, topic in (('imu', TOPIC_GROUND_TRUTH_IMU), ('odometry', TOPIC_GROUND_TRUTH))
            if p['truth_source'] in ('auto', s)
        ]
        self.watchdog.watch(' or '.join(topics), lambda: any(self.received.values()))
        self.get_logger().info(
            f'imu: model={name} seed={p["seed"]} rate={p["rate_hz"]} Hz truth={p["truth_source"]}'
        )

    def _on_spinning(self):
        """Say we are up on the first executor callback (start-up scripts and tests wait)."""
        self._hello.cancel()
        self.get_logger().info(
            f'spinning; waiting for truth on {TOPIC_GROUND_TRUTH_IMU} or {TOPIC_GROUND_TRUTH}'
        )

    # -- truth
    # ----------------------------------------------------------------------------------------
    def _on_imu(self, msg: Imu):
        self.received['imu'] += 1
        if self.source != 'imu':
            if self.source == 'odometry':
                self.get_logger().info(
                    f'{TOPIC_GROUND_TRUTH_IMU} appeared: using it instead of differentiated '
                    'odometry'
                )
                self.resampler = TruthResampler(self.p['rate_hz'], self.p['max_gap_s'])
            self.source = 'imu'
            if self._odom_sub is not None:
                # Odometry is never used again once Imu truth came: stop paying a wake-up and a
                # deserialisation per truth sample for it (100 Hz × time_scale callbacks that only
                # returned).
                self.destroy_subscription(self._odom_sub)
                self._odom_sub = None
        w, f, q = msg.angular_velocity, msg.linear_acceleration, msg.orientation
        self._push(
            stamp_to_ns(msg.header.stamp), (w.x, w.y, w.z, f.x, f.y, f.z, q.x, q.y, q.z, q.w)
        )

    def _on_odom(self, msg: Odometry):
        self.received['odometry'] += 1
        if self.source == 'imu':
            return
        self.source = 'odometry'
        t_ns = stamp_to_ns(msg.header.stamp)
        o, tw = msg.pose.pose.orientation, msg.twist.twist
        q = (o.x, o.y, o.z, o.w)
        vb = (tw.linear.x, tw.linear.y, tw.linear.z)
        w = (tw.angular.x, tw.angular.y, tw.angular.z)
        if not all(math.isfinite(v) for v in q + vb + w) or not any(q):
            return self.drops.drop('non_finite', f'odometry at {t_ns} ns')
        r = rotation_matrix_from_quaternion(np.array(q))
        v_world = r @ np.array(vb)
        prev, self._odom_prev = self._odom_prev, (t_ns, v_world)
        if prev is None or t_ns <= prev[0]:
            if prev is not None and t_ns <= prev[0]:
                self._odom_prev = prev
                return self.drops.drop(
                    'stamp_not_increasing', f'odometry {t_ns} ns after {prev[0]} ns'
                )
            return
        acc_world = (v_world - prev[1]) / ((t_ns - prev[0]) * 1e-9)
        f = r.T @ (acc_world + np.array([0.0, 0.0, GRAVITY_MPS2]))
        self._push(t_ns, tuple(w) + tuple(f) + q)

    def _restart(self, event: dict):
        """
        Start a new run of a study.

        A new run of a study: a fresh model with the run's own seed and a fresh sensor clock.
        """
        self.model = self.spec.make_model(event['seed'])
        self.resampler = TruthResampler(self.p['rate_hz'], self.p['max_gap_s'])
        self._odom_prev = None
        self.get_logger().info(
            f'run {event["scenario"]} #{event["run"]}: model re-seeded ({event["seed"]})'
        )

    def _push(self, t_ns: int, values):
        if self.runs is not None:
            self.runs.before(t_ns)
        if not all(math.isfinite(v) for v in values):
            return self.drops.drop('non_finite', f'truth at {t_ns} ns')
        try:
            ticks = self.resampler.push(t_ns, values)
        except ValueError as exc:
            return self.drops.drop('stamp_not_increasing', str(exc))
        for ts, ts_ns, v in ticks:
            self._emit(ts, ts_ns, v)

    def _emit(self, ts: float, ts_ns: int, v: np.ndarray):
        q = v[6:10]
        n = np.linalg.norm(q)
        if not n > 0:
            return self.drops.drop('bad_orientation', f'zero quaternion at {ts_ns} ns')
        s = self.model.sample_arrays(
            np.array([ts]), v[None, 0:3], v[None, 3:6], q[None]
        )  # the model normalises
        m = Imu()
        m.header.stamp, m.header.frame_id = ns_to_stamp(ts_ns), self.p['frame_id']
        m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z = (
            float(x) for x in s.angular_velocity[0]
        )
        a = s.linear_acceleration[0]
        m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z = (
            float(x) for x in a
        )
        m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w = (
            float(x) for x in s.orientation[0]
        )
        m.orientation_covariance = [float(c) for c in s.orientation_covariance[0].ravel()]
        m.angular_velocity_covariance = [
            float(c) for c in s.angular_velocity_covariance[0].ravel()
        ]
        m.linear_acceleration_covariance = [
            float(c) for c in s.linear_acceleration_covariance[0].ravel()
        ]
        self.pub.publish(m)
        self.published += 1


def main(args=None) -> int:
    return run_node(ImuNoiseNode, args=args, params=IMU_NODE_PARAMS, help_note=MODEL_PARAMS_NOTE)


if __name__ == '__main__':
    raise SystemExit(main())
