# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
GPS noise models: the paper's five Table I variants, USARSim's satellites and models beyond.

A model is a name of ``+``-joined tokens, e.g. ``ch_rw+airsim`` or
``gauss_markov+dop+outage+latency``:

==================  ==========  ===================================================================
token               role        what it does
==================  ==========  ===================================================================
``none``            —           truth, zero covariance (type UNKNOWN), status FIX
``ch_gauss``        error       Chrono ``ChNoiseNormal``: e ~ N(mean, diag σ²) per sample,
                                σ = 0.03 m (paper, RTK)
``ch_rw``           error       the concentration-gradient random walk in the 2nd derivative
                                (TR-2022-02 eq. 3, paper appendix IV-A); ``rw_variant`` chrono
                                (default: ``ChNoiseRandomWalks`` as the paper's experiments ran
                                it), paper (appendix equation) or tr (TR eq. 3 per step)
``ch_rw_demo``      error       ch_rw with Chrono's demo parameters (σ 0.016, vmax 0.03,
                                amax 0.005)
``gauss_markov``    error       first-order Gauss–Markov error per axis (exact discretisation),
                                diag covariance
``airsim``          covariance  HDOP low-pass H(t) = H∞ + (H0 − H∞)e^{−t/τ} (calibrated 0.85 /
                                12.4 s); covariance diag((0.02H)², (0.02H)², (c_U·H)²), type
                                APPROXIMATED — the authors' handler
``airsim_default``  covariance  airsim with AirSim's defaults H∞ 0.1, τ 0.9 s
``rtk``             preset      gauss_markov (σ 1.5/1.5/3 cm, τ 20 s) + nmea_navsat_driver
                                RTK-fixed covariance at HDOP 0.5: the simulated stand-in for a real
                                RTK receiver (reference side)
``dop``             geometry    satellites (nominal 24-slot or TLE), mask, occlusion → Q; error
                                N(0, σ²Q) and covariance σ²Q (type KNOWN); NO_FIX below 4
                                satellites
``usarsim``         geometry    Balaguer & Carpin: satellites seen N →
                                σ = (maxNoise − (maxNoise−minNoise)(N−4)/8)/3 on E and N; NO_FIX
                                below 4
``gz_navsat``       error       Gazebo NavSat: GaussianNoiseModel on lat/lon and alt. Trap: the
                                horizontal noise is in DEGREES (1e-5 ≈ 1.1 m), one bias drawn once
                                with a random sign for both, dt = 0 so no dynamic bias
``hector_gps``      error       hector_gazebo_plugins GPS: offset + drift + white noise per axis.
                                Trap: the drift's random term scales with dt, not √dt, so the drift
                                depends on the update rate
``carla_gnss``      error       CARLA GNSS: bias + N(0, σ²) on lat/lon. Trap: in DEGREES, so the
                                metres depend on the datum's latitude; altitude in m
``matlab_gps``      error       MATLAB gpsSensor: e_k = k·e_{k−1} + σ√(2(1−k))·z. Trap: at
                                DecayFactor 0 the variance is 2σ², not σ²; at 1 no error at all
``outage``          modifier    random (Markov) and scheduled outages: NO_FIX or no message
``latency``         modifier    fixed latency plus abs(N(0, jitter)): the message is *published*
                                later
``cold_start``      modifier    no fix until the time to first fix has passed
==================  ==========  ===================================================================

Time semantics of ``GpsSamples``: ``t_s`` is the measurement time (the instant whose truth was
sampled); ``publish_s`` is when the message leaves the sensor (t_s + latency); ``stamp_s`` is the
header stamp: the measurement time (``stamp_mode: measurement``, as AirSim's delay line and u-blox
drivers' GPS time), or the arrival time (``stamp_mode: arrival``, as a driver that stamps on
reception).

Reproducibility: each component draws from its own stream (seed, component name), a fixed number of
variates per sample (or per internal step) in sample order, so chunked calls give bit-identical
results.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
import math
from typing import Any
import zlib

import numpy as np
from vepd_ros.models import satellites as sat
from vepd_ros.models import simulators as sim
from vepd_ros.models.geodesy import CONVERSIONS
from vepd_ros.params import Param, ParameterError, validate_params
from vepd_ros.params import vec3_param as _vec3

# sensor_msgs/NavSatStatus and NavSatFix constants
STATUS_NO_FIX, STATUS_FIX, STATUS_SBAS_FIX, STATUS_GBAS_FIX = -1, 0, 1, 2
COV_UNKNOWN, COV_APPROXIMATED, COV_DIAGONAL_KNOWN, COV_KNOWN = 0, 1, 2, 3


