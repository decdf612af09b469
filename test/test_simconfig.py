# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""A simulator's own configuration (SDF/URDF, CARLA attributes, MATLAB YAML) to noise models."""

import json
import subprocess
import sys

import numpy as np
import pytest
from vepd_ros.io.simconfig import read_carla, read_matlab, read_sdf
from vepd_ros.judge.params_file import node_section
from vepd_ros.models.gps import make_gps_model
from vepd_ros.models.imu import make_imu_model, static_truth

GZ_SDF = """<?xml version="1.0"?>
<sdf version="1.9">
  <model name="car">
    <link name="base_link">
      <sensor name="navsat" type="navsat">
        <update_rate>5</update_rate>
        <navsat>
          <position_sensing>
            <horizontal><noise type="gaussian"><stddev>2e-6</stddev></noise></horizontal>
            <vertical><noise type="gaussian"><stddev>0.4</stddev></noise></vertical>
          </position_sensing>
        </navsat>
      </sensor>
      <sensor name="imu" type="imu">
        <update_rate>100</update_rate>
        <imu>
          <angular_velocity>
            <x><noise type="gaussian"><stddev>0.01</stddev></noise></x>
            <y><noise type="gaussian"><stddev>0.02</stddev></noise></y>
            <z><noise type="gaussian"><stddev>0.03</stddev></noise></z>
          </angular_velocity>
          <linear_acceleration>
            <z><noise type="gaussian"><stddev>0.1</stddev><precision>0.05</precision></noise></z>
          </linear_acceleration>
        </imu>
      </sensor>
    </link>
  </model>
</sdf>
"""

