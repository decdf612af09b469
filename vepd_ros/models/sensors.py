# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Run a GPS and an IMU model over a truth trajectory, offline, as the noise nodes do.

Run a GPS and an IMU model over a truth trajectory exactly as ``gps_noise_node``/``imu_noise_node``
do.

Sample times are on each sensor's own clock: t_k = k·period (integer nanoseconds, period =
round(1e9/rate)), for every k with t_k inside the truth's time span — the same grid the nodes use,
so for the same seed and the same truth the numbers here are the numbers the nodes publish. Truth
is linearly interpolated at t_k.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from vepd_ros.models.geodesy import check_datum, DEFAULT_DATUM, enu_to_geodetic
from vepd_ros.models.gps import GpsModel, GpsSamples, make_gps_model
from vepd_ros.models.imu import ImuModel, ImuSamples, make_imu_model
from vepd_ros.streams import NS

if TYPE_CHECKING:  # the truth's type, for annotations only (no import at run time)
    from vepd_ros.truth.trajectory import Trajectory


MIN_RATE_HZ = 1e-3
MAX_RATE_HZ = 1e4
"""Sensor rates accepted (the judge's frequency range, judge.config): 1e-300 Hz would be an
infinite period, 1e12 Hz a zero one."""


def period_ns(rate_hz: float) -> int:
    """
    Return the sensor clock's period in integer ns.

    The sensor clock's period in integer ns, round(1e9 / rate_hz), for a rate in
    [MIN_RATE_HZ, MAX_RATE_HZ] (ValueError naming rate_hz otherwise, NaN included).
    """
    if isinstance(rate_hz, bool) or not (
        isinstance(rate_hz, (int, float)) and MIN_RATE_HZ <= rate_hz <= MAX_RATE_HZ
    ):
        raise ValueError(
            f'rate_hz: expected a rate in [{MIN_RATE_HZ:g}, {MAX_RATE_HZ:g}] Hz, got {rate_hz!r}'
        )
    return int(round(NS / rate_hz))


