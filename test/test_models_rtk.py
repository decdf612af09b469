# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The `rtk` reference preset.

Gauss–Markov centimetre error and the driver's RTK-fixed covariance.
"""

import numpy as np
from vepd_ros.models.gps import GPS_MODEL_PARAMS, make_gps_model


def test_rtk_error_is_centimetre_gauss_markov_with_driver_covariance():
    t = np.arange(0.0, 4000.0, 0.1)
    s = make_gps_model('rtk', seed=3).sample(t, np.zeros((len(t), 3)))
    # stationary σ of a GM process with τ = 20 s over 4000 s: ~100 independent stretches → ±15 % is
    # ~2σ
    np.testing.assert_allclose(s.error_enu.std(axis=0), [0.015, 0.015, 0.03], rtol=0.2)
    e = s.error_enu[:, 0] - s.error_enu[:, 0].mean()
    lag = int(20.0 / 0.1)
    rho = np.dot(e[:-lag], e[lag:]) / np.dot(e, e)
    assert abs(rho - np.exp(-1.0)) < 0.15  # autocorrelation e^{-Δt/τ} at Δt = τ
    np.testing.assert_allclose(
        s.covariance_enu[-1], np.diag([0.01**2, 0.01**2, 0.04**2]), atol=1e-15
    )
    assert set(s.covariance_type) == {1} and np.all(s.hdop == 0.5)


def test_rtk_is_a_named_model_with_its_parameters():
    names = {p.name: p.default for p in GPS_MODEL_PARAMS['rtk']}
    assert names['gm_tau_s'] == 20.0 and names['cov_up_per_hdop'] == 0.08