CLASSIC_URDF = """<?xml version="1.0"?>
<robot name="husky">
  <gazebo reference="gps_link">
    <sensor name="gps" type="gps">
      <gps>
        <position_sensing>
          <horizontal><noise type="gaussian"><stddev>2e-6</stddev></noise></horizontal>
          <vertical><noise type="gaussian"><stddev>0.4</stddev></noise></vertical>
        </position_sensing>
      </gps>
    </sensor>
  </gazebo>
  <gazebo reference="imu_link">
    <sensor name="imu" type="imu">
      <imu>
        <noise>
          <type>gaussian</type>
          <rate><mean>0</mean><stddev>0.02</stddev><bias_mean>0.001</bias_mean></rate>
          <accel><stddev>0.1</stddev></accel>
        </noise>
      </imu>
    </sensor>
  </gazebo>
  <gazebo>
    <plugin name="gps_controller" filename="libhector_gazebo_ros_gps.so">
      <updateRate>4.0</updateRate>
      <gaussianNoise>0.1 0.1 0.2</gaussianNoise>
      <drift>0.5</drift>
    </plugin>
  </gazebo>
</robot>
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_gz_sdf_round_trips_to_models_whose_samples_match(tmp_path):
    """The gz spelling: per-axis IMU blocks, navsat degrees, update_rate as the rate."""
    gps, imu = read_sdf(_write(tmp_path, 'robot.sdf', GZ_SDF))
    assert (gps.model, gps.rate_hz, gps.line) == ('gz_navsat', 5.0, 5)
    assert (imu.model, imu.rate_hz) == ('gz_imu', 100.0)
    assert imu.params['angular_velocity.stddev'] == [0.01, 0.02, 0.03]
    n = 20_000
    w, f, q = static_truth(n)
    out = make_imu_model(imu.model, seed=1, **imu.params).sample_arrays(
        np.arange(n) * 0.01, w, f, q)
    assert out.angular_velocity.std(0) == pytest.approx([0.01, 0.02, 0.03], rel=0.03)
    z = out.linear_acceleration[:, 2]
    assert np.allclose(z / 0.05, np.round(z / 0.05), atol=1e-9)
    t = np.arange(n) * 0.2
    err = make_gps_model(gps.model, seed=1, **gps.params).sample(t, np.zeros((n, 3))).error_enu
    assert err[:, 2].std() == pytest.approx(0.4, rel=0.03)


def test_classic_urdf_and_hector_plugin(tmp_path):
    """Gazebo Classic's <gps> and legacy <imu><noise><rate>/<accel>; hector's GPS plugin."""
    gps, imu, hector = read_sdf(_write(tmp_path, 'husky.urdf', CLASSIC_URDF))
    assert gps.model == 'gz_navsat' and gps.params['position_sensing.vertical.stddev'] == 0.4
    assert imu.params['angular_velocity.stddev'] == [0.02] * 3
    assert imu.params['angular_velocity.bias_mean'] == [0.001] * 3
    assert imu.params['linear_acceleration.stddev'] == [0.1] * 3
    assert hector.model == 'hector_gps' and hector.rate_hz == 4.0
    assert hector.params == {'gaussianNoise': [0.1, 0.1, 0.2], 'drift': [0.5] * 3}
    make_gps_model(hector.model, **hector.params)


@pytest.mark.parametrize('bad, expected', [
    ('<stddev>abc</stddev>', 'line 9: <stddev>: expected a finite number'),
    ('<stddev>nan</stddev>', 'line 9: <stddev>: expected a finite number'),
    ('<sigma>1</sigma>', 'line 9: <noise><sigma>: unknown element'),
])
def test_malformed_sdf_names_the_element_and_line(tmp_path, bad, expected):
    text = GZ_SDF.replace('<stddev>2e-6</stddev>', bad)
    with pytest.raises(ValueError, match=expected.replace('<', '.').replace('>', '.')):
        read_sdf(_write(tmp_path, 'bad.sdf', text))


def test_unsupported_noise_type_and_entities_are_refused(tmp_path):
    text = GZ_SDF.replace('<noise type="gaussian"><stddev>2e-6',
                          '<noise type="custom"><stddev>2e-6')
    with pytest.raises(ValueError, match="line 9: <noise type='custom'>"):
        read_sdf(_write(tmp_path, 'custom.sdf', text))
    bomb = '<?xml version="1.0"?><!DOCTYPE s [<!ENTITY a "aaaa">]><sdf>&a;</sdf>'
    with pytest.raises(ValueError, match='entity declarations refused'):
        read_sdf(_write(tmp_path, 'bomb.sdf', bomb))


def test_carla_objects_file_and_blueprint_dictionary(tmp_path):
    """carla-ros-bridge objects.json (strings as CARLA stores them) and a blueprint-keyed YAML."""
    objects = {'objects': [{'type': 'vehicle.tesla.model3', 'id': 'ego', 'sensors': [
        {'type': 'sensor.other.gnss', 'id': 'gnss', 'noise_lat_stddev': '0.000005',
         'noise_alt_bias': 1.0, 'sensor_tick': '0.1'},
        {'type': 'sensor.other.imu', 'id': 'imu', 'noise_gyro_bias_z': 0.01,
         'noise_accel_stddev_x': 0.2, 'sensor_tick': 0.01}]}]}
    gnss, imu = read_carla(_write(tmp_path, 'objects.json', json.dumps(objects)))
    assert (gnss.model, gnss.rate_hz) == ('carla_gnss', 10.0)
    assert gnss.params['noise_lat_stddev'] == 5e-6
    assert (imu.model, imu.rate_hz) == ('carla_imu', 100.0)
    t = np.arange(5000) * 0.1
    err = make_gps_model(gnss.model, seed=2, **gnss.params).sample(t, np.zeros((5000, 3)))
    assert np.allclose(err.error_enu[:, 2], 1.0)
    yaml_text = 'sensor.other.gnss:\n  noise_lon_stddev: 1.0e-5\n  noise_foo: 1\n'
    with pytest.raises(ValueError, match='noise_foo: not a sensor.other.gnss attribute'):
        read_carla(_write(tmp_path, 'bp.yaml', yaml_text))


def test_matlab_yaml(tmp_path):
    good = 'gpsSensor:\n  SampleRate: 10\n  HorizontalPositionAccuracy: 0.5\n  DecayFactor: 0.9\n'
    (gps,) = read_matlab(_write(tmp_path, 'gps.yaml', good))
    assert (gps.model, gps.rate_hz) == ('matlab_gps', 10.0)
    assert gps.params == {'HorizontalPositionAccuracy': 0.5, 'DecayFactor': 0.9}
    with pytest.raises(ValueError, match='DecayFactor'):
        read_matlab(_write(tmp_path, 'bad.yaml', 'gpsSensor:\n  DecayFactor: 1.5\n'))
    with pytest.raises(ValueError, match='HorizontalAccuracy: not a gpsSensor'):
        read_matlab(_write(tmp_path, 'typo.yaml', 'gpsSensor:\n  HorizontalAccuracy: 1\n'))


def _vepd(*args):
    return subprocess.run([sys.executable, '-m', 'vepd_ros.cli', *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_cli_from_sdf_writes_the_yaml_the_nodes_read(tmp_path):
    """`vepd sensors from-sdf` prints the models, warns on the degree trap, writes both nodes."""
    sdf = _write(tmp_path, 'robot.sdf', GZ_SDF.replace('2e-6', '0.01'))
    out = tmp_path / 'sensors.yaml'
    res = _vepd('sensors', 'from-sdf', sdf, '--out', out)
    assert res.returncode == 0, res.stderr
    assert "GPS sensor 'navsat' (line 5): model gz_navsat, 5 Hz" in res.stdout
    assert 'DEGREES' in res.stderr
    gps = node_section(out, 'gps_noise_node')
    assert gps['model'] == 'gz_navsat' and gps['rate_hz'] == 5.0
    assert node_section(out, 'imu_noise_node')['model'] == 'gz_imu'
    sim_out = tmp_path / 'sim'
    res = _vepd('sensors', 'simulate', '--gps-params', out, '--imu-params', out,
                '--duration', 3, '--out', sim_out)
    assert res.returncode == 0, res.stderr


def test_cli_bad_file_is_exit_2_without_traceback(tmp_path):
    bad = _write(tmp_path, 'bad.sdf', GZ_SDF.replace('<stddev>0.4</stddev>', '<stddev>x</stddev>'))
    res = _vepd('sensors', 'from-sdf', bad)
    assert res.returncode == 2 and 'Traceback' not in res.stderr
    assert 'line 10: <stddev>: expected a finite number' in res.stderr
