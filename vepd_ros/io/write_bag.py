# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Write ROS 2 bags (sqlite3 or mcap) in the ART layout from numpy arrays.

For tests (bags built from truth plus sensor models) and for users converting logged data. The
layout follows the one public real ART bag (``shared/data/real/art_real_bag_layout``): ``/fix``
NavSatFix (frame ``gps``), ``/imu`` Imu (frame ``imu``), ``/sbg/gps_vel`` SbgGpsVel in NED (frame
``imu_link_ned``), optionally ``/odometry/filtered`` Odometry, ``/sbg/ekf_nav`` SbgEkfNav and a
Chrono ``Body`` state. Each stream is a mapping of arrays keyed as below; the header stamp is ``t``
and the bag's receive time is ``t + latency_s`` (``t_ns`` integer stamps may replace ``t``;
``arrival_ns`` gives each message's receive time explicitly) (all messages are written in arrival
order).

Streams (``n`` samples; optional keys in brackets; every stream may set ``frame_id``). The fix,
imu and odom fields are named as in ``vepd_ros.streams.STREAM_KINDS`` (one run, no run axis;
``streams.imu_fields``/``fix_fields`` give them from the sensor models):
- fix:      t, latitude, longitude, altitude, [position_covariance (n,9) or (n,3) diagonal ENU m²,
  status (int, default 0 = FIX), position_covariance_type (default 1 with a covariance, else 0)]
- imu:      t, angular_velocity (n,3), linear_acceleration (n,3) (accel/gyro roles: Chrono's split
  topics, one of them), [orientation (n,4) xyzw, orientation_covariance,
  angular_velocity_covariance, linear_acceleration_covariance]
- gps_vel:  t, v_enu (n,3) **or** v_ned (n,3), [accuracy (n,3) NED order] — written in NED, driver
  default
- ekf_nav:  t, v_enu or v_ned, [latitude, longitude, altitude, accuracy]
- odom:     t, [position (n,3), orientation (n,4)], linear (n,3) twist in child frame, [angular]
- body:     t, position (n,3), orientation (n,4), v_world (n,3), [w_body (n,3)]
  (chrono_ros_interfaces/Body)
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
from vepd_ros.io import msgdefs
from vepd_ros.streams import (
    fix_fields,
    imu_fields,
    NS,
    ns_from_s,
    TOPIC_ART_GPS_FIX,
    TOPIC_ART_IMU,
    TOPIC_INS_VELOCITY,
    TOPIC_ODOM_FILTERED,
)

ART_TOPICS = {
    'fix': (TOPIC_ART_GPS_FIX, 'sensor_msgs/msg/NavSatFix', 'gps'),
    'imu': (TOPIC_ART_IMU, 'sensor_msgs/msg/Imu', 'imu'),
    'gps_vel': (TOPIC_INS_VELOCITY, 'sbg_driver/msg/SbgGpsVel', 'imu_link_ned'),
    'ekf_nav': ('/sbg/ekf_nav', 'sbg_driver/msg/SbgEkfNav', 'imu_link_ned'),
    'odom': (TOPIC_ODOM_FILTERED, 'nav_msgs/msg/Odometry', 'odom'),
    'body': ('/chrono_ros_node/output/vehicle/state', 'chrono_ros_interfaces/msg/Body', 'chassis'),
    # Chrono::ROS publishes accelerometer and gyroscope as two Imu topics (only their own field
    # filled)
    'accel': (
        '/chrono_ros_node/output/accelerometer/data',
        'sensor_msgs/msg/Imu',
        'accelerometer',
    ),
    'gyro': ('/chrono_ros_node/output/gyroscope/data', 'sensor_msgs/msg/Imu', 'gyroscope'),
}


class _Factory:
    """Builds rosbags message instances from a typestore."""

    def __init__(self, ts):
        self.ts = ts
        T = ts.types
        self.Time, self.Header = T['builtin_interfaces/msg/Time'], T['std_msgs/msg/Header']
        self.V3, self.Q, self.P = (
            T['geometry_msgs/msg/Vector3'],
            T['geometry_msgs/msg/Quaternion'],
            T['geometry_msgs/msg/Point'],
        )

    def header(self, t_ns: int, frame: str):
        ns = int(t_ns)
        return self.Header(stamp=self.Time(sec=ns // NS, nanosec=ns % NS), frame_id=frame)

    def v3(self, v):
        return self.V3(x=float(v[0]), y=float(v[1]), z=float(v[2]))

    def quat(self, q):
        return self.Q(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3]))


