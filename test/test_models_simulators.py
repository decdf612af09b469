# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Each simulator's noise law (models/simulators.py) against the equation its source implements."""

import math

import numpy as np
import pytest
from vepd_ros.models import simulators as sim
from vepd_ros.models.geodesy import DEFAULT_DATUM
from vepd_ros.models.gps import make_gps_model
from vepd_ros.models.imu import make_imu_model, static_truth

WGS84_A, WGS84_E2 = 6378137.0, 6.69437999014e-3


def metres_per_degree(lat_deg):
    """Return (north, east) metres per degree of latitude and longitude on WGS-84."""
    s = math.sin(math.radians(lat_deg))
    meridian = WGS84_A * (1 - WGS84_E2) / (1 - WGS84_E2 * s * s) ** 1.5
    normal = WGS84_A / math.sqrt(1 - WGS84_E2 * s * s)
    return math.radians(1) * meridian, math.radians(1) * normal * math.cos(math.radians(lat_deg))


def test_gz_bias_is_drawn_once_with_a_random_sign():
    """b0 = ±bias_mean (bias_stddev 0): constant over a run, each sign about half the runs."""
    signs = []
    for seed in range(400):
        noise = sim.GzNoise(np.random.default_rng(seed), bias_mean=0.3)
        out = noise.apply(np.zeros(50), 0.01)
        assert np.all(out == out[0]) and abs(out[0]) == 0.3
        signs.append(out[0] > 0)
    assert 0.4 < np.mean(signs) < 0.6


def test_gz_dynamic_bias_is_gauss_markov_with_gz_variance():
    """Bias b ← φb + N(0, −σ_b²τ/2·expm1(−2dt/τ)): lag-1 correlation φ, stationary σ_b·√(τ/2)."""
    sigma_b, tau, dt, n = 0.2, 2.0, 0.01, 400_000
    noise = sim.GzNoise(np.random.default_rng(7), dynamic_bias_stddev=sigma_b,
                        dynamic_bias_correlation_time=tau)
    noise.apply(np.zeros(20_000), dt)                      # reach the stationary regime
    b = noise.apply(np.zeros(n), dt)
    phi = math.exp(-dt / tau)
    # sampling σ of the lag-1 estimate ≈ √((1 − φ²)/n) ≈ 1.6e-4: 4σ
    assert np.corrcoef(b[:-1], b[1:])[0, 1] == pytest.approx(phi, abs=6.4e-4)
    # ~n·dt/(2τ) = 1000 independent samples: the sample σ is within ~2.2 % (1σ); 8 % is ~3.5σ
    assert b.std() == pytest.approx(sigma_b * math.sqrt(tau / 2), rel=0.08)


def test_gz_dynamic_bias_does_not_move_at_dt_zero():
    """Gazebo's NavSat applies its noise with dt = 0: the bias stays the one drawn at load."""
    noise = sim.GzNoise(np.random.default_rng(1), bias_mean=0.1, dynamic_bias_stddev=1.0,
                        dynamic_bias_correlation_time=1.0)
    assert np.all(noise.apply(np.zeros(100), 0.0) == noise.bias)


def test_gz_precision_rounds_halves_away_from_zero():
    """Output = std::round(y/precision)·precision; |precision| <= 1e-6 is no quantisation."""
    assert list(sim.round_half_away(np.array([2.5, -2.5, 0.49, -0.5]))) == [3.0, -3.0, 0.0, -1.0]
    noise = sim.GzNoise(np.random.default_rng(2), stddev=0.3, precision=0.25)
    out = noise.apply(np.linspace(-3, 3, 1000), 0.01)
    assert np.allclose(out / 0.25, np.round(out / 0.25), atol=1e-12)
    fine = sim.GzNoise(np.random.default_rng(2), stddev=0.3, precision=1e-7)
    assert not np.allclose(fine.apply(np.zeros(10), 0.0) / 1e-7 % 1, 0)


def test_gz_navsat_horizontal_noise_is_in_degrees():
    """Position_sensing/horizontal stddev 1e-5 is degrees: ≈1.1 m north, ≈0.81 m east here."""
    t = np.arange(0, 4000) * 0.1
    model = make_gps_model('gz_navsat', seed=3, **{'position_sensing.horizontal.stddev': 1e-5,
                                                   'position_sensing.vertical.stddev': 0.5})
    err = model.sample(t, np.zeros((len(t), 3))).error_enu
    north, east = metres_per_degree(DEFAULT_DATUM[0])
    assert err[:, 1].std() == pytest.approx(1e-5 * north, rel=0.05)
    assert err[:, 0].std() == pytest.approx(1e-5 * east, rel=0.05)
    assert err[:, 2].std() == pytest.approx(0.5, rel=0.05)


