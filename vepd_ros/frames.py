# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Frames, rotations and time stamps shared by every core (REP-103: ENU world, FLU body, SI units).

Quaternions are (x, y, z, w) as in geometry_msgs. Euler angles are fixed-axis roll-pitch-yaw,
R = Rz(yaw)·Ry(pitch)·Rx(roll) (body → world), the convention of tf2 and robot_localization.
All functions accept scalars or arrays with the angle/quaternion axis last.
"""

from __future__ import annotations

import numpy as np
from vepd_ros.streams import NS

GRAVITY_MPS2 = 9.80665
"""
Standard gravity (m/s²).

robot_localization's ``gravitational_acceleration`` default and REP-145.
"""


def wrap_angle(a):
    """Wrap to (-π, π]."""
    a = np.asarray(a, dtype=float)
    w = np.mod(a + np.pi, 2.0 * np.pi) - np.pi
    return np.where(w == -np.pi, np.pi, w) if w.ndim else (np.pi if w == -np.pi else float(w))


def quaternion_from_rpy(roll, pitch, yaw):
    """Quaternion (x, y, z, w) of R = Rz(yaw)·Ry(pitch)·Rx(roll)."""
    hr, hp, hy = 0.5 * np.asarray(roll), 0.5 * np.asarray(pitch), 0.5 * np.asarray(yaw)
    cr, sr, cp, sp, cy, sy = np.cos(hr), np.sin(hr), np.cos(hp), np.sin(hp), np.cos(hy), np.sin(hy)
    return np.stack(
        [
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy,
        ],
        axis=-1,
    )


def rotation_matrix_from_rpy(roll, pitch, yaw):
    """Body → world rotation R = Rz(yaw)·Ry(pitch)·Rx(roll), shape (..., 3, 3)."""
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    R = np.empty(np.broadcast_shapes(np.shape(roll), np.shape(pitch), np.shape(yaw)) + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = (
        cy * cp,
        cy * sp * sr - sy * cr,
        cy * sp * cr + sy * sr,
    )
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = (
        sy * cp,
        sy * sp * sr + cy * cr,
        sy * sp * cr - cy * sr,
    )
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = -sp, cp * sr, cp * cr
    return R


def rotation_matrix_from_quaternion(q):
    """Rotation matrix of a quaternion (x, y, z, w); the quaternion is normalised first."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=-2,
    )


def quat_matrix(q: np.ndarray) -> np.ndarray:
    """
    Return the rotation matrix of quaternions (x, y, z, w) as tf2 builds it.

    Rotation matrix of (x, y, z, w); an all-zero quaternion is identity (upstream §6.2). tf2's
    setRotation scales by 2/‖q‖², i.e. the matrix is that of the normalised quaternion; NaN stays
    NaN.
    """
    q = np.asarray(q, float)
    if q.size == 4:  # one quaternion: the same operations on Python floats (bit for bit)
        x, y, z, w = q.ravel().tolist()
        if x == 0.0 and y == 0.0 and z == 0.0 and w == 0.0:
            x, y, z, w = 0.0, 0.0, 0.0, 1.0
        s = 2.0 / (x * x + y * y + z * z + w * w)
        xs, ys, zs = x * s, y * s, z * s
        wx, wy, wz = w * xs, w * ys, w * zs
        xx, xy, xz = x * xs, x * ys, x * zs
        yy, yz, zz = y * ys, y * zs, z * zs
        return np.array(
            [
                1 - (yy + zz),
                xy - wz,
                xz + wy,
                xy + wz,
                1 - (xx + zz),
                yz - wx,
                xz - wy,
                yz + wx,
                1 - (xx + yy),
            ]
        ).reshape(q.shape[:-1] + (3, 3))
    zero = np.all(q == 0.0, axis=-1, keepdims=True)
    q = np.where(zero, np.array([0.0, 0.0, 0.0, 1.0]), q)
    n2 = np.sum(q * q, axis=-1)
    s = 2.0 / n2
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xs, ys, zs = x * s, y * s, z * s
    wx, wy, wz = w * xs, w * ys, w * zs
    xx, xy, xz = x * xs, x * ys, x * zs
    yy, yz, zz = y * ys, y * zs, z * zs
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = 1 - (yy + zz), xy - wz, xz + wy
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = xy + wz, 1 - (xx + zz), yz - wx
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = xz - wy, yz + wx, 1 - (xx + yy)
    return R


def rpy_from_rotation_matrix(m):
    """(roll, pitch, yaw) of a rotation matrix by tf2's ``Matrix3x3::getRPY`` (solution 1)."""
    m = np.asarray(m, dtype=float)
    m20 = m[..., 2, 0]
    gimbal = np.abs(m20) >= 1.0
    if not gimbal.any():  # the common case: the non-gimbal branch alone (|m20| < 1: no clip)
        pitch = -np.arcsin(m20)
        cp = np.cos(pitch)
        return (
            np.arctan2(m[..., 2, 1] / cp, m[..., 2, 2] / cp),
            pitch,
            np.arctan2(m[..., 1, 0] / cp, m[..., 0, 0] / cp),
        )
    pitch = np.where(
        gimbal, np.where(m20 < 0, np.pi / 2, -np.pi / 2), -np.arcsin(np.clip(m20, -1, 1))
    )
    cp = np.where(gimbal, 1.0, np.cos(pitch))
    roll = np.where(
        gimbal,
        np.arctan2(m[..., 0, 1], m[..., 0, 2]),
        np.arctan2(m[..., 2, 1] / cp, m[..., 2, 2] / cp),
    )
    yaw = np.where(gimbal, 0.0, np.arctan2(m[..., 1, 0] / cp, m[..., 0, 0] / cp))
    return roll, pitch, yaw


def rpy_from_quaternion(q):
    """(roll, pitch, yaw) of a quaternion (x, y, z, w), tf2 convention."""
    return rpy_from_rotation_matrix(rotation_matrix_from_quaternion(q))


def seconds_to_ns(t_s) -> int:
    """Seconds (float) → integer nanoseconds, rounded to the nearest ns."""
    return int(round(float(t_s) * NS))


def ns_to_seconds(t_ns: int) -> float:
    return t_ns / NS