COMMON_PARAMS = [
    Param(
        'fix_status',
        STATUS_FIX,
        'NavSatStatus reported while the model has a fix (0 FIX, 1 SBAS, 2 GBAS/RTK)',
        choices=[0, 1, 2],
    ),
    Param(
        'zero_covariance_type',
        COV_UNKNOWN,
        'position_covariance_type published with the zero covariance of '
        'models that do not model it (0 UNKNOWN; Chrono 9.0.1 used 1 APPROXIMATED)',
        choices=[0, 1, 2, 3],
    ),
    Param(
        'conversion',
        'wgs84',
        "ENU → lat/lon: exact WGS-84, Chrono's sphere, or USARSim's flat earth",
        choices=list(CONVERSIONS),
    ),
]
GAUSS_PARAMS = [
    Param(
        'gauss_sigma_m',
        [0.03, 0.03, 0.03],
        'per-axis σ (E, N, U) of the white error (m); paper: 0.03 (RTK)',
        **_vec3(),
    ),
    Param(
        'gauss_mean_m',
        [0.0, 0.0, 0.0],
        'constant offset (E, N, U) of the white error (m)',
        **_vec3(False),
    ),
]
RW_PARAMS = [
    Param(
        'rw_variant',
        'chrono',
        'chrono: ChNoiseRandomWalks as run in the paper; paper: appendix IV-A equation; '
        'tr: TR-2022-02 eq. 3 in per-step units',
        choices=['chrono', 'paper', 'tr'],
    ),
    Param(
        'rw_sigma',
        0.047,
        'σ of the error acceleration (m/s²; tr: m per step²); paper 0.047',
        low=0.0,
    ),
    Param(
        'rw_rate_hz',
        100.0,
        'internal step rate of the walk (Hz); paper 100',
        low=0.0,
        low_open=True,
        high=1e5,
    ),
    Param(
        'rw_max_velocity',
        0.016,
        'cap on the error velocity (m/s, 3-D norm; tr: m per step)',
        low=0.0,
        low_open=True,
    ),
    Param(
        'rw_max_acceleration',
        0.152,
        'per-axis clamp on the error acceleration (m/s²; tr: m per step²)',
        low=0.0,
        low_open=True,
    ),
    Param(
        'rw_p_max_m',
        0.06,
        'p_max of the concentration gradient μ = −p/p_max (paper/tr variants; m)',
        low=0.0,
        low_open=True,
    ),
    Param(
        'rw_chrono_gain', 0.2, "restoring gain g of Chrono's mean −g·σ·p (chrono variant)", low=0.0
    ),
]
GM_PARAMS = [
    Param(
        'gm_sigma_m',
        [0.02, 0.02, 0.04],
        'stationary σ (E, N, U) of the Gauss–Markov error (m)',
        **_vec3(),
    ),
    Param(
        'gm_tau_s', 30.0, 'correlation time of the Gauss–Markov error (s)', low=0.0, low_open=True
    ),
    Param(
        'gm_publish_covariance',
        True,
        'publish diag σ² (DIAGONAL_KNOWN) instead of a zero covariance',
    ),
]
AIRSIM_PARAMS = [
    Param('hdop_initial', 100.0, 'H0: HDOP at start (AirSim eph_initial)', low=0.0, low_open=True),
    Param(
        'hdop_final',
        0.85,
        'H∞: HDOP at convergence (calibrated 0.85; AirSim default 0.1)',
        low=0.0,
        low_open=True,
    ),
    Param(
        'hdop_tau_s',
        12.4,
        'τ of the HDOP low-pass (s) (calibrated 12.4; AirSim default 0.9)',
        low=0.0,
        low_open=True,
    ),
    Param(
        'cov_en_per_hdop',
        0.02,
        'σ_E = σ_N = this × HDOP (m): nmea_navsat_driver epe for RTK fixed',
        low=0.0,
    ),
    Param(
        'cov_up_per_hdop',
        0.04,
        "σ_U = this × HDOP (m): 0.04 the authors' handler, 0.08 nmea_navsat_driver",
        low=0.0,
    ),
    Param(
        'airsim_fix_type',
        False,
        "report NO_FIX while HDOP > eph_min_2d as AirSim does (the paper's handler did not)",
    ),
    Param('eph_min_2d', 4.0, 'HDOP at or below which AirSim reports a fix', low=0.0),
    Param(
        'airsim_satellites',
        15,
        'satellite count reported (AirSim sends a constant 15 on MAVLink)',
        low=0,
    ),
]
SKY_PARAMS = [
    Param(
        'tle_file', '', 'TLE file for SGP4 orbits; empty = the nominal 24-slot GPS constellation'
    ),
    Param(
        'epoch_utc',
        '2024-02-07T01:54:02Z',
        'UTC of truth time 0 (stamps > 1e9 s are taken as Unix time)',
        check=lambda v: _utc_ok(v),
        check_msg='an ISO 8601 time',
    ),
    Param('elevation_mask_deg', 5.0, 'elevation mask (deg)', low=-90.0, high=90.0),
    Param(
        'obstacles',
        '',
        'YAML file or inline YAML list of obstacles in ENU: boxes {type: box, min, max} or '
        'extruded polygons {type: polygon, vertices, z_min, z_max}',
        check=lambda v: _obstacles_ok(v),
        check_msg='a YAML obstacle list (see docs/models.md)',
    ),
]
DOP_PARAMS = [
    Param(
        'dop_sigma_uere_m',
        0.02,
        'σ of the user equivalent range error (m): covariance σ²·Q',
        low=0.0,
    ),
    Param(
        'dop_weighting',
        'equal',
        'satellite weights in Q: equal or sin²(elevation)',
        choices=['equal', 'elevation'],
    ),
    Param(
        'dop_error',
        'white',
        'position error from the geometry: white N(0, σ²Q) or none (covariance only)',
        choices=['white', 'none'],
    ),
]
USARSIM_PARAMS = [
    Param(
        'usarsim_max_noise_m',
        2.5,
        'maxNoise: error bound at 4 satellites (m); σ = bound/3',
        low=0.0,
    ),
    Param('usarsim_min_noise_m', 0.75, 'minNoise: error bound at 12 satellites (m)', low=0.0),
]
OUTAGE_PARAMS = [
    Param(
        'outage_mode',
        'no_fix',
        'during an outage publish NO_FIX, or publish nothing (drop)',
        choices=['no_fix', 'drop'],
    ),
    Param('outage_mtbf_s', 60.0, 'mean time between random outages (s); 0 = none', low=0.0),
    Param('outage_mean_s', 3.0, 'mean duration of a random outage (s)', low=0.0, low_open=True),
    Param(
        'outage_windows',
        [0.0],
        'scheduled outages [start, end, start, end, ...] in s from the first sample '
        '([0.0] = none)',
        check=lambda v: len(v) % 2 == 0 or list(v) == [0.0],
        check_msg='an even-length list of times',
    ),
]
LATENCY_PARAMS = [
    Param(
        'latency_s', 0.1, 'fixed delay between measurement and publication (s)', low=0.0, high=10.0
    ),
    Param('jitter_s', 0.0, 'σ of an extra |N(0, σ)| delay (s)', low=0.0, high=10.0),
    Param(
        'stamp_mode',
        'measurement',
        'header stamp = measurement time, or arrival (publication) time',
        choices=['measurement', 'arrival'],
    ),
]
COLD_START_PARAMS = [
    Param(
        'ttff_s',
        26.0,
        'time to first fix after the first sample (s); u-blox F9 cold start ≈ 25–26 s',
        low=0.0,
    ),
    Param(
        'cold_start_mode',
        'no_fix',
        'before the first fix publish NO_FIX, or nothing (drop)',
        choices=['no_fix', 'drop'],
    ),
]


