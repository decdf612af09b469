# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Calibrate the noise models from standstill logs (what the paper did offline, appendix IV-A).

GPS (positions of a static antenna, converted to ENU about their mean):
* ``ch_gauss``: σ per axis = sample standard deviation.
* ``ch_rw``: σ of the second derivative (second differences / dt², m/s²), p_max = largest
  horizontal deviation from the mean, max velocity / acceleration = largest |first| / |second|
  derivative — the paper's "standard deviation of the second derivative … standstill test" and
  p_max "from the position noise"; the TR-2022-02 widths (max − min of the position and its
  derivatives) are reported too.
* ``gauss_markov``: σ per axis and τ = −dt / ln ρ(1) from the lag-one autocorrelation of the
  horizontal error.
* ``airsim``: H∞ and τ from the HDOP series: H(t) = H∞ + (H(0) − H∞)·e^{−t/τ} fitted by least
  squares when the series decays; a flat series (a receiver already converged) gives H∞ = median
  and τ "not identifiable".

IMU (a static segment): overlapping Allan deviation (allantools) per axis, fitted by non-negative
least squares on AVAR(τ) = N²/τ + σ_b²·g(τ/T) + K²τ/3 (g = the Gauss–Markov Allan shape, T scanned
on a grid) → N (ARW/VRW), B = peak Allan deviation of the bias term / 0.664 (bias instability, the
``allan`` model's definition), T and K.

Readers: NMEA (pynmeagps, GGA), UBX (pyubx2: NAV-PVT/NAV-PVAT/NAV-POSLLH + NAV-DOP), CSV with a
header, and ROS bags through ``vepd_ros.io.bags`` when that module is installed.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import math
from pathlib import Path

import numpy as np
from vepd_ros.csvio import check_row_lengths, nonblank_rows, NUMBER_RE
from vepd_ros.frames import GRAVITY_MPS2
from vepd_ros.models.geodesy import geodetic_to_enu
from vepd_ros.models.imu import BIAS_INSTABILITY_FACTOR, GM_ADEV_PEAK
from vepd_ros.yamlio import quote

BAG_SUFFIXES = ('.bag', '.db3', '.mcap')
MIN_BIAS_RECORD_S = 3600.0
"""Static record length stated as needed for IMU bias instability / rate random walk when a record
does not resolve them: an hour is the usual minimum for MEMS Allan analysis (IEEE Std 952
practice); longer when the fitted correlation time says so (16 T: the peak at 1.89 T within a
quarter of the record)."""


@dataclass
class GpsLog:
    t_s: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    alt: np.ndarray
    hdop: np.ndarray  # NaN where the log has none
    quality: np.ndarray  # fix quality / fix type as logged (−1 unknown)
    source: str

    def window(self, start_s: float, end_s: float) -> 'GpsLog':
        """
        The fixes between ``start_s`` and ``end_s`` seconds after the first one (a standstill
        stretch).
        """
        rel = self.t_s - self.t_s[0]
        keep = (rel >= start_s) & (rel <= end_s)
        if keep.sum() < 3:
            raise ValueError(
                f'{self.source}: only {int(keep.sum())} fixes between {start_s} and {end_s} s '
                f'(the log spans {rel[-1]:.1f} s)'
            )
        return GpsLog(
            self.t_s[keep],
            self.lat[keep],
            self.lon[keep],
            self.alt[keep],
            self.hdop[keep],
            self.quality[keep],
            f'{self.source} [{start_s:g}, {end_s:g}] s',
        )


@dataclass
class ImuLog:
    t_s: np.ndarray
    gyro: np.ndarray  # (n,3) rad/s
    acc: np.ndarray  # (n,3) m/s²
    source: str


# -- readers
# -----------------------------------------------------------------------------------------------------
def _kind(path: Path) -> str:
    if path.is_dir() or path.suffix in BAG_SUFFIXES:
        return 'bag'
    if path.suffix.lower() == '.csv':
        return 'csv'
    head = path.read_bytes()[:4096]
    if b'\xb5b' in head:
        return 'ubx'
    if head.lstrip().startswith(b'$') or b'$GPGGA' in head or b'$GNGGA' in head:
        return 'nmea'
    return 'csv'


def _bags():
    try:
        from vepd_ros.io import bags  # written by the io owner; optional here
    except ImportError:
        raise ValueError(
            'reading ROS bags needs vepd_ros.io.bags, which is not available in this install; '
            'export the topic to CSV (t, lat, lon, alt[, hdop]) or use NMEA/UBX'
        ) from None
    return bags


def read_gps_log(path, topic: str | None = None) -> GpsLog:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f'{path}: no such file')
    kind = _kind(path)
    if kind == 'nmea':
        return _read_nmea(path)
    if kind == 'ubx':
        return _read_ubx(path)
    if kind == 'bag':
        bags = _bags()
        msgs = bags.read_messages(path, [topic or '/fix'])
        rows = [
            (bags.stamp_s(m), m.latitude, m.longitude, m.altitude, m.status.status)
            for _, m in msgs
        ]
        if not rows:
            raise ValueError(f'{path}: no NavSatFix messages on {topic or "/fix"}')
        a = np.array(rows, float)
        return _checked_gps(
            GpsLog(
                a[:, 0], a[:, 1], a[:, 2], a[:, 3], np.full(len(a), np.nan), a[:, 4], f'bag {path}'
            )
        )
    cols = _read_csv(path)
    t = _col(cols, path, 't', 'time', 'stamp', 't_s')
    log = GpsLog(
        t,
        _col(cols, path, 'lat', 'latitude'),
        _col(cols, path, 'lon', 'longitude'),
        _col(cols, path, 'alt', 'altitude', 'height'),
        _col(cols, path, 'hdop', default=np.full(len(t), np.nan)),
        _col(cols, path, 'status', 'quality', default=np.full(len(t), -1.0)),
        f'csv {path}',
    )
    return _checked_gps(log)


