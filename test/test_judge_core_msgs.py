# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Duck-typed ROS messages for judge tests (the message layer reads only ROS field names)."""

from types import SimpleNamespace as NS

import numpy as np
from vepd_ros.frames import quaternion_from_rpy


def header(t_ns, frame=''):
    return NS(stamp=NS(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000), frame_id=frame)


def imu_msg(
    t_ns,
    rpy=(0.0, 0.0, 0.0),
    w=(0.0, 0.0, 0.0),
    a=(0.0, 0.0, 9.80665),
    q=None,
    frame='base_link',
    ocov=1e-4,
    wcov=1e-4,
    acov=1e-2,
):
    qx, qy, qz, qw = quaternion_from_rpy(*rpy) if q is None else q
    return NS(
        header=header(t_ns, frame),
        orientation=NS(x=qx, y=qy, z=qz, w=qw),
        angular_velocity=NS(x=w[0], y=w[1], z=w[2]),
        linear_acceleration=NS(x=a[0], y=a[1], z=a[2]),
        orientation_covariance=list(np.eye(3).ravel() * ocov),
        angular_velocity_covariance=list(np.eye(3).ravel() * wcov),
        linear_acceleration_covariance=list(np.eye(3).ravel() * acov),
    )


def odom_msg(
    t_ns,
    x=0.0,
    y=0.0,
    z=0.0,
    yaw=0.0,
    v=(0.0, 0.0, 0.0),
    w=(0.0, 0.0, 0.0),
    pvar=0.25,
    tvar=0.01,
    frame='odom',
    child='base_link',
    q=None,
):
    qx, qy, qz, qw = quaternion_from_rpy(0.0, 0.0, yaw) if q is None else q
    return NS(
        header=header(t_ns, frame),
        child_frame_id=child,
        pose=NS(
            pose=NS(position=NS(x=x, y=y, z=z), orientation=NS(x=qx, y=qy, z=qz, w=qw)),
            covariance=list(np.eye(6).ravel() * pvar),
        ),
        twist=NS(
            twist=NS(linear=NS(x=v[0], y=v[1], z=v[2]), angular=NS(x=w[0], y=w[1], z=w[2])),
            covariance=list(np.eye(6).ravel() * tvar),
        ),
    )