def _utc_ok(v) -> bool:
    try:
        sat.parse_utc(v)
        return True
    except ValueError:
        return False


def _obstacles_ok(v) -> bool:
    try:
        sat.parse_obstacles(v)
        return True
    except Exception:
        return False


# token → (role, component, parameter overrides)
_TOKENS = {
    'none': ('none', None, {}),
    'ch_gauss': ('error', 'gauss', {}),
    'ch_rw': ('error', 'rw', {}),
    'ch_rw_demo': (
        'error',
        'rw',
        {'rw_sigma': 0.016, 'rw_max_velocity': 0.03, 'rw_max_acceleration': 0.005},
    ),
    'gauss_markov': ('error', 'gm', {}),
    'gz_navsat': ('error', 'gz_navsat', {}),
    'hector_gps': ('error', 'hector_gps', {}),
    'carla_gnss': ('error', 'carla_gnss', {}),
    'matlab_gps': ('error', 'matlab_gps', {}),
    'airsim': ('meta', 'airsim', {}),
    'airsim_default': ('meta', 'airsim', {'hdop_final': 0.1, 'hdop_tau_s': 0.9}),
    'dop': ('meta', 'dop', {}),
    'usarsim': ('meta', 'usarsim', {}),
    'outage': ('mod', 'outage', {}),
    'latency': ('mod', 'latency', {}),
    'cold_start': ('mod', 'cold_start', {}),
}
_COMPONENT_PARAMS = {
    'gauss': GAUSS_PARAMS,
    'rw': RW_PARAMS,
    'gm': GM_PARAMS,
    'gz_navsat': sim.GZ_NAVSAT_PARAMS,
    'hector_gps': sim.HECTOR_PARAMS,
    'carla_gnss': sim.CARLA_GNSS_PARAMS,
    'matlab_gps': sim.MATLAB_GPS_PARAMS,
    'airsim': AIRSIM_PARAMS,
    'dop': SKY_PARAMS + DOP_PARAMS,
    'usarsim': SKY_PARAMS + USARSIM_PARAMS,
    'outage': OUTAGE_PARAMS,
    'latency': LATENCY_PARAMS,
    'cold_start': COLD_START_PARAMS,
}