def test_gz_navsat_one_bias_for_latitude_and_longitude():
    """One horizontal noise object: the same bias (degrees) on latitude and longitude."""
    model = make_gps_model('gz_navsat', seed=5,
                           **{'position_sensing.horizontal.bias_mean': 2e-6})
    err = model.sample(np.arange(10) * 0.1, np.zeros((10, 3))).error_enu
    north, east = metres_per_degree(DEFAULT_DATUM[0])
    assert err[:, 1] / north == pytest.approx(err[:, 0] / east, rel=1e-4)
    assert abs(err[0, 1] / north) == pytest.approx(2e-6, rel=1e-4)   # 260 m above the ellipsoid


def test_gz_imu_covariance_is_stddev_squared_and_first_step_has_dt_zero():
    """The IMU publishes stddev² (float) on the diagonals; dt = 0 at its first update."""
    n = 1000
    w, f, q = static_truth(n)
    params = {'angular_velocity.stddev': [0.01, 0.02, 0.03],
              'linear_acceleration.dynamic_bias_stddev': [0.5] * 3,
              'linear_acceleration.dynamic_bias_correlation_time': [10.0] * 3}
    out = make_imu_model('gz_imu', seed=4, **params).sample_arrays(np.arange(n) * 0.01, w, f, q)
    assert np.allclose(np.diagonal(out.angular_velocity_covariance[0]),
                       np.float32(np.array([0.01, 0.02, 0.03]) ** 2))
    assert out.angular_velocity.std(0) == pytest.approx([0.01, 0.02, 0.03], rel=0.1)
    assert np.all(out.orientation_covariance == 0) and np.allclose(out.orientation, q)


def test_hector_drift_scales_with_dt_not_sqrt_dt():
    """D ← d − dt(d·f + N(0, 2f·drift²)): stationary σ ≈ drift·√dt, so it depends on the rate."""
    def stationary_std(dt):
        err = sim.HectorGpsError(np.random.default_rng(9), {
            'offset': [0, 0, 0], 'drift': [1.0] * 3, 'driftFrequency': [0.5] * 3,
            'gaussianNoise': [0, 0, 0], 'velocityOffset': [0, 0, 0], 'velocityDrift': [0] * 3,
            'velocityDriftFrequency': [1 / 3600] * 3, 'velocityGaussianNoise': [0, 0, 0]})
        e = err.error(np.full(60_000, dt))
        return e[10_000:].std()

    slow, fast = stationary_std(0.1), stationary_std(0.01)
    var = lambda dt: dt**2 * 2 * 0.5 / (1 - (1 - dt * 0.5) ** 2)   # noqa: E731 the exact AR(1)
    assert slow == pytest.approx(math.sqrt(var(0.1)), rel=0.1)
    assert fast == pytest.approx(math.sqrt(var(0.01)), rel=0.1)
    assert slow / fast == pytest.approx(math.sqrt(10), rel=0.15)


def test_carla_gnss_noise_is_in_degrees_at_the_datum_latitude():
    """CARLA adds bias + N(0, σ²) to latitude/longitude in degrees, to altitude in metres."""
    t = np.arange(4000) * 0.1
    model = make_gps_model('carla_gnss', seed=2, noise_lat_stddev=1e-5, noise_lon_stddev=1e-5,
                           noise_alt_bias=1.5)
    err = model.sample(t, np.zeros((len(t), 3))).error_enu
    north, east = metres_per_degree(DEFAULT_DATUM[0])
    assert err[:, 1].std() == pytest.approx(1e-5 * north, rel=0.05)
    assert err[:, 0].std() == pytest.approx(1e-5 * east, rel=0.05)
    assert np.allclose(err[:, 2], 1.5)