def _checked_gps(log: GpsLog) -> GpsLog:
    _check_time(log.t_s, log.source)
    _check_finite(log.source, latitude=log.lat, longitude=log.lon, altitude=log.alt)
    if not ((np.abs(log.lat) <= 90).all() and (np.abs(log.lon) <= 180).all()):
        raise ValueError(
            f'{log.source}: latitude/longitude out of range (expected degrees, '
            f'|lat| <= 90, '
            '|lon| <= 180)'
        )
    return log


def _read_nmea(path: Path) -> GpsLog:
    from pynmeagps import NMEAReader

    rows = []
    with open(path, 'rb') as fh:
        for _, msg in NMEAReader(fh, quitonerror=0):
            if msg is None or getattr(msg, 'msgID', '') != 'GGA' or msg.lat in ('', None):
                continue
            tm = msg.time
            t = tm.hour * 3600 + tm.minute * 60 + tm.second + tm.microsecond * 1e-6
            sep = msg.sep if isinstance(msg.sep, (int, float)) else 0.0
            hd = msg.HDOP if isinstance(msg.HDOP, (int, float)) else np.nan
            rows.append((t, msg.lat, msg.lon, msg.alt + sep, hd, msg.quality))
    if not rows:
        raise ValueError(f'{path}: no GGA sentences with a position')
    a = np.array(rows, float)
    a[:, 0] = np.unwrap(a[:, 0], period=86400.0)
    return _checked_gps(
        GpsLog(a[:, 0] - a[0, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5], f'nmea {path}')
    )