def _rows(a, n, width, default=0.0):
    if a is None:
        return np.full((n, width), default, float)
    a = np.asarray(a, float)
    if a.ndim == 1:
        a = np.broadcast_to(a, (n, a.shape[0]))
    return a


def _cov9(a, n):
    if a is None:
        return np.zeros((n, 9))
    a = np.asarray(a, float)
    if a.ndim == 1:
        a = np.broadcast_to(a, (n, a.shape[0]))
    if a.shape[1] == 3:
        out = np.zeros((n, 9))
        out[:, 0], out[:, 4], out[:, 8] = a[:, 0], a[:, 1], a[:, 2]
        return out
    return a


def _ned(s: Mapping, n: int) -> np.ndarray:
    if 'v_ned' in s:
        return _rows(s['v_ned'], n, 3)
    e = _rows(s['v_enu'], n, 3)
    return np.stack([e[:, 1], e[:, 0], -e[:, 2]], axis=1)


def stamps_ns(s: Mapping) -> np.ndarray:
    """Header stamps of a stream in integer ns: ``t_ns`` if given (exact), else round(t · 1e9)."""
    if 't_ns' in s:
        return np.asarray(s['t_ns'], np.int64)
    return ns_from_s(s['t'])


def build_messages(role: str, s: Mapping, ts, frame: str | None = None) -> list:
    """Rosbags messages of one stream (see the module doc for the keys)."""
    f = _Factory(ts)
    T = ts.types
    tns = stamps_ns(s)
    t = tns / 1e9
    n = len(t)
    frame = frame or s.get('frame_id') or ART_TOPICS[role][2]
    out = []
    if role == 'fix':
        cov = _cov9(s.get('position_covariance'), n)
        status = np.broadcast_to(np.asarray(s.get('status', 0)), (n,))
        St, Fix = T['sensor_msgs/msg/NavSatStatus'], T['sensor_msgs/msg/NavSatFix']
        lat, lon, alt = (
            np.broadcast_to(np.asarray(s[k], float), (n,))
            for k in ('latitude', 'longitude', 'altitude')
        )
        ctype = int(
            s.get('position_covariance_type', 0 if s.get('position_covariance') is None else 1)
        )
        for i in range(n):
            out.append(
                Fix(
                    header=f.header(tns[i], frame),
                    status=St(status=int(status[i]), service=1),
                    latitude=float(lat[i]),
                    longitude=float(lon[i]),
                    altitude=float(alt[i]),
                    position_covariance=cov[i].copy(),
                    position_covariance_type=ctype,
                )
            )
    elif role in ('imu', 'accel', 'gyro'):
        Imu = T['sensor_msgs/msg/Imu']
        g = _rows(s.get('angular_velocity'), n, 3)
        a = _rows(s.get('linear_acceleration'), n, 3)
        has_q = s.get('orientation') is not None
        q = _rows(s.get('orientation'), n, 4) if has_q else np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
        oc = _cov9(s.get('orientation_covariance'), n)
        if not has_q:
            oc[:, 0] = -1.0  # REP-145: no orientation estimate
        gc = _cov9(s.get('angular_velocity_covariance'), n)
        ac = _cov9(s.get('linear_acceleration_covariance'), n)
        for i in range(n):
            out.append(
                Imu(
                    header=f.header(tns[i], frame),
                    orientation=f.quat(q[i]),
                    orientation_covariance=oc[i].copy(),
                    angular_velocity=f.v3(g[i]),
                    angular_velocity_covariance=gc[i].copy(),
                    linear_acceleration=f.v3(a[i]),
                    linear_acceleration_covariance=ac[i].copy(),
                )
            )
    elif role == 'gps_vel':
        M, St = T['sbg_driver/msg/SbgGpsVel'], T['sbg_driver/msg/SbgGpsVelStatus']
        v, acc = _ned(s, n), _rows(s.get('accuracy'), n, 3, 0.05)
        for i in range(n):
            course = float(np.degrees(np.arctan2(v[i, 1], v[i, 0])) % 360.0)
            out.append(
                M(
                    header=f.header(tns[i], frame),
                    time_stamp=int(t[i] * 1e6) & 0xFFFFFFFF,
                    status=St(vel_status=0, vel_type=2),
                    gps_tow=int(t[i] * 1e3) % 604800000,
                    velocity=f.v3(v[i]),
                    velocity_accuracy=f.v3(acc[i]),
                    course=course,
                    course_acc=1.0,
                )
            )
    elif role == 'ekf_nav':
        M, St = T['sbg_driver/msg/SbgEkfNav'], T['sbg_driver/msg/SbgEkfStatus']
        v, acc = _ned(s, n), _rows(s.get('accuracy'), n, 3, 0.02)
        lat, lon, alt = (
            np.broadcast_to(np.asarray(s.get(k, 0.0), float), (n,))
            for k in ('latitude', 'longitude', 'altitude')
        )
        flags = {
            k: False
            for k, _ in ts.fielddefs['sbg_driver/msg/SbgEkfStatus'][1]
            if k != 'solution_mode'
        }
        flags.update(
            velocity_valid=True, position_valid=True, attitude_valid=True, heading_valid=True
        )
        for i in range(n):
            out.append(
                M(
                    header=f.header(tns[i], frame),
                    time_stamp=int(t[i] * 1e6) & 0xFFFFFFFF,
                    velocity=f.v3(v[i]),
                    velocity_accuracy=f.v3(acc[i]),
                    latitude=float(lat[i]),
                    longitude=float(lon[i]),
                    altitude=float(alt[i]),
                    undulation=0.0,
                    position_accuracy=f.v3((0.02, 0.02, 0.04)),
                    status=St(solution_mode=4, **flags),
                )
            )
    elif role == 'odom':
        O, T6 = T['nav_msgs/msg/Odometry'], T['geometry_msgs/msg/Twist']
        PwC, TwC, Pose = (
            T['geometry_msgs/msg/PoseWithCovariance'],
            T['geometry_msgs/msg/TwistWithCovariance'],
            T['geometry_msgs/msg/Pose'],
        )
        p = _rows(s.get('position'), n, 3)
        q = (
            _rows(s.get('orientation'), n, 4)
            if s.get('orientation') is not None
            else np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
        )
        vl, va = _rows(s['linear'], n, 3), _rows(s.get('angular'), n, 3)
        child = s.get('child_frame_id', 'base_link')
        for i in range(n):
            out.append(
                O(
                    header=f.header(tns[i], frame),
                    child_frame_id=child,
                    pose=PwC(
                        pose=Pose(
                            position=f.P(x=float(p[i, 0]), y=float(p[i, 1]), z=float(p[i, 2])),
                            orientation=f.quat(q[i]),
                        ),
                        covariance=np.zeros(36),
                    ),
                    twist=TwC(
                        twist=T6(linear=f.v3(vl[i]), angular=f.v3(va[i])), covariance=np.zeros(36)
                    ),
                )
            )
    elif role == 'body':
        B, Pose, Tw, Ac = (
            T['chrono_ros_interfaces/msg/Body'],
            T['geometry_msgs/msg/Pose'],
            T['geometry_msgs/msg/Twist'],
            T['geometry_msgs/msg/Accel'],
        )
        p, q = _rows(s['position'], n, 3), _rows(s['orientation'], n, 4)
        v, w = _rows(s['v_world'], n, 3), _rows(s.get('w_body'), n, 3)
        acc = _rows(s.get('a_world'), n, 3)
        for i in range(n):
            out.append(
                B(
                    header=f.header(tns[i], frame),
                    pose=Pose(
                        position=f.P(x=float(p[i, 0]), y=float(p[i, 1]), z=float(p[i, 2])),
                        orientation=f.quat(q[i]),
                    ),
                    twist=Tw(linear=f.v3(v[i]), angular=f.v3(w[i])),
                    accel=Ac(linear=f.v3(acc[i]), angular=f.v3((0.0, 0.0, 0.0))),
                )
            )
    else:
        raise ValueError(f'unknown stream role {role!r}; expected one of {sorted(ART_TOPICS)}')
    return out