# Presets: a name standing for several tokens with their parameters.
_PRESETS = {
    # An RTK-fixed receiver like the paper's ZED-F9P as nmea_navsat_driver publishes it: centimetre
    # error with time correlation (Gauss–Markov, σ 1.5 cm horizontal / 3 cm vertical, τ 20 s) and
    # the driver's covariance rule for GGA quality 4 (epe 0.02 m × HDOP, vertical 4·epe·HDOP) at a
    # constant HDOP of 0.5 (the RTK log in shared/data/real/nmea_rtk_fixed_static reports 0.5). The
    # stand-in for real data when none exists.
    'rtk': (
        'gauss_markov+airsim',
        {
            'gm_sigma_m': [0.015, 0.015, 0.03],
            'gm_tau_s': 20.0,
            'gm_publish_covariance': False,
            'hdop_initial': 0.5,
            'hdop_final': 0.5,
            'cov_en_per_hdop': 0.02,
            'cov_up_per_hdop': 0.08,
        },
    ),
}

GPS_MODELS = [
    'none',
    'rtk',
    'ch_gauss',
    'ch_rw',
    'airsim',
    'ch_gauss+airsim',
    'ch_rw+airsim',
    'usarsim',
    'airsim_default',
    'ch_rw_demo',
    'gauss_markov',
    'dop',
    'gauss_markov+dop',
    'ch_rw+outage',
    'ch_rw+latency',
    'ch_rw+airsim+cold_start',
    'dop+outage+latency+cold_start',
    'gz_navsat',
    'hector_gps',
    'carla_gnss',
    'matlab_gps',
]
"""
Named models.

Any ``+`` combination of one error token, one covariance/geometry token and modifiers also works.
"""
PAPER_TABLE_I = {
    'Ch:Gauss': 'ch_gauss',
    'Ch:RW': 'ch_rw',
    'AirSim': 'airsim',
    'Ch:Gauss+AirSim': 'ch_gauss+airsim',
    'Ch:RW+AirSim': 'ch_rw+airsim',
}


def parse_gps_model(name: str) -> dict:
    """
    Parse a model name into its components.

    {'error': comp|None, 'meta': comp|None, 'mods': [...], 'overrides': {...}} or
    ParameterError('model').
    """
    if not isinstance(name, str) or not name.strip():
        raise ParameterError('model', name, 'a GPS model name: ' + ', '.join(GPS_MODELS))
    tokens, preset_overrides = [], {}
    for t in (t.strip() for t in name.split('+')):
        if t in _PRESETS:
            tokens += _PRESETS[t][0].split('+')
            preset_overrides.update(_PRESETS[t][1])
        else:
            tokens.append(t)
    out: dict[str, Any] = {'error': None, 'meta': None, 'mods': [], 'overrides': {}}
    for t in tokens:
        if t not in _TOKENS:
            raise ParameterError(
                'model', name, f"'+'-joined tokens from {', '.join(_TOKENS)} (unknown {t!r})"
            )
        role, comp, ov = _TOKENS[t]
        if role == 'none':
            if len(tokens) > 1:
                raise ParameterError('model', name, "'none' on its own")
            continue
        if role == 'mod':
            if comp in out['mods']:
                raise ParameterError('model', name, f'{t!r} at most once')
            out['mods'].append(comp)
        else:
            if out[role] is not None:
                raise ParameterError(
                    'model',
                    name,
                    f'at most one {"error" if role == "error" else "covariance/geometry"}'
                    f' token (got a second: {t!r})',
                )
            out[role] = comp
        out['overrides'].update(ov)
    out['overrides'].update(preset_overrides)
    return out


def gps_model_params(name: str) -> list[Param]:
    """Return the Param specs of a model (defaults set to its preset), common ones first."""
    spec = parse_gps_model(name)
    comps = [c for c in (spec['error'], spec['meta']) if c] + spec['mods']
    seen, out = set(), []
    for p in COMMON_PARAMS + [p for c in comps for p in _COMPONENT_PARAMS[c]]:
        if p.name in seen:
            continue
        seen.add(p.name)
        out.append(
            replace(p, default=spec['overrides'][p.name]) if p.name in spec['overrides'] else p
        )
    return out


