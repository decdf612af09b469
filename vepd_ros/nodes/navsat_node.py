# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Run the built-in robot_localization navsat_transform_node.

navsat_node: the built-in robot_localization navsat_transform_node (same parameter names and
topics).

Parameters: robot_localization's own navsat_transform YAML (``--ros-args --params-file
config/navsat.yaml``; the section must match the node name, ``navsat_transform`` by default), read
through ``vepd_ros.judge.navsat`` (unknown or ill-typed → exit 2 naming them). Core: ``NavSatCore``
(reference §7).

Topics, as upstream (relative names, remap as usual):
* subscribes ``imu`` (sensor_msgs/Imu — robot_localization's ROS 2 code name; its docs say
  imu/data, so remap it: ``--ros-args -r imu:=/imu/data``; not subscribed with ``use_odometry_yaw``
  or ``wait_for_datum``), ``gps/fix`` (NavSatFix), ``odometry/filtered`` (Odometry) — all
  SensorDataQoS with depth 1;
* publishes ``odometry/gps`` (Odometry) and, with ``publish_filtered_gps``, ``gps/filtered``
  (NavSatFix), reliable depth 10, from a timer at ``frequency`` started after ``delay`` seconds.

There is no TF listener in the pip runtime (no tf2 packages): the transforms navsat_transform would
look up (base_link→imu frame, base_link→gps frame) come from the vepd-only parameter
``static_transforms`` (list of strings "parent child x y z roll pitch yaw"); with a real ROS
install use robot_localization itself and static_transform_publisher. The odom→base_link transform
for the antenna lever arm is taken from odometry/filtered.
"""

from __future__ import annotations

import array

from nav_msgs.msg import Odometry
import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import Imu, NavSatFix
from vepd_ros.judge.navsat import load_navsat_params, NavSatCore
from vepd_ros.nodes.health import DropCounter
from vepd_ros.nodes.lifecycle import run_node
from vepd_ros.nodes.lockstep import AfterArrivals
from vepd_ros.nodes.params import RL_PARAMS_NOTE, static_transforms_param
from vepd_ros.nodes.qos import SENSOR_QOS
from vepd_ros.nodes.run_events import RunEvents
from vepd_ros.nodes.stamps import ns_to_stamp, stamp_to_ns

_RCLPY_PARAMETERS = {'start_type_description_service', 'use_sim_time'}
NODE_NAME = 'navsat_transform'


def sensor_qos_depth1() -> QoSProfile:
    """Return SensorDataQoS with KeepLast(1), as navsat_transform_node subscribes."""
    return QoSProfile(
        depth=1,
        reliability=SENSOR_QOS.reliability,
        history=SENSOR_QOS.history,
        durability=SENSOR_QOS.durability,
    )


class NavSatNode(Node):

    def __init__(self, node_name: str = NODE_NAME, **kwargs):
        kwargs.setdefault('allow_undeclared_parameters', True)
        kwargs.setdefault('automatically_declare_parameters_from_overrides', True)
        super().__init__(node_name, **kwargs)
        raw = {  # the empty prefix gives every parameter (public API, Humble to Kilted)
            name: p.value
            for name, p in self.get_parameters_by_prefix('').items()
            if name not in _RCLPY_PARAMETERS
            and p.value is not None
            and not name.startswith('qos_overrides.')
        }
        raw = {
            k: (list(v) if isinstance(v, (array.array, np.ndarray)) else v) for k, v in raw.items()
        }
        # vepd_ros's own switch (not upstream's): a fresh navsat_transform at every run start of a
        # study
        reset_on_runs = bool(raw.pop('reset_on_run_events', False))
        tf = static_transforms_param(raw.pop('static_transforms', []))
        self.p = load_navsat_params(raw)
        self._tf = tf
        self.core = NavSatCore(self.p, tf=tf)
        self.drops = DropCounter(self)
        self.runs = (
            RunEvents(self, 'navsat', 0, 'navsat', self._restart, self.drops)
            if reset_on_runs
            else None
        )
        qos = sensor_qos_depth1()
        self._qos = qos
        self.sub_odom = self.create_subscription(Odometry, 'odometry/filtered', self._on_odom, qos)
        self.sub_fix = self.create_subscription(NavSatFix, 'gps/fix', self._on_fix, qos)
        self.sub_imu = (
            self.create_subscription(Imu, 'imu', self._on_imu, qos)
            if self.core.imu_sub_active
            else None
        )
        self.pub_odom = self.create_publisher(Odometry, 'odometry/gps', QoSProfile(depth=10))
        self.pub_fix = (
            self.create_publisher(NavSatFix, 'gps/filtered', QoSProfile(depth=10))
            if self.p['publish_filtered_gps']
            else None
        )
        self.published = {'odometry/gps': 0, 'gps/filtered': 0}
        period = 1.0 / self.p['frequency']
        # arrivals before a tick count for it (not after it, by executor order)
        self._after_arrivals = AfterArrivals(
            self, (self.sub_fix, self.sub_imu, self.sub_odom), self._on_tick
        )
        if self.p['delay'] > 0:
            self._start = self.create_timer(self.p['delay'], self._start_timer)
            self.timer = None
        else:
            self.timer = self.create_timer(period, self._after_arrivals)
        self.get_logger().info(
            f'navsat: {self.p["frequency"]:g} Hz, use_odometry_yaw={self.p["use_odometry_yaw"]}, '
            f'zero_altitude={self.p["zero_altitude"]}, '
            f'publish_filtered_gps={self.p["publish_filtered_gps"]}'
        )

    def _start_timer(self):
        self._start.cancel()
        self.timer = self.create_timer(1.0 / self.p['frequency'], self._after_arrivals)

    # -- callbacks ------------------------------------------------------------------------------
    def _restart(self, event: dict) -> None:
        self._after_arrivals.flush()  # ticks due before this run's first message: the old run's
        self.core = NavSatCore(self.p, tf=self._tf)
        if self.core.imu_sub_active and self.sub_imu is None:
            self.sub_imu = self.create_subscription(Imu, 'imu', self._on_imu, self._qos)
            self._after_arrivals.watch(self.sub_imu)
        self.get_logger().info(
            f'run {event["scenario"]} #{event["run"]}: datum forgotten, waiting for a new one'
        )

    def _close_imu_subscription(self) -> None:
        """
        Upstream resets the IMU subscription once the datum exists.

        With per-run restarts it stays open (and IMU is ignored while no datum is needed): a
        re-created subscription takes a variable time to match, which would delay the next run's
        datum by a variable amount.
        """
        if self.sub_imu is not None and self.runs is None:
            self.destroy_subscription(self.sub_imu)
            self.sub_imu = None

    def _run_boundary(self, stamp) -> None:
        if self.runs is not None:
            self.runs.before(stamp_to_ns(stamp))

    def _on_fix(self, m: NavSatFix) -> None:
        self._run_boundary(m.header.stamp)
        cov = np.asarray(m.position_covariance, float)
        if cov.size != 9:
            self.drops.drop('bad message', f'gps/fix position_covariance has {cov.size} values')
            return
        good = self.core.on_fix(
            stamp_to_ns(m.header.stamp),
            m.latitude,
            m.longitude,
            m.altitude,
            cov=cov,
            status=int(m.status.status),
            frame_id=m.header.frame_id,
        )
        if not good[0]:
            self.drops.drop(
                'no fix', 'gps/fix with STATUS_NO_FIX or NaN position ignored (as upstream)'
            )

    def _on_imu(self, m: Imu) -> None:
        self._run_boundary(m.header.stamp)
        if not self.core.imu_sub_active:
            self._close_imu_subscription()
            return
        o = m.orientation
        self.core.on_imu(
            stamp_to_ns(m.header.stamp), (o.x, o.y, o.z, o.w), frame_id=m.header.frame_id
        )

    def _on_odom(self, m: Odometry) -> None:
        self._run_boundary(m.header.stamp)
        pp, o = m.pose.pose.position, m.pose.pose.orientation
        self.core.on_odom(
            stamp_to_ns(m.header.stamp),
            (pp.x, pp.y, pp.z),
            (o.x, o.y, o.z, o.w),
            pose_cov=np.asarray(m.pose.covariance, float),
            frame_id=m.header.frame_id,
            child_frame_id=m.child_frame_id,
        )

    def _on_tick(self) -> None:
        before = dict(self.core.dropped)
        godom, gfix = self.core.tick()
        for reason, n in self.core.dropped.items():
            if n > before.get(reason, 0):  # upstream logs an error at each such fix
                self.get_logger().error(reason, throttle_duration_sec=5.0)
        if godom is not None and godom['valid'][0]:
            self.pub_odom.publish(self.to_odometry(godom))
            self.published['odometry/gps'] += 1
        if gfix is not None and gfix['valid'][0] and self.pub_fix is not None:
            self.pub_fix.publish(self.to_navsatfix(gfix))
            self.published['gps/filtered'] += 1
        if not self.core.imu_sub_active:
            self._close_imu_subscription()

    # -- messages -------------------------------------------------------------------------------
    @staticmethod
    def to_odometry(d: dict) -> Odometry:
        m = Odometry()
        m.header.stamp = ns_to_stamp(int(d['stamp_ns'][0]))
        m.header.frame_id = d['frame_id']
        m.child_frame_id = d['child_frame_id']
        p = m.pose.pose.position
        p.x, p.y, p.z = (float(v) for v in d['position'][0])
        o = m.pose.pose.orientation
        o.x, o.y, o.z, o.w = (float(v) for v in d['quaternion'][0])
        m.pose.covariance = [float(v) for v in d['pose_covariance'][0]]
        return m

    @staticmethod
    def to_navsatfix(d: dict) -> NavSatFix:
        m = NavSatFix()
        m.header.stamp = ns_to_stamp(int(d['stamp_ns'][0]))
        m.header.frame_id = d['frame_id']
        m.status.status = int(d['status'])
        m.latitude, m.longitude, m.altitude = (
            float(d['latitude'][0]),
            float(d['longitude'][0]),
            float(d['altitude'][0]),
        )
        m.position_covariance = [float(v) for v in d['position_covariance'][0]]
        m.position_covariance_type = int(d['position_covariance_type'])
        return m


def main(args=None) -> int:
    return run_node(NavSatNode, args, help_note=RL_PARAMS_NOTE)


if __name__ == '__main__':
    raise SystemExit(main())
