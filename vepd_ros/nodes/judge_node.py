# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
judge_node: the built-in robot_localization ekf_node (same parameter names and topics).

Parameters come from robot_localization's own YAML (``--ros-args --params-file config/ekf.yaml``);
they are read through ``vepd_ros.judge.config`` (unknown or ill-typed → exit 2 naming them).
Subscribes every configured ``odomN`` / ``imuN`` / ``poseN`` / ``twistN`` topic with SensorDataQoS,
runs the node-loop emulation (``vepd_ros.judge.filter.RosFilter``) on a timer at ``frequency`` on
the node clock (so ``use_sim_time`` works) and publishes ``odometry/filtered`` (nav_msgs/Odometry)
stamped with the last measurement time, twist in the body frame, only when the stamp moved forward.

Two vepd_ros parameters beside upstream's: ``reset_on_run_events`` (restart the filter at each run
truth_node announces) and ``publish_on_measurement`` (wall clock only: also run the loop when a
measurement arrives, so its estimate goes out at once — end-to-end latency of the noise hop plus
~1.5 ms instead of up to one 35 Hz tick; the output rate becomes the measurement rate).
"""

from __future__ import annotations

import array
import math

from geometry_msgs.msg import PoseWithCovarianceStamped, TwistWithCovarianceStamped
from nav_msgs.msg import Odometry
import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import Imu
from vepd_ros.frames import quaternion_from_rpy
from vepd_ros.judge.filter import RosFilter
from vepd_ros.judge.rl_graph import load_judge_params, make_judge_ekf
from vepd_ros.nodes.health import DropCounter
from vepd_ros.nodes.lifecycle import run_node
from vepd_ros.nodes.lockstep import AfterArrivals
from vepd_ros.nodes.params import RL_PARAMS_NOTE, static_transforms_param
from vepd_ros.nodes.qos import SENSOR_QOS
from vepd_ros.nodes.run_events import RunEvents
from vepd_ros.nodes.stamps import ns_to_stamp, stamp_to_ns
from vepd_ros.params import ParameterError

_RCLPY_PARAMETERS = {'start_type_description_service'}
"""Declared by rclpy itself on every node (use_sim_time is read by the config as upstream does)."""

MAX_CATCH_UP_TICKS = 100
"""
On sim time, at most this many skipped timer periods are processed late.

A longer jump is a pause or a clock reset, not a busy executor.
"""

_TYPES = {
    'odom': Odometry,
    'imu': Imu,
    'pose': PoseWithCovarianceStamped,
    'twist': TwistWithCovarianceStamped,
}


_TF_WARNED = False  # the missing-tf2_msgs warning was given in this process
TF_CHECK_EVERY = 350
"""Without tf2_msgs, /tf's subscribers are counted every this many estimates (10 s at 35 Hz)."""


