# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test ``vepd bag`` on real and ART-layout bags, its errors and its profiles.

``vepd bag``: real test1.bag through the judge vs wheel odometry; ART-layout ROS 2 bags give the
offline study's runs bit for bit; errors leave no run file; recorded estimate, ranges, hybrid,
Chrono profile.
"""

from __future__ import annotations

from functools import lru_cache
import json

import numpy as np
import pytest
from test_evaluate_study import _snapshot
import test_judge_bags
from vepd_ros.cli import main as vepd
from vepd_ros.commands.bag import speed_rmse
from vepd_ros.io.write_bag import streams_from_sensor_run, write_bag
from vepd_ros.pipelines import study as pipeline
from vepd_ros.runs.format import read_run
from vepd_ros.runs.layout import BatchWriter
from vepd_ros.streams import TOPIC_GROUND_TRUTH

# ROS 1 static_transform_publisher "0 -0.3 0.52 -1.570796327 0 1.570796327 base_link imu_link" (x y
# z yaw pitch roll, PROVENANCE.md) in our roll pitch yaw order
TEST1_TF = ['--static-tf', test_judge_bags.HUSKY_TF, '--static-tf', test_judge_bags.HUSKY_GPS_TF]
# test1.bag's topics (a Husky: no ART profile)
TEST1_TOPICS = ['--profile', 'custom', '--topic', 'gps=/fix', '--topic', 'imu=/imu/data',
                '--topic', 'truth=/husky_velocity_controller/odom']


def _files(root):
    return (
        sorted(p.relative_to(root).as_posix() for p in root.rglob('*') if p.is_file())
        if root.exists()
        else []
    )


def test_test1_bag_speed_against_wheel_odometry(shared_data, tmp_path, capsys):
    """
    Judge the real Husky bag against wheel odometry.

    Real Husky data: /fix (2.5 Hz) + /imu/data (30 Hz) through the ART judge; truth = wheel
    odometry.
    """
    bag = shared_data / 'robot_localization_tests' / 'test1.bag'
    out = tmp_path / 'out'
    assert (
        vepd(
            [
                'bag',
                str(bag),
                *TEST1_TOPICS,
                *TEST1_TF,
                '--out',
                str(out),
                '--scenario',
                'husky',
            ]
        )
        == 0
    )
    rec = read_run(out / 'Real' / 'husky_1.csv')
    meta = json.loads((out / 'Real' / 'husky_1.json').read_text())
    assert meta['truth_type'] == 'nav_msgs/msg/Odometry' and meta['message_counts']['gps'] == 989
    assert rec.gt_t[-1] == pytest.approx(395.3, abs=0.5) and rec.se_t[-1] == pytest.approx(
        395.3, abs=0.5
    )
    assert len(rec.se_t) == pytest.approx(
        395.3 * 30, rel=0.01
    )  # one publication per IMU-driven tick
    rmse = speed_rmse(rec)
    print(
        f'\ntest1.bag: speed RMSE (built-in ART judge vs wheel odometry, 15 Hz grid) = {rmse:.3f} '
        f'm/s; '
        f'mean speed estimate {rec.se_v.mean():.3f}, odometry {rec.gt_v.mean():.3f} m/s'
    )
    assert rmse < 0.35  # measured 0.259 m/s (Husky at ~0.9 m/s)
    assert rec.se_v.mean() == pytest.approx(rec.gt_v.mean(), rel=0.1)


@lru_cache(maxsize=None)
def _sim(scenario='circle', gps='ch_gauss', duration=8.0, seed=3):
    sim = pipeline.simulate_run('ref', gps, 'ch_drift_paper', scenario, j=1, duration_s=duration,
                                seed=seed)
    rec = pipeline.run_records([sim], pipeline.judge_batch([sim.sensors]))[0]
    return sim, rec


def test_fixes_in_the_art_drivers_gps_frame_take_the_art_launchs_transform(tmp_path, capsys):
    """
    Place fixes in frame 'gps' (the ART driver's) with the ART launch's base_link -> gps.

    ``--profile art`` brings the vehicle's identity base_link -> gps (art_conventions §1c), so the
    run equals the study's (antenna at base_link); the same bag under ``--profile custom`` has no
    such transform, where robot_localization's navsat_transform would put every odometry/gps at
    the origin: refused with exit 2, naming the topic, the frame and the --static-tf to give.
    """
    sim, ref = _sim()
    streams = streams_from_sensor_run(sim.sensors)
    streams['fix']['frame_id'] = 'gps'
    bag = write_bag(tmp_path / 'bag', streams, topics={'odom': TOPIC_GROUND_TRUTH})
    argv = ['bag', str(bag), '--topic', 'truth=/ground_truth/odometry', '--scenario', 'circle',
            '--quiet']
    out = tmp_path / 'art'
    assert vepd([*argv, '--profile', 'art', '--out', str(out)]) == 0
    got = read_run(out / 'Real' / 'circle_1.csv')
    assert np.array_equal(got.se_v, ref.se_v)
    meta = json.loads((out / 'Real' / 'circle_1.json').read_text())
    assert meta['static_tf'] == ['base_link gps 0 0 0 0 0 0']
    capsys.readouterr()
    out = tmp_path / 'custom'
    assert vepd([*argv, '--profile', 'custom', '--topic', 'gps=/fix', '--topic', 'imu=/imu',
                 '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert '/fix: no transform base_link -> gps' in err, err
    assert '--static-tf "base_link gps X Y Z ROLL PITCH YAW"' in err, err
    assert not out.exists() and 'Traceback' not in err


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_art_layout_bag_gives_the_offline_study_run(tmp_path, storage):
    sim, ref = _sim()
    bag = write_bag(
        tmp_path / 'bag',
        streams_from_sensor_run(sim.sensors),
        storage=storage,
        topics={'odom': TOPIC_GROUND_TRUTH},
    )
    out = tmp_path / 'out'
    assert (
        vepd(
            [
                'bag',
                str(bag),
                '--profile',
                'art',
                '--topic',
                'truth=/ground_truth/odometry',
                '--out',
                str(out),
                '--scenario',
                'circle',
                '--quiet',
            ]
        )
        == 0
    )
    got = read_run(out / 'Real' / 'circle_1.csv')
    for k in ('se_t', 'se_v', 'gt_t', 'gt_v', 'se_vx', 'se_vy', 'gt_vx', 'gt_vy'):
        assert np.array_equal(getattr(got, k), getattr(ref, k)), k
    # the ART default truth (/sbg/gps_vel, NED): same estimate, truth = horizontal speed, no body
    # components
    out2 = tmp_path / 'out2'
    assert (
        vepd(
            [
                'bag',
                str(bag),
                '--profile',
                'art',
                '--out',
                str(out2),
                '--scenario',
                'circle',
                '--quiet',
            ]
        )
        == 0
    )
    sbg = read_run(out2 / 'Real' / 'circle_1.csv')
    assert np.array_equal(sbg.se_v, ref.se_v) and np.array_equal(sbg.gt_t, ref.gt_t)
    assert np.allclose(sbg.gt_v, ref.gt_v, atol=1e-12) and not sbg.has_components


def test_errors_leave_no_run_file(tmp_path, capsys):
    sim, _ = _sim()
    s = streams_from_sensor_run(sim.sensors, truth=('odom',))
    bag = write_bag(tmp_path / 'bag', s, storage='sqlite3')  # no /sbg/gps_vel
    out = tmp_path / 'out'
    assert vepd(['bag', str(bag), '--profile', 'art', '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert '/sbg/gps_vel not in the bag' in err and str(bag) in err
    assert _files(out) == []
    # truth topic of a type without an adapter
    assert (
        vepd(['bag', str(bag), '--profile', 'art', '--topic', 'truth=/imu', '--out', str(out)])
        == 2
    )
    assert 'sensor_msgs/msg/Imu' in capsys.readouterr().err and _files(out) == []
    # a good bag followed by a truncated one: nothing is written for either
    good = write_bag(tmp_path / 'good', streams_from_sensor_run(sim.sensors), storage='mcap')
    bad = write_bag(tmp_path / 'bad', streams_from_sensor_run(sim.sensors), storage='mcap')
    f = next(bad.glob('*.mcap'))
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    assert vepd(['bag', str(good), str(bad), '--profile', 'art', '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and 'truncated or corrupt' in err
    assert _files(out) == []


def test_recorded_estimate_and_ranges(tmp_path):
    sim, _ = _sim()
    s = streams_from_sensor_run(sim.sensors, truth=('gps_vel',))
    t = s['gps_vel']['t_ns']
    s['odom'] = {
        't_ns': t,
        'linear': np.column_stack(
            [np.full(len(t), 0.5), np.zeros(len(t)), np.zeros(len(t))]
        ),
    }
    bag = write_bag(tmp_path / 'bag', s, storage='sqlite3')
    ranges = tmp_path / 'runs.csv'
    ranges.write_text('start,end,scenario\n0,3.5,circle\n4,7.5,sine\n')
    out = tmp_path / 'out'
    assert (
        vepd(
            [
                'bag',
                str(bag),
                '--profile',
                'art',
                '--estimate',
                'recorded',
                '--split',
                'ranges',
                '--ranges',
                str(ranges),
                '--out',
                str(out),
                '--quiet',
            ]
        )
        == 0
    )
    a, b = read_run(out / 'Real' / 'circle_1.csv'), read_run(out / 'Real' / 'sine_1.csv')
    assert np.all(a.se_v == 0.5) and a.gt_t[-1] <= 3.5 + 1e-9 and b.gt_t[0] == 0.0
    assert (
        json.loads((out / 'Real' / 'sine_1.json').read_text())['segment']['start_s_from_bag_start']
        == 4.0
    )
    # numbering continues: the same command again makes circle_2 / sine_2
    assert (
        vepd(
            [
                'bag',
                str(bag),
                '--profile',
                'art',
                '--estimate',
                'recorded',
                '--split',
                'ranges',
                '--ranges',
                str(ranges),
                '--out',
                str(out),
                '--quiet',
            ]
        )
        == 0
    )
    assert (out / 'Real' / 'circle_2.csv').is_file() and (out / 'Real' / 'sine_2.csv').is_file()


def test_hybrid_sim_imu_real_gps_is_seeded(tmp_path):
    sim, _ = _sim()
    bag = write_bag(tmp_path / 'bag', streams_from_sensor_run(sim.sensors), storage='mcap')
    outs = []
    for k in range(2):
        out = tmp_path / f'out{k}'
        assert (
            vepd(
                [
                    'bag',
                    str(bag),
                    '--profile',
                    'art',
                    '--side',
                    'sim',
                    '--label',
                    'sim_imu',
                    '--replace',
                    'imu=ch_drift_paper',
                    '--seed',
                    '7',
                    '--out',
                    str(out),
                    '--scenario',
                    'circle',
                    '--quiet',
                ]
            )
            == 0
        )
        outs.append(read_run(out / 'Sim' / 'sim_imu' / 'circle_1.csv'))
    assert np.array_equal(outs[0].se_v, outs[1].se_v)
    meta = json.loads((tmp_path / 'out0' / 'Sim' / 'sim_imu' / 'circle_1.json').read_text())
    assert meta['replaced']['imu']['model'] == 'ch_drift_paper'
    # the simulated IMU drives a sane estimate of the same motion (truth speed ~1-2 m/s)
    assert speed_rmse(outs[0]) < 1.0
    assert vepd(['bag', str(bag), '--replace', 'imu', '--out', str(tmp_path / 'x')]) == 2
    assert _files(tmp_path / 'x') == []


def test_chrono_profile_merges_accel_and_gyro(tmp_path):
    sim, ref = _sim()
    s = streams_from_sensor_run(sim.sensors, truth=())
    imu = s.pop('imu')
    tr = sim.sensors.truth
    streams = {
        'fix': s['fix'],
        'accel': {
            't_ns': imu['t_ns'],
            'frame_id': 'base_link',
            'linear_acceleration': imu['linear_acceleration'],
            'orientation': imu['orientation'],
            'linear_acceleration_covariance': imu['linear_acceleration_covariance'],
        },
        'gyro': {
            't_ns': imu['t_ns'],
            'frame_id': 'base_link',
            'angular_velocity': imu['angular_velocity'],
            'angular_velocity_covariance': imu['angular_velocity_covariance'],
            'orientation': imu['orientation'],
        },
        'body': {
            't_ns': np.round(sim.sensors.truth_t_s * 1e9).astype(np.int64),
            'position': tr.position_enu,
            'orientation': tr.quaternion,
            'v_world': tr.velocity_enu,
        },
    }
    bag = write_bag(
        tmp_path / 'bag',
        streams,
        storage='mcap',
        topics={'fix': '/chrono_ros_node/output/gps/gps1'},
    )
    out = tmp_path / 'out'
    assert (
        vepd(
            [
                'bag',
                str(bag),
                '--profile',
                'chrono',
                '--out',
                str(out),
                '--scenario',
                'circle',
                '--quiet',
            ]
        )
        == 0
    )
    got = read_run(out / 'Real' / 'circle_1.csv')
    assert np.allclose(got.gt_v, ref.gt_v, atol=1e-9) and got.has_components
    assert speed_rmse(got) == pytest.approx(speed_rmse(ref), abs=0.05)


def test_split_stationary_from_the_command(tmp_path):
    """
    Split stop-go truth into two labelled runs.

    Stop-go truth: two motion stretches separated by 4 s standstills become two labelled runs.
    """
    t = np.arange(0, 30, 0.04)
    v = np.where(((t > 3) & (t < 11)) | ((t > 15) & (t < 26)), 1.2, 0.0)
    tn = 1_700_000_000_000_000_000 + np.round(t * 1e9).astype(np.int64)
    vel = np.column_stack([v, np.zeros_like(v), np.zeros_like(v)])
    bag = write_bag(
        tmp_path / 'bag',
        {'gps_vel': {'t_ns': tn, 'v_enu': vel}, 'odom': {'t_ns': tn, 'linear': vel}},
        storage='mcap',
    )
    out = tmp_path / 'out'
    assert (
        vepd(
            [
                'bag',
                str(bag),
                '--profile',
                'art',
                '--estimate',
                'recorded',
                '--split',
                'stationary',
                '--scenarios',
                'straight,circle',
                '--pad',
                '0.5',
                '--out',
                str(out),
                '--quiet',
            ]
        )
        == 0
    )
    a = json.loads((out / 'Real' / 'straight_1.json').read_text())['segment']
    b = json.loads((out / 'Real' / 'circle_1.json').read_text())['segment']
    assert a['start_s_from_bag_start'] == pytest.approx(3.0 - 0.5, abs=0.05)
    assert a['duration_s'] == pytest.approx(8.0 + 1.0, abs=0.1)
    assert b['start_s_from_bag_start'] == pytest.approx(15.0 - 0.5, abs=0.05)
    assert read_run(out / 'Real' / 'circle_1.csv').gt_v.max() == 1.2


test1 = test_judge_bags.test1  # the fixture, defined once


def test_bag_without_imu_transform_is_an_error_naming_it(test1, tmp_path, capsys):
    out = tmp_path / 'b'
    assert (
        vepd(
            [
                'bag',
                test1,
                *TEST1_TOPICS,
                '--static-tf',
                test_judge_bags.HUSKY_GPS_TF,
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


def _small_bag(tmp_path):
    sim = pipeline.simulate_run('ref', 'ch_gauss', 'ch_drift_paper', 'circle', j=1,
                                duration_s=8.0, seed=3)
    s = streams_from_sensor_run(sim.sensors, truth=('gps_vel',))
    t = s['gps_vel']['t_ns']
    zero = np.zeros(len(t))
    s['odom'] = {'t_ns': t, 'linear': np.column_stack([np.full(len(t), 0.5), zero, zero])}
    return write_bag(tmp_path / 'bag', s, storage='sqlite3')


BAG = ['--profile', 'art', '--estimate', 'recorded', '--quiet']


def test_bag_names_never_leave_out(tmp_path, capsys):
    bag = _small_bag(tmp_path)
    work = tmp_path / 'work'
    out = work / 'a' / 'b' / 'c' / 'out'
    before = _snapshot(tmp_path)
    outside = tmp_path / 'abs_target'
    attempts = [
        ['--scenario', '../../../X'],
        ['--side', 'sim', '--label', str(outside)],
        ['--side', 'sim', '--label', '..'],
        ['--scenario', '/etc/x'],
        ['--split', 'stationary', '--scenarios', 'circle,../../Y'],
    ]
    for extra in attempts:
        assert vepd(['bag', str(bag), *BAG, '--out', str(out), *extra]) == 2, extra
        err = capsys.readouterr().err
        assert 'Traceback' not in err and ('scenario' in err or 'label' in err), err
    ranges = tmp_path / 'ranges.csv'
    ranges.write_text('start,end,scenario\n0,3.5,circle\n4,7.5,../../../X\n')
    assert (
        vepd(
            [
                'bag',
                str(bag),
                *BAG,
                '--split',
                'ranges',
                '--ranges',
                str(ranges),
                '--out',
                str(out),
            ]
        )
        == 2
    )
    assert 'scenario' in capsys.readouterr().err
    after = _snapshot(tmp_path)
    assert after.keys() - before.keys() == {'ranges.csv'}  # nothing written anywhere, not half
    assert not outside.exists() and not (work / 'X_1.csv').exists()


def test_bag_output_policy(tmp_path, capsys):
    bag = _small_bag(tmp_path)
    mine = tmp_path / 'mine'
    mine.mkdir()
    (mine / 'thesis.tex').write_text('x')
    assert vepd(['bag', str(bag), *BAG, '--out', str(mine), '--scenario', 'circle']) == 2
    assert '--overwrite' in capsys.readouterr().err and not (mine / 'Real').exists()
    out = tmp_path / 'out'
    assert vepd(['bag', str(bag), *BAG, '--out', str(out), '--scenario', 'circle']) == 0
    # a previous output: runs are added (circle_2)
    assert vepd(['bag', str(bag), *BAG, '--out', str(out), '--scenario', 'circle']) == 0
    assert (out / 'Real' / 'circle_2.csv').is_file()
    assert (
        vepd(['bag', str(bag), *BAG, '--out', str(out), '--scenario', 'circle', '--overwrite'])
        == 0
    )
    assert sorted(p.name for p in (out / 'Real').glob('*.csv')) == ['circle_1.csv']  # replaced
    assert (
        vepd(['bag', str(bag), *BAG, '--out', str(mine), '--scenario', 'circle', '--overwrite'])
        == 0
    )
    assert (mine / 'thesis.tex').read_text() == 'x' and (mine / 'Real' / 'circle_1.csv').is_file()


@pytest.mark.parametrize('label', ['real', 'REAL', 'Real_results', 'REAL_results', 'real_results'])
def test_bag_refuses_a_label_evaluate_would_read_as_the_reference(tmp_path, capsys, label):
    """
    Refuse a reference label in ``vepd bag --side sim`` before writing.

    `vepd bag --side sim --label L` applies the reader's own check (layout.is_reference_label:
    any case, the authors' `_results` dropped): a label evaluate would refuse as Sim/<L>/ is
    refused before anything is written.
    """
    from vepd_ros.naming import is_reference_label

    assert is_reference_label(label) and not is_reference_label('REAL_RESULTS_x')
    bag = _small_bag(tmp_path)
    out = tmp_path / 'out'
    assert vepd(['bag', str(bag), *BAG, '--out', str(out), '--side', 'sim', '--label', label]) == 2
    err = capsys.readouterr().err
    assert '--label' in err and label in err and 'Traceback' not in err
    assert not out.exists()
    with pytest.raises(ValueError, match='reference side'):
        BatchWriter(tmp_path / 'w', 'sim', label)
