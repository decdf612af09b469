# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Replay robot_localization's own bag regression tests through ``vepd judge replay``.

robot_localization's own bag regression tests, replayed through `vepd judge replay`
(shared/data/robot_localization_tests/PROVENANCE.md): the final /odometry/filtered position must be
within the upstream tolerance of the upstream expected value.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np
import pytest
from vepd_ros.cli import main as vepd
from vepd_ros.commands.judge import add_replay_arguments
from vepd_ros.pipelines.replay import run_replay

# ekf bag1 (test1.bag, Husky): frequency 30, odom0 vx vy vz, imu0 roll pitch yaw vroll vpitch ax ay
# az
BAG1_YAML = """
ekf_filter_node:
  ros__parameters:
    frequency: 30.0
    sensor_timeout: 0.1
    two_d_mode: false
    world_frame: odom
    odom0: /husky_velocity_controller/odom
    odom0_config: [false, false, false, false, false, false, true, true, true, false, false, false, false, false, false]
    imu0: /imu/data
    imu0_config: [false, false, false, true, true, true, false, false, false, true, true, false, true, true, true]
    imu0_remove_gravitational_acceleration: true
    process_noise_covariance: [0.05, 0.05, 0.06, 0.03, 0.03, 0.06, 0.025, 0.025, 0.04, 0.01, 0.01, 0.02, 0.01, 0.01, 0.015]
"""  # noqa: E501 (one ekf row per line; the string's value must not change)
# ekf bag2 (test2.bag, Jackal): frequency 50, odom0 vx vy vz vyaw, imu0 roll pitch yaw vroll vpitch
# vyaw ax ay az
BAG2_YAML = """
ekf_filter_node:
  ros__parameters:
    frequency: 50.0
    sensor_timeout: 0.1
    odom0: /jackal_velocity_controller/odom
    odom0_config: [false, false, false, false, false, false, true, true, true, false, false, true, false, false, false]
    imu0: /imu/data
    imu0_config: [false, false, false, true, true, true, false, false, false, true, true, true, true, true, true]
    imu0_remove_gravitational_acceleration: true
    process_noise_covariance: [0.03, 0.03, 0.04, 0.03, 0.03, 0.06, 0.025, 0.025, 0.05, 0.002, 0.002, 0.004, 0.01, 0.01, 0.01]
"""  # noqa: E501 (one ekf row per line; the string's value must not change)
# the ROS 1 test's transform, `static_transform_publisher 0 -0.3 0.52 -1.570796327 0 1.570796327
# base_link imu_link` (x y z yaw pitch roll), as roll pitch yaw
# test1.bag has no TF: the Husky's IMU mounting (robot_localization's test launch) and its GPS
# antenna's, which the bag does not say: at base_link's origin (navsat_transform needs base_link ->
# the fixes' frame '/gps', or it puts every odometry/gps at the origin; tf2 itself refuses a frame
# id with a leading '/', which the judge strips: docs/judge.md difference 13, open)
HUSKY_TF = 'base_link imu_link 0 -0.3 0.52 1.570796327 0 -1.570796327'
HUSKY_GPS_TF = 'base_link gps 0 0 0 0 0 0'


def _final(out: Path):
    with open(out, newline='') as fh:
        rows = list(csv.DictReader(fh))
    assert rows, 'no odometry/filtered rows written'
    stamps = np.array([int(r['stamp_ns']) for r in rows])
    assert np.all(np.diff(stamps) > 0)  # published only when the stamp moves forward
    return np.array([float(rows[-1][c]) for c in ('x', 'y', 'z')]), len(rows)


def _replay_args(argv):
    p = argparse.ArgumentParser()
    add_replay_arguments(p)
    return p.parse_args(argv)


def test_ekf_bag2_through_the_cli(shared_data, tmp_path, capsys):
    from vepd_ros.cli import main

    cfg = tmp_path / 'ekf_bag2.yaml'
    cfg.write_text(BAG2_YAML)
    out = tmp_path / 'bag2.csv'
    rc = main(
        [
            'judge',
            'replay',
            '--ekf-config',
            str(cfg),
            str(shared_data / 'robot_localization_tests' / 'test2.bag'),
            '--out',
            str(out),
        ]
    )
    assert rc == 0
    final, n = _final(out)
    assert np.linalg.norm(final - [1.0206, 3.4292, 0.7419]) < 0.1383
    assert n > 50 * 55  # ~50 Hz over the 61 s bag
    assert 'final position' in capsys.readouterr().out


def test_ekf_bag1_rotated_imu(shared_data, tmp_path):
    cfg = tmp_path / 'ekf_bag1.yaml'
    cfg.write_text(BAG1_YAML)
    out = tmp_path / 'bag1.csv'
    args = _replay_args(
        [
            '--ekf-config',
            str(cfg),
            str(shared_data / 'robot_localization_tests' / 'test1.bag'),
            '--out',
            str(out),
            '--static-tf',
            HUSKY_TF,
        ]
    )
    assert run_replay(args) == 0
    final, n = _final(out)
    err = np.linalg.norm(final - [-40.0454, -76.9988, -2.6974])
    assert err < 1.0452, f'final position {final}, {err:.3f} m from upstream'


