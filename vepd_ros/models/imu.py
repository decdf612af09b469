# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
IMU noise models: Chrono/AirSim "Gaussian drift" (paper appendix IV-A) and an Allan-variance model.

Outputs follow REP-145/REP-103: body frame FLU, angular velocity in rad/s, ``linear_acceleration``
the specific force including gravity (+9.80665 m/s² on z at rest, level), orientation (x, y, z, w)
of the body in the ENU world frame, or element 0 of ``orientation_covariance`` = −1 when
orientation is not provided.

Models (``make_imu_model(name, seed, **params)``):

* ``none`` — truth.
* ``ch_drift`` — y = x + η + b_t, η ~ N(μ, diag σ²), b_t = b_{t−1} + N(μ_b, b0·√(dt/t_b)) per
  sample (paper appendix IV-A). ``drift_variant: chrono`` takes dt = 1/update_rate_hz as
  ``ChNoiseNormalDrift`` does (the step ignores the real dt); ``paper`` uses the real time between
  samples. Defaults: Chrono's documented example (σ 0.001, b0 1e-4, t_b 0.1 for both sensors, the
  appendix's b0 and t_b).
* ``ch_drift_paper`` — what the paper's experiments ran (dART demo): accelerometer σ (0.30, 0.30,
  0.01) m/s², drift 0.1, τ 0.1 (bias std 0.316·√t m/s²); **gyroscope noise-free** (its noise model
  was built but never attached), although the paper's text says both sensors drift.
* ``ch_drift_demo`` — Chrono's demo_SEN_GPSIMU: acc (0.001, 1e-4, 0.1), gyro (0.001, 1e-3, 0.1).
* ``allan`` — data-sheet terms per sensor: white noise density (ARW/VRW, σ = N/√dt per sample),
  bias instability B as a first-order Gauss–Markov bias whose Allan-deviation peak is 0.664·B
  (correlation time ``*_bias_tau_s``), rate random walk K (b += K√dt·n), optional turn-on bias.
* ``allan_n100`` — the Wheeltec N-100 *class* (consumer MEMS AHRS). No verified N-100 data sheet
  was available: the numbers are the published figures of a comparable MEMS AHRS (gyro 0.007
  °/s/√Hz, 10 °/h; accelerometer 120 µg/√Hz, 0.03 mg); replace them with ``vepd calibrate imu`` on
  a standstill N-100 log.
* ``airsim_mpu6000`` — AirSim's ImuSimple defaults (MPU-6000): ARW 0.30 °/√h, bias stability 4.6
  °/h over 500 s as a driftless walk K = B/√τ; VRW 0.24 mg/√Hz, 36 µg over 800 s.

Other simulators' IMUs, as they run them (laws in ``models/simulators.py``; read from their own
configuration by ``vepd sensors from-sdf|from-carla|from-matlab``):

* ``gz_imu`` — gz-sensors ImuSensor: one GaussianNoiseModel per axis (``angular_velocity.*``,
  ``linear_acceleration.*`` as x, y, z lists). Traps: the bias is drawn once with a random sign;
  the dynamic bias's stationary σ is σ_b·√(τ/2), not σ_b; dt = 0 at the first update;
  stddev² is published as the covariance.
* ``carla_imu`` — CARLA sensor.other.imu: accelerometer + N(0, σ²), gyroscope + bias + N(0, σ²)
  per axis at the sensor_tick. Traps: the σ is per sample (no density: it does not scale with the
  tick), no accelerometer bias, zero covariance.
* ``matlab_imu`` — MATLAB imuSensor, ``Accelerometer.*`` and ``Gyroscope.*`` as accelparams /
  gyroparams spell them, ``SampleRate``. Traps: NoiseType double-sided (the default) gives the
  white noise σ = N·√(fs/2) and the random walk K·√(2t), √2 off the data-sheet meanings; the
  default BiasInstabilityCoefficients are a first-order filter with pole ½ per sample (σ 1.155·B,
  correlation time 1.4 samples), not a 1/f bias; AxesMisalignment is a gain in percent (100 on the
  diagonal); MeasurementRange 0 stands for Inf; no orientation and no covariance.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