def _read_ubx(path: Path) -> GpsLog:
    from pyubx2 import UBXReader

    pos, dop = {}, {}
    with open(path, 'rb') as fh:
        for _, msg in UBXReader(fh, protfilter=2, quitonerror=0):
            if msg is None:
                continue
            ident = msg.identity
            if ident in ('NAV-PVT', 'NAV-PVAT', 'NAV-POSLLH') and isinstance(
                getattr(msg, 'iTOW', None), int
            ):
                q = getattr(msg, 'fixType', -1)
                if ident == 'NAV-PVT' and not getattr(msg, 'gnssFixOk', 1):
                    continue
                if ident == 'NAV-POSLLH' and msg.iTOW in pos:
                    continue
                pos[msg.iTOW] = (msg.lat, msg.lon, msg.height / 1000.0, q)
            elif ident == 'NAV-DOP' and isinstance(getattr(msg, 'iTOW', None), int):
                dop[msg.iTOW] = msg.hDOP
    if not pos:
        raise ValueError(f'{path}: no NAV-PVT/NAV-PVAT/NAV-POSLLH messages')
    keys = sorted(pos)
    t = np.array(keys, float) / 1000.0
    a = np.array([pos[k] for k in keys], float)
    hd = np.array([dop.get(k, np.nan) for k in keys], float)
    return _checked_gps(GpsLog(t - t[0], a[:, 0], a[:, 1], a[:, 2], hd, a[:, 3], f'ubx {path}'))


MAX_LOG_BYTES = 2 * 1024**3
"""Largest CSV log read (a day of 100 Hz IMU data is ~0.6 GB)."""


def _read_csv(path: Path) -> dict:
    """
    Columns of a CSV log with a header row; ValueError naming the file (and line, column) for
    binary content, a short file, ragged rows or a value that is not a number.
    """
    size = path.stat().st_size
    if size > MAX_LOG_BYTES:
        raise ValueError(f'{path}: {size} bytes, more than the {MAX_LOG_BYTES} a CSV log may have')
    with open(path, 'rb') as fh:
        head = fh.read(8192)
    if b'\x00' in head:
        raise ValueError(f'{path}: binary content, expected a CSV log with a header row')
    try:
        with open(path, newline='', encoding='utf-8') as fh:
            rows, line_of = nonblank_rows(fh)
    except UnicodeDecodeError as exc:
        raise ValueError(
            f'{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); expected '
            f'a CSV log '
            'with a header row'
        ) from None
    except csv.Error as exc:
        raise ValueError(f'{path}: not a readable CSV log ({str(exc)[:120]})') from None
    if len(rows) < 2:
        raise ValueError(f'{path}: expected a header row and data rows')
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header):
        raise ValueError(f'{path}: duplicate column names in the header {quote(header)}')
    check_row_lengths(path, rows, line_of)
    data = np.empty((len(rows) - 1, len(header)))
    for n, r in enumerate(rows[1:]):
        for i, x in enumerate(r):
            try:
                # a plain decimal number (runs.format's rule): float() reads '1_0' as 10
                if not NUMBER_RE.fullmatch(x.strip()):
                    raise ValueError(x)
                data[n, i] = float(x)
            except ValueError:
                raise ValueError(
                    f'{path}, line {line_of[n + 1]}, column {quote(header[i])}: '
                    f'{quote(x)} '
                    f'is not a '
                    'number'
                ) from None
    return {h: data[:, i] for i, h in enumerate(header)}


def _check_time(t, source: str, what: str = 'time column') -> np.ndarray:
    """
    Times must be finite and non-decreasing with a positive typical step (the rate is 1/median
    step).
    """
    t = np.asarray(t, float)
    if t.size < 2:
        raise ValueError(f'{source}: {t.size} sample(s); a log needs many')
    if not np.isfinite(t).all():
        raise ValueError(
            f'{source}: the {what} has non-finite values (first at row '
            f'{int(np.argmin(np.isfinite(t)))})'
        )
    d = np.diff(t)
    if (d < 0).any():
        raise ValueError(
            f'{source}: the {what} goes backwards at row {int(np.argmax(d < 0)) + 1} '
            '(expected increasing times)'
        )
    if not np.median(d) > 0:
        raise ValueError(
            f'{source}: the {what} is constant or mostly repeated (median step '
            f'{float(np.median(d)):g} s); expected increasing times in seconds'
        )
    return t


