# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
GPS noise node: ground truth in, simulated ``/gps/fix`` out.

gps_noise_node: ground truth → a GPS noise model → ``/gps/fix`` (sensor_msgs/NavSatFix) at
``rate_hz``.

Subscribes ``/ground_truth/odometry`` (nav_msgs/Odometry, pose in the ENU frame about ``datum``).
Samples on the sensor's own clock: ticks k/rate_hz in the truth's time base, each published once
truth at or past it has arrived, the position interpolated between the two bracketing truth
messages — never one output per truth message. Header stamps are in the truth's time base (so
/clock and bag replay work). With the ``latency`` modifier a fix is held until truth time passes
its publication time. The numbers equal ``vepd_ros.models.sensors.simulate_sensors`` for the same
truth and seed. Bad truth (NaN/Inf, stamps not increasing, a position beyond ``max_range_m`` of the
datum) is dropped, counted and warned about (throttled) and counted on ``/diagnostics``; the node
keeps running. No truth after ``topic_timeout_s`` is reported by topic name. Bad parameters stop it
at start with the parameter named.
"""

from __future__ import annotations

import math

from nav_msgs.msg import Odometry
import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import NavSatFix, NavSatStatus
from vepd_ros.models.geodesy import enu_to_geodetic
from vepd_ros.models.sensors import TruthResampler
from vepd_ros.models.spec import GPS_NODE_PARAMS
from vepd_ros.nodes.health import DiagnosticsPublisher, DropCounter, TopicWatchdog
from vepd_ros.nodes.lifecycle import run_node
from vepd_ros.nodes.params import declare_params, MODEL_PARAMS_NOTE, NODE_KWARGS, node_spec
from vepd_ros.nodes.qos import SENSOR_QOS, TRUTH_QOS
from vepd_ros.nodes.run_events import RunEvents
from vepd_ros.nodes.stamps import ns_to_stamp, stamp_to_ns
from vepd_ros.streams import NS, TOPIC_GPS_FIX, TOPIC_GROUND_TRUTH


class GpsNoiseNode(Node):

    def __init__(self, **kwargs):
        super().__init__('gps_noise_node', **{**NODE_KWARGS, **kwargs})
        self.p = p = declare_params(self, GPS_NODE_PARAMS)
        self.spec = node_spec(self, 'gps', p)  # unknown or bad parameters: refused, named
        self.mp = self.spec.params
        self.datum = tuple(float(v) for v in p['datum'])
        self.model = self.spec.make_model(p['seed'])
        self.resampler = TruthResampler(p['rate_hz'], p['max_gap_s'])
        self.drops = DropCounter(self)
        self.pending = []  # (publish_ns, msg) held for latency
        self.runs = (
            RunEvents(self, 'gps', p['seed'], p['label'], self._restart, self.drops)
            if p['label']
            else None
        )
        self.published = 0
        self.received = 0
        self.pub = self.create_publisher(NavSatFix, TOPIC_GPS_FIX, SENSOR_QOS)
        self.sub = self.create_subscription(
            Odometry, TOPIC_GROUND_TRUTH, self._on_truth, TRUTH_QOS
        )
        self._hello = self.create_timer(0.01, self._on_spinning)
        self.diagnostics = DiagnosticsPublisher(
            self,
            self.drops,
            lambda: {'truth_messages': self.received, 'published': self.published},
        )
        self.watchdog = TopicWatchdog(self, p['topic_timeout_s'])
        self.watchdog.watch(
            self.resolve_topic_name(TOPIC_GROUND_TRUTH), lambda: self.received > 0
        )
        self.get_logger().info(
            f'gps: model={p["model"]} seed={p["seed"]} rate={p["rate_hz"]} Hz datum={self.datum}'
        )

    def _on_spinning(self):
        """Say we are up on the first executor callback (start-up scripts and tests wait)."""
        self._hello.cancel()
        self.get_logger().info(f'spinning; waiting for truth on {TOPIC_GROUND_TRUTH}')

    def _restart(self, event: dict):
        """
        Start a new run of a study.

        A new run of a study: a fresh model with the run's own seed and a fresh sensor clock.
        """
        self.model = self.spec.make_model(event['seed'])
        self.resampler = TruthResampler(self.p['rate_hz'], self.p['max_gap_s'])
        self.pending = []
        self.get_logger().info(
            f'run {event["scenario"]} #{event["run"]}: model re-seeded ({event["seed"]})'
        )

    def _on_truth(self, msg: Odometry):
        self.received += 1
        t_ns = stamp_to_ns(msg.header.stamp)
        if self.runs is not None:
            self.runs.before(t_ns)
        pos = msg.pose.pose.position
        x = (pos.x, pos.y, pos.z)
        if not all(math.isfinite(v) for v in x):
            return self.drops.drop('non_finite', f'truth position {x} at {t_ns} ns')
        if math.hypot(*x) > self.p['max_range_m']:
            return self.drops.drop(
                'out_of_range', f'truth {x} is > {self.p["max_range_m"]} m from the datum'
            )
        try:
            ticks = self.resampler.push(t_ns, x)
        except ValueError as exc:
            return self.drops.drop('stamp_not_increasing', str(exc))
        for ts, ts_ns, v in ticks:
            self._emit(ts, ts_ns, v)
        self._release(t_ns)

    def _emit(self, ts: float, ts_ns: int, pos: np.ndarray):
        s = self.model.sample(np.array([ts]), pos[None, :], datum=self.datum)
        if not s.published[0]:
            return
        lat, lon, alt = enu_to_geodetic(s.position_enu, self.datum, self.mp['conversion'])
        m = NavSatFix()
        stamp_ns = ts_ns if s.stamp_s[0] == ts else int(round(float(s.stamp_s[0]) * NS))
        m.header.stamp, m.header.frame_id = ns_to_stamp(stamp_ns), self.p['frame_id']
        m.status.status = int(s.status[0])
        m.status.service = NavSatStatus.SERVICE_GPS
        m.latitude, m.longitude, m.altitude = float(lat[0]), float(lon[0]), float(alt[0])
        m.position_covariance = [float(c) for c in s.covariance_enu[0].ravel()]
        m.position_covariance_type = int(s.covariance_type[0])
        publish_ns = ts_ns if s.publish_s[0] == ts else int(round(float(s.publish_s[0]) * NS))
        self.pending.append((publish_ns, m))

    def _release(self, now_ns: int):
        keep = []
        for publish_ns, m in self.pending:
            if publish_ns <= now_ns:
                self.pub.publish(m)
                self.published += 1
            else:
                keep.append((publish_ns, m))
        self.pending = keep


def main(args=None) -> int:
    return run_node(GpsNoiseNode, args=args, params=GPS_NODE_PARAMS, help_note=MODEL_PARAMS_NOTE)


if __name__ == '__main__':
    raise SystemExit(main())