import math
from typing import Any
import zlib

import numpy as np
from scipy.signal import lfilter
from vepd_ros.frames import GRAVITY_MPS2
from vepd_ros.models import DEFAULT_IMU_MODEL, simulators as sim
from vepd_ros.params import Param, ParameterError, validate_params
from vepd_ros.params import vec3_param as _vec3

DEG = math.pi / 180.0


def _gm_adev_peak() -> float:
    """
    Return the peak Allan deviation of a unit-variance first-order Gauss–Markov process.

    Max over x = τ/T of the Allan deviation of a unit-variance first-order Gauss–Markov process:
    AVAR(x) = (2x − 3 + 4e^{−x} − e^{−2x}) / x².
    """
    x = np.linspace(0.05, 20, 40000)
    return float(np.sqrt(np.max((2 * x - 3 + 4 * np.exp(-x) - np.exp(-2 * x)) / x**2)))


GM_ADEV_PEAK = _gm_adev_peak()  # ≈ 0.6174 at τ ≈ 1.89 T
BIAS_INSTABILITY_FACTOR = 0.664  # IEEE 952: flat floor of the Allan deviation ≈ 0.664·B


def gm_adev(tau, sigma_ss, t_corr):
    x = np.asarray(tau, float) / t_corr
    return sigma_ss * np.sqrt((2 * x - 3 + 4 * np.exp(-x) - np.exp(-2 * x)) / x**2)


COMMON_PARAMS = [
    Param(
        'orientation_mode',
        'none',
        'orientation: none (covariance[0] = −1), truth, or noisy (truth + white '
        'roll/pitch/yaw errors)',
        choices=['none', 'truth', 'noisy'],
    ),
    Param(
        'orientation_sigma_rad',
        [0.01, 0.01, 0.03],
        'σ of the roll, pitch, yaw errors (rad) in noisy mode',
        **_vec3(),
    ),
]
DRIFT_PARAMS = [
    Param(
        'drift_variant',
        'chrono',
        'bias step dt: chrono = 1/update_rate_hz always; paper = real dt',
        choices=['chrono', 'paper'],
    ),
    Param(
        'update_rate_hz',
        100.0,
        'rate the Chrono noise model was built for (Hz)',
        low=0.0,
        low_open=True,
    ),
    Param(
        'gyro_sigma', [0.001, 0.001, 0.001], 'per-sample σ of gyro white noise (rad/s)', **_vec3()
    ),
    Param('gyro_mean', [0.0, 0.0, 0.0], 'μ of gyro white noise (rad/s)', **_vec3(False)),
    Param('gyro_drift', 1e-4, 'b0: gyro bias step scale (rad/s)', low=0.0),
    Param('gyro_tau_drift', 0.1, 't_b: gyro drift time scale (s)', low=0.0, low_open=True),
    Param('gyro_drift_mean', [0.0, 0.0, 0.0], 'μ_b of the gyro bias step (rad/s)', **_vec3(False)),
    Param(
        'acc_sigma',
        [0.001, 0.001, 0.001],
        'per-sample σ of accelerometer white noise (m/s²)',
        **_vec3(),
    ),
    Param('acc_mean', [0.0, 0.0, 0.0], 'μ of accelerometer white noise (m/s²)', **_vec3(False)),
    Param('acc_drift', 1e-4, 'b0: accelerometer bias step scale (m/s²)', low=0.0),
    Param('acc_tau_drift', 0.1, 't_b: accelerometer drift time scale (s)', low=0.0, low_open=True),
    Param(
        'acc_drift_mean',
        [0.0, 0.0, 0.0],
        'μ_b of the accelerometer bias step (m/s²)',
        **_vec3(False),
    ),
]
ALLAN_PARAMS = [
    Param(
        'rate_hz',
        100.0,
        'nominal sample rate (Hz): dt of the first sample and of the published covariance',
        low=0.0,
        low_open=True,
    ),
    Param('gyro_arw', 2.0e-3, 'gyro white noise density N (rad/s/√Hz = rad/√s)', low=0.0),
    Param('gyro_bias_instability', 5.0e-5, 'gyro bias instability B (rad/s)', low=0.0),
    Param(
        'gyro_bias_tau_s',
        100.0,
        'correlation time of the gyro bias-instability process (s)',
        low=0.0,
        low_open=True,
    ),
    Param('gyro_rrw', 0.0, 'gyro rate random walk K (rad/s²/√Hz = rad/s/√s)', low=0.0),
    Param(
        'gyro_turn_on_bias',
        0.0,
        'σ of a constant turn-on gyro bias drawn at start (rad/s)',
        low=0.0,
    ),
    Param('acc_vrw', 1.2e-3, 'accelerometer white noise density N (m/s²/√Hz)', low=0.0),
    Param('acc_bias_instability', 3.0e-4, 'accelerometer bias instability B (m/s²)', low=0.0),
    Param(
        'acc_bias_tau_s',
        100.0,
        'correlation time of the accelerometer bias-instability process (s)',
        low=0.0,
        low_open=True,
    ),
    Param('acc_rrw', 0.0, 'accelerometer rate random walk K (m/s³/√Hz)', low=0.0),
    Param('acc_turn_on_bias', 0.0, 'σ of a constant turn-on accelerometer bias (m/s²)', low=0.0),
]


