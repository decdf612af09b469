# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test judge replay, bag and calibrate under careless use.

`vepd judge replay`, `vepd bag`, `vepd calibrate` under careless use (issues 13 and 17): exit 0
only with a real result; otherwise exit 2 with a message naming the topic, transform, file or
field, and no file written.
"""

import numpy as np
import pytest
from vepd_ros.cli import main as vepd

HUSKY_TF = 'base_link imu_link 0 -0.3 0.52 1.570796327 0 -1.570796327'


@pytest.fixture
def test1(shared_data):
    return str(shared_data / 'robot_localization_tests' / 'test1.bag')


def test_replay_docs_example_without_navsat_names_the_topic_and_the_flag(test1, tmp_path, capsys):
    out = tmp_path / 'X.csv'
    assert (
        vepd(['judge', 'replay', '--ekf-config', 'config/ekf.yaml', test1, '--out', str(out)]) == 2
    )
    err = capsys.readouterr().err
    assert '/odometry/gps' in err and '--navsat-config' in err
    assert not out.exists()


def test_replay_without_the_imu_transform_names_it(test1, tmp_path, capsys):
    out = tmp_path / 'X.csv'
    assert (
        vepd(
            [
                'judge',
                'replay',
                '--ekf-config',
                'config/ekf.yaml',
                '--navsat-config',
                'config/navsat.yaml',
                test1,
                '--out',
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert '--static-tf "base_link imu_link' in err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_replay_missing_ekf_topic_is_an_error(test1, tmp_path, capsys):
    cfg = tmp_path / 'ekf.yaml'
    cfg.write_text(
        'ekf_filter_node:\n  ros__parameters:\n    frequency: 30.0\n'
        '    twist0: /wheel_twist\n    twist0_config: [false, false, false, false, '
        'false, false,'
        ' true, false, false, false, false, false, false, false, false]\n'
        '    imu0: /imu/data\n    imu0_config: [false, false, false, false, false, '
        'false,'
        ' false, false, false, false, false, true, false, false, false]\n'
    )
    assert (
        vepd(
            [
                'judge',
                'replay',
                '--ekf-config',
                str(cfg),
                '--static-tf',
                HUSKY_TF,
                test1,
                '--out',
                str(tmp_path / 'X.csv'),
            ]
        )
        == 2
    )
    assert '/wheel_twist' in capsys.readouterr().err
    assert not (tmp_path / 'X.csv').exists()


def test_replay_out_existing_directory_refused_without_stray_tmp(test1, tmp_path, capsys):
    d = tmp_path / 'existing'
    d.mkdir()
    assert (
        vepd(
            [
                'judge',
                'replay',
                '--ekf-config',
                'config/ekf.yaml',
                '--navsat-config',
                'config/navsat.yaml',
                '--static-tf',
                HUSKY_TF,
                test1,
                '--out',
                str(d),
            ]
        )
        == 2
    )
    assert 'directory' in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [d] and not list(d.iterdir())


def test_bag_without_imu_transform_is_an_error_naming_it(test1, tmp_path, capsys):
    out = tmp_path / 'b'
    assert (
        vepd(
            [
                'bag',
                test1,
                '--profile',
                'custom',
                '--topic',
                'gps=/fix',
                '--topic',
                'imu=/imu/data',
                '--topic',
                'truth=/husky_velocity_controller/odom',
                '--out',
                str(out),
                '--scenario',
                'husky',
                '--quiet',
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert '0 estimate' in err and '--static-tf "base_link imu_link' in err
    assert not out.exists()


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


@pytest.mark.parametrize(
    'content, words',
    [
        (bytes(range(256)) * 8, 'not a readable CSV'),
        (b'stamp_ns,wx\n12,0.1\n1x,2\n', "line 3, column 'stamp_ns'"),
        (b'stamp_ns,wx\n\n12,0.1\n\n1x,2\n', 'line 5'),
        (b'stamp_ns,wx\n12,0.1,7\n', 'line 2'),
    ],
)
def test_replay_raw_csv_errors_name_file_and_line(tmp_path, capsys, content, words):
    d = tmp_path / 'raw'
    d.mkdir()
    (d / 'raw_imu0.csv').write_bytes(content)
    assert (
        vepd(
            [
                'judge',
                'replay',
                '--ekf-config',
                'config/ekf.yaml',
                str(d),
                '--out',
                str(tmp_path / 'r.csv'),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert 'raw_imu0.csv' in err and words in err


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


@pytest.mark.parametrize(
    'opts, name',
    [
        (['--sim-imu-rate', '1e-300', '--replace', 'imu=ch_rw'], '--sim-imu-rate'),
        (['--sim-imu-rate', '1e12', '--replace', 'imu=ch_rw'], '--sim-imu-rate'),
        (['--sim-gps-rate', 'inf', '--replace', 'gps=ch_gauss'], '--sim-gps-rate'),
        (['--sim-gps-rate', 'nan', '--replace', 'gps=ch_gauss'], '--sim-gps-rate'),
        (['--split', 'stationary', '--pad', 'nan'], '--pad'),
        (['--split', 'stationary', '--stationary-threshold', 'nan'], '--stationary-threshold'),
        (['--split', 'stationary', '--min-run', 'inf'], '--min-run'),
        (['--split', 'stationary', '--min-gap', '-1'], '--min-gap'),
        (['--static-tf', 'base_link gps 0 0 nan 0 0 0'], '--static-tf'),
        (['--static-tf', 'base_link gps 0 0 0 0 0 0 0'], '--static-tf'),
    ],
)
def test_bag_numeric_options_refused_naming_the_option(tmp_path, capsys, opts, name):
    """
    Refuse out-of-range rates and bad standstill or transform options.

    Rates outside the judge's frequency range (1e-300 Hz: an infinite period; 1e12 Hz: a zero
    one), non-finite standstill options, a NaN or zero-length static transform: exit 2 naming the
    option, nothing written (checked before the bag is read).
    """
    out = tmp_path / 'out'
    assert vepd(['bag', str(tmp_path / 'no_bag'), '--out', str(out), *opts]) == 2
    assert name in capsys.readouterr().err
    assert not out.exists()


def test_static_tf_parse_refuses_nan_and_zero_quaternion():
    from vepd_ros.judge.navsat import StaticTF

    for spec in ('a b 0 0 0 nan 0 0', 'a b 0 0 0 0 0 0 0', 'a b inf 0 0 0 0 0'):
        with pytest.raises(ValueError, match='--static-tf'):
            StaticTF.parse([spec])
    assert StaticTF.parse(['a b 0 0 0 0 0 0 1']) is not None


@pytest.mark.parametrize('content', [b'SQLite format 3\x00' + b'\x00' * 200, b'\xff' * 4096])
def test_replay_corrupt_bag_is_an_error_naming_it(tmp_path, capsys, content):
    """
    Refuse a truncated or corrupt bag in judge replay with exit 2.

    Judge replay reads bags with vepd bag's open checks (io.bags): a truncated or corrupt .db3
    is exit 2 naming the file, not an AnyReaderError traceback; nothing written.
    """
    bag = tmp_path / 'truncated.db3'
    bag.write_bytes(content)
    out = tmp_path / 'out.csv'
    assert (
        vepd(
            [
                'judge',
                'replay',
                str(bag),
                '--ekf-config',
                'config/ekf.yaml',
                '--navsat-config',
                'config/navsat.yaml',
                '--out',
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert str(bag) in err and 'Traceback' not in err
    assert not out.exists()


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


@pytest.mark.parametrize('rate', [1e-300, 1e12, float('inf'), float('nan'), 0.0])
def test_sensor_clock_rate_bounded(rate):
    """
    Refuse a rate outside the supported range in period_ns, naming rate_hz.

    models.sensors.period_ns: a rate outside [MIN_RATE_HZ, MAX_RATE_HZ] is a ValueError naming
    rate_hz (1e-300 Hz overflowed int(), 1e12 Hz gave a zero period and a ZeroDivisionError).
    """
    from vepd_ros.models.sensors import period_ns, sample_times

    with pytest.raises(ValueError, match='rate_hz'):
        period_ns(rate)
    with pytest.raises(ValueError, match='rate_hz'):
        sample_times(0.0, 3.0, rate)


@pytest.mark.parametrize('opt', ['--gps-rate', '--imu-rate'])
def test_sensors_simulate_tiny_rate_is_an_error(tmp_path, capsys, opt):
    out = tmp_path / 'out'
    assert vepd(['sensors', 'simulate', '--duration', '3', opt, '1e-300', '--out', str(out)]) == 2
    assert 'rate' in capsys.readouterr().err
