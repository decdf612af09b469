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

The fits take ``GpsLog`` / ``ImuLog`` arrays; the log readers (NMEA, UBX, CSV, ROS bags) are in
``vepd_ros.io.calibration_logs``, so models import nothing from io; the fitted parameters are
written as a ROS 2 parameters file by ``vepd_ros.params_file`` (``node_params_yaml``).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any

import numpy as np
from vepd_ros.models.geodesy import geodetic_to_enu
from vepd_ros.models.imu import BIAS_INSTABILITY_FACTOR, GM_ADEV_PEAK

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
        Return the fixes of a time window.

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
    Return the index slice of the longest static stretch.

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
    Fit the Allan deviation of one axis.

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
    best: tuple | None = None
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
    assert best is not None  # the grid is not empty
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
    Fit the Allan deviation of the six IMU axes.

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
    out: dict[str, Any] = {
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
