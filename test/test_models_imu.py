# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""IMU models: the drift law, the Allan-deviation law, REP-145 fields, chunking."""

import math

from hypothesis import given
from hypothesis import strategies as st
import numpy as np
import pytest
from test_models_gps import PROPS, time_grids
from vepd_ros.frames import GRAVITY_MPS2
from vepd_ros.models import calibration as C
from vepd_ros.models.imu import (
    IMU_MODEL_PARAMS,
    IMU_MODELS,
    ImuSamples,
    make_imu_model,
    static_truth,
)
from vepd_ros.params import ParameterError
from vepd_ros.truth import generate


def _run(model, n, rate=100.0):
    t = np.arange(n) / rate
    return model.sample_arrays(t, *static_truth(n))


def test_ch_drift_bias_spread_grows_like_sqrt_t():
    """
    The drift bias spread grows like √t.

    b_t = b_{t−1} + N(0, b0·√(dt/t_b)) ⇒ std(b(t)) = b0·√(t/t_b): across 300 seeds, at 1 s and 4 s.
    """
    b0, tb = 0.1, 0.1
    ends = []
    for seed in range(300):
        m = make_imu_model('ch_drift', seed, acc_drift=b0, acc_tau_drift=tb)
        s = _run(m, 400)
        ends.append(s.acc_bias[[99, 399], 0])
    ends = np.array(ends)
    sd = ends.std(axis=0)
    assert sd[0] == pytest.approx(b0 * math.sqrt(1.0 / tb), rel=0.12)
    assert sd[1] == pytest.approx(b0 * math.sqrt(4.0 / tb), rel=0.12)
    assert sd[1] / sd[0] == pytest.approx(2.0, rel=0.15)


def test_ch_drift_paper_preset_gyro_noise_free_and_accel_as_run():
    s = _run(make_imu_model('ch_drift_paper', 3), 1000)
    assert np.all(s.angular_velocity == 0.0)
    assert np.all(s.angular_velocity_covariance == 0.0)
    white = np.diff(s.linear_acceleration - s.acc_bias, axis=0)
    assert np.std(white[:, 0]) / math.sqrt(2) == pytest.approx(0.30, rel=0.08)
    assert np.std(white[:, 2]) / math.sqrt(2) == pytest.approx(0.01, rel=0.08)
    np.testing.assert_allclose(
        np.diagonal(s.linear_acceleration_covariance, axis1=1, axis2=2)[0], [0.09, 0.09, 1e-4]
    )


def test_chrono_vs_paper_drift_variant_differ_only_when_dt_differs():
    t = np.array([0.0, 0.01, 0.02, 0.05])
    a = make_imu_model('ch_drift', 1, drift_variant='chrono').sample_arrays(t, *static_truth(4))
    b = make_imu_model('ch_drift', 1, drift_variant='paper').sample_arrays(t, *static_truth(4))
    np.testing.assert_allclose(a.gyro_bias[:3], b.gyro_bias[:3], rtol=1e-12)
    assert not np.allclose(a.gyro_bias[3], b.gyro_bias[3])


def test_allan_deviation_recovers_arw_and_bias_instability():
    """30 min at 100 Hz of the allan model at rest; Allan fit (median of 3 axes) within 10 %."""
    want = {
        'gyro_arw': 0.01,
        'gyro_bias_instability': 5e-3,
        'gyro_bias_tau_s': 2.0,
        'acc_vrw': 0.002,
        'acc_bias_instability': 1e-3,
        'acc_bias_tau_s': 2.0,
    }
    m = make_imu_model('allan', 4, **want)
    n = 180000
    s = _run(m, n)
    log = C.ImuLog(
        np.arange(n) / 100.0,
        s.angular_velocity,
        s.linear_acceleration - [0, 0, GRAVITY_MPS2],
        'synthetic',
    )
    fit = C.fit_imu(log, segment=slice(0, n))['allan']
    for k in ('gyro_arw', 'gyro_bias_instability', 'acc_vrw', 'acc_bias_instability'):
        assert fit[k] == pytest.approx(want[k], rel=0.10), k