GPS_MODEL_PARAMS = {name: gps_model_params(name) for name in GPS_MODELS}


@dataclass
class GpsSamples:
    t_s: np.ndarray  # (n,) measurement time
    stamp_s: np.ndarray  # (n,) header stamp (see module doc)
    publish_s: np.ndarray  # (n,) time the message leaves the sensor
    error_enu: np.ndarray  # (n,3) m
    position_enu: np.ndarray  # (n,3) m (truth + error)
    covariance_enu: np.ndarray  # (n,3,3) m², ENU, as NavSatFix.position_covariance
    covariance_type: np.ndarray  # (n,) int
    status: np.ndarray  # (n,) int NavSatStatus
    satellites: np.ndarray  # (n,) int; −1 = not modelled
    hdop: np.ndarray  # (n,) float; NaN = not modelled or no fix
    published: np.ndarray  # (n,) bool

    def __len__(self):
        return len(self.t_s)

    @staticmethod
    def concat(parts: list['GpsSamples']) -> 'GpsSamples':
        return GpsSamples(
            *[np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(GpsSamples)]
        )

    def select(self, idx) -> 'GpsSamples':
        return GpsSamples(*[getattr(self, f.name)[idx] for f in fields(GpsSamples)])


MAX_RW_SUBSTEPS = 20_000_000
"""Most internal random-walk steps one ``sample`` call may take (55 h at the default 100 Hz, ~20 s
of CPU): a longer span or gap is refused with a clear error instead of running for hours."""
RW_CHUNK = 65536
"""Normals are drawn this many steps at a time (memory independent of the span)."""


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng(
        np.random.SeedSequence([int(seed) & 0xFFFFFFFF, zlib.crc32(name.encode())])
    )


