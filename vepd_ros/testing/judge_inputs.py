# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Judge inputs of a known drive (a planar circle) for tests and benchmarks (no ROS import)."""

from __future__ import annotations

import numpy as np
from vepd_ros.judge.navsat import utm_forward, utm_reverse
from vepd_ros.streams import ns_from_s


def circle_inputs(
    k: int = 1,
    duration_s: float = 30.0,
    *,
    imu_hz: float = 100.0,
    gps_hz: float = 10.0,
    speed: float = 1.5,
    radius: float = 10.0,
    gps_sigma: float = 0.0,
    seed: int = 0,
    lat0: float = 43.0731,
    lon0: float = -89.4012,
    alt0: float = 260.0,
):
    """
    Build IMU + GPS inputs of a planar circle drive for ``run_judge_batch``.

    IMU + GPS inputs for ``run_judge_batch`` of a planar circle drive (counter-clockwise, starting
    east-bound at the datum), with optional Gaussian GPS noise (zero reported covariance, as
    Chrono). For tests and benchmarks. Returns (imu, gps, truth) dicts.
    """
    rng = np.random.default_rng(seed)
    om = speed / radius
    n = int(round(duration_s * imu_hz)) + 1
    t_imu = np.arange(n) / imu_hz
    m = int(round(duration_s * gps_hz)) + 1
    t_gps = np.arange(m) / gps_hz
    yaw = om * t_imu
    imu = {
        'stamp_ns': ns_from_s(t_imu),
        'angular_velocity': np.broadcast_to([0.0, 0.0, om], (k, n, 3)).copy(),
        'linear_acceleration': np.broadcast_to([0.0, speed * om, 9.80665], (k, n, 3)).copy(),
        'orientation': np.stack([np.zeros(n), np.zeros(n), np.sin(yaw / 2), np.cos(yaw / 2)], -1)[
            None
        ].repeat(k, 0),
        'frame_id': 'base_link',
    }
    e = radius * np.sin(om * t_gps)
    nn = radius * (1.0 - np.cos(om * t_gps))
    x0, y0, zone, north = utm_forward(lat0, lon0)
    ee = e[None] + gps_sigma * rng.standard_normal((k, m))
    nnn = nn[None] + gps_sigma * rng.standard_normal((k, m))
    lat, lon = utm_reverse(int(zone), bool(north), float(x0) + ee, float(y0) + nnn)
    gps = {
        'stamp_ns': ns_from_s(t_gps),
        'latitude': lat,
        'longitude': lon,
        'altitude': np.full((k, m), alt0),
        'position_covariance': np.zeros(9),
        'frame_id': 'base_link',
    }
    truth = {'t': t_imu, 'speed': np.full(n, speed), 'yaw_rate': om}
    return imu, gps, truth
