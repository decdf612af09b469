# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Topic profiles: which bag topic plays which role (gps, imu, truth, odom) and how truth is read.

| profile | gps | imu | truth | odom |
|---|---|---|---|---|
| ``art`` | /fix | /imu | /sbg/gps_vel (SbgGpsVel, NED) | /odometry/filtered |
| ``chrono`` | …/gps/gps1 | ``accel`` + ``gyro`` merged | …/vehicle/state | /odometry/filtered |
| ``gazebo`` | /navsat | /imu | /model/vehicle/odometry (Odometry) | — |
| ``carla`` | /carla/ego_vehicle/gnss | /carla/ego_vehicle/imu | /carla/ego_vehicle/odometry | — |
| ``custom`` | — | — | — | — (every role from ``--topic role=/name``) |

``art`` is the real ART car of the IROS 2024 runs (art_conventions §1a; the ART EKF listens to /imu
and /fix), with its launch's static transform base_link -> gps (identity): robot_localization needs
the fixes' frame on base_link (``--static-tf`` of the same child frame replaces it).
``chrono`` is Chrono::ROS as the lab's demo publishes it (node ``chrono_ros_node``, §1b): the GPS
noise variant is picked by the gps topic (gps1 none, gps2 Gaussian, gps3 random walk, ``_airsim``
covariance) — override it with ``--topic gps=...``; accelerometer and gyroscope come as
two Imu topics (the ``accel``/``gyro`` roles) that ``ins_publisher`` merged into /imu, which
``vepd bag`` does the same way (``merge_imu``); truth is the vehicle state's Body (world-frame
velocity). ``…`` in the table stands for /chrono_ros_node/output. A role may be set to '' to
switch it off (e.g. ``odom=``).