class GpsModel:
    """Stateful streaming GPS model; build with ``make_gps_model``."""

    def __init__(self, name: str, seed: int = 0, **params):
        self.name = name
        self.spec = parse_gps_model(name)
        self.p = validate_params(gps_model_params(name), params)
        self.seed = int(seed)
        self.t0: float | None = None
        self.t_last: float | None = None
        p, s = self.p, self.spec
        self._rng_err = _rng(seed, 'gps/error/' + (s['error'] or 'none'))
        self._rng_geo = _rng(seed, 'gps/geometry')
        self._rng_out = _rng(seed, 'gps/outage')
        self._rng_lat = _rng(seed, 'gps/latency')
        # error-process state
        self._p = np.zeros(3)
        self._v = np.zeros(3)
        self._t_int: float | None = None
        self._gm: np.ndarray | None = None
        self._in_outage = False
        # another simulator's own error law (models/simulators.py), drawing from the error stream
        self._sim: Any = (
            _SIMULATOR_ERRORS[s['error']](self._rng_err, p)
            if s['error'] in _SIMULATOR_ERRORS
            else None
        )
        if s['meta'] in ('dop', 'usarsim'):
            try:
                self.constellation = sat.make_constellation(p['tle_file'])
            except (FileNotFoundError, ValueError) as exc:
                raise ParameterError(
                    'tle_file', p['tle_file'], f'a readable TLE file ({exc})'
                ) from None
            self.obstacles = sat.parse_obstacles(p['obstacles'])
        if 'rw' == s['error'] and p['rw_max_velocity'] <= 0:
            raise ParameterError('rw_max_velocity', p['rw_max_velocity'], '> 0')

    # ------------------------------------------------------------------------------------------------
    def sample(self, t_s, truth_enu, datum=None) -> GpsSamples:
        """
        Sample the GPS output at measurement times ``t_s``.

        GPS output at measurement times ``t_s`` (n,) for truth positions ``truth_enu`` (n,3) (ENU m
        about ``datum``, which the geometry models need; default the ART datum).
        """
        from vepd_ros.models.geodesy import DEFAULT_DATUM

        datum = DEFAULT_DATUM if datum is None else datum
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        x = np.asarray(truth_enu, dtype=float).reshape(-1, 3)
        n = len(t)
        if len(x) != n:
            raise ValueError(f'truth_enu: {len(x)} rows for {n} sample times')
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(x))):
            raise ValueError('t_s/truth_enu: non-finite values')
        if n and (np.any(np.diff(t) <= 0) or (self.t_last is not None and t[0] <= self.t_last)):
            raise ValueError('t_s: sample times must strictly increase across calls')
        p, s = self.p, self.spec
        if n == 0:
            z = np.zeros(0)
            return GpsSamples(
                z,
                z,
                z,
                np.zeros((0, 3)),
                np.zeros((0, 3)),
                np.zeros((0, 3, 3)),
                z.astype(int),
                z.astype(int),
                z.astype(int),
                z,
                z.astype(bool),
            )
        if self.t0 is None:
            self.t0 = float(t[0])
        dt = np.diff(np.concatenate([[self.t_last if self.t_last is not None else t[0]], t]))
        err = np.zeros((n, 3))
        cov = np.zeros((n, 3, 3))
        ctype = np.full(n, p['zero_covariance_type'], dtype=np.int64)
        status = np.full(n, p['fix_status'], dtype=np.int64)
        sats = np.full(n, -1, dtype=np.int64)
        hdop = np.full(n, np.nan)
        idx = np.arange(3)

        if s['error'] == 'gauss':
            z = self._rng_err.standard_normal((n, 3))
            err += np.asarray(p['gauss_mean_m']) + np.asarray(p['gauss_sigma_m']) * z
        elif s['error'] == 'rw':
            err += self._random_walk(t)
        elif s['error'] == 'gm':
            err += self._gauss_markov(t, dt)
            if p['gm_publish_covariance']:
                cov[:, idx, idx] = np.asarray(p['gm_sigma_m']) ** 2
                ctype[:] = COV_DIAGONAL_KNOWN
        elif s['error'] in ('gz_navsat', 'carla_gnss'):
            err += self._sim.error(t, x, datum, p['conversion'])
        elif s['error'] == 'hector_gps':
            err += self._sim.error(dt)
        elif s['error'] == 'matlab_gps':
            err += self._sim.error(n)

        if s['meta'] == 'airsim':
            h = self.airsim_hdop(t)
            hdop = h
            sats[:] = p['airsim_satellites']
            se, su = p['cov_en_per_hdop'] * h, p['cov_up_per_hdop'] * h
            cov[:] = 0.0
            cov[:, 0, 0] = cov[:, 1, 1] = se**2
            cov[:, 2, 2] = su**2
            ctype[:] = COV_APPROXIMATED
            if p['airsim_fix_type']:
                status[h > p['eph_min_2d']] = STATUS_NO_FIX
        elif s['meta'] in ('dop', 'usarsim'):
            geom = self.geometry(t, x, datum)
            nv = geom.n_visible
            sats[:] = nv
            q = sat.dop_matrix(geom, p.get('dop_weighting', 'equal'))
            hdop = sat.dops(q)['HDOP']
            fix = nv >= 4
            status[~fix] = STATUS_NO_FIX
            cov[:] = 0.0
            ctype[:] = COV_UNKNOWN
            if s['meta'] == 'usarsim':
                z = self._rng_geo.standard_normal((n, 2))
                mx, mn = p['usarsim_max_noise_m'], p['usarsim_min_noise_m']
                sigma = np.maximum((mx - (mx - mn) * (nv - 4) / 8.0) / 3.0, 0.0)
                sigma = np.where(fix, sigma, 0.0)
                err[:, :2] += sigma[:, None] * z
                cov[:, 0, 0] = cov[:, 1, 1] = cov[:, 2, 2] = sigma**2
                ctype[fix] = COV_APPROXIMATED
            else:
                z = self._rng_geo.standard_normal((n, 3))
                c = p['dop_sigma_uere_m'] ** 2 * np.where(fix[:, None, None], q[:, :3, :3], 0.0)
                cov[:] = c
                ctype[fix] = COV_KNOWN
                if p['dop_error'] == 'white' and fix.any():
                    l_ = np.zeros_like(c)
                    l_[fix] = np.linalg.cholesky(c[fix] + 1e-18 * np.eye(3))
                    err += np.einsum('nij,nj->ni', l_, z)

        published = np.ones(n, dtype=bool)
        for mod in s['mods']:
            if mod == 'cold_start':
                before = (t - self.t0) < p['ttff_s']
                self._apply_loss(before, p['cold_start_mode'], status, published)
            elif mod == 'outage':
                self._apply_loss(self._outages(t, dt), p['outage_mode'], status, published)
        publish_s = t.copy()
        if 'latency' in s['mods']:
            j = np.abs(self._rng_lat.standard_normal(n)) * p['jitter_s']
            publish_s = t + p['latency_s'] + j
        stamp_s = publish_s.copy() if p.get('stamp_mode') == 'arrival' else t.copy()
        self.t_last = float(t[-1])
        return GpsSamples(
            t.copy(), stamp_s, publish_s, err, x + err, cov, ctype, status, sats, hdop, published
        )

    # -- components
    # ----------------------------------------------------------------------------------
    def airsim_hdop(self, t) -> np.ndarray:
        """
        Return AirSim's HDOP H(t) at times ``t``.

        H(t) = H∞ + (H0 − H∞)·exp(−(t − t0)/τ): the closed form of AirSim's per-update low-pass.
        """
        p = self.p
        return p['hdop_final'] + (p['hdop_initial'] - p['hdop_final']) * np.exp(
            -(np.asarray(t) - self.t0) / p['hdop_tau_s']
        )

    def geometry(self, t, x, datum):
        unix = sat.unix_times(t, self.p['epoch_utc'])
        return sat.sky_geometry(
            self.constellation.ecef(unix), x, datum, self.p['elevation_mask_deg'], self.obstacles
        )

    def _random_walk(self, t) -> np.ndarray:
        p = self.p
        hmax = 1.0 / p['rw_rate_hz']
        tol = 1e-6 * hmax + 1e-9
        if self._t_int is None:
            self._t_int = float(t[0])
        # sub-step schedule (Chrono: h = min(1/rate, t_next − t) until t_next)
        counts, last_h = [], []
        t_int = self._t_int
        for tk in t:
            span = tk - t_int
            m = max(0, int(math.ceil(span / hmax - 1e-6))) if span > tol else 0
            counts.append(m)
            last_h.append(span - (m - 1) * hmax if m else 0.0)
            t_int = tk
        total = sum(counts)
        if total > MAX_RW_SUBSTEPS:
            raise ValueError(
                f'ch_rw: the sample times span {t[-1] - self._t_int:.6g} s at '
                f'rw_rate_hz '
                f'{p["rw_rate_hz"]:g}: {total} internal steps, more than the '
                f'{MAX_RW_SUBSTEPS} one '
                'call may take; sample a long run (or one across a long gap) in '
                'pieces'
            )
        # normals drawn in chunks of at most RW_CHUNK rows as they are used: the same stream
        # (numpy's generator is sequential), memory independent of the span
        drawn = [0]
        buf = [[], [], [], 0]  # zx, zy, zz lists and the read position

        def take(n):
            zx, zy, zz, j = buf
            if j + n > len(zx):
                size = min(max(RW_CHUNK, n - (len(zx) - j)), total - drawn[0])
                z = self._rng_err.standard_normal((size, 3))
                drawn[0] += size
                zx, zy, zz = (
                    zx[j:] + z[:, 0].tolist(),
                    zy[j:] + z[:, 1].tolist(),
                    zz[j:] + z[:, 2].tolist(),
                )
                j = 0
            buf[:] = zx, zy, zz, j + n
            return zx[j: j + n], zy[j: j + n], zz[j: j + n]

        sig, vmax, amax = p['rw_sigma'], p['rw_max_velocity'], p['rw_max_acceleration']
        pmax, gain, variant = p['rw_p_max_m'], p['rw_chrono_gain'], p['rw_variant']
        px, py, pz = self._p.tolist()
        vx, vy, vz = self._v.tolist()
        # Scalar loops, one per variant; `a = namax if a < namax else (amax if a > amax else a)` is
        # min(max(a, -amax), amax) exactly (same comparisons, same result), without two calls per
        # axis.
        namax, nvmax, ngs = -amax, -vmax, -gain * sig
        sqrt = math.sqrt
        ox, oy, oz = [], [], []
        for k, m in enumerate(counts):
            done = 0
            # a gap longer than RW_CHUNK steps: in pieces
            while done < m:
                n = min(m - done, RW_CHUNK)
                done += n
                steps = zip([hmax] * (n - 1) + [last_h[k] if done == m else hmax], *take(n))
                if variant == 'chrono':
                    for h, zx, zy, zz in steps:
                        ax = ngs * px + sig * zx
                        ax = namax if ax < namax else (amax if ax > amax else ax)
                        ay = ngs * py + sig * zy
                        ay = namax if ay < namax else (amax if ay > amax else ay)
                        az = ngs * pz + sig * zz
                        az = namax if az < namax else (amax if az > amax else az)
                        vx += ax * h
                        vy += ay * h
                        vz += az * h
                        nv = sqrt(vx * vx + vy * vy + vz * vz)
                        if nv > vmax:
                            f = vmax / nv
                            vx *= f
                            vy *= f
                            vz *= f
                        px += vx * h
                        py += vy * h
                        pz += vz * h
                elif variant == 'paper':
                    for h, zx, zy, zz in steps:
                        ax = -px / pmax + sig * zx
                        ax = namax if ax < namax else (amax if ax > amax else ax)
                        ay = -py / pmax + sig * zy
                        ay = namax if ay < namax else (amax if ay > amax else ay)
                        az = -pz / pmax + sig * zz
                        az = namax if az < namax else (amax if az > amax else az)
                        px += vx * h + 0.5 * ax * h * h
                        py += vy * h + 0.5 * ay * h * h
                        pz += vz * h + 0.5 * az * h * h
                        vx += ax * h
                        vy += ay * h
                        vz += az * h
                        nv = sqrt(vx * vx + vy * vy + vz * vz)
                        if nv > vmax:
                            f = vmax / nv
                            vx *= f
                            vy *= f
                            vz *= f
                else:  # tr: TR-2022-02 eq. 3, one internal step = one unit of time
                    for _, zx, zy, zz in steps:
                        ax = -px / pmax + sig * zx
                        ax = namax if ax < namax else (amax if ax > amax else ax)
                        ay = -py / pmax + sig * zy
                        ay = namax if ay < namax else (amax if ay > amax else ay)
                        az = -pz / pmax + sig * zz
                        az = namax if az < namax else (amax if az > amax else az)
                        px += vx + ax
                        py += vy + ay
                        pz += vz + az
                        vx += ax
                        vx = nvmax if vx < nvmax else (vmax if vx > vmax else vx)
                        vy += ay
                        vy = nvmax if vy < nvmax else (vmax if vy > vmax else vy)
                        vz += az
                        vz = nvmax if vz < nvmax else (vmax if vz > vmax else vz)
            ox.append(px)
            oy.append(py)
            oz.append(pz)
        out = np.empty((len(t), 3))
        out[:, 0], out[:, 1], out[:, 2] = ox, oy, oz
        self._p[:] = (px, py, pz)
        self._v[:] = (vx, vy, vz)
        self._t_int = float(t[-1])
        return out

    def _gauss_markov(self, t, dt) -> np.ndarray:
        p = self.p
        sig = np.asarray(p['gm_sigma_m'])
        z = self._rng_err.standard_normal((len(t), 3))
        out = np.empty((len(t), 3))
        e = self._gm
        for k in range(len(t)):
            if e is None:
                e = sig * z[k]  # start in the stationary distribution
            else:
                phi = math.exp(-dt[k] / p['gm_tau_s'])
                e = phi * e + sig * math.sqrt(max(1.0 - phi * phi, 0.0)) * z[k]
            out[k] = e
        self._gm = e
        return out

    def _outages(self, t, dt) -> np.ndarray:
        p = self.p
        u = self._rng_out.random(len(t))
        out = np.zeros(len(t), dtype=bool)
        w = list(p['outage_windows'])
        windows = [] if w == [0.0] else list(zip(w[0::2], w[1::2]))
        for k in range(len(t)):
            if p['outage_mtbf_s'] > 0:
                if self._in_outage:
                    if u[k] < 1.0 - math.exp(-dt[k] / p['outage_mean_s']):
                        self._in_outage = False
                elif u[k] < 1.0 - math.exp(-dt[k] / p['outage_mtbf_s']):
                    self._in_outage = True
            rel = t[k] - self.t0
            out[k] = self._in_outage or any(a <= rel < b for a, b in windows)
        return out

    @staticmethod
    def _apply_loss(mask, mode, status, published):
        if mode == 'drop':
            published[mask] = False
        status[mask] = STATUS_NO_FIX