def test_allan_rate_random_walk_law():
    """With only K: b(t) = K·W(t), so std across seeds of b(T) = K√T."""
    k = 1e-3
    ends = [
        _run(
            make_imu_model('allan', s, gyro_arw=0.0, gyro_bias_instability=0.0, gyro_rrw=k), 1000
        ).gyro_bias[-1, 0]
        for s in range(300)
    ]
    assert np.std(ends) == pytest.approx(k * math.sqrt(10.0), rel=0.12)


@pytest.mark.parametrize('name', IMU_MODELS)
def test_chunked_calls_are_bit_identical(name):
    tr = generate('circle', 5.0, seed=1)
    t = np.arange(501) / 100.0
    truth = tr.sample(t)
    whole = make_imu_model(name, 5).sample(t, truth)
    m = make_imu_model(name, 5)
    parts = [
        m.sample(t[a:b], tr.sample(t[a:b])) for a, b in ((0, 1), (1, 200), (200, 201), (201, 501))
    ]
    chunked = ImuSamples.concat(parts)
    for f in ('angular_velocity', 'linear_acceleration', 'orientation', 'orientation_covariance'):
        np.testing.assert_array_equal(getattr(whole, f), getattr(chunked, f), err_msg=f)


def test_rep145_fields():
    s = _run(make_imu_model('none', 0), 10)
    np.testing.assert_array_equal(s.linear_acceleration, np.tile([0, 0, GRAVITY_MPS2], (10, 1)))
    assert np.all(s.orientation_covariance[:, 0, 0] == -1.0)
    tr = generate('circle', 5.0, seed=1)
    t = np.arange(100) / 100.0 + 2.0
    truth = tr.sample(t)
    o = make_imu_model('none', 0, orientation_mode='truth').sample(t, truth)
    np.testing.assert_allclose(o.orientation, truth.quaternion, atol=1e-12)
    n = make_imu_model('allan_n100', 0).sample(t, truth)
    assert np.all(n.orientation_covariance[:, 2, 2] == pytest.approx(0.03**2))
    np.testing.assert_allclose(np.linalg.norm(n.orientation, axis=1), 1.0)
    dots = np.abs(np.sum(n.orientation * truth.quaternion, axis=1))
    assert np.all(dots > math.cos(0.2))


def test_bad_parameters_name_the_parameter():
    with pytest.raises(ParameterError, match="'acc_sigma'"):
        make_imu_model('ch_drift', acc_sigma=[-1.0, 0.0, 0.0])
    with pytest.raises(ParameterError, match="'gyro_arw'"):
        make_imu_model('allan', gyro_arw=-1e-3)
    with pytest.raises(ParameterError, match="'model'"):
        make_imu_model('bosch')
    assert {p.name: p.default for p in IMU_MODEL_PARAMS['ch_drift_paper']}['acc_sigma'] == [
        0.30,
        0.30,
        0.01,
    ]


@PROPS
@given(st.sampled_from(IMU_MODELS), st.integers(0, 2**32 - 1), time_grids(), st.floats(-3.0, 3.0))
def test_imu_samplers_finite_shaped_and_reproducible(name, seed, t, yaw_rate):
    n = len(t)
    w = np.tile([0.0, 0.0, yaw_rate], (n, 1))
    f = np.tile([0.1, 0.0, 9.80665], (n, 1))
    half = yaw_rate * t / 2
    q = np.column_stack([np.zeros(n), np.zeros(n), np.sin(half), np.cos(half)])
    a = make_imu_model(name, seed).sample_arrays(t, w, f, q)
    b = make_imu_model(name, seed).sample_arrays(t, w, f, q)
    assert a.angular_velocity.shape == (n, 3) and a.linear_acceleration.shape == (n, 3)
    assert a.orientation.shape == (n, 4)
    for fld in ('angular_velocity', 'linear_acceleration', 'orientation'):
        assert np.isfinite(getattr(a, fld)).all(), fld
        assert getattr(a, fld).tobytes() == getattr(b, fld).tobytes(), fld