def _check_finite(source: str, **cols) -> None:
    for name, v in cols.items():
        bad = ~np.isfinite(np.asarray(v, float))
        if bad.any():
            raise ValueError(
                f'{source}: {name} has non-finite values (first at row '
                f'{int(np.argmax(bad.reshape(len(bad), -1).any(axis=1)))})'
            )


def _col(cols: dict, path, *names, default=None):
    low = {k.lower(): v for k, v in cols.items()}
    for n in names:
        if n in low:
            return low[n]
    for k, v in low.items():
        if any(k.startswith(n + ' ') or k.startswith(n + '(') for n in names):
            return v
    if default is not None:
        return default
    raise ValueError(f'{path}: no column named {" or ".join(names)} (have: {", ".join(cols)})')


def read_imu_log(path, topic: str | None = None) -> ImuLog:
    """
    IMU CSV (SI columns t, wx, wy, wz, ax, ay, az — our imu.csv — or x-io style 'Gyroscope X
    (deg/s)', 'Accelerometer X (g)') or a bag's sensor_msgs/Imu topic.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f'{path}: no such file')
    if _kind(path) == 'bag':
        bags = _bags()
        msgs = bags.read_messages(path, [topic or '/imu'])
        rows = [
            (
                bags.stamp_s(m),
                m.angular_velocity.x,
                m.angular_velocity.y,
                m.angular_velocity.z,
                m.linear_acceleration.x,
                m.linear_acceleration.y,
                m.linear_acceleration.z,
            )
            for _, m in msgs
        ]
        if not rows:
            raise ValueError(f'{path}: no Imu messages on {topic or "/imu"}')
        a = np.array(rows, float)
        return _checked_imu(ImuLog(a[:, 0] - a[0, 0], a[:, 1:4], a[:, 4:7], f'bag {path}'))
    cols = _read_csv(path)
    low = {k.lower(): k for k in cols}
    t = _col(cols, path, 't', 'time', 'stamp')
    if all(k in low for k in ('wx', 'wy', 'wz', 'ax', 'ay', 'az')):
        g = np.column_stack([cols[low[k]] for k in ('wx', 'wy', 'wz')])
        a = np.column_stack([cols[low[k]] for k in ('ax', 'ay', 'az')])
    else:

        def find(prefix, axis):
            for k in cols:
                kl = k.lower()
                if kl.startswith(prefix) and f' {axis} ' in kl + ' ':
                    return k
            raise ValueError(
                f"{path}: no column '{prefix} {axis} (unit)' (have: {', '.join(cols)})"
            )

        g_cols = [find('gyroscope', ax) for ax in ('x', 'y', 'z')]
        a_cols = [find('accelerometer', ax) for ax in ('x', 'y', 'z')]
        g = np.column_stack([cols[c] for c in g_cols]) * (
            math.pi / 180.0 if 'deg' in g_cols[0].lower() else 1.0
        )
        a_scale = GRAVITY_MPS2 if '(g)' in a_cols[0].lower() else 1.0
        a = np.column_stack([cols[c] for c in a_cols]) * a_scale
    return _checked_imu(ImuLog(t - t[0], g, a, f'csv {path}'))


def _checked_imu(log: ImuLog) -> ImuLog:
    _check_time(log.t_s, log.source)
    _check_finite(log.source, angular_velocity=log.gyro, linear_acceleration=log.acc)
    return log


# -- GPS fits
# ----------------------------------------------------------------------------------------------------
def fit_gps(log: GpsLog, hdop_initial: float = 100.0) -> dict:
    """Every GPS model's parameters from a standstill log (see module doc); values in SI."""
    if len(log.t_s) < 5:
        raise ValueError(f'{log.source}: need at least 5 fixes, got {len(log.t_s)}')
    datum = (float(np.mean(log.lat)), float(np.mean(log.lon)), float(np.mean(log.alt)))
    enu = geodetic_to_enu(log.lat, log.lon, log.alt, datum)
    e = enu - enu.mean(axis=0)
    t = log.t_s
    dt = float(np.median(np.diff(t)))
    if not dt > 0:
        raise ValueError(
            f'{log.source}: the fix times repeat (median step {dt:g} s over {len(t)} '
            'fixes); expected increasing times'
        )
    uniform = np.allclose(np.diff(t), dt, rtol=0.05)
    d1 = np.diff(e, axis=0) / dt
    d2 = np.diff(e, n=2, axis=0) / dt**2
    sigma = e.std(axis=0, ddof=1)
    horiz = np.hypot(e[:, 0], e[:, 1])
    if not (sigma[:2] > 0).all():
        raise ValueError(
            f'{log.source}: the horizontal position does not vary over {len(t)} fixes '
            '(a constant or quantised log): no noise to fit'
        )
    rho = np.array([np.corrcoef(e[:-1, i], e[1:, i])[0, 1] for i in range(2)])
    rho_h = float(np.clip(np.mean(rho), 1e-6, 1 - 1e-9))
    out = {
        'source': log.source,
        'n_fixes': int(len(t)),
        'duration_s': float(t[-1] - t[0]),
        'rate_hz': 1.0 / dt,
        'uniform_rate': bool(uniform),
        'datum': list(datum),
        'ch_gauss': {'gauss_sigma_m': sigma.tolist()},
        'ch_rw': {
            'rw_sigma': float(np.std(d2[:, :2])),
            'rw_p_max_m': float(horiz.max()),
            'rw_max_velocity': float(np.abs(d1[:, :2]).max()),
            'rw_max_acceleration': float(np.abs(d2[:, :2]).max()),
        },
        'ch_rw_tr_widths': {
            'width_m': float(np.ptp(e[:, :2], axis=0).max()),
            'width_d1': float(np.ptp(d1[:, :2], axis=0).max()),
            'width_d2': float(np.ptp(d2[:, :2], axis=0).max()),
            'std_d2': float(np.std(d2[:, :2])),
        },
        'gauss_markov': {
            'gm_sigma_m': sigma.tolist(),
            'gm_tau_s': float(-dt / math.log(rho_h)),
            'lag1_autocorrelation': rho.tolist(),
        },
    }
    out['airsim'] = fit_hdop(t, log.hdop, hdop_initial)
    return out