def sample_index_range(t_start_s: float, t_end_s: float, rate_hz: float) -> tuple[int, int]:
    """[k0, k1] of the sensor clock ticks k·period inside [t_start, t_end] (inclusive)."""
    per = period_ns(rate_hz)
    a, b = int(round(t_start_s * NS)), int(round(t_end_s * NS))
    return -(-a // per), b // per


def tick_time(k: int, per_ns: int) -> float:
    """Seconds of tick k: (k·period_ns)/1e9 — the one formula the library and the nodes share."""
    return (k * per_ns) / 1e9


MAX_SAMPLE_TIMES = 20_000_000
"""Most sensor samples of one run (55 h at 100 Hz): no allocation proportional to an unbounded
time span."""


def sample_times(t_start_s: float, t_end_s: float, rate_hz: float) -> np.ndarray:
    """
    Return the sensor clock's tick times inside [t_start, t_end].

    ``tick_time(k, period)`` for every tick inside [t_start, t_end], vectorised: k·period in int64
    (exact, as Python's int product) converted to float and divided by 1e9 — the same two correctly
    rounded steps.
    """
    if not (math.isfinite(t_start_s) and math.isfinite(t_end_s)):
        raise ValueError(
            f'sample times: t_start_s {t_start_s} and t_end_s {t_end_s} must be finite'
        )
    k0, k1 = sample_index_range(t_start_s, t_end_s, rate_hz)
    if k1 - k0 + 1 > MAX_SAMPLE_TIMES:
        raise ValueError(
            f'{t_end_s - t_start_s:g} s at {rate_hz:g} Hz is {k1 - k0 + 1} samples, '
            f'more than the '
            f'{MAX_SAMPLE_TIMES} one run may have'
        )
    per = period_ns(rate_hz)
    return np.arange(k0, k1 + 1, dtype=np.int64) * per / 1e9


@dataclass
class SensorRun:
    truth_t_s: np.ndarray
    truth: Trajectory  # at truth_t_s
    gps: GpsSamples
    gps_lla: np.ndarray  # (n,3) lat, lon, alt of gps.position_enu
    imu: ImuSamples
    datum: tuple


@dataclass(frozen=True)
class TruthAtSensors:
    """
    A trajectory sampled on the sensor clocks.

    A trajectory sampled on the sensor clocks: what every model run over the same truth shares (the
    study runs six models over each truth). Arrays are read-only; build with ``truth_at_sensors``.
    """

    rates_hz: tuple  # (gps, imu, truth)
    gps_t_s: np.ndarray
    gps_truth_enu: np.ndarray  # (n,3) truth position at the GPS ticks
    imu_t_s: np.ndarray
    imu_angular_velocity: np.ndarray
    imu_specific_force: np.ndarray
    imu_quaternion: np.ndarray
    truth_t_s: np.ndarray
    truth: Trajectory  # at truth_t_s


def truth_at_sensors(
    trajectory, gps_rate_hz: float = 10.0, imu_rate_hz: float = 100.0, truth_rate_hz: float = 100.0
) -> TruthAtSensors:
    """
    Sample the truth at the GPS, IMU and truth-topic ticks.

    The truth at the GPS, IMU and truth-topic ticks (``sample_times``; linear interpolation,
    ``Trajectory.sample``) and the IMU's inputs there (body rate, specific force, orientation).
    """
    t0, t1 = float(trajectory.t_s[0]), float(trajectory.t_s[-1])
    tg = sample_times(t0, t1, gps_rate_hz)
    ti = sample_times(t0, t1, imu_rate_hz)
    tt = sample_times(t0, t1, truth_rate_hz)
    at_imu = trajectory.sample(ti)
    out = TruthAtSensors(
        (gps_rate_hz, imu_rate_hz, truth_rate_hz),
        tg,
        trajectory.sample(tg).position_enu,
        ti,
        at_imu.angular_velocity_body,
        at_imu.specific_force_body,
        at_imu.quaternion,
        tt,
        trajectory.sample(tt),
    )
    for a in (
        tg,
        out.gps_truth_enu,
        ti,
        out.imu_angular_velocity,
        out.imu_specific_force,
        out.imu_quaternion,
        tt,
    ):
        a.flags.writeable = False
    return out


def simulate_sensors(
    trajectory,
    gps_model: GpsModel | str | None = 'none',
    imu_model: ImuModel | str | None = 'none',
    *,
    gps_rate_hz: float = 10.0,
    imu_rate_hz: float = 100.0,
    datum=DEFAULT_DATUM,
    seed: int = 0,
    gps_params: dict | None = None,
    imu_params: dict | None = None,
    truth_rate_hz: float = 100.0,
    shared: TruthAtSensors | None = None,
) -> SensorRun:
    """
    Both sensors over ``trajectory`` (a ``Trajectory``).

    Models may be given by name (built with ``seed``). ``shared``: ``truth_at_sensors(trajectory,
    rates...)`` computed once for several models (same numbers).
    """
    datum = check_datum(datum)
    if gps_model is None or isinstance(gps_model, str):  # None: no GPS, the model 'none'
        gps_model = make_gps_model(gps_model or 'none', seed, **(gps_params or {}))
    if imu_model is None or isinstance(imu_model, str):
        imu_model = make_imu_model(imu_model or 'none', seed, **(imu_params or {}))
    if shared is None:
        shared = truth_at_sensors(trajectory, gps_rate_hz, imu_rate_hz, truth_rate_hz)
    elif shared.rates_hz != (gps_rate_hz, imu_rate_hz, truth_rate_hz):
        raise ValueError(
            f'shared truth samples are at {shared.rates_hz} Hz, asked for '
            f'{(gps_rate_hz, imu_rate_hz, truth_rate_hz)}'
        )
    g = gps_model.sample(shared.gps_t_s, shared.gps_truth_enu, datum=datum)
    lat, lon, alt = (
        enu_to_geodetic(g.position_enu, datum, gps_model.p['conversion'])
        if len(g)
        else (np.zeros(0),) * 3
    )
    i = imu_model.sample_arrays(
        shared.imu_t_s,
        shared.imu_angular_velocity,
        shared.imu_specific_force,
        shared.imu_quaternion,
    )
    return SensorRun(
        shared.truth_t_s, shared.truth, g, np.stack([lat, lon, alt], axis=-1), i, datum
    )


def write_csvs(run: SensorRun, out_dir: str | Path) -> dict:
    """truth.csv, gps.csv (published messages only) and imu.csv; returns {name: path}."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / f'{k}.csv' for k in ('truth', 'gps', 'imu')}
    tr = run.truth
    v = tr.velocity_enu
    _write(
        paths['truth'],
        ['t', 'east', 'north', 'up', 'yaw', 'v_east', 'v_north', 'v_up'],
        np.column_stack([run.truth_t_s, tr.position_enu, tr.yaw, v]),
    )
    g = run.gps
    keep = g.published
    _write(
        paths['gps'],
        [
            't',
            'lat',
            'lon',
            'alt',
            'east',
            'north',
            'up',
            'cov_e',
            'cov_n',
            'cov_u',
            'status',
            'sats',
            'hdop',
        ],
        np.column_stack(
            [
                g.stamp_s,
                run.gps_lla,
                g.position_enu,
                g.covariance_enu[:, 0, 0],
                g.covariance_enu[:, 1, 1],
                g.covariance_enu[:, 2, 2],
                g.status,
                g.satellites,
                g.hdop,
            ]
        )[keep],
        ints={10, 11},
    )
    i = run.imu
    _write(
        paths['imu'],
        ['t', 'wx', 'wy', 'wz', 'ax', 'ay', 'az'],
        np.column_stack([i.t_s, i.angular_velocity, i.linear_acceleration]),
    )
    return paths


def _write(path: Path, header, rows, ints=()):
    tmp = path.with_suffix('.csv.tmp')
    with open(tmp, 'w', newline='') as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow([str(int(x)) if j in ints else repr(float(x)) for j, x in enumerate(r)])
    tmp.replace(path)


class TruthResampler:
    """
    Streaming form of the sensor clock used by the nodes.

    Streaming form of the sensor clock used by the nodes: feed truth messages (integer-ns stamp,
    values) in order; get back every tick t_k = k·period with t_prev < t_k ≤ t_msg, the values
    linearly interpolated between the two bracketing messages (``np.interp``: the very arithmetic
    ``Trajectory.sample`` uses, and the message's own values when a tick falls on its stamp). A gap
    longer than ``max_gap_s`` is not interpolated across: the clock restarts at the first tick at
    or after the new message.
    """

    def __init__(self, rate_hz: float, max_gap_s: float = 1.0):
        self.per = period_ns(rate_hz)
        self.max_gap_ns = int(round(max_gap_s * NS))
        self.prev: tuple[int, np.ndarray] | None = None
        self.next_k = 0

    def push(self, t_ns: int, values) -> list[tuple[float, int, np.ndarray]]:
        y = np.asarray(values, dtype=float)
        if self.prev is not None and t_ns <= self.prev[0]:
            raise ValueError(f'truth stamp {t_ns} ns does not increase (last {self.prev[0]} ns)')
        prev = self.prev
        if prev is None or t_ns - prev[0] > self.max_gap_ns:
            self.next_k = -(-t_ns // self.per)
            prev = None
        out = []
        while self.next_k * self.per <= t_ns:
            ts_ns = self.next_k * self.per
            ts = tick_time(self.next_k, self.per)
            if ts_ns == t_ns or prev is None:
                v = y.copy()
            else:
                x0, x1 = prev[0] / 1e9, t_ns / 1e9
                v = np.array([np.interp(ts, [x0, x1], [a, b]) for a, b in zip(prev[1], y)])
            out.append((ts, ts_ns, v))
            self.next_k += 1
        self.prev = (t_ns, y)
        return out
