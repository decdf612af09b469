# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Calibration on real and synthetic logs; the sensors CLI end to end.

Calibration on the real logs in ../shared/data/real and on synthetic data; the sensors CLI end to
end.
"""

import csv

import numpy as np
import pytest
from vepd_ros.cli import main as vepd
from vepd_ros.io import calibration_logs as L
from vepd_ros.models import calibration as C
from vepd_ros.models.gps import make_gps_model
from vepd_ros.params_file import node_section
from vepd_ros.streams import TOPIC_ART_GPS_FIX


def test_gps_fit_on_real_rtk_fixed_nmea(shared_data):
    log = L.read_gps_log(shared_data / 'real/nmea_rtk_fixed_static/nmea.log')
    assert len(log.t_s) == 120 and log.t_s[-1] == pytest.approx(59.5)
    assert np.all(log.quality == 4) and 0.47 <= np.nanmin(log.hdop) and np.nanmax(log.hdop) <= 0.51
    fit = C.fit_gps(log)
    # values quoted in docs/models.md
    np.testing.assert_allclose(
        fit['ch_gauss']['gauss_sigma_m'], [0.0802, 0.0704, 0.0318], atol=5e-4
    )
    assert fit['ch_rw']['rw_sigma'] == pytest.approx(0.00815, abs=5e-5)  # m/s², from 2 Hz fixes
    assert fit['ch_rw']['rw_p_max_m'] == pytest.approx(0.207, abs=1e-3)
    assert fit['ch_rw']['rw_max_velocity'] == pytest.approx(0.0132, abs=1e-4)
    assert fit['ch_rw']['rw_max_acceleration'] == pytest.approx(0.0208, abs=1e-4)
    assert (
        fit['airsim']['hdop_final'] == pytest.approx(0.50, abs=0.01)
        and fit['airsim']['hdop_tau_s'] is None
    )


def test_gps_fit_on_real_ubx_m8(shared_data):
    log = L.read_gps_log(shared_data / 'real/ubx_m8_static/pygpsdata-MIXED.log')
    assert len(log.t_s) == 39 and np.all(log.quality == 3)
    fit = C.fit_gps(log)
    np.testing.assert_allclose(fit['ch_gauss']['gauss_sigma_m'], [0.493, 0.351, 1.570], atol=2e-3)
    assert fit['gauss_markov']['gm_tau_s'] == pytest.approx(40.9, abs=0.5)
    assert fit['airsim']['hdop_final'] == pytest.approx(0.94, abs=0.01)


def test_imu_fit_on_real_xio_static_segment(shared_data):
    log = L.read_imu_log(shared_data / 'real/xio_imu_handheld/sensor_data.csv')
    assert log.gyro.shape == (13514, 3)
    assert np.median(log.acc[:500, 2]) == pytest.approx(9.8, abs=0.1)  # g → m/s², at rest
    fit = C.fit_imu(log)
    assert fit['segment_s'][0] == pytest.approx(118.0, abs=0.5)
    # ARW ≈ 1.8e-4 rad/s/√Hz (0.0103 °/s/√Hz), VRW ≈ 2.6e-3 m/s²/√Hz; 17 s cannot resolve B or K
    assert fit['allan']['gyro_arw'] == pytest.approx(1.79e-4, rel=0.05)
    assert fit['allan']['acc_vrw'] == pytest.approx(2.58e-3, rel=0.05)


def test_hdop_fit_recovers_the_airsim_law():
    t = np.arange(0, 60, 0.1)
    h = make_gps_model('airsim', 0).sample(t, np.zeros((len(t), 3))).hdop
    fit = C.fit_hdop(t, h + np.random.default_rng(0).normal(0, 0.01, len(t)))
    assert fit['hdop_final'] == pytest.approx(0.85, abs=0.02) and fit[
        'hdop_tau_s'
    ] == pytest.approx(12.4, rel=0.02)


def test_rw_fit_from_a_simulated_standstill_log(tmp_path):
    """
    The random-walk fit recovers Chrono's per-step spread from a simulated standstill log.

    Chrono's walk at 1 Hz: the fitted σ of the second derivative is the per-step spread the paper
    measures.
    """
    t = np.arange(0, 3600.0, 1.0)
    s = make_gps_model('ch_gauss', 3, gauss_sigma_m=[0.02, 0.02, 0.02]).sample(
        t, np.zeros((len(t), 3))
    )
    from vepd_ros.models.geodesy import enu_to_geodetic

    lat, lon, alt = enu_to_geodetic(s.position_enu)
    path = tmp_path / 'fix.csv'
    with open(path, 'w', newline='') as fh:
        w = csv.writer(fh)
        w.writerow(['t', 'lat', 'lon', 'alt', 'hdop'])
        for row in zip(t, lat, lon, alt, np.full(len(t), 0.6)):
            w.writerow([repr(float(x)) for x in row])
    fit = C.fit_gps(L.read_gps_log(path))
    np.testing.assert_allclose(fit['ch_gauss']['gauss_sigma_m'], 0.02, rtol=0.05)
    assert fit['ch_rw']['rw_sigma'] == pytest.approx(
        0.02 * np.sqrt(6), rel=0.05
    )  # Δ² of white noise
    out = tmp_path / 'gps.yaml'
    assert vepd(['calibrate', 'gps', str(path), '--model', 'ch_gauss', '--out', str(out)]) == 0
    assert node_section(out, 'gps_noise_node')['model'] == 'ch_gauss'


def test_bag_without_reader_gives_a_clear_error(tmp_path):
    bag = tmp_path / 'run.bag'
    bag.write_bytes(b'#ROSBAG V2.0\n')
    try:
        from vepd_ros.io import bags  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match='vepd_ros.io.bags'):
            L.read_gps_log(bag)


def test_sensors_simulate_cli_writes_the_library_numbers(tmp_path):
    from vepd_ros.models.sensors import simulate_sensors
    from vepd_ros.truth import generate

    assert (
        vepd(
            [
                'sensors',
                'simulate',
                '--scenario',
                'sine',
                '--gps',
                'ch_gauss+airsim',
                '--imu',
                'ch_drift',
                '--duration',
                '4',
                '--seed',
                '5',
                '--out',
                str(tmp_path),
            ]
        )
        == 0
    )
    with open(tmp_path / 'gps.csv') as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == [
        't',
        'lat',
        'lon',
        'alt',
        'east',
        'north',
        'up',
        'cov_e',
        'cov_n',
        'cov_u',
        'status',
        'sats',
        'hdop',
    ]
    lib = simulate_sensors(generate('sine', 4.0, seed=5), 'ch_gauss+airsim', 'ch_drift', seed=5)
    assert len(rows) == len(lib.gps) == 41
    np.testing.assert_array_equal([float(r['east']) for r in rows], lib.gps.position_enu[:, 0])
    np.testing.assert_array_equal([float(r['hdop']) for r in rows], lib.gps.hdop)
    imu = np.loadtxt(tmp_path / 'imu.csv', delimiter=',', skiprows=1)
    np.testing.assert_array_equal(imu[:, 4:7], lib.imu.linear_acceleration)
    truth = np.loadtxt(tmp_path / 'truth.csv', delimiter=',', skiprows=1)
    assert truth.shape[1] == 8 and len(truth) == 401
    assert vepd(['sensors', 'simulate', '--gps', 'nope', '--out', str(tmp_path)]) == 2


def test_gps_calibration_on_a_bag_standstill_window(shared_data, tmp_path):
    """
    GPS calibration from a standstill time range of a bag.

    `vepd calibrate gps BAG --topic /fix --segment A B`: a bag and a standstill time range
    (test1.bag's /fix).
    """
    from vepd_ros.io.calibration_logs import read_gps_log
    from vepd_ros.models.calibration import fit_gps

    log = read_gps_log(shared_data / 'robot_localization_tests' / 'test1.bag', TOPIC_ART_GPS_FIX)
    win = log.window(0.0, 20.0)
    assert 40 <= len(win.t_s) <= 52 and win.t_s[-1] - win.t_s[0] <= 20.0  # 2.5 Hz for 20 s
    fit = fit_gps(win)
    assert fit['n_fixes'] == len(win.t_s)
    with pytest.raises(ValueError, match='only 0 fixes'):
        log.window(1000.0, 1001.0)


def _imu_csv(path, t):
    rng = np.random.default_rng(0)
    with open(path, 'w') as fh:
        fh.write('t,wx,wy,wz,ax,ay,az\n')
        for tk in t:
            w = rng.normal(0, 1e-3, 3)
            a = rng.normal(0, 1e-2, 3) + (0, 0, 9.8)
            fh.write(','.join(repr(float(v)) for v in (tk, *w, *a)) + '\n')


def test_calibrate_imu_constant_time_column(tmp_path, capsys):
    p = tmp_path / 'imu.csv'
    _imu_csv(p, np.full(300, 1.0))
    assert vepd(['calibrate', 'imu', str(p)]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and 'time column' in err


def test_calibrate_binary_input_names_the_file(tmp_path, capsys):
    p = tmp_path / 'imu.csv'
    p.write_bytes(bytes(range(256)) * 20)
    assert vepd(['calibrate', 'imu', str(p)]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and 'binary' in err


def test_calibrate_imu_short_record_writes_only_identifiable_parameters(tmp_path, capsys):
    """
    Calibrate 17 s of white noise: only N is resolved and written.

    17 s of white noise: N is resolved; bias instability, its time and K are not and are not
    written.
    """
    from vepd_ros.params_file import node_section

    p, out = tmp_path / 'imu.csv', tmp_path / 'imu.yaml'
    _imu_csv(p, np.arange(1700) / 100.0)
    assert (
        vepd(['calibrate', 'imu', str(p), '--segment', '0', '17', '--out', str(out), '--quiet'])
        == 0
    )
    text = capsys.readouterr().out
    assert '{' not in text and '\\u' not in text  # a table, not raw JSON
    assert 'gyro_bias_instability: needs a static record of >= 3600 s' in text
    params = node_section(out, 'imu_noise_node')
    assert 'gyro_arw' in params and 'acc_vrw' in params
    unresolved = {
        'gyro_bias_instability',
        'gyro_bias_tau_s',
        'acc_bias_instability',
        'acc_bias_tau_s',
    }
    assert not unresolved & set(params)


def test_calibrate_constant_logs_are_errors_without_warnings(tmp_path, capsys):
    import warnings

    gps, imu = tmp_path / 'gps.csv', tmp_path / 'imu.csv'
    gps.write_text('t,lat,lon,alt\n' + ''.join(f'{i * 0.1},43.0,-89.0,260.0\n' for i in range(50)))
    imu.write_text(
        't,wx,wy,wz,ax,ay,az\n' + ''.join(f'{i * 0.01},0,0,0,0,0,9.8\n' for i in range(3000))
    )
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert vepd(['calibrate', 'gps', str(gps)]) == 2
        assert vepd(['calibrate', 'imu', str(imu), '--quiet']) == 2
    err = capsys.readouterr().err
    assert 'does not vary' in err and 'no variation' in err and str(imu) in err


def _gga(hhmmss: str, lat_min: float) -> str:
    body = f'GPGGA,{hhmmss},4304.{lat_min:05.0f},N,08924.07200,W,1,08,0.9,260.0,M,-33.0,M,,'
    cs = 0
    for ch in body:
        cs ^= ord(ch)
    return f'${body}*{cs:02X}'


def test_calibrate_gps_nmea_constant_time_is_an_error(tmp_path, capsys):
    """NMEA fixes all at one time of day: exit 2 naming the file (the rate would be 1/0)."""
    rng = np.random.default_rng(0)
    p = tmp_path / 'g.nmea'
    lines = [_gga('092542.00', 38600 + rng.integers(0, 50)) for _ in range(50)]
    p.write_text('\n'.join(lines) + '\n')
    assert vepd(['calibrate', 'gps', str(p), '--out', str(tmp_path / 'o.yaml')]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and 'time' in err and not (tmp_path / 'o.yaml').exists()


def test_calibrate_imu_duplicate_time_pairs_is_an_error(tmp_path, capsys):
    """
    Refuse a log whose times repeat (a zero median step), naming the file.

    Every time twice (0, 0, 0.01, 0.01, ...): a zero median step in the static segment is an
    error naming the file, not a ZeroDivisionError.
    """
    p = tmp_path / 'imu.csv'
    _imu_csv(p, (np.arange(3001) // 2) * 0.01)
    assert vepd(['calibrate', 'imu', str(p), '--quiet', '--out', str(tmp_path / 'o.yaml')]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and 'repeat' in err


def test_calibrate_csv_underscore_number_refused(tmp_path, capsys):
    """'1_0' is not 10 (float() would read it so): exit 2 naming the file, line and cell."""
    p = tmp_path / 'imu.csv'
    _imu_csv(p, np.arange(3000) * 0.01)
    lines = p.read_text().splitlines()
    c = lines[100].split(',')
    c[3] = '1_0'
    lines[100] = ','.join(c)
    p.write_text('\n'.join(lines) + '\n')
    assert vepd(['calibrate', 'imu', str(p), '--quiet', '--out', str(tmp_path / 'o.yaml')]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and "'1_0'" in err and 'line 101' in err