def test_ekf_bag1_through_the_cli(shared_data, tmp_path):
    from vepd_ros.cli import build_parser, main

    help_text = build_parser()._subparsers._group_actions[0].choices['judge'].format_help()
    replay_parser = (
        build_parser()
        ._subparsers._group_actions[0]
        .choices['judge']
        ._subparsers._group_actions[0]
        .choices['replay']
    )
    if not any('--static-tf' in a.option_strings for a in replay_parser._actions):
        pytest.skip(
            '`vepd judge replay` has no --static-tf yet: commands/judge.py should register its '
            'options '
            'with vepd_ros.commands.judge.add_replay_arguments'
        )
    assert 'replay' in help_text
    cfg = tmp_path / 'ekf_bag1.yaml'
    cfg.write_text(BAG1_YAML)
    out = tmp_path / 'bag1.csv'
    assert (
        main(
            [
                'judge',
                'replay',
                '--ekf-config',
                str(cfg),
                str(shared_data / 'robot_localization_tests' / 'test1.bag'),
                '--out',
                str(out),
                '--static-tf',
                HUSKY_TF,
            ]
        )
        == 0
    )
    final, _ = _final(out)
    assert np.linalg.norm(final - [-40.0454, -76.9988, -2.6974]) < 1.0452


def test_bag1_gps_through_navsat(shared_data, tmp_path):
    """
    Replay test1.bag's real /fix through navsat_transform fed by the filter.

    test1.bag's real /fix through navsat_transform, fed by the filter's own output (the judge
    graph): one odometry/gps per fix after the datum, z = 0 (zero_altitude), and the UTM → odom map
    is rigid: horizontal distances between fixes are kept to the millimetre.
    """
    from vepd_ros.judge.navsat import utm_forward
    from vepd_ros.pipelines.replay import read_bag, replay

    cfg = tmp_path / 'ekf_bag1.yaml'
    cfg.write_text(BAG1_YAML)
    nav = tmp_path / 'navsat.yaml'
    nav.write_text(
        'navsat_transform:\n  ros__parameters:\n    frequency: 10.0\n    zero_altitude: true\n'
        '    use_odometry_yaw: true\n'
    )
    bag = shared_data / 'robot_localization_tests' / 'test1.bag'
    r = replay(cfg, bag, navsat_config=nav, static_tf=[HUSKY_TF, HUSKY_GPS_TF])
    g = r['gps_odom_position'][0]
    fix = read_bag(bag)['fix'].cols
    assert 980 <= g.shape[0] <= 989 and np.all(g[:, 2] == 0.0)
    sel = np.isin(fix['stamp_ns'], r['gps_odom_stamp_ns'])
    x, y, _, _ = utm_forward(fix['latitude'][sel], fix['longitude'][sel])
    d_utm = np.hypot(np.diff(x), np.diff(y))
    d_odom = np.hypot(*np.diff(g[:, :2], axis=0).T)
    np.testing.assert_allclose(d_odom, d_utm, atol=1e-3)
    assert np.linalg.norm(g[0, :2]) < 1.0  # the datum fix sits at the filter's pose


def test_replay_errors(tmp_path):
    cfg = tmp_path / 'e.yaml'
    cfg.write_text(BAG2_YAML)
    with pytest.raises(FileNotFoundError):
        run_replay(
            _replay_args(
                [
                    '--ekf-config',
                    str(cfg),
                    str(tmp_path / 'missing.bag'),
                    '--out',
                    str(tmp_path / 'o.csv'),
                ]
            )
        )
    with pytest.raises(ValueError, match='static transform'):
        run_replay(
            _replay_args(
                [
                    '--ekf-config',
                    str(cfg),
                    str(tmp_path),
                    '--out',
                    str(tmp_path / 'o.csv'),
                    '--static-tf',
                    'base_link imu 1 2',
                ]
            )
        )


REPLAY_ART_CONFIG = ['judge', 'replay', '--ekf-config', 'config/ekf.yaml',
                     '--navsat-config', 'config/navsat.yaml']  # the graph's judge configuration


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
    assert vepd([*REPLAY_ART_CONFIG, test1, '--static-tf', HUSKY_GPS_TF, '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert '--static-tf "base_link imu_link' in err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_replay_without_the_fix_frame_transform_is_refused_naming_it(test1, tmp_path, capsys):
    """
    Refuse fixes whose frame robot_localization cannot place on base_link.

    Upstream's navsat_transform would publish every odometry/gps at the origin (docs/judge.md,
    difference 11): the replay refuses with exit 2, names the frame and the ``--static-tf`` to
    give, and writes nothing.
    """
    out = tmp_path / 'X.csv'
    assert vepd([*REPLAY_ART_CONFIG, test1, '--static-tf', HUSKY_TF, '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert 'no transform base_link -> /gps' in err and 'origin' in err, err
    assert '--static-tf "base_link /gps X Y Z ROLL PITCH YAW"' in err, err
    assert 'Traceback' not in err and not list(tmp_path.iterdir())


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
                *REPLAY_ART_CONFIG,
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
                *REPLAY_ART_CONFIG,
                str(bag),
                '--out',
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert str(bag) in err and 'Traceback' not in err
    assert not out.exists()