@pytest.mark.parametrize('decay', [0.0, 0.5, 0.9])
def test_matlab_gps_decay_factor_process(decay):
    """E_k = k·e_{k−1} + σ√(2(1−k))·z: lag-1 correlation k, variance 2σ²/(1+k)."""
    t = np.arange(200_000) * 0.1
    model = make_gps_model('matlab_gps', seed=6, HorizontalPositionAccuracy=1.0,
                           VerticalPositionAccuracy=2.0, DecayFactor=decay)
    err = model.sample(t, np.zeros((len(t), 3))).error_enu
    assert np.corrcoef(err[:-1, 0], err[1:, 0])[0, 1] == pytest.approx(decay, abs=0.01)
    assert err[:, 0].var() == pytest.approx(2 / (1 + decay), rel=0.05)
    assert err[:, 2].var() == pytest.approx(4 * 2 / (1 + decay), rel=0.05)


def test_matlab_gps_decay_factor_one_gives_no_position_error():
    """K = 1: the scale σ√(2(1−k)) is zero and the filter state starts at zero."""
    model = make_gps_model('matlab_gps', seed=6, DecayFactor=1.0)
    err = model.sample(np.arange(100) * 0.1, np.zeros((100, 3))).error_enu
    assert np.all(err == 0)


def test_carla_imu_gyro_bias_and_accel_noise():
    """Gyro = ω + bias + N(0, σ²); accelerometer = a + N(0, σ²); no accelerometer bias."""
    n = 100_000
    w, f, q = static_truth(n)
    model = make_imu_model('carla_imu', seed=8, noise_gyro_bias_z=0.1, noise_gyro_stddev_z=0.01,
                           noise_accel_stddev_x=0.5)
    out = model.sample_arrays(np.arange(n) * 0.01, w, f, q)
    assert out.angular_velocity[:, 2].mean() == pytest.approx(0.1, abs=1e-3)
    assert out.angular_velocity[:, 2].std() == pytest.approx(0.01, rel=0.02)
    assert out.linear_acceleration[:, 0].std() == pytest.approx(0.5, rel=0.02)
    assert abs(out.linear_acceleration[:, 0].mean()) < 0.01


@pytest.mark.parametrize('name', ['gz_navsat', 'hector_gps', 'carla_gnss', 'matlab_gps'])
def test_same_seed_same_bits(name):
    """Seeded: two models with the same seed give identical samples."""
    t = np.arange(50) * 0.1
    a = make_gps_model(name, seed=11).sample(t, np.zeros((50, 3))).error_enu
    b = make_gps_model(name, seed=11).sample(t, np.zeros((50, 3))).error_enu
    assert np.array_equal(a, b)


@pytest.mark.parametrize('name, params', [
    ('gz_navsat', {'position_sensing.horizontal.stddev': 1e-5,
                   'position_sensing.vertical.stddev': 0.3}),
    ('hector_gps', {'gaussianNoise': [0.1] * 3, 'drift': [0.2] * 3}),
    ('carla_gnss', {'noise_lat_stddev': 1e-5, 'noise_alt_stddev': 0.3}),
    ('matlab_gps', {}),
])
def test_gps_samples_one_at_a_time_equal_a_batch(name, params):
    """A node samples one fix per message: the same bits as the library's batch."""
    t = np.arange(30) * 0.1
    truth = np.zeros((30, 3))
    batch = make_gps_model(name, seed=4, **params).sample(t, truth).error_enu
    model = make_gps_model(name, seed=4, **params)
    one = np.vstack([model.sample(t[k:k + 1], truth[k:k + 1]).error_enu for k in range(30)])
    assert np.array_equal(batch, one)


def test_gz_imu_samples_one_at_a_time_equal_a_batch():
    """The dynamic bias and the white noise keep their own streams across calls."""
    n = 40
    w, f, q = static_truth(n)
    params = {'angular_velocity.stddev': [0.01] * 3,
              'angular_velocity.dynamic_bias_stddev': [0.1] * 3,
              'angular_velocity.dynamic_bias_correlation_time': [5.0] * 3}
    t = np.arange(n) * 0.01
    batch = make_imu_model('gz_imu', seed=4, **params).sample_arrays(t, w, f, q)
    model = make_imu_model('gz_imu', seed=4, **params)
    one = [model.sample_arrays(t[k:k + 1], w[k:k + 1], f[k:k + 1], q[k:k + 1]) for k in range(n)]
    assert np.array_equal(batch.angular_velocity, np.vstack([o.angular_velocity for o in one]))


def _matlab_imu(n, seed=0, f=None, w=None, rate_hz=100.0, **params):
    """Run matlab_imu over n samples at rate_hz on truth (w, f), defaults a level IMU at rest."""
    w0, f0, q = static_truth(n)
    model = make_imu_model('matlab_imu', seed=seed, SampleRate=rate_hz, **params)
    return model.sample_arrays(np.arange(n) / rate_hz, w0 if w is None else w,
                               f0 if f is None else f, q)


