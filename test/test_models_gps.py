# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""GPS models: each test states the law the model must follow."""

import math

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from scipy import stats
from vepd_ros.models import gps as G
from vepd_ros.models.gps import GPS_MODEL_PARAMS, GPS_MODELS, make_gps_model
from vepd_ros.params import ParameterError


def _static(n, rate=10.0, t0=0.0):
    return t0 + np.arange(n) / rate, np.zeros((n, 3))


def test_ch_gauss_sigma_within_confidence_interval():
    n = 20000
    t, x = _static(n)
    s = make_gps_model('ch_gauss', seed=7).sample(t, x)
    for axis in range(3):
        v = np.var(s.error_enu[:, axis], ddof=1)
        lo, hi = stats.chi2.ppf([0.0005, 0.9995], n - 1) * 0.03**2 / (n - 1)
        assert lo < v < hi
    assert np.all(s.covariance_enu == 0) and np.all(s.covariance_type == G.COV_UNKNOWN)
    assert abs(stats.pearsonr(s.error_enu[:-1, 0], s.error_enu[1:, 0])[0]) < 4 / math.sqrt(
        n
    )  # white


@pytest.mark.parametrize('name', GPS_MODELS)
def test_chunked_calls_are_bit_identical(name):
    t, x = _static(400)
    x = x + np.column_stack([np.arange(400) * 0.1, np.zeros(400), np.zeros(400)])
    whole = make_gps_model(name, seed=3).sample(t, x)
    m = make_gps_model(name, seed=3)
    parts = [m.sample(t[a:b], x[a:b]) for a, b in ((0, 1), (1, 37), (37, 38), (38, 400))]
    chunked = G.GpsSamples.concat(parts)
    for f in (
        'error_enu',
        'covariance_enu',
        'status',
        'satellites',
        'published',
        'stamp_s',
        'publish_s',
    ):
        np.testing.assert_array_equal(getattr(whole, f), getattr(chunked, f), err_msg=f)
    np.testing.assert_array_equal(whole.hdop, chunked.hdop)


def test_same_seed_same_output_other_seed_differs():
    t, x = _static(50)
    a = make_gps_model('ch_rw', seed=1).sample(t, x).error_enu
    b = make_gps_model('ch_rw', seed=1).sample(t, x).error_enu
    c = make_gps_model('ch_rw', seed=2).sample(t, x).error_enu
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_ch_rw_chrono_is_white_in_the_second_derivative_with_the_restoring_mean():
    """
    Unclamped, Chrono's walk has a white residual in the second derivative.

    Unclamped, Chrono's walk obeys Δ²p/h² = −g·σ·p_prev + σ·z exactly: regress and check the
    residual is white.
    """
    sig, rate = 0.047, 100.0
    m = make_gps_model(
        'ch_rw',
        seed=5,
        rw_sigma=sig,
        rw_rate_hz=rate,
        rw_max_velocity=1e6,
        rw_max_acceleration=1e6,
        rw_chrono_gain=5.0,
    )
    t, x = _static(30000, rate=rate)
    p = m.sample(t, x).error_enu[:, 0]
    y = np.diff(p, 2) * rate**2
    prev = p[1:-1]
    slope = np.dot(prev, y) / np.dot(prev, prev)
    assert slope == pytest.approx(-5.0 * sig, rel=0.05)
    r = y - slope * prev
    n = len(r)
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], n - 1) / (n - 1)
    assert lo < np.var(r) / sig**2 < hi
    for lag in (1, 2, 5):
        assert abs(np.corrcoef(r[:-lag], r[lag:])[0, 1]) < 4 / math.sqrt(n)