def fit_hdop(t, hdop, hdop_initial: float = 100.0) -> dict:
    ok = np.isfinite(hdop)
    if ok.sum() < 3:
        return {'hdop_final': None, 'hdop_tau_s': None, 'note': 'no HDOP in the log'}
    t, h = np.asarray(t)[ok], np.asarray(hdop)[ok]
    tail = h[len(h) // 2:]
    h_inf = float(np.median(tail))
    spread = max(float(np.std(tail)), 0.01)
    if h[0] - h_inf <= 3 * spread:
        return {
            'hdop_final': h_inf,
            'hdop_tau_s': None,
            'n': int(len(h)),
            'note': f'HDOP flat ({h.min():.2f}–{h.max():.2f}): receiver already converged, τ not '
                    f'identifiable',
        }
    from scipy.optimize import curve_fit

    def f(tt, hinf, h0, tau):
        return hinf + (h0 - hinf) * np.exp(-(tt - t[0]) / tau)

    (hinf, h0, tau), _ = curve_fit(
        f,
        t,
        h,
        p0=[h_inf, h[0], max((t[-1] - t[0]) / 5, 1e-3)],
        bounds=([0, 0, 1e-3], [np.inf, np.inf, np.inf]),
    )
    return {
        'hdop_final': float(hinf),
        'hdop_tau_s': float(tau),
        'hdop_start': float(h0),
        'n': int(len(h)),
    }


# -- IMU fits
# ----------------------------------------------------------------------------------------------------
def static_segment(
    log: ImuLog, gyro_thresh_rad_s: float = math.radians(1.0), window_s: float = 1.0
):
    """
    Index slice of the longest stretch whose 1-s windows all have a gyro norm below the threshold.
    """
    dt = float(np.median(np.diff(log.t_s)))
    w = max(int(round(window_s / dt)), 1)
    nrm = np.linalg.norm(log.gyro, axis=1)
    nwin = len(nrm) // w
    still = nrm[: nwin * w].reshape(nwin, w).max(axis=1) < gyro_thresh_rad_s
    best, cur, start, best_start = 0, 0, 0, 0
    for i, s in enumerate(still):
        if s:
            if cur == 0:
                start = i
            cur += 1
            if cur > best:
                best, best_start = cur, start
        else:
            cur = 0
    return slice(best_start * w, (best_start + best) * w)


def allan_deviation(x, rate_hz: float):
    import allantools

    x = np.asarray(x, float)
    m_max = max(len(x) // 4, 2)
    m = np.unique(
        np.round(np.geomspace(1, m_max, 60)).astype(int)
    )  # ~60 log-spaced averaging factors
    taus, adev, err, _ = allantools.oadev(x, rate=rate_hz, data_type='freq', taus=m / rate_hz)
    return np.asarray(taus), np.asarray(adev), np.asarray(err)


def fit_allan(x, rate_hz: float) -> dict:
    """
    N (white density), B (bias instability), its correlation time T, K (rate random walk) of one
    axis.
    """
    from scipy.optimize import nnls

    taus, adev, _ = allan_deviation(x, rate_hz)
    n_total = len(x) / rate_hz
    keep = (taus <= n_total / 4) & (adev > 0)
    taus, adev = taus[keep], adev[keep]
    if len(taus) < 3:
        raise ValueError(
            f'too little data or no variation for an Allan fit ({len(x)} samples at '
            f'{rate_hz:.6g} Hz, {int(keep.sum())} usable averaging times)'
        )
    avar = adev**2
    # relative errors, and an Allan variance at τ rests on ~T_total/τ independent averages: its
    # relative standard error grows like √τ (IEEE 952 confidence), so long-τ points weigh less
    wts = 1.0 / (avar * np.sqrt(taus / taus[0]))
    best = None
    # T below a few samples is indistinguishable from white noise (g → 2T/τ): scan T over the
    # resolved taus
    grid = np.geomspace(5.0 * taus[0], max(taus[-1], 10.0 * taus[0]), 120)
    for t_c in grid:
        x_ = taus / t_c
        g = (2 * x_ - 3 + 4 * np.exp(-x_) - np.exp(-2 * x_)) / x_**2
        a = np.column_stack([1.0 / taus, g, taus / 3.0]) * wts[:, None]
        coef, res = nnls(a, avar * wts)
        if best is None or res < best[0]:
            best = (res, t_c, coef)
    _, t_c, (n2, s2, k2) = best
    sigma_ss = math.sqrt(s2)
    # the bias term is resolved when its Allan peak (tau ~ 1.89 T) lies inside the resolved taus,
    # with the scan's lower edge excluded (a T there is white noise) and half the longest tau as
    # the upper margin
    bias_resolved = bool(s2 > 0 and t_c > grid[0] * 1.01 and 1.89 * t_c <= taus[-1] / 2)
    # the rate random walk is seen only where K^2 tau / 3 dominates the other terms (a +1/2 slope
    # at the longest resolved taus)
    tl = taus[-1] / t_c
    other = n2 / taus[-1] + s2 * (2 * tl - 3 + 4 * math.exp(-tl) - math.exp(-2 * tl)) / tl**2
    rrw_resolved = bool(k2 > 0 and k2 * taus[-1] / 3.0 > other)
    return {
        'white_density': math.sqrt(n2),
        'bias_instability': sigma_ss * GM_ADEV_PEAK / BIAS_INSTABILITY_FACTOR,
        'bias_tau_s': float(t_c),
        'rate_random_walk': math.sqrt(k2),
        'bias_resolved': bias_resolved,
        'rrw_resolved': rrw_resolved,
        'adev_at_1s': float(np.interp(1.0, taus, adev)) if taus[0] <= 1.0 <= taus[-1] else None,
        'adev_min': float(adev.min()),
        'tau_max_s': float(taus[-1]),
    }


def fit_imu(log: ImuLog, segment: slice | None = None, on_axis=None) -> dict:
    """
    Allan fits of the six axes over the static segment; ``on_axis()`` is called after each
    (progress).
    """
    seg = static_segment(log) if segment is None else segment
    t = log.t_s[seg]
    if len(t) < 100:
        raise ValueError(f'{log.source}: static segment too short ({len(t)} samples)')
    step = float(np.median(np.diff(t)))
    if not step > 0:
        raise ValueError(
            f'{log.source}: the times of the static segment repeat (median step '
            f'{step:g} s); expected increasing times'
        )
    rate = 1.0 / step
    out = {
        'source': log.source,
        'segment_s': [float(t[0]), float(t[-1])],
        'rate_hz': rate,
        'axes': {},
    }
    for name, data in (('gyro', log.gyro[seg]), ('acc', log.acc[seg])):
        for i, ax in enumerate('xyz'):
            try:
                out['axes'][f'{name}_{ax}'] = fit_allan(data[:, i], rate)
            except ValueError as exc:
                raise ValueError(f'{log.source}: {name}_{ax}: {exc}') from None
            if on_axis is not None:
                on_axis()

    def med(name, key):
        return float(np.median([out['axes'][f'{name}_{ax}'][key] for ax in 'xyz']))

    out['allan'] = {
        'rate_hz': rate,
        'gyro_arw': med('gyro', 'white_density'),
        'gyro_bias_instability': med('gyro', 'bias_instability'),
        'gyro_bias_tau_s': med('gyro', 'bias_tau_s'),
        'gyro_rrw': med('gyro', 'rate_random_walk'),
        'acc_vrw': med('acc', 'white_density'),
        'acc_bias_instability': med('acc', 'bias_instability'),
        'acc_bias_tau_s': med('acc', 'bias_tau_s'),
        'acc_rrw': med('acc', 'rate_random_walk'),
    }
    # only identifiable parameters are kept (most axes resolved); the rest are named with the data
    # needed
    duration = float(t[-1] - t[0])
    out['not_identified'] = {}
    for name in ('gyro', 'acc'):
        axes = [out['axes'][f'{name}_{ax}'] for ax in 'xyz']
        if sum(a['bias_resolved'] for a in axes) < 2:
            need = max(MIN_BIAS_RECORD_S, 16.0 * med(name, 'bias_tau_s'))
            for key in (f'{name}_bias_instability', f'{name}_bias_tau_s'):
                out['allan'].pop(key)
                out['not_identified'][key] = {
                    'need_s': need,
                    'have_s': duration,
                    'why': 'no bias floor inside the resolved Allan taus (its peak at ~1.89 T '
                    'must lie '
                    'within an eighth of the record)',
                }
        if sum(a['rrw_resolved'] for a in axes) < 2:
            key = f'{name}_rrw'
            out['allan'].pop(key)
            out['not_identified'][key] = {
                'need_s': max(MIN_BIAS_RECORD_S, 4.0 * duration),
                'have_s': duration,
                'why': 'no +1/2 slope at the longest resolved taus',
            }
    return out


def node_params_yaml(node: str, model: str, params: dict) -> str:
    """
    A ROS 2 parameters file for ``node`` (what the noise nodes and ``vepd sensors simulate`` read).
    """
    import yaml

    clean = {'model': model}
    for k, v in params.items():
        if v is None:
            continue
        clean[k] = (
            [float(x) for x in v]
            if isinstance(v, (list, tuple))
            else (float(v) if isinstance(v, (float, np.floating)) else v)
        )
    return yaml.safe_dump({node: {'ros__parameters': clean}}, sort_keys=False)


def write_params_file(path, header: str, text: str) -> None:
    """
    Write a parameters YAML (``header + text``) to the file ``path``, whole or not at all.

    The file named by ``--out`` is replaced; a directory is refused with an error naming it.
    """
    from pathlib import Path

    from vepd_ros.runs.atomic import atomic_write_text

    if Path(path).is_dir():
        raise ValueError(f'--out {path}: a directory; expected the YAML file name')
    atomic_write_text(path, header + text)