@pytest.mark.parametrize('noise_type, bandwidth', [('double-sided', 100.0),
                                                   ('single-sided', 200.0)])
def test_matlab_imu_white_noise_is_density_times_root_bandwidth(noise_type, bandwidth):
    """σ = NoiseDensity·√bw, bw = SampleRate/2 (double-sided, MATLAB's default) or SampleRate."""
    n, density = 100_000, [0.01, 0.02, 0.03]
    out = _matlab_imu(n, seed=1, rate_hz=200.0, **{
        'Gyroscope.NoiseDensity': density, 'Gyroscope.NoiseType': noise_type,
        'Accelerometer.NoiseDensity': [0.1] * 3, 'Accelerometer.NoiseType': noise_type})
    # n = 1e5 normals: the sample σ is within 0.22 % (1σ); 1 % is ~4.5σ
    assert out.angular_velocity.std(0) == pytest.approx(
        np.array(density) * math.sqrt(bandwidth), rel=0.01)
    assert out.linear_acceleration[:, 2].mean() == pytest.approx(9.80665, abs=0.01)
    assert out.linear_acceleration.std(0) == pytest.approx([0.1 * math.sqrt(bandwidth)] * 3,
                                                           rel=0.01)
    assert np.all(out.angular_velocity_covariance == 0)
    assert np.all(out.orientation_covariance[:, 0, 0] == -1)


def test_matlab_imu_random_walk_grows_as_k_root_2t_by_default():
    """RW_k = RW_{k−1} + K/√(fs/2)·z: across seeds Var(t) = K²·2t, so ×2 from 1 s to 4 s."""
    k, rate_hz = 0.05, 100.0
    at_1s, at_4s = [], []
    for seed in range(400):
        gyro = _matlab_imu(400, seed=seed, rate_hz=rate_hz,
                           **{'Gyroscope.RandomWalk': [k] * 3}).angular_velocity
        at_1s.append(gyro[99, 0])
        at_4s.append(gyro[399, 0])
    # 400 seeds: a sample σ is within 3.5 % (1σ); 12 % is ~3.4σ
    assert np.std(at_1s) == pytest.approx(k * math.sqrt(2 * 1.0), rel=0.12)
    assert np.std(at_4s) == pytest.approx(k * math.sqrt(2 * 4.0), rel=0.12)
    one = _matlab_imu(1000, seed=3, **{'Gyroscope.RandomWalk': [k] * 3}).angular_velocity[:, 1]
    steps = np.diff(one)
    assert steps.std() == pytest.approx(k / math.sqrt(50.0), rel=0.1)
    assert abs(np.corrcoef(steps[:-1], steps[1:])[0, 1]) < 0.15   # independent steps


@pytest.mark.parametrize('denominator, phi', [(None, 0.5), ([1.0, -0.9], 0.9)])
def test_matlab_imu_bias_instability_is_the_filtered_b(denominator, phi):
    """BI = filter(1, [1, −φ], B·z): lag-1 correlation φ, σ = B/√(1 − φ²); default φ = ½."""
    b, n = 0.2, 200_000
    params = {'Accelerometer.BiasInstability': [b] * 3}
    if denominator is not None:
        params['Accelerometer.BiasInstabilityCoefficients.Denominator'] = denominator
    acc = _matlab_imu(n, seed=5, **params).linear_acceleration[:, 0]
    # lag-1 estimate σ ≈ √((1 − φ²)/n) ≤ 2e-3: 0.01 is ≥ 5σ
    assert np.corrcoef(acc[:-1], acc[1:])[0, 1] == pytest.approx(phi, abs=0.01)
    # ≥ n(1 − φ)/(1 + φ) ≈ 10 000 independent samples: σ within ~0.7 %; 4 % is > 5σ
    assert acc.std() == pytest.approx(b / math.sqrt(1 - phi**2), rel=0.04)