def test_ch_rw_paper_variant_second_difference_is_ma1():
    """
    The paper variant's second difference is an MA(1) process.

    The appendix update p += v·dt + ½a·dt² makes Δ²p/dt² the mean of two consecutive accelerations:
    lag-one autocorrelation ½ and σ/√2 around the concentration-gradient mean −p/p_max.
    """
    sig = 0.047
    m = make_gps_model(
        'ch_rw',
        seed=9,
        rw_variant='paper',
        rw_sigma=sig,
        rw_max_velocity=1e6,
        rw_max_acceleration=1e6,
        rw_p_max_m=1e3,
    )
    t, x = _static(30000, rate=100.0)
    p = m.sample(t, x).error_enu[:, 1]
    y = np.diff(p, 2) * 1e4
    mean = -0.5 * (p[:-2] + p[1:-1]) / 1e3
    r = y - mean
    assert np.std(r) == pytest.approx(sig / math.sqrt(2), rel=0.03)
    assert np.corrcoef(r[:-1], r[1:])[0, 1] == pytest.approx(0.5, abs=0.03)


def test_ch_rw_paper_settings_bounded_and_mean_reverting():
    t, x = _static(18000)  # 30 min at 10 Hz
    m = make_gps_model('ch_rw', seed=11)
    e = m.sample(t, x).error_enu
    speed = np.linalg.norm(np.diff(e, axis=0), axis=1) / 0.1
    assert speed.max() <= 0.016 * (1 + 1e-9)  # 3-D speed cap, exact
    assert np.abs(np.diff(e, 2, axis=0)).max() <= 2 * 0.152 * 0.1**2 + 1e-12  # |Δv| ≤ amax·dt
    assert np.abs(e).max() < 0.5  # bounded (reference: |p|max ≈ 0.3 m)
    # mean reversion: started 0.3 m off, the ensemble mean returns toward 0 within a minute
    ens = []
    for seed in range(40):
        mm = make_gps_model('ch_rw', seed=100 + seed)
        mm.sample(np.array([0.0]), np.zeros((1, 3)))
        mm._p[:] = (0.3, 0.0, 0.0)
        ens.append(mm.sample(np.arange(1, 601) / 10.0, np.zeros((600, 3))).error_enu[:, 0])
    ens = np.mean(ens, axis=0)
    assert ens[-1] < 0.15 and ens.min() < 0.1


def test_tr_widths_parameterisation():
    p = G.rw_params_from_widths(1.0, 0.2, 0.1, 0.01)
    assert p == {
        'rw_variant': 'tr',
        'rw_p_max_m': 0.5,
        'rw_max_velocity': 0.1,
        'rw_max_acceleration': 0.05,
        'rw_sigma': 0.01,
    }
    e = make_gps_model('ch_rw', seed=1, **p).sample(*_static(2000)).error_enu
    assert (
        np.abs(np.diff(e, axis=0)).max() <= 10 * 0.1 + 0.05 * 10 + 1e-9
    )  # 10 internal steps per sample


def test_airsim_hdop_low_pass_and_covariance():
    t = 5.0 + np.arange(600) / 10.0
    s = make_gps_model('airsim', seed=0).sample(t, np.zeros((600, 3)))
    h = 0.85 + (100 - 0.85) * np.exp(-(t - 5.0) / 12.4)
    np.testing.assert_allclose(s.hdop, h, rtol=1e-12)
    np.testing.assert_allclose(s.covariance_enu[:, 0, 0], (0.02 * h) ** 2, rtol=1e-12)
    np.testing.assert_allclose(s.covariance_enu[:, 1, 1], (0.02 * h) ** 2, rtol=1e-12)
    np.testing.assert_allclose(s.covariance_enu[:, 2, 2], (0.04 * h) ** 2, rtol=1e-12)
    assert np.all(s.covariance_enu[:, 0, 1] == 0) and np.all(s.error_enu == 0)
    assert np.all(s.covariance_type == G.COV_APPROXIMATED)
    d = make_gps_model('airsim_default', seed=0, cov_up_per_hdop=0.08).sample(
        t, np.zeros((600, 3))
    )
    np.testing.assert_allclose(d.hdop, 0.1 + 99.9 * np.exp(-(t - 5.0) / 0.9), rtol=1e-12)
    np.testing.assert_allclose(d.covariance_enu[:, 2, 2], (0.08 * d.hdop) ** 2, rtol=1e-12)
    # the recursion the authors' handler runs per message gives the same series
    hh, out = 100.0, []
    for k in range(600):
        if k:
            a = math.exp(-0.1 / 12.4)
            hh = a * hh + (1 - a) * 0.85
        out.append(hh)
    np.testing.assert_allclose(s.hdop, out, rtol=1e-9)