class JudgeNode(Node):

    def __init__(self, node_name: str = 'ekf_filter_node', **kwargs):
        kwargs.setdefault('allow_undeclared_parameters', True)
        kwargs.setdefault('automatically_declare_parameters_from_overrides', True)
        super().__init__(node_name, **kwargs)
        raw = {
            name: p.value
            for name, p in self.get_parameters_by_prefix('').items()
            if name not in _RCLPY_PARAMETERS and p.value is not None
        }
        raw = {
            k: (list(v) if isinstance(v, (array.array, np.ndarray)) else v) for k, v in raw.items()
        }
        # vepd_ros's own switch (not a robot_localization parameter): restart the filter at every
        # run start announced by truth_node, as a freshly launched ekf_node per run would (the
        # offline study's semantics).
        reset_on_runs = bool(raw.pop('reset_on_run_events', False))
        # vepd_ros's own switch too: also run the filter loop when a measurement arrives, so an
        # estimate is published as soon as its measurement is fused instead of at the next
        # `frequency` tick (lower latency for live use; the output rate becomes the measurement
        # rate, unlike ekf_node and the paper's 35 Hz).
        self._tick_on_arrival = bool(raw.pop('publish_on_measurement', False))
        # vepd_ros's own too, as navsat_node's: the sensor mountings ekf_node would look up on
        # /tf_static (the pip runtime has no tf2), in vepd bag --static-tf's spelling
        tf = static_transforms_param(raw.pop('static_transforms', []))
        # The same loader as the offline graph: robot_localization's YAML including a control block
        # (ART's file sets use_control with nothing publishing cmd_vel: emulated as a command that
        # never arrives).
        judge = load_judge_params(raw)
        self.params = judge.ekf
        self.filter = RosFilter(self.params, tf)
        if judge.control is not None:
            self.filter.ekf = make_judge_ekf(judge, 1)
        self.drops = DropCounter(self)
        self.runs = (
            RunEvents(self, 'judge', 0, 'judge', self._restart, self.drops)
            if reset_on_runs
            else None
        )
        # depth: a recorder on a busy machine may take a burst late; reliable keep-last must not
        # overwrite it
        self.pub = self.create_publisher(Odometry, 'odometry/filtered', QoSProfile(depth=100))
        self._tf_unavailable = False  # publish_tf without tf2_msgs (``_tf_publisher``)
        self.pub_tf = self._tf_publisher() if self.params.publish_tf else None
        self._subs = []
        for s in self.params.sensors:
            qos = QoSProfile(
                depth=s.queue_size,
                reliability=SENSOR_QOS.reliability,
                history=SENSOR_QOS.history,
                durability=SENSOR_QOS.durability,
            )
            self._subs.append(
                self.create_subscription(
                    _TYPES[s.kind], s.topic, lambda msg, name=s.name: self._on_msg(name, msg), qos
                )
            )
        self._sim_time = bool(self.get_parameter('use_sim_time').value)
        if self._tick_on_arrival and self._sim_time:
            raise ParameterError(
                'publish_on_measurement',
                True,
                "false with use_sim_time (on sim time the judge ticks on the study's schedule)",
            )
        # what arrived before a tick goes into it (not after it, by executor order)
        self._after_arrivals = AfterArrivals(self, self._subs, self._on_tick)
        self.timer = self.create_timer(
            1.0 / self.params.frequency,
            lambda: self._after_arrivals(self.get_clock().now().nanoseconds),
        )
        self.published = 0
        self.get_logger().info(
            f'judge: {len(self.params.sensors)} sensor(s) '
            f'({", ".join(f"{s.name}={s.topic}" for s in self.params.sensors)}), '
            f'{self.params.frequency:g} Hz'
        )

    def _tf_publisher(self):
        """
        Build the /tf publisher of ``publish_tf``, or None where tf2_msgs is missing.

        ``publish_tf`` (robot_localization's, default true): world_frame -> base_link_frame_output
        on /tf, as ekf_node broadcasts it. The message type is tf2_msgs/TFMessage, which a ROS 2
        install has and the pip runtime does not (no tf2_msgs wheel exists): there the judge
        publishes no transform, and says so only once something subscribes to /tf
        (``_tf_wanted``) — none of the suite's nodes does, so a graph that needs no TF prints
        nothing about it.
        """
        try:
            from tf2_msgs.msg import TFMessage
        except ImportError:
            self._tf_unavailable = True
            return None
        return self.create_publisher(TFMessage, '/tf', QoSProfile(depth=100))

    def _tf_wanted(self) -> None:
        """Warn (once per process) when /tf has a subscriber that this judge cannot serve."""
        global _TF_WARNED
        if self.count_subscribers('/tf') == 0:
            return
        self._tf_unavailable = False  # checked no more
        if not _TF_WARNED:
            _TF_WARNED = True
            self.get_logger().warning(
                'publish_tf is true and /tf has a subscriber, but tf2_msgs is not installed here '
                f'(the pip runtime has no tf2): no {self.params.world_frame} -> '
                f'{self.params.base_link_frame_output} transform on /tf. Install '
                'ros-$ROS_DISTRO-tf2-msgs, or set publish_tf: false.'
            )

    def _publish_tf(self, odom: Odometry) -> None:
        from geometry_msgs.msg import TransformStamped
        from tf2_msgs.msg import TFMessage

        t = TransformStamped()
        t.header = odom.header
        t.child_frame_id = odom.child_frame_id
        p = odom.pose.pose
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (
            p.position.x,
            p.position.y,
            p.position.z,
        )
        t.transform.rotation = p.orientation
        self.pub_tf.publish(TFMessage(transforms=[t]))

    def _restart(self, event: dict) -> None:
        self._after_arrivals.flush()  # ticks due before this run's first message: the old run's
        self.filter.reset()
        self.get_logger().info(f'run {event["scenario"]} #{event["run"]}: filter restarted')

    def _on_msg(self, name: str, msg) -> None:
        if self.runs is not None:
            self.runs.before(stamp_to_ns(msg.header.stamp))
        before = sum(self.filter.dropped.values())
        try:
            self.filter.feed(name, msg)
        except (ValueError, KeyError) as exc:
            self.drops.drop('bad message', f'{name}: {exc}')
            return
        if sum(self.filter.dropped.values()) > before:
            self.drops.drop('guard', f'{name}: stamp older than the previous one or no transform')
        elif self._tick_on_arrival:
            self._tick(self.get_clock().now().nanoseconds)

    def _on_tick(self, now: int) -> None:
        """Run the timer tick at ``now`` (the clock when the timer fired), after the arrivals."""
        if self._tick_on_arrival:
            # each message before this tick ticked at its own now(): a tick at the older timer
            # time would look like the clock going backwards (a filter reset)
            now = self.get_clock().now().nanoseconds
        if now <= 0:
            return  # use_sim_time without /clock yet
        if self._sim_time:
            # On sim time a timer fires at the first /clock step past its due time, so now() can be
            # a whole clock step late (10 ms with a 100 Hz simulator clock) and the tick would take
            # in measurements stamped after its due time. Process at the due time instead: the
            # timer was created at sim time 0, so its ticks lie on k·period. (On the wall clock
            # now() is the due time up to scheduling jitter.)
            now -= now % self.params.period_ns
            for t in self._missed_ticks(now):
                self._tick(t)
        self._tick(now)

    def _missed_ticks(self, now: int) -> range:
        """
        Return the timer ticks missed since the previous tick (sim time only).

        Sim time only: the nominal ticks k·period between the previous tick and ``now`` that the
        timer did not fire for (rcl skips periods when /clock jumps or the process was
        descheduled), at most ``MAX_CATCH_UP_TICKS``. Processing them keeps the output on the
        offline study's schedule under load; robot_localization's timer skips them (on the wall
        clock this node does too).
        """
        last, period = self.filter.last_tick_ns, self.params.period_ns
        if last is None or now - last <= period:
            return range(0)
        return range(max(last + period, now - MAX_CATCH_UP_TICKS * period), now, period)

    def _tick(self, now: int) -> None:
        out = self.filter.tick(now)
        if out is None or not out.published:
            return
        odom = self.to_odometry(out.stamp_ns, out.x[0], out.P[0])
        self.pub.publish(odom)
        if self.pub_tf is not None:
            self._publish_tf(odom)
        elif self._tf_unavailable and self.published % TF_CHECK_EVERY == 0:
            self._tf_wanted()
        self.published += 1

    def to_odometry(self, stamp_ns: int, x: np.ndarray, P: np.ndarray) -> Odometry:
        p = self.params
        m = Odometry()
        m.header.stamp = ns_to_stamp(stamp_ns)
        m.header.frame_id = p.world_frame
        m.child_frame_id = p.base_link_frame_output
        m.pose.pose.position.x, m.pose.pose.position.y, m.pose.pose.position.z = (
            float(v) for v in x[0:3]
        )
        q = quaternion_from_rpy(float(x[3]), float(x[4]), float(x[5]))
        o = m.pose.pose.orientation
        o.x, o.y, o.z, o.w = (float(v) for v in q)
        lin, ang = m.twist.twist.linear, m.twist.twist.angular
        lin.x, lin.y, lin.z = (float(v) for v in x[6:9])
        ang.x, ang.y, ang.z = (float(v) for v in x[9:12])
        m.pose.covariance = [float(v) for v in P[0:6, 0:6].ravel()]
        m.twist.covariance = [float(v) for v in P[6:12, 6:12].ravel()]
        if not all(math.isfinite(v) for v in x[:12]):
            self.get_logger().error(
                'NaNs were detected in the output state of the filter', throttle_duration_sec=5.0
            )
        return m


def main(args=None) -> int:
    return run_node(JudgeNode, args, help_note=RL_PARAMS_NOTE)


if __name__ == '__main__':
    raise SystemExit(main())
