# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A sampled ground-truth trajectory of a ground vehicle.

Frames: ENU world frame ``odom``, FLU ``base_link``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from vepd_ros.frames import GRAVITY_MPS2, quaternion_from_rpy, rotation_matrix_from_rpy, wrap_angle


@dataclass
class Trajectory:
    """
    Arrays over N samples.

    ``yaw_unwrapped`` is continuous; ``rpy`` wraps yaw to (-π, π].

    t_s                    (N,)   seconds from run start
    position_enu           (N,3)  m, world frame
    roll, pitch            (N,)   rad (zero on the level ground of these scenarios)
    yaw_unwrapped          (N,)   rad, ENU heading (0 = east, counter-clockwise)
    velocity_body          (N,3)  m/s, FLU (no side slip: vy = vz = 0)
    angular_velocity_body  (N,3)  rad/s, FLU
    acceleration_body      (N,3)  m/s², kinematic acceleration d(v_world)/dt expressed in the body
                                  frame
    """

    t_s: np.ndarray
    position_enu: np.ndarray
    roll: np.ndarray
    pitch: np.ndarray
    yaw_unwrapped: np.ndarray
    velocity_body: np.ndarray
    angular_velocity_body: np.ndarray
    acceleration_body: np.ndarray
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.t_s)

    @property
    def yaw(self) -> np.ndarray:
        return wrap_angle(self.yaw_unwrapped)

    @property
    def rpy(self) -> np.ndarray:
        return np.stack([self.roll, self.pitch, self.yaw], axis=-1)

    @property
    def rotation(self) -> np.ndarray:
        """Body → world rotation matrices (N,3,3)."""
        return rotation_matrix_from_rpy(self.roll, self.pitch, self.yaw_unwrapped)

    @property
    def quaternion(self) -> np.ndarray:
        """Orientation quaternions (x, y, z, w), (N,4)."""
        return quaternion_from_rpy(self.roll, self.pitch, self.yaw_unwrapped)

    @property
    def velocity_enu(self) -> np.ndarray:
        return np.einsum('nij,nj->ni', self.rotation, self.velocity_body)

    @property
    def speed(self) -> np.ndarray:
        """Horizontal speed sqrt(vE² + vN²) (m/s): the paper's scalar velocity."""
        v = self.velocity_enu
        return np.hypot(v[:, 0], v[:, 1])

    @property
    def specific_force_body(self) -> np.ndarray:
        """
        Return what an ideal accelerometer reads: f = a − g in the body frame.

        That is a_body + Rᵀ·(0, 0, g).

        At rest and level this is (0, 0, +9.80665) m/s² (REP-145).
        """
        g_body = np.einsum('nji,j->ni', self.rotation, np.array([0.0, 0.0, GRAVITY_MPS2]))
        return self.acceleration_body + g_body

    def sample(self, t_s) -> 'Trajectory':
        """
        Return the trajectory resampled at times ``t_s``.

        The trajectory at times ``t_s`` (s), by linear interpolation of every field (yaw
        unwrapped). Times outside the run are clamped to its ends.
        """
        t = np.atleast_1d(np.asarray(t_s, dtype=float))

        def interp(a):
            a = np.asarray(a)
            if a.ndim == 1:
                return np.interp(t, self.t_s, a)
            return np.stack([np.interp(t, self.t_s, a[:, i]) for i in range(a.shape[1])], axis=-1)

        return Trajectory(
            t,
            interp(self.position_enu),
            interp(self.roll),
            interp(self.pitch),
            interp(self.yaw_unwrapped),
            interp(self.velocity_body),
            interp(self.angular_velocity_body),
            interp(self.acceleration_body),
            dict(self.meta),
        )

    @property
    def duration_s(self) -> float:
        return float(self.t_s[-1] - self.t_s[0]) if len(self.t_s) else 0.0