def datasheet_to_si(
    arw_deg_sqrt_h=None,
    gyro_bias_deg_h=None,
    vrw_m_s_sqrt_h=None,
    vrw_ug_sqrt_hz=None,
    acc_bias_ug=None,
) -> dict:
    """Data-sheet units → the ``allan`` parameters (SI)."""
    out = {}
    if arw_deg_sqrt_h is not None:
        out['gyro_arw'] = arw_deg_sqrt_h * DEG / 60.0
    if gyro_bias_deg_h is not None:
        out['gyro_bias_instability'] = gyro_bias_deg_h * DEG / 3600.0
    if vrw_m_s_sqrt_h is not None:
        out['acc_vrw'] = vrw_m_s_sqrt_h / 60.0
    if vrw_ug_sqrt_hz is not None:
        out['acc_vrw'] = vrw_ug_sqrt_hz * 1e-6 * GRAVITY_MPS2
    if acc_bias_ug is not None:
        out['acc_bias_instability'] = acc_bias_ug * 1e-6 * GRAVITY_MPS2
    return out


_MODELS = {
    'none': ('none', {}),
    'ch_drift': ('drift', {}),
    DEFAULT_IMU_MODEL: (
        'drift',
        {
            'acc_sigma': [0.30, 0.30, 0.01],
            'acc_drift': 0.1,
            'acc_tau_drift': 0.1,
            'gyro_sigma': [0.0, 0.0, 0.0],
            'gyro_drift': 0.0,
        },
    ),
    'ch_drift_demo': (
        'drift',
        {
            'acc_sigma': [0.001] * 3,
            'acc_drift': 1e-4,
            'acc_tau_drift': 0.1,
            'gyro_sigma': [0.001] * 3,
            'gyro_drift': 1e-3,
            'gyro_tau_drift': 0.1,
        },
    ),
    'allan': ('allan', {}),
    'allan_n100': (
        'allan',
        {
            **datasheet_to_si(
                arw_deg_sqrt_h=0.007 * 60,
                gyro_bias_deg_h=10.0,
                vrw_ug_sqrt_hz=120.0,
                acc_bias_ug=30.0,
            ),
            'orientation_mode': 'noisy',
        },
    ),
    'airsim_mpu6000': (
        'allan',
        {
            **datasheet_to_si(arw_deg_sqrt_h=0.30, vrw_ug_sqrt_hz=240.0),
            'gyro_bias_instability': 0.0,
            'acc_bias_instability': 0.0,
            'gyro_rrw': 4.6 * DEG / 3600.0 / math.sqrt(500.0),
            'acc_rrw': 36e-6 * GRAVITY_MPS2 / math.sqrt(800.0),
        },
    ),
}
_MODELS.update({
    # gz-sensors ImuSensor: one GaussianNoiseModel per axis, orientation on (zero covariance)
    'gz_imu': ('gz', {'orientation_mode': 'truth'}),
    # CARLA sensor.other.imu: white accelerometer noise, gyroscope bias + white noise
    'carla_imu': ('carla', {'orientation_mode': 'truth'}),
    # MATLAB imuSensor (accel-gyro): no orientation output, no covariance
    'matlab_imu': ('matlab', {}),
})
IMU_MODELS = list(_MODELS)
_KIND_PARAMS = {
    'none': [],
    'drift': DRIFT_PARAMS,
    'allan': ALLAN_PARAMS,
    'gz': sim.GZ_IMU_PARAMS,
    'carla': sim.CARLA_IMU_PARAMS,
    'matlab': sim.MATLAB_IMU_PARAMS,
}