_SIMULATOR_ERRORS = {
    'gz_navsat': sim.GzNavSatError,
    'hector_gps': sim.HectorGpsError,
    'carla_gnss': sim.CarlaGnssError,
    'matlab_gps': sim.MatlabGpsError,
}


def make_gps_model(name: str, seed: int = 0, **params) -> GpsModel:
    """
    Build a streaming GPS model by name.

    A streaming GPS model by name (see module doc); unknown names or bad parameters raise
    ParameterError.
    """
    return GpsModel(name, seed, **params)


def rw_params_from_widths(
    width_m: float,
    width_d1: float | None = None,
    width_d2: float | None = None,
    std_d2: float | None = None,
) -> dict:
    """
    Convert TR-2022-02 §3.2 widths to ``tr``-variant random-walk parameters.

    TR-2022-02 §3.2 parameterisation → ``tr``-variant parameters (per-step units): p_max = width/2,
    max velocity = width of the 1st derivative / 2, max acceleration = width of the 2nd derivative
    / 2, σ = standard deviation of the 2nd derivative. Unset widths keep the defaults.
    """
    out = {'rw_variant': 'tr', 'rw_p_max_m': width_m / 2.0}
    if width_d1 is not None:
        out['rw_max_velocity'] = width_d1 / 2.0
    if width_d2 is not None:
        out['rw_max_acceleration'] = width_d2 / 2.0
    if std_d2 is not None:
        out['rw_sigma'] = std_d2
    return out
