# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Noise laws of the simulators labs already use, as each simulator runs them.

Written from the simulators' own sources (read, not copied), with their parameter names:

* Gazebo, gz-sensors ``GaussianNoiseModel`` (src/GaussianNoiseModel.cc): y = x + b + w,
  w ~ N(mean, stddev²) (w = mean when stddev is 0). The bias is drawn once at load,
  b0 ~ N(bias_mean, bias_stddev²) (b0 = bias_mean when bias_stddev is 0), and its sign is flipped
  with probability ½. With dynamic_bias_stddev σ_b > 0, dynamic_bias_correlation_time τ > 0 and a
  step dt > 0 the bias moves first: b ← φ·b + N(0, σ_d²), φ = exp(−dt/τ),
  σ_d² = −σ_b²·τ/2·expm1(−2dt/τ), so its stationary standard deviation is σ_b·√(τ/2), not σ_b
  (gz-sensors issue #616 argues the τ/2 is wrong; this is what the code does). With
  abs(precision) > 1e-6 the output is rounded to a multiple of it (std::round: halves away from 0).
  ``NavSatSensor`` applies the *horizontal* position noise to latitude and then longitude **in
  degrees** (one noise object: one bias for both; gz-sensors #325, robot_localization #931) and the
  vertical noise to the altitude in metres, with dt = 0, so the dynamic bias never moves there; the
  ros_gz bridge publishes NavSatFix with covariance type UNKNOWN. ``ImuSensor`` applies one noise
  object per axis of linear acceleration and angular velocity with dt = time since the previous
  update (0 at the first), and publishes stddev² on the covariance diagonals.
* hector_gazebo_plugins ``gazebo_ros_gps`` (sensor_model.h): per axis, every update of dt,
  d ← d − dt·(d·f + N(0, (√(2f)·drift)²)), error = offset + d + N(0, gaussianNoise²) — the random
  term scales with dt, not √dt. The velocity error (prefix ``velocity``) is drawn first and its
  error·dt is added to the position drift. The errors are metres on the world axes x, y, z (ENU
  here). The plugin then turns metres into degrees on a sphere of radius 6 378 137 m with
  x as north and its longitude divided by cos(latitude) with the latitude in degrees passed to a
  cosine of radians: a frame and conversion matter outside the noise law, not modelled here
  (a receiver on such a world sees its east error scaled by cos(lat)/cos(lat° read as rad)).
* CARLA ``GnssSensor``: lat = lat_true + noise_lat_bias + N(0, noise_lat_stddev²) **in degrees**
  (and lon alike), alt = alt_true + noise_alt_bias + N(0, noise_alt_stddev²) in metres. ``IMU``:
  accelerometer + N(0, noise_accel_stddev²) per axis, gyroscope + noise_gyro_bias +
  N(0, noise_gyro_stddev²) per axis.
* MATLAB ``gpsSensor`` (fusion.internal.GPSSensorBase): position error per axis
  e_k = k·e_{k−1} + σ·√(2(1−k))·z_k with k = DecayFactor, σ = HorizontalPositionAccuracy on both
  horizontal axes and VerticalPositionAccuracy on the vertical (filter([1], [1 −k]) of scaled
  normals, state from zero): k = 0 is white noise of variance 2σ², 0 < k < 1 a first-order process
  of stationary variance 2σ²/(1+k), and k = 1 gives no position error at all (the scale is 0).
* MATLAB ``imuSensor`` (fusion.internal.IMUSensorSimulator, IMUSensorParameters; Navigation and
  Sensor Fusion toolboxes), for its ``Accelerometer`` (accelparams) and ``Gyroscope``
  (gyroparams) alike, per sample with fs = SampleRate and z ~ N(0, 1) per axis and term:
  y = sat(quant((M/100)·x + ConstantBias + σ_N·z_N + BI_k + RW_k)), M = AxesMisalignment (percent;
  default 100·I; a scalar or 3-vector v is expanded to 100 on the diagonal and v(j) down column
  j). White noise σ_N = NoiseDensity·√bw with the bandwidth bw = fs/2 for NoiseType
  ``double-sided`` (the default) and fs for ``single-sided``: the default gives 1/√2 of the usual
  N·√fs. Bias instability BI = filter(Numerator, Denominator, BiasInstability·z_B) with MATLAB's
  filter state carried over (BiasInstabilityCoefficients, default fractalcoef() = 1 / [1, −0.5]:
  a first-order process with φ = ½ per *sample*, stationary σ = B/√(1 − ¼) = 1.155·B, not a 1/f
  floor; the scale √(2/(fs·τ)) is 1 because τ is fixed at 2/fs). Random walk
  RW_k = RW_{k−1} + (RandomWalk/√bw)·z_R: σ after t seconds is K·√(fs·t/bw), K·√(2t) by default.
  Saturation: abs(y) > MeasurementRange → sign(y)·MeasurementRange; quantisation:
  Resolution·round(y/Resolution), halves away from zero; saturation first. The temperature terms
  (TemperatureBias, TemperatureScaleFactor, zero at the standard 25 °C) and the gyroscope's
  AccelerationBias are not modelled. MATLAB's NED accelerometer reads R·(g − a), +9.81 on the
  down axis at rest; here the law is applied to the REP-145 specific force (FLU, +9.81 up).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import lfilter
from vepd_ros.params import Param
from vepd_ros.params import vec3_param as _vec3

GZ_NOISE_ELEMENTS = (
    'mean',
    'stddev',
    'bias_mean',
    'bias_stddev',
    'dynamic_bias_stddev',
    'dynamic_bias_correlation_time',
    'precision',
)
"""The children of an SDF ``<noise type="gaussian">`` element, as sdformat spells them."""

GZ_PRECISION_EPS = 1e-6
"""gz::math::equal(precision, 0, 1e-6): a smaller precision means no quantisation."""


def round_half_away(v: np.ndarray) -> np.ndarray:
    """Round to the nearest integer, halves away from zero, as C++'s std::round."""
    return np.copysign(np.floor(np.abs(v) + 0.5), v)


def gz_noise_params(prefix: str, unit: str, vector: bool = False) -> list[Param]:
    """
    Declare the seven Gaussian-noise elements of one SDF noise block as parameters.

    Names are ``<prefix>.<element>`` (ROS 2 nested-parameter spelling of the SDF path); with
    ``vector`` each is an (x, y, z) list, one noise block per axis.
    """
    if vector:
        def spec(name, text, nonneg):
            return Param(f'{prefix}.{name}', [0.0, 0.0, 0.0], text + ' (x, y, z)', **_vec3(nonneg))
    else:
        def spec(name, text, nonneg):
            return Param(f'{prefix}.{name}', 0.0, text, low=0.0 if nonneg else None)
    return [
        spec('mean', f'mean of the white noise ({unit})', False),
        spec('stddev', f'σ of the white noise ({unit})', True),
        spec('bias_mean', f'mean of the bias drawn once, sign then flipped ({unit})', False),
        spec('bias_stddev', f'σ of the bias drawn once at start ({unit})', True),
        spec('dynamic_bias_stddev', f'σ_b of the Gauss–Markov bias ({unit}; stationary '
             'σ_b·√(τ/2))', True),
        spec('dynamic_bias_correlation_time', 'τ of the Gauss–Markov bias (s)', True),
        spec('precision', f'output rounded to a multiple of this; 0 = none ({unit})', True),
    ]


class GzNoise:
    """
    One channel of gz-sensors' GaussianNoiseModel (module docstring for the law).

    The bias is drawn at construction (a normal, then a uniform for its sign); the white noise and
    the dynamic bias then draw from two streams of their own, one normal per sample (per sample
    with dt > 0 for the bias), so samples taken one at a time equal samples taken in a batch.
    """

    def __init__(self, rng: np.random.Generator, mean=0.0, stddev=0.0, bias_mean=0.0,
                 bias_stddev=0.0, dynamic_bias_stddev=0.0, dynamic_bias_correlation_time=0.0,
                 precision=0.0):
        self.mean, self.stddev = float(mean), float(stddev)
        self.sigma_b, self.tau_s = float(dynamic_bias_stddev), float(dynamic_bias_correlation_time)
        self.precision = float(precision)
        bias = rng.normal(bias_mean, bias_stddev) if bias_stddev > 0 else float(bias_mean)
        self.bias = -bias if rng.uniform() < 0.5 else bias
        self.white_rng, self.bias_rng = rng.spawn(2)

    @property
    def dynamic(self) -> bool:
        """Tell whether the bias moves (σ_b > 0 and τ > 0)."""
        return self.sigma_b > 0 and self.tau_s > 0

    def apply(self, x, dt) -> np.ndarray:
        """
        Return x + b_k + w_k for samples x (n,) taken dt (n,) seconds after their predecessors.

        b_k is the bias after the step of sample k (unchanged where dt is 0 or the dynamic bias is
        off); the output is quantised when ``precision`` is set.
        """
        x = np.asarray(x, dtype=float)
        n = len(x)
        dt = np.broadcast_to(np.asarray(dt, dtype=float), (n,))
        w = (self.mean + self.stddev * self.white_rng.standard_normal(n)) if self.stddev > 0 \
            else np.full(n, self.mean)
        bias = np.full(n, self.bias)
        if self.dynamic and n:
            step = dt > 0
            z = np.zeros(n)
            z[step] = self.bias_rng.standard_normal(int(step.sum()))
            ratio = np.where(step, dt, 0.0) / self.tau_s
            phi = np.exp(-ratio)
            sigma_d = np.sqrt(-self.sigma_b**2 * self.tau_s / 2.0 * np.expm1(-2.0 * ratio))
            drive = sigma_d * z
            if np.all(phi == phi[0]):
                bias = lfilter([1.0], [1.0, -phi[0]], drive, zi=[phi[0] * self.bias])[0]
            else:
                b = self.bias
                for k in range(n):
                    b = phi[k] * b + drive[k]
                    bias[k] = b
            self.bias = float(bias[-1])
        out = x + bias + w
        if abs(self.precision) > GZ_PRECISION_EPS:
            out = round_half_away(out / self.precision) * self.precision
        return out


def gz_noise(rng: np.random.Generator, p: dict, prefix: str, axis: int | None = None) -> GzNoise:
    """Build the GzNoise of one SDF noise block from parameters ``p`` (one axis of a vector)."""
    values = {e: p[f'{prefix}.{e}'] for e in GZ_NOISE_ELEMENTS}
    if axis is not None:
        values = {e: v[axis] for e, v in values.items()}
    return GzNoise(rng, **values)


GZ_NAVSAT_PARAMS = gz_noise_params('position_sensing.horizontal', 'degrees of lat/lon') \
    + gz_noise_params('position_sensing.vertical', 'm')
"""Gazebo NavSat position noise (``<navsat><position_sensing>``; velocity is not in NavSatFix)."""


class GzNavSatError:
    """Gazebo's NavSat position noise as an ENU error in metres (applied in degrees, as Gazebo)."""

    def __init__(self, rng: np.random.Generator, p: dict):
        self.horizontal = gz_noise(rng, p, 'position_sensing.horizontal')
        self.vertical = gz_noise(rng, p, 'position_sensing.vertical')

    def error(self, t, truth_enu, datum, conversion='wgs84') -> np.ndarray:
        """Return the (n, 3) ENU errors of noisy latitude/longitude (degrees) and altitude (m)."""
        from vepd_ros.models.geodesy import enu_to_geodetic, geodetic_to_enu

        lat, lon, alt = enu_to_geodetic(truth_enu, datum, conversion)
        zero = np.zeros(len(lat))
        # one noise object, applied to latitude then longitude at every update (dt = 0)
        both = self.horizontal.apply(np.column_stack([lat, lon]).ravel(), 0.0).reshape(-1, 2)
        alt_n = self.vertical.apply(alt, zero)
        return geodetic_to_enu(both[:, 0], both[:, 1], alt_n, datum, conversion) - truth_enu


GZ_IMU_PARAMS = gz_noise_params('angular_velocity', 'rad/s', vector=True) \
    + gz_noise_params('linear_acceleration', 'm/s²', vector=True)
"""Gazebo IMU noise (``<imu><angular_velocity><x><noise>`` ..., one block per axis)."""


class GzImuNoise:
    """gz-sensors ImuSensor noise: one GzNoise per axis, dt since the previous update (float)."""

    def __init__(self, rng: np.random.Generator, p: dict):
        self.gyro = [gz_noise(rng, p, 'angular_velocity', a) for a in range(3)]
        self.acc = [gz_noise(rng, p, 'linear_acceleration', a) for a in range(3)]
        diag = np.diag
        self.cov_w = diag([float(np.float32(c.stddev**2)) for c in self.gyro])
        self.cov_f = diag([float(np.float32(c.stddev**2)) for c in self.acc])

    def apply(self, t, t_last, w, f):
        """Return noisy (angular velocity, specific force) and their covariances (n,3,3)."""
        t = np.asarray(t, dtype=float)
        # ImuSensor: dt = (now − previous update) as a float duration; 0 at the first update
        prev = np.concatenate([[t[0] if t_last is None else t_last], t[:-1]])
        dt = (t - prev).astype(np.float32).astype(float)
        wn, fn = np.empty_like(w), np.empty_like(f)
        for a in range(3):
            fn[:, a] = self.acc[a].apply(f[:, a], dt)
        for a in range(3):
            wn[:, a] = self.gyro[a].apply(w[:, a], dt)
        n = len(t)
        return wn, fn, np.broadcast_to(self.cov_w, (n, 3, 3)).copy(), \
            np.broadcast_to(self.cov_f, (n, 3, 3)).copy()


CARLA_IMU_PARAMS = [
    Param(f'noise_{name}_{axis}', 0.0, text, low=low)
    for name, text, low in (
        ('accel_stddev', 'σ of the accelerometer noise (m/s²)', 0.0),
        ('gyro_stddev', 'σ of the gyroscope noise (rad/s)', 0.0),
        ('gyro_bias', 'constant gyroscope bias (rad/s)', None),
    )
    for axis in 'xyz'
]
"""CARLA sensor.other.imu noise attributes."""


class CarlaImuNoise:
    """CARLA IMU noise: accelerometer + N(0, σ²), gyroscope + bias + N(0, σ²), per axis."""

    def __init__(self, rng: np.random.Generator, p: dict):
        self.rng = rng
        self.acc_sigma = np.array([p[f'noise_accel_stddev_{a}'] for a in 'xyz'])
        self.gyro_sigma = np.array([p[f'noise_gyro_stddev_{a}'] for a in 'xyz'])
        self.gyro_bias = np.array([p[f'noise_gyro_bias_{a}'] for a in 'xyz'])

    def apply(self, t, t_last, w, f):
        """Return noisy (angular velocity, specific force) and zero covariances (n,3,3)."""
        n = len(t)
        z = self.rng.standard_normal((n, 6))
        fn = f + self.acc_sigma * z[:, :3]
        wn = w + self.gyro_bias + self.gyro_sigma * z[:, 3:]
        return wn, fn, np.zeros((n, 3, 3)), np.zeros((n, 3, 3))


HECTOR_PARAMS = [
    Param('offset', [0.0, 0.0, 0.0], 'constant position error (m; x, y, z)', **_vec3(False)),
    Param('drift', [0.0, 0.0, 0.0], 'position drift scale (m; x, y, z)', **_vec3()),
    Param('driftFrequency', [1 / 3600] * 3, 'position drift frequency f (Hz; x, y, z)', **_vec3()),
    Param('gaussianNoise', [0.0, 0.0, 0.0], 'σ of the white position error (m; x, y, z)',
          **_vec3()),
    Param('velocityOffset', [0.0, 0.0, 0.0], 'constant velocity error (m/s)', **_vec3(False)),
    Param('velocityDrift', [0.0, 0.0, 0.0], 'velocity drift scale (m/s)', **_vec3()),
    Param('velocityDriftFrequency', [1 / 3600] * 3, 'velocity drift frequency (Hz)', **_vec3()),
    Param('velocityGaussianNoise', [0.0, 0.0, 0.0], 'σ of the white velocity error (m/s)',
          **_vec3()),
]
"""hector_gazebo_plugins GPS parameters (SDF element names; vectors x, y, z)."""


class HectorGpsError:
    """hector_gazebo_plugins' GPS position error (module docstring for the law)."""

    def __init__(self, rng: np.random.Generator, p: dict):
        self.rng, self.p = rng, p
        self.drift = np.zeros(3)
        self.vel_drift = np.zeros(3)

    @staticmethod
    def _step(rng, d, drift, freq, offset, sigma, dt):
        d = d - dt * (d * freq + rng.standard_normal(3) * np.sqrt(2 * freq) * drift)
        return d, offset + d + rng.standard_normal(3) * sigma

    def error(self, dt) -> np.ndarray:
        """Return the ENU errors (n,3) of one plugin update per step dt (n,) in seconds."""
        p = self.p
        out = np.empty((len(dt), 3))
        vel = ('velocityDrift', 'velocityDriftFrequency', 'velocityOffset',
               'velocityGaussianNoise')
        vd, vf, vo, vs = (np.asarray(p[k]) for k in vel)
        pd, pf, po, ps = (np.asarray(p[k]) for k in ('drift', 'driftFrequency', 'offset',
                                                     'gaussianNoise'))
        for k, step in enumerate(np.asarray(dt, dtype=float)):
            self.vel_drift, vel_err = self._step(self.rng, self.vel_drift, vd, vf, vo, vs, step)
            self.drift = self.drift + vel_err * step
            self.drift, out[k] = self._step(self.rng, self.drift, pd, pf, po, ps, step)
        return out


CARLA_GNSS_PARAMS = [
    Param(f'noise_{axis}_{kind}', 0.0,
          f'{"bias" if kind == "bias" else "σ"} of the {name} noise ({unit})',
          low=None if kind == 'bias' else 0.0)
    for axis, name, unit in (('lat', 'latitude', 'degrees'), ('lon', 'longitude', 'degrees'),
                             ('alt', 'altitude', 'm'))
    for kind in ('bias', 'stddev')
]
"""CARLA sensor.other.gnss noise attributes (latitude/longitude in degrees, as CARLA does)."""


class CarlaGnssError:
    """CARLA's GNSS noise: bias + white noise on latitude/longitude in degrees, altitude in m."""

    def __init__(self, rng: np.random.Generator, p: dict):
        self.rng, self.p = rng, p

    def error(self, t, truth_enu, datum, conversion='wgs84') -> np.ndarray:
        """Return the (n, 3) ENU errors of CARLA's noisy latitude, longitude and altitude."""
        from vepd_ros.models.geodesy import enu_to_geodetic, geodetic_to_enu

        p = self.p
        lat, lon, alt = enu_to_geodetic(truth_enu, datum, conversion)
        z = self.rng.standard_normal((len(lat), 3))
        noisy = [v + p[f'noise_{a}_bias'] + p[f'noise_{a}_stddev'] * z[:, i]
                 for i, (v, a) in enumerate(((lat, 'lat'), (lon, 'lon'), (alt, 'alt')))]
        return geodetic_to_enu(noisy[0], noisy[1], noisy[2], datum, conversion) - truth_enu


MATLAB_GPS_PARAMS = [
    Param('HorizontalPositionAccuracy', 1.6, 'σ of the horizontal position noise (m)', low=0.0),
    Param('VerticalPositionAccuracy', 3.0, 'σ of the vertical position noise (m)', low=0.0),
    Param('DecayFactor', 0.999, 'k: 0 white noise, 1 random walk (see the scale at 1)',
          low=0.0, high=1.0),
]
"""MATLAB gpsSensor position-noise properties (defaults as MATLAB's)."""


class MatlabGpsError:
    """MATLAB gpsSensor position error: e_k = k·e_{k−1} + σ·√(2(1−k))·z_k per axis (ENU)."""

    def __init__(self, rng: np.random.Generator, p: dict):
        self.rng, self.p = rng, p
        self.state = np.zeros(3)

    def error(self, n: int) -> np.ndarray:
        """Return the next position errors (n,3), one filter step per sample."""
        p = self.p
        k = p['DecayFactor']
        h, v = p['HorizontalPositionAccuracy'], p['VerticalPositionAccuracy']
        scale = np.array([h, h, v]) * math.sqrt(2.0 * (1.0 - k))
        drive = self.rng.standard_normal((n, 3)) * scale
        out = lfilter([1.0], [1.0, -k], drive, axis=0, zi=(k * self.state)[None, :])[0]
        if n:
            self.state = out[-1].copy()
        return out


MATLAB_IMU_SENSORS = (('Accelerometer', 'm/s²'), ('Gyroscope', 'rad/s'))
"""The imuSensor sub-objects modelled (accelparams, gyroparams) and their units."""

MATLAB_NOISE_TYPES = ('double-sided', 'single-sided')
"""IMUSensorParameters.NoiseType: the bandwidth is SampleRate/2 or SampleRate."""

MATLAB_MAX_FILTER_TAPS = 10_000
"""Longest BiasInstabilityCoefficients vector accepted (fractalcoef(2000) has 2001 taps)."""


def matlab_axes_misalignment(value) -> list[float]:
    """
    Return MATLAB's AxesMisalignment (percent) as its 3-by-3 matrix, row-major (9 floats).

    A scalar or a 3-vector v is expanded as IMUSensorParameters does: 100 on the diagonal and
    v(j) in every off-diagonal element of column j, so a skew of axis j leaks its true value into
    the two other readings; a 3-by-3 matrix (nested lists or 9 numbers) is taken as it is.
    """
    v = np.asarray(value, dtype=float)
    if v.size in (1, 3) and v.ndim <= 1:
        m = 100.0 * np.eye(3) + (1.0 - np.eye(3)) * np.broadcast_to(v.ravel(), (3,))[None, :]
    elif v.size == 9 and v.ndim <= 2:
        m = v.reshape(3, 3)
    else:
        raise ValueError('AxesMisalignment: expected a scalar, 3 or 3-by-3 numbers, '
                         f'got {value!r}')
    return [float(x) for x in m.ravel()]


def _finite_list(max_len: int, min_len: int = 1, first_nonzero: bool = False) -> dict:
    """Return ``Param`` keywords checking a list of min_len to max_len finite numbers."""
    def check(v) -> bool:
        return min_len <= len(v) <= max_len and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in v) and (not first_nonzero or v[0] != 0)

    count = f'{max_len}' if min_len == max_len else f'{min_len} to {max_len}'
    msg = f'{count} finite numbers' + (', the first non-zero' if first_nonzero else '')
    return {'check': check, 'check_msg': msg}


def matlab_imu_params(prefix: str, unit: str) -> list[Param]:
    """
    Declare one accelparams/gyroparams object's noise properties as ``<prefix>.<Property>``.

    Defaults are MATLAB's (an ideal sensor; fractalcoef() for the bias-instability filter), except
    MeasurementRange, whose Inf is spelled 0 here: parameters must be finite numbers.
    """
    return [
        Param(f'{prefix}.MeasurementRange', 0.0, f'saturation |y| <= this ({unit}); 0 = Inf, none',
              low=0.0),
        Param(f'{prefix}.Resolution', 0.0, f'quantisation step ({unit}/LSB); 0 = none', low=0.0),
        Param(f'{prefix}.ConstantBias', [0.0, 0.0, 0.0], f'constant bias ({unit}; x, y, z)',
              **_vec3(False)),
        Param(f'{prefix}.AxesMisalignment', [100.0, 0.0, 0.0, 0.0, 100.0, 0.0, 0.0, 0.0, 100.0],
              'the 3-by-3 gain (percent, row-major): y = (M/100)·x', **_finite_list(9, 9)),
        Param(f'{prefix}.NoiseDensity', [0.0, 0.0, 0.0],
              f'white noise density N ({unit}/√Hz); σ = N·√bandwidth', **_vec3()),
        Param(f'{prefix}.BiasInstability', [0.0, 0.0, 0.0],
              f'bias instability B ({unit}): B·z filtered by BiasInstabilityCoefficients',
              **_vec3()),
        Param(f'{prefix}.RandomWalk', [0.0, 0.0, 0.0],
              f'random walk K ({unit}·√Hz): steps K/√bandwidth·z, summed', **_vec3()),
        Param(f'{prefix}.NoiseType', 'double-sided',
              'bandwidth SampleRate/2 (double-sided) or SampleRate (single-sided)',
              choices=list(MATLAB_NOISE_TYPES)),
        Param(f'{prefix}.BiasInstabilityCoefficients.Numerator', [1.0],
              'bias-instability filter numerator (fractalcoef(): 1)',
              **_finite_list(MATLAB_MAX_FILTER_TAPS)),
        Param(f'{prefix}.BiasInstabilityCoefficients.Denominator', [1.0, -0.5],
              'bias-instability filter denominator (fractalcoef(): [1, −0.5])',
              **_finite_list(MATLAB_MAX_FILTER_TAPS, first_nonzero=True)),
    ]


MATLAB_IMU_PARAMS = [
    Param('SampleRate', 100.0, 'imuSensor SampleRate (Hz): sets the per-sample σ of every term',
          low=0.0, low_open=True),
] + [p for prefix, unit in MATLAB_IMU_SENSORS for p in matlab_imu_params(prefix, unit)]
"""MATLAB imuSensor properties (SampleRate, Accelerometer.*, Gyroscope.*) as MATLAB spells them."""


class MatlabImuAxes:
    """
    One accelparams/gyroparams object of MATLAB's imuSensor (module docstring for the law).

    Draws 9 normals per sample from its own stream (bias instability, white noise, random walk,
    x/y/z each, in MATLAB's column order) and carries the filter and walk states across calls,
    so samples taken one at a time equal a batch.
    """

    def __init__(self, rng: np.random.Generator, p: dict, prefix: str):
        def get(name):
            return p[f'{prefix}.{name}']

        self.rng = rng
        rate_hz = p['SampleRate']
        bandwidth = rate_hz / 2.0 if get('NoiseType') == 'double-sided' else rate_hz
        # MATLAB fixes the correlation time at 2/SampleRate, so √(2/(fs·τ)) = 1: σ_BI = B
        correlation_time = 2.0 / rate_hz
        self.gain = np.asarray(get('AxesMisalignment'), dtype=float).reshape(3, 3) / 100.0
        self.bias = np.asarray(get('ConstantBias'), dtype=float)
        self.sigma_bi = math.sqrt(2.0 / (rate_hz * correlation_time)) * np.asarray(
            get('BiasInstability'), dtype=float)
        self.sigma_white = math.sqrt(bandwidth) * np.asarray(get('NoiseDensity'), dtype=float)
        self.sigma_rw = np.asarray(get('RandomWalk'), dtype=float) / math.sqrt(bandwidth)
        self.num = np.asarray(get('BiasInstabilityCoefficients.Numerator'), dtype=float)
        self.den = np.asarray(get('BiasInstabilityCoefficients.Denominator'), dtype=float)
        self.bi_state = np.zeros((max(len(self.num), len(self.den)) - 1, 3))
        self.rw_state = np.zeros(3)
        self.range, self.resolution = get('MeasurementRange'), get('Resolution')

    def apply(self, x) -> np.ndarray:
        """Return the readings (n,3) of the true values x (n,3)."""
        x = np.asarray(x, dtype=float)
        n = len(x)
        z = self.rng.standard_normal((n, 9))
        bulk = x @ self.gain.T + self.bias
        drive = z[:, :3] * self.sigma_bi
        if len(self.bi_state):
            bi, self.bi_state = lfilter(self.num, self.den, drive, axis=0, zi=self.bi_state)
        else:
            bi = drive * (self.num[0] / self.den[0])
        rw = self.rw_state + np.cumsum(z[:, 6:] * self.sigma_rw, axis=0)
        if n:
            self.rw_state = rw[-1].copy()
        out = bulk + (z[:, 3:6] * self.sigma_white + bi + rw)
        if self.range > 0:
            out = np.where(np.abs(out) > self.range, np.sign(out) * self.range, out)
        if self.resolution != 0:
            out = self.resolution * round_half_away(out / self.resolution)
        return out


class MatlabImuNoise:
    """MATLAB imuSensor: its Accelerometer and Gyroscope on the specific force and the rate."""

    def __init__(self, rng: np.random.Generator, p: dict):
        acc_rng, gyro_rng = rng.spawn(2)
        self.acc = MatlabImuAxes(acc_rng, p, 'Accelerometer')
        self.gyro = MatlabImuAxes(gyro_rng, p, 'Gyroscope')

    def apply(self, t, t_last, w, f):
        """Return noisy (angular velocity, specific force) and zero covariances (n,3,3)."""
        fn = self.acc.apply(f)
        wn = self.gyro.apply(w)
        n = len(t)
        return wn, fn, np.zeros((n, 3, 3)), np.zeros((n, 3, 3))