def test_airsim_fix_type_option():
    t = np.arange(600) / 10.0
    s = make_gps_model('airsim_default', seed=0, airsim_fix_type=True).sample(
        t, np.zeros((600, 3))
    )
    assert np.all(s.status[s.hdop > 4.0] == G.STATUS_NO_FIX) and np.all(
        s.status[s.hdop <= 4.0] == G.STATUS_FIX
    )
    assert 2.8 < t[np.argmax(s.status == 0)] < 3.1  # 0.9·ln(99.9/3.9) ≈ 2.9 s


def test_combinations_add_error_to_airsim_covariance():
    t, x = _static(2000)
    g = make_gps_model('ch_gauss+airsim', seed=4).sample(t, x)
    assert np.std(g.error_enu[:, 0]) == pytest.approx(0.03, rel=0.1)
    assert np.all(g.covariance_type == G.COV_APPROXIMATED)
    r = make_gps_model('ch_rw+airsim', seed=4).sample(t, x)
    np.testing.assert_array_equal(
        r.error_enu, make_gps_model('ch_rw', seed=4).sample(t, x).error_enu
    )


def test_gauss_markov_stationary_sigma_and_correlation_time():
    sig, tau = 0.5, 2.0
    t, x = _static(60000)
    e = (
        make_gps_model('gauss_markov', seed=2, gm_sigma_m=[sig, sig, sig], gm_tau_s=tau)
        .sample(t, x)
        .error_enu[:, 0]
    )
    assert np.std(e) == pytest.approx(sig, rel=0.08)
    lag = int(tau * 10)
    assert np.corrcoef(e[:-lag], e[lag:])[0, 1] == pytest.approx(math.exp(-1), abs=0.04)


def test_usarsim_sigma_linear_in_satellites_and_no_fix_below_four():
    t, x = _static(3000)
    m = make_gps_model('usarsim', seed=1)
    s = m.sample(t, x)
    assert np.all(s.satellites >= 4)
    sats = np.bincount(s.satellites).argmax()
    sel = s.satellites == sats
    want = (2.5 - (2.5 - 0.75) * (sats - 4) / 8) / 3
    assert np.std(s.error_enu[sel, 0]) == pytest.approx(want, rel=0.1)
    assert np.all(s.error_enu[:, 2] == 0)  # USARSim outputs no altitude
    np.testing.assert_allclose(s.covariance_enu[sel, 0, 0], want**2)
    boxed = make_gps_model(
        'usarsim', seed=1, obstacles='[{type: box, min: [-5, -5, -1], max: [5, 5, 1]}]'
    )
    b = boxed.sample(t[:10], x[:10])
    assert (
        np.all(b.satellites == 0)
        and np.all(b.status == G.STATUS_NO_FIX)
        and np.all(b.error_enu == 0)
    )


def test_dop_model_covariance_is_sigma_squared_q_and_error_follows_it():
    t, x = _static(4000)
    s = make_gps_model('dop', seed=3, dop_sigma_uere_m=1.0).sample(t, x)
    hd = np.sqrt(s.covariance_enu[:, 0, 0] + s.covariance_enu[:, 1, 1])
    np.testing.assert_allclose(hd, s.hdop, rtol=1e-9)
    assert np.all(s.covariance_type == G.COV_KNOWN)
    z = s.error_enu[:, 0] / np.sqrt(s.covariance_enu[:, 0, 0])
    assert np.std(z) == pytest.approx(1.0, rel=0.06)