``gazebo`` is gz sim bridged by ros_gz_bridge: the NavSat and IMU sensors on the topics their SDF
names (``/navsat``, ``/imu`` here), and ground truth from the OdometryPublisher system of the model
(``/model/<model name>/odometry``; the profile assumes a model named ``vehicle``: set yours with
``--topic truth=/model/NAME/odometry``; Gazebo Classic's p3d plugin publishes the same type).
``carla`` is carla-ros-bridge's ego vehicle (role name ``ego_vehicle``): GNSS, IMU and the odometry
pseudo-sensor. Both odometries carry the twist in the child (vehicle) frame, as REP-105 says.
These recordings are the simulated side: ``vepd bag --profile gazebo --side sim --label gazebo``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from vepd_ros.streams import (
    TOPIC_ART_GPS_FIX, TOPIC_ART_IMU, TOPIC_INS_VELOCITY, TOPIC_ODOM_FILTERED
)

ROLES = ('gps', 'imu', 'accel', 'gyro', 'truth', 'odom')

CHRONO_NODE = '/chrono_ros_node'


@dataclass(frozen=True)
class Profile:
    name: str
    topics: dict = field(default_factory=dict)  # role -> topic ('' = unused)
    truth_options: dict = field(default_factory=dict)
    # the vehicle's own static transforms (its launch's static_transform_publisher), in
    # ``--static-tf``'s spelling: what robot_localization looks the sensors' frames up in
    static_tf: tuple[str, ...] = ()

    def topic(self, role: str) -> str:
        return self.topics.get(role, '') or ''

    def with_overrides(self, overrides: dict) -> 'Profile':
        bad = [r for r in overrides if r not in ROLES]
        if bad:
            raise ValueError(
                f'--topic {bad[0]}=...: unknown role {bad[0]!r}; roles are {", ".join(ROLES)}'
            )
        t = dict(self.topics)
        t.update(overrides)
        if overrides.get('imu'):  # an explicit single IMU topic replaces a merged pair
            t.pop('accel', None)
            t.pop('gyro', None)
        return replace(self, topics=t)

    def static_tf_with(self, given) -> list[str]:
        """Return the profile's transforms for children ``given`` (--static-tf) leaves, + given."""
        children = {g.split()[1] for g in given if len(g.split()) > 1}
        return [t for t in self.static_tf if t.split()[1] not in children] + list(given)

    def imu_topics(self) -> list[str]:
        """Return the topic(s) making up the IMU stream: [imu] or [accel, gyro]."""
        if self.topic('imu'):
            return [self.topic('imu')]
        if self.topic('accel') and self.topic('gyro'):
            return [self.topic('accel'), self.topic('gyro')]
        return []


PROFILES = {
    'art': Profile(
        'art',
        {'gps': TOPIC_ART_GPS_FIX, 'imu': TOPIC_ART_IMU, 'truth': TOPIC_INS_VELOCITY,
         'odom': TOPIC_ODOM_FILTERED},
        {'sbg_frame': 'ned'},
        # the IROS EKF launch's base_link -> gps: identity (art_conventions §1c); the fixes' frame
        # is the driver's default 'gps'
        ('base_link gps 0 0 0 0 0 0',),
    ),
    'chrono': Profile(
        'chrono',
        {
            'gps': f'{CHRONO_NODE}/output/gps/gps1',
            'accel': f'{CHRONO_NODE}/output/accelerometer/data',
            'gyro': f'{CHRONO_NODE}/output/gyroscope/data',
            'truth': f'{CHRONO_NODE}/output/vehicle/state',
            'odom': TOPIC_ODOM_FILTERED,
        },
        {'twist_frame': 'world'},
    ),
    'gazebo': Profile(
        'gazebo',
        {'gps': '/navsat', 'imu': '/imu', 'truth': '/model/vehicle/odometry', 'odom': ''},
        {'odom_twist_frame': 'child'},
    ),
    'carla': Profile(
        'carla',
        {
            'gps': '/carla/ego_vehicle/gnss',
            'imu': '/carla/ego_vehicle/imu',
            'truth': '/carla/ego_vehicle/odometry',
            'odom': '',
        },
        {'odom_twist_frame': 'child'},
    ),
    'custom': Profile('custom', {}),
}


def parse_topic_overrides(items) -> dict:
    """['gps=/fix', 'imu=/imu/data'] → {'gps': '/fix', 'imu': '/imu/data'}."""
    out = {}
    for item in items or ():
        if '=' not in item:
            raise ValueError(
                f'--topic {item!r}: expected ROLE=/topic with ROLE one of {", ".join(ROLES)}'
            )
        role, topic = item.split('=', 1)
        role = role.strip()
        if role not in ROLES:
            raise ValueError(
                f'--topic {item!r}: unknown role {role!r}; roles are {", ".join(ROLES)}'
            )
        out[role] = topic.strip()
    return out


def get_profile(name: str, overrides: dict | None = None) -> Profile:
    if name not in PROFILES:
        raise ValueError(f'unknown profile {name!r}: expected one of {", ".join(PROFILES)}')
    return PROFILES[name].with_overrides(overrides or {})


def merge_imu(accel_items, gyro_items):
    """
    Merge accelerometer-only and gyroscope-only Imu messages (Chrono::ROS) into full Imu messages.

    Both inputs are [(arrival_ns, msg)] in arrival order. One merged message per accelerometer
    message, carrying the latest gyroscope message received at or before it (angular_velocity and
    its covariance); accelerometer messages before the first gyroscope message are dropped. Returns
    [(arrival_ns, msg)].
    """
    from dataclasses import replace as dc_replace

    out, gi, last = [], 0, None
    gyro_items = list(gyro_items)
    for t, a in accel_items:
        while gi < len(gyro_items) and gyro_items[gi][0] <= t:
            last = gyro_items[gi][1]
            gi += 1
        if last is None:
            continue
        out.append(
            (
                t,
                dc_replace(
                    a,
                    angular_velocity=last.angular_velocity,
                    angular_velocity_covariance=last.angular_velocity_covariance,
                ),
            )
        )
    return out