def imu_model_params(name: str) -> list[Param]:
    if name not in _MODELS:
        raise ParameterError('model', name, 'an IMU model: ' + ', '.join(IMU_MODELS))
    kind, ov = _MODELS[name]
    return [
        replace(p, default=ov[p.name]) if p.name in ov else p
        for p in COMMON_PARAMS + _KIND_PARAMS[kind]
    ]


IMU_MODEL_PARAMS = {name: imu_model_params(name) for name in IMU_MODELS}


@dataclass
class ImuSamples:
    t_s: np.ndarray
    angular_velocity: np.ndarray  # (n,3) rad/s FLU
    linear_acceleration: np.ndarray  # (n,3) m/s² specific force incl. gravity, FLU
    orientation: np.ndarray  # (n,4) x y z w
    orientation_covariance: np.ndarray  # (n,3,3); [0,0] = −1 when not provided
    angular_velocity_covariance: np.ndarray  # (n,3,3)
    linear_acceleration_covariance: np.ndarray  # (n,3,3)
    gyro_bias: np.ndarray  # (n,3) the slowly varying error (for tests/analysis)
    acc_bias: np.ndarray  # (n,3)

    def __len__(self):
        return len(self.t_s)

    @staticmethod
    def concat(parts):
        return ImuSamples(
            *[np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(ImuSamples)]
        )


def _rng(seed, name):
    return np.random.default_rng(
        np.random.SeedSequence([int(seed) & 0xFFFFFFFF, zlib.crc32(name.encode())])
    )


def _quat_mul(a, b):
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