def test_matlab_imu_resolution_rounds_halves_away_after_saturating():
    """Saturation at ±MeasurementRange first, then Resolution·round(y/Resolution) (half away)."""
    f = np.array([[0.25, -0.25, 0.74], [30.0, -30.0, 1.0], [0.1, -0.1, 0.0]])
    params = {'Accelerometer.Resolution': 0.5, 'Accelerometer.MeasurementRange': 19.6133}
    out = _matlab_imu(3, f=f, **params).linear_acceleration
    assert out.tolist() == [[0.5, -0.5, 0.5], [19.5, -19.5, 1.0], [0.0, -0.0, 0.0]]
    sat = _matlab_imu(2, f=np.array([[30.0, -30.0, 19.0], [-19.7, 19.7, 0.0]]),
                      **{'Accelerometer.MeasurementRange': 19.6133}).linear_acceleration
    assert sat.tolist() == [[19.6133, -19.6133, 19.0], [-19.6133, 19.6133, 0.0]]


def test_matlab_imu_axes_misalignment_matrix_and_constant_bias():
    """Y = (M/100)·x + ConstantBias; a vector v expands to 100·I with v(j) down column j."""
    assert sim.matlab_axes_misalignment([2.0, 0.0, 0.0]) == [100, 0, 0, 2, 100, 0, 2, 0, 100]
    assert sim.matlab_axes_misalignment(1.5) == [100, 1.5, 1.5, 1.5, 100, 1.5, 1.5, 1.5, 100]
    matrix = [[99.0, 1.0, 0.0], [0.0, 101.0, -2.0], [0.5, 0.0, 100.0]]
    assert sim.matlab_axes_misalignment(matrix) == [99, 1, 0, 0, 101, -2, 0.5, 0, 100]
    with pytest.raises(ValueError, match='AxesMisalignment'):
        sim.matlab_axes_misalignment([1.0, 2.0])
    w = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, -1.0]])
    out = _matlab_imu(2, w=w, **{
        'Gyroscope.AxesMisalignment': sim.matlab_axes_misalignment([2.0, 0.0, 0.0]),
        'Gyroscope.ConstantBias': [0.1, -0.2, 0.3]}).angular_velocity
    assert out == pytest.approx(np.array([[1.1, -0.18, 0.32], [0.1, 1.8, -0.7]]), abs=1e-12)
    full = _matlab_imu(2, w=w, **{'Gyroscope.AxesMisalignment': sum(matrix, [])})
    assert full.angular_velocity == pytest.approx(w @ (np.array(matrix) / 100).T, abs=1e-12)


def test_matlab_imu_samples_one_at_a_time_equal_a_batch():
    """Every term on: the filter and walk states carry across calls; same seed, same bits."""
    n = 60
    params = {'Accelerometer.NoiseDensity': [0.01] * 3, 'Accelerometer.RandomWalk': [0.02] * 3,
              'Accelerometer.BiasInstability': [0.03] * 3, 'Accelerometer.Resolution': 0.001,
              'Gyroscope.BiasInstability': [0.01] * 3, 'Gyroscope.NoiseDensity': [0.002] * 3,
              'Gyroscope.BiasInstabilityCoefficients.Denominator': [1.0, -0.5, 0.06, 0.01],
              'Gyroscope.BiasInstabilityCoefficients.Numerator': [1.0, 0.2]}
    w, f, q = static_truth(n)
    t = np.arange(n) * 0.01
    batch = make_imu_model('matlab_imu', seed=4, **params).sample_arrays(t, w, f, q)
    again = make_imu_model('matlab_imu', seed=4, **params).sample_arrays(t, w, f, q)
    model = make_imu_model('matlab_imu', seed=4, **params)
    one = [model.sample_arrays(t[k:k + 1], w[k:k + 1], f[k:k + 1], q[k:k + 1]) for k in range(n)]
    for name in ('angular_velocity', 'linear_acceleration'):
        assert np.array_equal(getattr(batch, name), np.vstack([getattr(o, name) for o in one]))
        assert np.array_equal(getattr(batch, name), getattr(again, name))
    assert not np.array_equal(batch.angular_velocity, w)


def test_matlab_imu_bad_filter_and_noise_type_are_parameter_errors():
    """A zero leading denominator or an unknown NoiseType names the parameter."""
    from vepd_ros.params import ParameterError

    with pytest.raises(ParameterError, match='Gyroscope.BiasInstabilityCoefficients.Denominator'):
        make_imu_model('matlab_imu', **{
            'Gyroscope.BiasInstabilityCoefficients.Denominator': [0.0, 1.0]})
    with pytest.raises(ParameterError, match='Accelerometer.NoiseType'):
        make_imu_model('matlab_imu', **{'Accelerometer.NoiseType': 'two-sided'})