def write_bag(
    path,
    streams: Mapping[str, Mapping],
    *,
    storage: str = 'sqlite3',
    topics: Mapping[str, str] | None = None,
    latency_s: float | Mapping[str, float] = 0.0,
    typestore=None,
) -> Path:
    """
    Write ``streams`` ({role: arrays}) as a ROS 2 bag directory at ``path``; returns the path.

    ``topics`` renames roles' topics (default ``ART_TOPICS``); ``latency_s`` (per role or one
    number) is added to the header stamp to form the receive time. Messages are written in receive
    order (ties keep role order, then sample order). Refuses to overwrite an existing path.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    path = Path(path)
    if path.exists():
        raise FileExistsError(f'{path} exists; rosbag2 writers need a fresh directory')
    if storage not in ('sqlite3', 'mcap'):
        raise ValueError(f"storage must be 'sqlite3' or 'mcap', got {storage!r}")
    ts = typestore or msgdefs.ros2_typestore()
    topics = dict(topics or {})
    items = []
    for order, (role, s) in enumerate(streams.items()):
        if s is None:
            continue
        topic = topics.get(role, ART_TOPICS[role][0])
        msgtype = ART_TOPICS[role][1]
        lat = latency_s.get(role, 0.0) if isinstance(latency_s, Mapping) else float(latency_s)
        msgs = build_messages(role, s, ts)
        arr = (
            np.asarray(s['arrival_ns'], np.int64)
            if 'arrival_ns' in s
            else stamps_ns(s) + int(round(lat * NS))
        )
        items.append((topic, msgtype, order, arr, msgs))
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    queue = []
    for topic, msgtype, order, arr, msgs in items:
        queue.extend((int(arr[i]), order, i, topic, msgtype, msgs[i]) for i in range(len(msgs)))
    queue.sort(key=lambda x: (x[0], x[1], x[2]))
    with Writer(path, version=9, storage_plugin=plugin) as w:
        conns = {
            topic: w.add_connection(topic, msgtype, typestore=ts) for topic, msgtype, *_ in items
        }
        for t_ns, _, _, topic, msgtype, msg in queue:
            w.write(conns[topic], t_ns, ts.serialize_cdr(msg, msgtype))
    return path


def streams_from_sensor_run(
    run, t_offset_ns: int = 0, truth: Sequence[str] = ('odom', 'gps_vel')
) -> dict:
    """
    ``write_bag`` streams from a ``vepd_ros.models.sensors.SensorRun`` (the offline study's data).

    fix: the published GPS messages (header stamp = ``gps.stamp_s``, receive time =
    ``gps.publish_s``); imu: every IMU sample (receive time = stamp); truth as ``odom`` (Odometry,
    world ENU pose, body twist) and/or ``gps_vel`` (SbgGpsVel, NED) at the run's truth rate. All
    times shifted by ``t_offset_ns``.
    """

    def ns(t):
        return ns_from_s(t) + int(t_offset_ns)

    g, tr = run.gps, run.truth
    pub = np.asarray(g.published, bool)
    out = {
        'fix': {
            't_ns': ns(g.stamp_s)[pub],
            'arrival_ns': ns(g.publish_s)[pub],
            **{k: v[pub] for k, v in fix_fields(g, run.gps_lla).items()},
            'position_covariance_type': int(g.covariance_type[0]) if len(g) else 0,
            'frame_id': 'base_link',  # the simulated antenna is at the truth, as the IMU
        },
        'imu': {'t_ns': ns(run.imu.t_s), 'frame_id': 'base_link', **imu_fields(run.imu)},
    }
    if 'odom' in truth:
        out['odom'] = {
            't_ns': ns(run.truth_t_s),
            'position': tr.position_enu,
            'orientation': tr.quaternion,
            'linear': tr.velocity_body,
            'angular': tr.angular_velocity_body,
        }
    if 'gps_vel' in truth:
        out['gps_vel'] = {'t_ns': ns(run.truth_t_s), 'v_enu': tr.velocity_enu}
    return out
