"""Run a GPS and an IMU model over a truth trajectory exactly as ``gps_noise_node``/``imu_noise_node`` do.

Sample times are on each sensor's own clock: t_k = k·period (integer nanoseconds, period = round(1e9/rate)),
for every k with t_k inside the truth's time span — the same grid the nodes use, so for the same seed and
the same truth the numbers here are the numbers the nodes publish. Truth is linearly interpolated at t_k.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vepd_ros.models.geodesy import DEFAULT_DATUM, check_datum, enu_to_geodetic
from vepd_ros.models.gps import GpsModel, GpsSamples, make_gps_model
from vepd_ros.models.imu import ImuModel, ImuSamples, make_imu_model

NS = 1_000_000_000


def period_ns(rate_hz: float) -> int:
    if not rate_hz > 0:
        raise ValueError(f'rate_hz: expected > 0, got {rate_hz!r}')
    return int(round(NS / rate_hz))


def sample_index_range(t_start_s: float, t_end_s: float, rate_hz: float) -> tuple[int, int]:
    """[k0, k1] of the sensor clock ticks k·period inside [t_start, t_end] (inclusive)."""
    per = period_ns(rate_hz)
    a, b = int(round(t_start_s * NS)), int(round(t_end_s * NS))
    return -(-a // per), b // per


def tick_time(k: int, per_ns: int) -> float:
    """Seconds of tick k: (k·period_ns)/1e9 — the one formula the library and the nodes share."""
    return (k * per_ns) / 1e9


def sample_times(t_start_s: float, t_end_s: float, rate_hz: float) -> np.ndarray:
    k0, k1 = sample_index_range(t_start_s, t_end_s, rate_hz)
    per = period_ns(rate_hz)
    return np.array([tick_time(k, per) for k in range(k0, k1 + 1)], dtype=float)


@dataclass
class SensorRun:
    truth_t_s: np.ndarray
    truth: object                  # Trajectory at truth_t_s
    gps: GpsSamples
    gps_lla: np.ndarray            # (n,3) lat, lon, alt of gps.position_enu
    imu: ImuSamples
    datum: tuple


def simulate_sensors(trajectory, gps_model: GpsModel | str | None = 'none', imu_model: ImuModel | str | None = 'none',
                     gps_rate_hz: float = 10.0, imu_rate_hz: float = 100.0, datum=DEFAULT_DATUM, seed: int = 0,
                     gps_params: dict | None = None, imu_params: dict | None = None,
                     truth_rate_hz: float = 100.0) -> SensorRun:
    """Both sensors over ``trajectory`` (a ``Trajectory``). Models may be given by name (built with ``seed``)."""
    datum = check_datum(datum)
    if isinstance(gps_model, str):
        gps_model = make_gps_model(gps_model, seed, **(gps_params or {}))
    if isinstance(imu_model, str):
        imu_model = make_imu_model(imu_model, seed, **(imu_params or {}))
    t0, t1 = float(trajectory.t_s[0]), float(trajectory.t_s[-1])
    tg = sample_times(t0, t1, gps_rate_hz)
    ti = sample_times(t0, t1, imu_rate_hz)
    g = gps_model.sample(tg, trajectory.sample(tg).position_enu, datum=datum)
    lat, lon, alt = enu_to_geodetic(g.position_enu, datum, gps_model.p['conversion']) if len(g) else (np.zeros(0),) * 3
    i = imu_model.sample(ti, trajectory.sample(ti))
    tt = sample_times(t0, t1, truth_rate_hz)
    return SensorRun(tt, trajectory.sample(tt), g, np.stack([lat, lon, alt], axis=-1), i, datum)


def write_csvs(run: SensorRun, out_dir: str | Path) -> dict:
    """truth.csv, gps.csv (published messages only) and imu.csv; returns {name: path}."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / f'{k}.csv' for k in ('truth', 'gps', 'imu')}
    tr = run.truth
    v = tr.velocity_enu
    _write(paths['truth'], ['t', 'east', 'north', 'up', 'yaw', 'v_east', 'v_north', 'v_up'],
           np.column_stack([run.truth_t_s, tr.position_enu, tr.yaw, v]))
    g = run.gps
    keep = g.published
    _write(paths['gps'], ['t', 'lat', 'lon', 'alt', 'east', 'north', 'up', 'cov_e', 'cov_n', 'cov_u', 'status',
                          'sats', 'hdop'],
           np.column_stack([g.stamp_s, run.gps_lla, g.position_enu, g.covariance_enu[:, 0, 0],
                            g.covariance_enu[:, 1, 1], g.covariance_enu[:, 2, 2], g.status, g.satellites,
                            g.hdop])[keep],
           ints={10, 11})
    i = run.imu
    _write(paths['imu'], ['t', 'wx', 'wy', 'wz', 'ax', 'ay', 'az'],
           np.column_stack([i.t_s, i.angular_velocity, i.linear_acceleration]))
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
    """Streaming form of the sensor clock used by the nodes: feed truth messages (integer-ns stamp, values) in
    order; get back every tick t_k = k·period with t_prev < t_k ≤ t_msg, the values linearly interpolated between
    the two bracketing messages (``np.interp``: the very arithmetic ``Trajectory.sample`` uses, and the message's
    own values when a tick falls on its stamp). A gap longer than ``max_gap_s`` is not interpolated across: the
    clock restarts at the first tick at or after the new message.
    """

    def __init__(self, rate_hz: float, max_gap_s: float = 1.0):
        self.per = period_ns(rate_hz)
        self.max_gap_ns = int(round(max_gap_s * NS))
        self.prev = None
        self.next_k = None

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
