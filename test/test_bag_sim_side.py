# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""A simulator's own recording as the simulated side: `vepd bag --side sim`, `vepd evaluate`."""

import json

import numpy as np
import pytest
from vepd_ros.cli import main as vepd
from vepd_ros.io.write_bag import streams_from_sensor_run, write_bag
from vepd_ros.models.sensors import simulate_sensors
from vepd_ros.runs.format import read_run
from vepd_ros.streams import TOPIC_ART_IMU
from vepd_ros.truth import generate

pytestmark = pytest.mark.slow

GZ_PARAMS = {'position_sensing.horizontal.stddev': 2e-7, 'position_sensing.vertical.stddev': 0.05}
GZ_IMU = {'angular_velocity.stddev': [0.002] * 3, 'linear_acceleration.stddev': [0.02] * 3}


def _bag(tmp_path, name, gps, imu, seed, topics, truth, gps_params=None, imu_params=None):
    run = simulate_sensors(generate('circle', 12.0, seed=seed), gps, imu, seed=seed,
                           gps_params=gps_params, imu_params=imu_params)
    return write_bag(tmp_path / name, streams_from_sensor_run(run, truth=truth), storage='mcap',
                     topics=topics)


def test_gazebo_recording_scored_against_a_real_batch(tmp_path, capsys):
    """Gazebo-layout bags (gz models, Odometry truth) → Sim/gazebo/; ART bags → Real/; VEPD."""
    root = tmp_path / 'root'
    gz_topics = {'fix': '/navsat', 'imu': TOPIC_ART_IMU, 'odom': '/model/vehicle/odometry'}
    for k in range(3):
        sim = _bag(tmp_path, f'gz{k}', 'gz_navsat', 'gz_imu', 10 + k, gz_topics, ('odom',),
                   GZ_PARAMS, GZ_IMU)
        assert vepd(['bag', str(sim), '--profile', 'gazebo', '--side', 'sim', '--label',
                     'gazebo', '--scenario', 'circle', '--out', str(root), '--quiet']) == 0
        real = _bag(tmp_path, f'art{k}', 'rtk', 'ch_drift_paper', 20 + k, None, ('gps_vel',))
        assert vepd(['bag', str(real), '--profile', 'art', '--scenario', 'circle', '--out',
                     str(root), '--quiet']) == 0
    runs = sorted((root / 'Sim' / 'gazebo').glob('circle_*.csv'))
    assert [p.name for p in runs] == ['circle_1.csv', 'circle_2.csv', 'circle_3.csv']
    rec = read_run(runs[0])
    assert np.all(np.isfinite(rec.se_v)) and len(rec.se_v) > 100
    capsys.readouterr()
    assert vepd(['evaluate', str(root), '--json', '--n-boot', '0']) == 0
    result = json.loads(capsys.readouterr().out)
    assert result['complete'] and list(result['models']) == ['gazebo']
    gz = result['models']['gazebo']
    assert gz['per_scenario']['circle']['k_real'] == gz['per_scenario']['circle']['k_sim'] == 3
    assert np.isfinite(gz['VEPD']) and gz['VEPD'] >= 0


def test_carla_profile_reads_its_topics(tmp_path):
    """The carla profile: /carla/ego_vehicle/{gnss,imu,odometry}."""
    topics = {'fix': '/carla/ego_vehicle/gnss', 'imu': '/carla/ego_vehicle/imu',
              'odom': '/carla/ego_vehicle/odometry'}
    bag = _bag(tmp_path, 'carla', 'carla_gnss', 'carla_imu', 3, topics, ('odom',),
               {'noise_lat_stddev': 2e-7}, {'noise_accel_stddev_x': 0.02})
    out = tmp_path / 'out'
    assert vepd(['bag', str(bag), '--profile', 'carla', '--side', 'sim', '--label', 'carla',
                 '--scenario', 'circle', '--out', str(out), '--quiet']) == 0
    assert (out / 'Sim' / 'carla' / 'circle_1.csv').is_file()
