#!/usr/bin/env python3

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Write a held-out rl_golden scenario: two_d_mode with latency and outliers.

    python3 tools/rl_golden/make_scenario.py OUT_DIR [--seed 23]
    python3 tools/rl_golden/rl_golden.py run OUT_DIR

Writes OUT_DIR/scenario.json, raw_imu0.csv.gz, raw_odom0.csv.gz, raw_odom1.csv.gz (the sensor
messages) and measurements.csv.gz (the same messages prepared as robot_localization's ros_filter
prepares them, written here from the reference document with every transform identity, not by
vepd_ros's message layer); rl_golden.py run then adds the upstream core's golden files.

What it exercises (12 s, frequency 30 Hz, two_d_mode):
* imu0 25 Hz (yaw, yaw rate, ax, ay; gravity removed with the message orientation; 2 ms latency),
  three yaw jumps of 1.5 rad gated by ``imu0_pose_rejection_threshold``;
* odom0 wheel twist 10 Hz (vx, vy, vyaw; vx-vyaw correlated covariance), latency 10-40 ms, two
  messages 150 ms late (arriving after the next one: the per-topic guard drops them), two with vx
  3e9 and variance 1e20 and two with a vyaw variance of 1e32 (finite: upstream fuses all four; they
  barely move the state), one with vy 1e200 (no threshold, yet upstream rejects it: its d²
  overflows to inf and its default threshold is DBL_MAX, whose square is inf);
* odom1 GPS as world-frame odometry 5 Hz (x, y; x-y correlated covariance), latency 150-350 ms
  (older than the IMU already fused: corrections without prediction), every fifth message 5 ms;
  four 30 m jumps and two values of 5e9 / -1e12, all gated by ``odom1_pose_rejection_threshold``;
* a 1.2 s gap of every sensor (sensor_timeout predictions), and 0.5 s of ticks after the data.
"""

import argparse
import gzip
import io
import json
import math
from pathlib import Path

import numpy as np

STATES = ('X', 'Y', 'Z', 'ROLL', 'PITCH', 'YAW', 'VX', 'VY', 'VZ', 'VROLL', 'VPITCH', 'VYAW',
          'AX', 'AY', 'AZ')
IDX = {s: i for i, s in enumerate(STATES)}
TWO_D = ('Z', 'ROLL', 'PITCH', 'VZ', 'VROLL', 'VPITCH', 'AZ')
TWO_D_VARIANCE = 1e-6
G = 9.80665
T0 = 1_700_000_000_000_000_000
FREQUENCY = 30.0
PERIOD_NS = int(1e9 / FREQUENCY)
DURATION_S = 12.0
GAP_S = (7.0, 8.2)
IMU_THRESHOLD = 8.0
GPS_THRESHOLD = 6.0


def _flags(*names):
    return [n in names for n in STATES]


def truth(t):
    """Planar vehicle: speed, yaw rate, yaw, position, body accelerations at times t (s)."""
    fine = np.arange(0.0, DURATION_S + 1.0, 1e-4)
    v = 2.0 + 0.5 * np.sin(0.4 * fine)
    w = 0.35 * np.sin(0.3 * fine)
    yaw = np.concatenate([[0.0], np.cumsum((w[1:] + w[:-1]) * 0.5e-4)])
    vx_w, vy_w = v * np.cos(yaw), v * np.sin(yaw)
    x = np.concatenate([[0.0], np.cumsum((vx_w[1:] + vx_w[:-1]) * 0.5e-4)])
    y = np.concatenate([[0.0], np.cumsum((vy_w[1:] + vy_w[:-1]) * 0.5e-4)])

    def at(a):
        return np.interp(t, fine, a)
    vt, wt = at(v), at(w)
    return {'v': vt, 'w': wt, 'yaw': at(yaw), 'x': at(x), 'y': at(y),
            'ax': 0.2 * np.cos(0.4 * t), 'ay': vt * wt}


def quat_rpy(r, p, yw):
    """Quaternion (x, y, z, w) of fixed-axis roll, pitch, yaw (tf2 setRPY)."""
    cr, sr, cp, sp, cy, sy = (np.cos(r / 2), np.sin(r / 2), np.cos(p / 2), np.sin(p / 2),
                              np.cos(yw / 2), np.sin(yw / 2))
    return np.stack([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
                     cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy], -1)


def quat_matrix(q):
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def matrix_yaw(m):
    """Yaw of a rotation matrix by tf2's getRPY (away from gimbal lock)."""
    return math.atan2(m[1, 0], m[0, 0])


def stamps(rate, offset_ms):
    """Return the message times (ns) at rate Hz from T0 + offset, without the gap."""
    n = int(DURATION_S * rate)
    t = offset_ms * 1e-3 + np.arange(n) / rate
    t = t[(t < GAP_S[0]) | (t >= GAP_S[1])]
    return T0 + np.round(t * 1e9).astype(np.int64)


class Prepared:
    """The prepared measurements (rows of measurements.csv.gz) and the raw messages."""

    def __init__(self):
        self.rows = []
        self.raw = {}

    def add(self, topic, source, stamp, arrival, flags, z, R, threshold):
        f = list(flags)
        z = np.array(z, float)
        R = np.array(R, float)
        for n in TWO_D:
            i = IDX[n]
            f[i], z[i], R[i, i] = True, 0.0, TWO_D_VARIANCE
        self.rows.append((int(arrival), int(stamp), topic, source, threshold, f, z, R))


def make(seed: int):
    """Build the scenario: (scenario dict, raw messages by sensor, prepared rows)."""
    rng = np.random.default_rng(seed)
    out = Prepared()

    # imu0: orientation, angular velocity, specific force (+g on z when level)
    st = stamps(25, 1)
    t = (st - T0) * 1e-9
    tr = truth(t)
    roll, pitch = rng.normal(0, 0.01, t.size), rng.normal(0, 0.01, t.size)
    yaw_m = tr['yaw'] + rng.normal(0, 0.02, t.size)
    yaw_m[[40, 120, 250]] += 1.5                      # gated yaw jumps
    q = quat_rpy(roll, pitch, yaw_m)
    wz = tr['w'] + rng.normal(0, 0.01, t.size)
    ocov = [1e-4, 0, 0, 0, 1e-4, 0, 0, 0, 4e-4]
    wcov = [1e-4, 0, 0, 0, 1e-4, 0, 0, 0, 1e-4]
    acov = [0.01, 0.002, 0, 0.002, 0.01, 0, 0, 0, 0.01]
    rows = []
    for k in range(t.size):
        Rq = quat_matrix(q[k])
        g_b = Rq.T @ np.array([0.0, 0.0, G])
        a = np.array([tr['ax'][k], tr['ay'][k], 0.0]) + g_b + rng.normal(0, 0.1, 3)
        w = np.array([rng.normal(0, 0.01), rng.normal(0, 0.01), wz[k]])
        arrival = st[k] + 2_000_000
        rows.append([k, st[k], arrival, 'base_link', *q[k], *w, *a, *ocov, *wcov, *acov])
        src = f'imu0:{k}'
        R = np.zeros((15, 15))
        R[3:6, 3:6] = np.reshape(ocov, (3, 3))
        z = np.zeros(15)
        z[IDX['YAW']] = matrix_yaw(Rq)
        out.add('imu0_pose', src, st[k], arrival, _flags('YAW'), z, R, IMU_THRESHOLD)
        R = np.zeros((15, 15))
        R[9:12, 9:12] = np.reshape(wcov, (3, 3))
        z = np.zeros(15)
        z[IDX['VYAW']] = w[2]
        out.add('imu0_twist', src, st[k], arrival, _flags('VYAW'), z, R, None)
        R = np.zeros((15, 15))
        R[12:15, 12:15] = np.reshape(acov, (3, 3))
        z = np.zeros(15)
        z[12:15] = a - g_b
        out.add('imu0_acceleration', src, st[k], arrival, _flags('AX', 'AY'), z, R, None)
    out.raw['imu0'] = (['seq', 'stamp_ns', 'arrival_ns', 'frame_id', 'qx', 'qy', 'qz', 'qw',
                        'wx', 'wy', 'wz', 'ax', 'ay', 'az']
                       + [f'{c}cov{i}' for c in 'owa' for i in range(9)], rows)

    # odom0: wheel twist in base_link
    st = stamps(10, 3)
    t = (st - T0) * 1e-9
    tr = truth(t)
    lat = rng.integers(10, 41, t.size) * 1_000_000
    lat[[30, 90]] = 150_000_000                      # late: arrives after the next message
    vx = tr['v'] + rng.normal(0, 0.05, t.size)
    vy = rng.normal(0, 0.05, t.size)
    vyaw = tr['w'] + rng.normal(0, 0.03, t.size)
    rows = []
    for k in range(t.size):
        tcov = np.diag([0.0025, 0.0025, 0.01, 0.01, 0.01, 0.0025])
        tcov[0, 5] = tcov[5, 0] = 0.0008
        if k in (20, 95):                            # huge, finite: fused by upstream
            vx[k], tcov[0, 0] = 3e9, 1e20
        if k in (50, 100):
            tcov[5, 5] = 1e32
        if k == 70:                                   # d² overflows: upstream's default gate
            vy[k] = 1e200                             # (DBL_MAX² = inf) rejects it
        rows.append([k, st[k], st[k] + lat[k], 'odom', 'base_link', vx[k], vy[k], 0.0, 0.0, 0.0,
                     vyaw[k], *tcov.ravel()])
        R = np.zeros((15, 15))
        R[6:12, 6:12] = tcov
        z = np.zeros(15)
        z[6:12] = [vx[k], vy[k], 0.0, 0.0, 0.0, vyaw[k]]
        out.add('odom0_twist', f'odom0:{k}', st[k], st[k] + lat[k], _flags('VX', 'VY', 'VYAW'),
                z, R, None)
    out.raw['odom0'] = (['seq', 'stamp_ns', 'arrival_ns', 'frame_id', 'child_frame_id', 'vx', 'vy',
                         'vz', 'wx', 'wy', 'wz'] + [f'tcov{i}' for i in range(36)], rows)

    # odom1: GPS position as odometry in the world frame
    st = stamps(5, 7)
    t = (st - T0) * 1e-9
    tr = truth(t)
    lat = rng.integers(150, 351, t.size) * 1_000_000
    lat[::5] = 5_000_000
    x = tr['x'] + rng.normal(0, 0.5, t.size)
    y = tr['y'] + rng.normal(0, 0.5, t.size)
    x[[8, 23, 41, 48]] += 30.0                        # gated jumps
    x[15], y[35] = 5e9, -1e12                         # gated, far beyond 1e9
    rows = []
    for k in range(t.size):
        pcov = np.diag([0.25, 0.25, 1.0, 0.0, 0.0, 0.0])
        pcov[0, 1] = pcov[1, 0] = 0.1
        rows.append([k, st[k], st[k] + lat[k], 'odom', x[k], y[k], 0.0, 0.0, 0.0, 0.0, 1.0,
                     *pcov.ravel()])
        R = np.zeros((15, 15))
        R[0:6, 0:6] = pcov
        z = np.zeros(15)
        z[0], z[1] = x[k], y[k]
        out.add('odom1_pose', f'odom1:{k}', st[k], st[k] + lat[k], _flags('X', 'Y'), z, R,
                GPS_THRESHOLD)
    out.raw['odom1'] = (['seq', 'stamp_ns', 'arrival_ns', 'frame_id', 'x', 'y', 'z', 'qx', 'qy',
                         'qz', 'qw'] + [f'pcov{i}' for i in range(36)], rows)

    n_ticks = int((DURATION_S + 0.5) * FREQUENCY)
    ros = {
        'frequency': FREQUENCY, 'two_d_mode': True,
        'process_noise_covariance': [0.05, 0.05, 0.06, 0.03, 0.03, 0.06, 0.025, 0.025, 0.04,
                                     0.01, 0.01, 0.02, 0.01, 0.01, 0.015],
        'initial_estimate_covariance': [1e-9] * 15,
        'world_frame': 'odom', 'odom_frame': 'odom', 'base_link_frame': 'base_link',
        'gravitational_acceleration': G,
        'odom0': 'wheel/odom', 'odom0_config': _flags('VX', 'VY', 'VYAW'),
        'imu0': 'imu/data', 'imu0_config': _flags('YAW', 'VYAW', 'AX', 'AY'),
        'imu0_remove_gravitational_acceleration': True,
        'imu0_pose_rejection_threshold': IMU_THRESHOLD,
        'odom1': 'odometry/gps', 'odom1_config': _flags('X', 'Y'),
        'odom1_pose_rejection_threshold': GPS_THRESHOLD,
    }
    scenario = {
        'scenario': 's3_two_d_latency_outliers',
        'generated_by': f'tools/rl_golden/make_scenario.py --seed {seed}',
        'ros_parameters': ros,
        'emulation': {'t0_ns': T0, 'first_tick_ns': T0, 'tick_period_ns': PERIOD_NS,
                      'n_ticks': n_ticks, 'sensor_timeout_ns': PERIOD_NS,
                      'initial_last_measurement_time_ns': T0},
        'transforms': 'all identity (imu frame, odometry child frame == base_link; GPS odometry '
                      'in the world frame)',
        'duration_s': DURATION_S,
        'gap_s': list(GAP_S),
    }
    return scenario, out


def _gz(path: Path, text: str) -> None:
    with open(path, 'wb') as f:
        with gzip.GzipFile(filename='', fileobj=f, mode='wb', mtime=0) as gz:
            gz.write(text.encode())


def _cell(v) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return repr(float(v))


def write(out_dir: Path, seed: int) -> None:
    """Write the scenario files (see the module docstring)."""
    scenario, prep = make(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / 'scenario.json').write_text(json.dumps(scenario, indent=1) + '\n')
    for name, (head, rows) in prep.raw.items():
        buf = io.StringIO()
        buf.write(','.join(head) + '\r\n')
        for r in rows:
            buf.write(','.join(_cell(v) for v in r) + '\r\n')
        _gz(out_dir / f'raw_{name}.csv.gz', buf.getvalue())
    parts = {'imu0_pose': 0, 'imu0_twist': 1, 'imu0_acceleration': 2}
    rows = sorted(prep.rows, key=lambda r: (r[0], r[3].split(':')[0], int(r[3].split(':')[1]),
                                            parts.get(r[2], 0)))
    off = sorted({(i, j) for r in rows for i in range(15) for j in range(i + 1, 15)
                  if r[7][i, j] != 0.0 and r[5][i] and r[5][j]})
    head = (['id', 'topic', 'source_msg', 'stamp_ns', 'arrival_ns', 'rejection_threshold']
            + [f'u_{s}' for s in STATES] + [f'z_{s}' for s in STATES]
            + [f'r_{s}' for s in STATES] + [f'r_{STATES[i]}_{STATES[j]}' for i, j in off])
    buf = io.StringIO()
    buf.write(','.join(head) + '\r\n')
    for n, (arrival, stamp, topic, src, thr, f, z, R) in enumerate(rows):
        cells = [n, topic, src, stamp, arrival, '' if thr is None else thr]
        cells += [int(b) for b in f] + list(z) + [R[i, i] for i in range(15)]
        cells += [R[i, j] for i, j in off]
        buf.write(','.join(_cell(v) for v in cells) + '\r\n')
    _gz(out_dir / 'measurements.csv.gz', buf.getvalue())


def main() -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('out_dir', type=Path)
    ap.add_argument('--seed', type=int, default=23)
    a = ap.parse_args()
    write(a.out_dir, a.seed)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
