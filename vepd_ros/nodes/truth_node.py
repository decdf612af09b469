# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
truth_node: publishes ground truth of the paper's manoeuvres (no simulator needed).

Publishes ``/ground_truth/odometry`` (nav_msgs/Odometry: pose in ``frame_id``, twist in
``child_frame_id``), ``/ground_truth/imu`` (noise-free sensor_msgs/Imu: orientation, body rates,
specific force incl. gravity), ``/ground_truth/run`` (std_msgs/String JSON: run start/end events)
and, when accelerated, ``/clock``. Sample k of a run carries stamp t_run_start + k/rate_hz: stamps
are the sample times, never callback times. Runs start on whole seconds of the time base (the first
after the previous run's end plus ``gap_s``). A run's start event goes out on its own, a step
before the run's first sample: events and samples travel on different topics with no order between
them, and paced (``pace_nodes``, ``vepd run``'s lockstep) every node has taken the event before
that sample is published, so each node restarts its run at the same sample every time.
"""

from __future__ import annotations

import json

from nav_msgs.msg import Odometry
import numpy as np
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu
from std_msgs.msg import String
from vepd_ros.nodes.health import DropCounter
from vepd_ros.nodes.lifecycle import run_node
from vepd_ros.nodes.lockstep import Pacer
from vepd_ros.nodes.params import declare_params
from vepd_ros.nodes.qos import EVENT_QOS
from vepd_ros.nodes.stamps import ns_to_stamp
from vepd_ros.params import ParameterError
from vepd_ros.seeding import run_plan
from vepd_ros.streams import NS, TOPIC_GROUND_TRUTH, TOPIC_GROUND_TRUTH_IMU, TOPIC_RUN_EVENTS
from vepd_ros.truth import generate
from vepd_ros.truth.params import scenario_list, TRUTH_PARAMS
from vepd_ros.truth.scenarios import ScenarioParams


class TruthNode(Node):

    def __init__(self, **kwargs):
        super().__init__('truth_node', **kwargs)
        self.p = p = declare_params(self, TRUTH_PARAMS)
        self.drive_clock = p['publish_clock'] or p['time_scale'] != 1.0
        if self.drive_clock and self.get_parameter('use_sim_time').value:
            raise ParameterError('use_sim_time', True, 'false on the node that drives /clock')
        self.period_ns = int(round(NS / p['rate_hz']))
        self.n_samples = int(np.floor(p['duration_s'] * p['rate_hz'] + 1e-9)) + 1
        self.plan = run_plan(p['seed'], scenario_list(p['scenario']), p['runs'])
        self.pub_odom = self.create_publisher(Odometry, TOPIC_GROUND_TRUTH, 50)
        self.pub_imu = self.create_publisher(Imu, TOPIC_GROUND_TRUTH_IMU, 50)
        self.pub_run = self.create_publisher(String, TOPIC_RUN_EVENTS, EVENT_QOS)
        self.pub_clock = (
            self.create_publisher(ClockMsg, '/clock', 10) if self.drive_clock else None
        )
        self.run, self.k, self.samples = -1, 0, None
        self.run_t0_ns = None  # stamp of sample 0 of the current run
        self.next_run_ns = None  # stamp at which the next run starts
        self.sim_ns = int(round(p['start_time_s'] * NS))
        self.published = 0
        self._shutdown_timer = None
        self._finish_ns = None  # shutdown_when_done: sim time at which /clock stops
        self.drops = DropCounter(self)
        if p['pace_nodes'] and not self.drive_clock:
            raise ParameterError(
                'pace_nodes',
                p['pace_nodes'],
                '0 unless this node drives /clock (time_scale != 1 or publish_clock)',
            )
        self.pacer = Pacer(self, p['pace_nodes'], p['pace_timeout_s'], self.drops)
        if self.drive_clock:
            wall_period_s = 1.0 / (p['rate_hz'] * p['time_scale'])
            self.timer = self.create_timer(
                wall_period_s, self._on_clock_tick, clock=Clock(clock_type=ClockType.STEADY_TIME)
            )
        else:
            self.timer = self.create_timer(1.0 / p['rate_hz'], self._on_tick)
        clock = (
            'driving /clock x%.3g' % p['time_scale'] if self.drive_clock else 'on the node clock'
        )
        self.get_logger().info(
            f'truth: scenario={p["scenario"]} runs={p["runs"]} per scenario, '
            f'duration={p["duration_s"]} s rate={p["rate_hz"]} Hz '
            f'{clock}'
        )

    # -- time sources -------------------------------------------------------------------------
    def _ready(self) -> bool:
        """
        Tell whether publishing may start.

        False while the first run waits for its subscribers (``wait_for_subscribers``,
        ``wait_for_run_subscribers``).
        """
        if self.run >= 0:
            return True
        p = self.p
        n_odom, n_run = (
            self.pub_odom.get_subscription_count(),
            self.pub_run.get_subscription_count(),
        )
        if n_odom >= p['wait_for_subscribers'] and n_run >= p['wait_for_run_subscribers']:
            return True
        self.get_logger().info(
            f'waiting for subscribers: {TOPIC_GROUND_TRUTH} '
            f'{n_odom}/{p["wait_for_subscribers"]}, '
            f'{TOPIC_RUN_EVENTS} {n_run}/{p["wait_for_run_subscribers"]}',
            throttle_duration_sec=5.0,
        )
        return False

    def _on_clock_tick(self):
        """
        Advance sim time by one step.

        One step of sim time: publish the samples stamped up to T, then let /clock reach T −
        period/2.

        Data for step T goes out before any node's clock reaches T (as a simulator publishes a
        step's results before advancing its clock), so a timer firing at T — the judge's, navsat's
        — finds the data stamped T already delivered, whatever order the executor picks. This is
        the offline study's ordering at one instant (arrivals, then timer callbacks), so the graph
        and the study time messages alike.
        """
        self.step()

    def step(self) -> bool:
        """Advance sim time one step; False while waiting for subscribers or held by pacing."""
        if not self._ready() or not self.pacer.ready():
            return False
        if self._finish_ns is not None and self.sim_ns >= self._finish_ns:
            return self._stop()
        if self._publish_due(self.sim_ns):
            return True  # a run's start event went out alone: its samples come with the next step
        self.pub_clock.publish(ClockMsg(clock=ns_to_stamp(self.sim_ns - self.period_ns // 2)))
        self.sim_ns += self.period_ns
        return True

    def step_externally(self) -> float:
        """
        Hand the stepping to the caller; return the wall period of one step.

        Hand the stepping to the caller (``vepd run`` in one process, lockstep): the wall timer
        stops and the caller calls ``step`` once the graph has run every callback the previous step
        caused. Returns the wall period of one step at ``time_scale``.
        """
        self.timer.cancel()
        return 1.0 / (self.p['rate_hz'] * self.p['time_scale'])

    def _on_tick(self):
        now_ns = self.get_clock().now().nanoseconds
        if now_ns <= 0 or not self._ready():
            return  # use_sim_time without /clock yet, or still waiting for subscribers
        self._publish_due(now_ns)

    # -- publication --------------------------------------------------------------------------
    def _start_run(self, t0_ns: int):
        self.run += 1
        p = self.p
        scenario, _, seed = self.plan[self.run]
        traj = generate(
            scenario,
            p['duration_s'],
            seed=seed,
            params=ScenarioParams(speed_mps=p['speed_mps'] or None),
        )
        self.samples = _Samples(traj.sample(np.arange(self.n_samples) * self.period_ns / NS))
        self.run_t0_ns, self.k = t0_ns, 0
        self._event('start', t0_ns, traj.meta)

    def _publish_due(self, now_ns: int) -> bool:
        """
        Publish every sample whose stamp is ≤ now (catching up if a timer callback was late).

        Returns True when a run's start event went out: the call stops there, and the run's samples
        follow from the next call (the event alone in its step, see the module docstring).
        """
        while True:
            if self.samples is None:
                if self.run + 1 >= len(self.plan):
                    self._finish()
                    return False
                # Runs start on whole seconds of the time base, so every sensor clock (ticks
                # k/rate_hz) has the same phase relative to the run start as in the offline study,
                # where runs start at t = 0.
                if self.next_run_ns is None:
                    self.next_run_ns = now_ns
                start = self.next_run_ns = -(-self.next_run_ns // NS) * NS
                if start > now_ns:
                    return False
                self._start_run(start)
                return True
            stamp = self.run_t0_ns + self.k * self.period_ns
            if stamp > now_ns:
                return False
            self._publish_sample(self.k, stamp)
            self.k += 1
            if self.k >= self.n_samples:
                self._event('end', stamp, {})
                self.samples = None
                self.next_run_ns = stamp + int(round(self.p['gap_s'] * NS))

    def _publish_sample(self, k: int, stamp_ns: int):
        s = self.samples
        stamp = ns_to_stamp(stamp_ns)
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id = stamp, self.p['frame_id']
        odom.child_frame_id = self.p['child_frame_id']
        pos, q, v, w = (
            s.position[k],
            s.quaternion[k],
            s.velocity_body[k],
            s.angular_velocity_body[k],
        )
        odom.pose.pose.position.x, odom.pose.pose.position.y, odom.pose.pose.position.z = pos
        o = odom.pose.pose.orientation
        o.x, o.y, o.z, o.w = q
        odom.twist.twist.linear.x, odom.twist.twist.linear.y, odom.twist.twist.linear.z = v
        odom.twist.twist.angular.x, odom.twist.twist.angular.y, odom.twist.twist.angular.z = w
        imu = Imu()
        imu.header.stamp, imu.header.frame_id = stamp, self.p['child_frame_id']
        imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = q
        imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = w
        f = s.specific_force_body[k]
        imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = f
        self.pub_odom.publish(odom)
        self.pub_imu.publish(imu)
        self.published += 1

    def _event(self, kind: str, stamp_ns: int, meta: dict):
        scenario, j, seed = self.plan[self.run]
        payload = {
            **meta,
            'event': kind,
            'index': self.run,
            'total': len(self.plan),
            'scenario': scenario,
            'run': j,
            'seed': seed,
            'study_seed': self.p['seed'],
            'stamp_ns': stamp_ns,
        }
        self.pub_run.publish(String(data=json.dumps(payload)))
        self.get_logger().info(
            f'run {self.run + 1}/{len(self.plan)} ({scenario} #{j}) {kind} at '
            f't={stamp_ns / NS:.3f} s'
            # said per run: a launch may end (its evaluator done) before this node's last line
            + (
                f' ({self.pacer.held_steps} steps held back by pacing)'
                if kind == 'end' and self.pacer.pace_nodes
                else ''
            )
        )

    def _finish(self):
        if not self.p['shutdown_when_done'] or self._shutdown_timer is not None:
            return
        if self.drive_clock:
            # /clock runs on a little so every node closes its last run (recorders close a run once
            # their clock passes its end), then stops (``step``).
            if self._finish_ns is None:
                self._finish_ns = self.sim_ns + int(self.p['clock_tail_s'] * NS)
            return
        self._stop()

    def _stop(self) -> bool:
        if self._shutdown_timer is None:
            self.get_logger().info(
                f'all {len(self.plan)} runs published ({self.published} samples); /clock '
                f'stopped ({self.pacer.held_steps} steps held back by pacing); shutting down'
            )
            self.timer.cancel()
            # Give DDS a moment to deliver the last (reliable, latched) events before the process
            # exits.
            self._shutdown_timer = self.create_timer(
                0.5,
                lambda: rclpy.try_shutdown(context=self.context),
                clock=Clock(clock_type=ClockType.STEADY_TIME),
            )
        return False


class _Samples:
    """
    Per-sample arrays of one run, converted to Python floats once.

    Converting once keeps message building cheap.
    """

    def __init__(self, traj):
        self.position = traj.position_enu.tolist()
        self.quaternion = traj.quaternion.tolist()
        self.velocity_body = traj.velocity_body.tolist()
        self.angular_velocity_body = traj.angular_velocity_body.tolist()
        self.specific_force_body = traj.specific_force_body.tolist()


def main(args=None) -> int:
    return run_node(TruthNode, args=args, params=TRUTH_PARAMS)


if __name__ == '__main__':
    raise SystemExit(main())
