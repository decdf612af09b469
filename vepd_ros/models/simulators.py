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
  |precision| > 1e-6 the output is rounded to a multiple of it (std::round: halves away from 0).
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
        vel = [np.asarray(p[k]) for k in ('velocityDrift', 'velocityDriftFrequency',
                                          'velocityOffset', 'velocityGaussianNoise')]
        pos = [np.asarray(p[k]) for k in ('drift', 'driftFrequency', 'offset', 'gaussianNoise')]
        for k, step in enumerate(np.asarray(dt, dtype=float)):
            self.vel_drift, vel_err = self._step(self.rng, self.vel_drift, *vel, step)
            self.drift = self.drift + vel_err * step
            self.drift, out[k] = self._step(self.rng, self.drift, *pos, step)
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
        return geodetic_to_enu(*noisy, datum, conversion) - truth_enu


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