class ImuModel:
    """Stateful streaming IMU model; build with ``make_imu_model``."""

    def __init__(self, name: str, seed: int = 0, **params):
        self.name = name
        self.kind = _MODELS[name][0] if name in _MODELS else None
        self.p = validate_params(imu_model_params(name), params)
        self.seed = int(seed)
        self.t_last: float | None = None
        self._r = {
            k: _rng(seed, f'imu/{k}') for k in ('gw', 'gb', 'gk', 'aw', 'ab', 'ak', 'or', 'on')
        }
        self._bg = np.zeros(3)  # drift / GM bias state
        self._ba = np.zeros(3)
        self._kg = np.zeros(3)  # rate random walk state
        self._ka = np.zeros(3)
        self._gm_started = False
        self._turn_on: tuple[np.ndarray, np.ndarray] | None = None
        self._sim: Any = None  # another simulator's noise (models/simulators.py)
        if self.kind == 'gz':
            self._sim = sim.GzImuNoise(self._r['gw'], self.p)
        elif self.kind == 'carla':
            self._sim = sim.CarlaImuNoise(self._r['gw'], self.p)
        elif self.kind == 'matlab':
            self._sim = sim.MatlabImuNoise(self._r['gw'], self.p)

    def sample(self, t_s, truth) -> ImuSamples:
        """IMU output at ``t_s`` for ``truth`` (a ``Trajectory`` sampled at ``t_s``)."""
        return self.sample_arrays(
            t_s, truth.angular_velocity_body, truth.specific_force_body, truth.quaternion
        )

    def sample_arrays(self, t_s, angular_velocity, specific_force, quaternion) -> ImuSamples:
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        w = np.asarray(angular_velocity, float).reshape(-1, 3)
        f = np.asarray(specific_force, float).reshape(-1, 3)
        q = np.asarray(quaternion, float).reshape(-1, 4)
        n = len(t)
        if not (len(w) == len(f) == len(q) == n):
            raise ValueError('truth arrays must have one row per sample time')
        if not (
            np.all(np.isfinite(t))
            and np.all(np.isfinite(w))
            and np.all(np.isfinite(f))
            and np.all(np.isfinite(q))
        ):
            raise ValueError('t_s/truth: non-finite values')
        if n and (np.any(np.diff(t) <= 0) or (self.t_last is not None and t[0] <= self.t_last)):
            raise ValueError('t_s: sample times must strictly increase across calls')
        p = self.p
        zero3 = np.zeros((n, 3, 3))
        bg = np.zeros((n, 3))
        ba = np.zeros((n, 3))
        wn, fn = w.copy(), f.copy()
        cov_w, cov_f = zero3.copy(), zero3.copy()
        idx = np.arange(3)
        if n == 0:
            pass
        elif self.kind == 'drift':
            if p['drift_variant'] == 'chrono':
                dt = np.full(n, 1.0 / p['update_rate_hz'])
            else:
                prev = self.t_last if self.t_last is not None else t[0] - 1.0 / p['update_rate_hz']
                dt = np.diff(np.concatenate([[prev], t]))
            for key, x, out, state, pre in (
                ('g', wn, bg, '_bg', 'gyro'),
                ('a', fn, ba, '_ba', 'acc'),
            ):
                zw = self._r[key + 'w'].standard_normal((n, 3))
                zb = self._r[key + 'b'].standard_normal((n, 3))
                sig = np.asarray(p[pre + '_sigma'])
                step_sigma = p[pre + '_drift'] * np.sqrt(dt / p[pre + '_tau_drift'])
                steps = np.asarray(p[pre + '_drift_mean']) + step_sigma[:, None] * zb
                b = np.cumsum(np.vstack([getattr(self, state)[None, :], steps]), axis=0)[
                    1:
                ]  # b_k = b_{k-1} + e_k
                setattr(self, state, b[-1].copy())
                out[:] = b
                x += np.asarray(p[pre + '_mean']) + sig * zw + b
            cov_w[:, idx, idx] = np.asarray(p['gyro_sigma']) ** 2
            cov_f[:, idx, idx] = np.asarray(p['acc_sigma']) ** 2
        elif self.kind == 'allan':
            prev = self.t_last if self.t_last is not None else t[0] - 1.0 / p['rate_hz']
            dt = np.diff(np.concatenate([[prev], t]))
            if self._turn_on is None:
                z = self._r['on'].standard_normal(6)
                self._turn_on = (p['gyro_turn_on_bias'] * z[:3], p['acc_turn_on_bias'] * z[3:])
            for key, x, out, gm_state, rw_state, pre, dens, on in (
                ('g', wn, bg, '_bg', '_kg', 'gyro', 'gyro_arw', self._turn_on[0]),
                ('a', fn, ba, '_ba', '_ka', 'acc', 'acc_vrw', self._turn_on[1]),
            ):
                zw = self._r[key + 'w'].standard_normal((n, 3))
                zb = self._r[key + 'b'].standard_normal((n, 3))
                zk = self._r[key + 'k'].standard_normal((n, 3))
                sig_ss = BIAS_INSTABILITY_FACTOR * p[pre + '_bias_instability'] / GM_ADEV_PEAK
                phi = np.exp(-dt / p[pre + '_bias_tau_s'])
                innov = sig_ss * np.sqrt(1.0 - phi**2)
                gm = np.empty((n, 3))
                b = getattr(self, gm_state)
                start = 0
                if not self._gm_started:
                    b = gm[0] = sig_ss * zb[0]  # start in the stationary distribution
                    start = 1
                ph, x_in = phi[start:], innov[start:, None] * zb[start:]
                if len(ph) and np.all(ph == ph[0]):
                    # b_k = φ b_{k-1} + x_k: the same arithmetic as the loop below, in C
                    gm[start:] = lfilter(
                        [1.0], [1.0, -ph[0]], x_in, axis=0, zi=(ph[0] * b)[None, :]
                    )[0]
                else:
                    for k in range(len(ph)):
                        b = ph[k] * b + x_in[k]
                        gm[start + k] = b
                if n > start:
                    b = gm[-1]
                setattr(self, gm_state, b.copy())
                rw = np.cumsum(
                    np.vstack(
                        [
                            getattr(self, rw_state)[None, :],
                            p[pre + '_rrw'] * np.sqrt(dt)[:, None] * zk,
                        ]
                    ),
                    axis=0,
                )[1:]
                setattr(self, rw_state, rw[-1].copy())
                out[:] = gm + rw + on
                x += p[dens] / np.sqrt(dt)[:, None] * zw + out
            self._gm_started = True
            cov_w[:, idx, idx] = p['gyro_arw'] ** 2 * p['rate_hz']
            cov_f[:, idx, idx] = p['acc_vrw'] ** 2 * p['rate_hz']
        elif self._sim is not None:
            wn, fn, cov_w, cov_f = self._sim.apply(t, self.t_last, w, f)
        # orientation
        mode = p['orientation_mode']
        cov_o = zero3.copy()
        if mode == 'none':
            qo = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
            cov_o[:, 0, 0] = -1.0
        else:
            qo = q / np.linalg.norm(q, axis=-1, keepdims=True) if n else q.copy()
            if mode == 'noisy':
                s = np.asarray(p['orientation_sigma_rad'])
                e = s * self._r['or'].standard_normal((n, 3))
                ang = np.linalg.norm(e, axis=-1, keepdims=True)
                half = 0.5 * ang
                with np.errstate(invalid='ignore', divide='ignore'):
                    axis = np.where(ang > 0, e / np.where(ang > 0, ang, 1.0), 0.0)
                dq = np.concatenate([axis * np.sin(half), np.cos(half)], axis=-1)
                qo = _quat_mul(qo, dq)
                cov_o[:, idx, idx] = s**2
        if n:
            self.t_last = float(t[-1])
        return ImuSamples(t.copy(), wn, fn, qo, cov_o, cov_w, cov_f, bg, ba)


def make_imu_model(name: str, seed: int = 0, **params) -> ImuModel:
    """
    Build a streaming IMU model by name.

    A streaming IMU model by name (``IMU_MODELS``); unknown names or bad parameters raise
    ParameterError.
    """
    if name not in _MODELS:
        raise ParameterError('model', name, 'an IMU model: ' + ', '.join(IMU_MODELS))
    return ImuModel(name, seed, **params)


def static_truth(n: int):
    """(angular velocity, specific force, quaternion) of a level vehicle at rest, n samples."""
    return (
        np.zeros((n, 3)),
        np.tile([0.0, 0.0, GRAVITY_MPS2], (n, 1)),
        np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)),
    )