def test_modifiers_cold_start_outage_latency():
    t, x = _static(600)
    s = make_gps_model('ch_gauss+cold_start', seed=0, ttff_s=26.0).sample(t, x)
    assert np.all(s.status[t < 26.0] == G.STATUS_NO_FIX) and np.all(
        s.status[t >= 26.0] == G.STATUS_FIX
    )
    d = make_gps_model('ch_gauss+cold_start', seed=0, ttff_s=5.0, cold_start_mode='drop').sample(
        t, x
    )
    assert not d.published[t < 5.0].any() and d.published[t >= 5.0].all()
    w = make_gps_model(
        'ch_gauss+outage', seed=0, outage_mtbf_s=0.0, outage_windows=[10.0, 12.0]
    ).sample(t, x)
    assert np.array_equal(w.status == G.STATUS_NO_FIX, (t >= 10.0) & (t < 12.0))
    tt, xx = _static(100000)
    r = make_gps_model('ch_gauss+outage', seed=5, outage_mtbf_s=20.0, outage_mean_s=5.0).sample(
        tt, xx
    )
    assert np.mean(r.status == -1) == pytest.approx(5.0 / 25.0, abs=0.05)
    lat = make_gps_model('ch_gauss+latency', seed=0, latency_s=0.2, jitter_s=0.01).sample(t, x)
    assert np.all(lat.publish_s >= t + 0.2) and np.all(lat.stamp_s == t)
    arr = make_gps_model('ch_gauss+latency', seed=0, latency_s=0.2, stamp_mode='arrival').sample(
        t, x
    )
    np.testing.assert_allclose(arr.stamp_s, t + 0.2)


def test_bad_parameters_name_the_parameter():
    with pytest.raises(ParameterError, match="'gauss_sigma_m'"):
        make_gps_model('ch_gauss', gauss_sigma_m=[-0.1, 0.03, 0.03])
    with pytest.raises(ParameterError, match="'rw_sigma'"):
        make_gps_model('ch_rw', rw_sigma=-1.0)
    with pytest.raises(ParameterError, match="'model'"):
        make_gps_model('gaussian')
    with pytest.raises(ParameterError, match="'model'"):
        make_gps_model('ch_gauss+ch_rw')
    with pytest.raises(ParameterError, match="'obstacles'"):
        make_gps_model('usarsim', obstacles='[{type: sphere}]')


def test_bad_truth_rejected():
    m = make_gps_model('ch_gauss')
    with pytest.raises(ValueError, match='non-finite'):
        m.sample([0.0], [[np.nan, 0, 0]])
    m.sample([1.0], [[0, 0, 0]])
    with pytest.raises(ValueError, match='increase'):
        m.sample([0.5], [[0, 0, 0]])


def test_param_specs_exposed_with_preset_defaults():
    d = {p.name: p.default for p in GPS_MODEL_PARAMS['airsim_default']}
    assert d['hdop_final'] == 0.1 and d['hdop_tau_s'] == 0.9
    d = {p.name: p.default for p in GPS_MODEL_PARAMS['ch_rw']}
    assert (
        d['rw_sigma'],
        d['rw_rate_hz'],
        d['rw_max_velocity'],
        d['rw_max_acceleration'],
        d['rw_p_max_m'],
    ) == (0.047, 100.0, 0.016, 0.152, 0.06)
    assert {p.name: p.default for p in GPS_MODEL_PARAMS['ch_gauss']}['gauss_sigma_m'] == [0.03] * 3
    assert set(G.PAPER_TABLE_I.values()) <= set(GPS_MODELS)


PROPS = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def time_grids(draw):
    n = draw(st.integers(1, 40))
    dts = draw(st.lists(st.floats(1e-3, 2.0), min_size=n, max_size=n))
    return np.cumsum(dts) + draw(st.floats(0.0, 100.0))


@PROPS
@given(
    st.sampled_from(GPS_MODELS), st.integers(0, 2**32 - 1), time_grids(), st.floats(-50.0, 50.0)
)
def test_gps_samplers_finite_shaped_and_reproducible(name, seed, t, offset):
    truth = np.column_stack([t * 2.0 + offset, np.sin(t), np.zeros_like(t)])
    a = make_gps_model(name, seed).sample(t, truth)
    b = make_gps_model(name, seed).sample(t, truth)
    assert a.position_enu.shape == (len(t), 3) and a.covariance_enu.shape == (len(t), 3, 3)
    fixed = a.status >= 0
    assert np.isfinite(a.position_enu[fixed]).all() and np.isfinite(a.covariance_enu[fixed]).all()
    for f in ('position_enu', 'covariance_enu', 'status', 'hdop', 'published', 'stamp_s'):
        assert getattr(a, f).tobytes() == getattr(b, f).tobytes(), f
