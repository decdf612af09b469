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
from vepd_ros.models.gps import make_gps_model
from vepd_ros.models.imu import make_imu_model, static_truth
from vepd_ros.params_file import node_section

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
      <status>2</status>
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
    assert hector.params == {'gaussianNoise': [0.1, 0.1, 0.2], 'drift': [0.5] * 3,
                             'fix_status': 2}
    make_gps_model(hector.model, **hector.params)


@pytest.mark.parametrize('bad, expected', [
    ('<stddev>abc</stddev>', 'line 9: <stddev>: expected a finite decimal number'),
    ('<stddev>nan</stddev>', 'line 9: <stddev>: expected a finite decimal number'),
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
    with pytest.raises(ValueError, match='line 3: .*noise_foo: not a sensor.other.gnss attr'):
        read_carla(_write(tmp_path, 'bp.yaml', yaml_text))


def test_matlab_yaml(tmp_path):
    good = 'gpsSensor:\n  SampleRate: 10\n  HorizontalPositionAccuracy: 0.5\n  DecayFactor: 0.9\n'
    (gps,) = read_matlab(_write(tmp_path, 'gps.yaml', good))
    assert (gps.model, gps.rate_hz) == ('matlab_gps', 10.0)
    assert gps.params == {'HorizontalPositionAccuracy': 0.5, 'DecayFactor': 0.9}
    with pytest.raises(ValueError, match='DecayFactor'):
        read_matlab(_write(tmp_path, 'bad.yaml', 'gpsSensor:\n  DecayFactor: 1.5\n'))
    with pytest.raises(ValueError, match='line 2: gpsSensor: HorizontalAccuracy: not a gpsSensor'):
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
    assert 'line 10: <stddev>: expected a finite decimal number' in res.stderr


MATLAB_IMU_YAML = """\
gpsSensor:
  SampleRate: 1
  HorizontalPositionAccuracy: 1.6
imuSensor:
  SampleRate: 200
  ReferenceFrame: ENU
  Temperature: 25
  MagneticField: [27.5, -2.4, -16.1]
  Accelerometer:
    MeasurementRange: 19.6133
    Resolution: 0.0023928
    ConstantBias: 0.19
    NoiseDensity: 0.0012356
    AxesMisalignment: [2, 0, 0]
    TemperatureBias: 0.01
  Gyroscope:
    MeasurementRange: .inf
    NoiseDensity: [0.01, 0.02, 0.03]
    RandomWalk: 0.001
    NoiseType: single-sided
    AxesMisalignment: [[100, 1, 0], [0, 100, 0], [0, 0, 100]]
    BiasInstabilityCoefficients: {Numerator: 1, Denominator: [1, -0.9]}
    AccelerationBias: 0
"""


def test_matlab_imu_yaml_round_trips_to_a_model_whose_samples_match(tmp_path):
    """The imuSensor's accelparams/gyroparams, MATLAB's scalar expansion, Inf as no saturation."""
    gps, imu = read_matlab(_write(tmp_path, 'sensors.yaml', MATLAB_IMU_YAML))
    assert gps.model == 'matlab_gps'
    assert (imu.kind, imu.model, imu.name, imu.rate_hz) == ('imu', 'matlab_imu', 'imuSensor',
                                                            200.0)
    p = imu.params
    assert p['Accelerometer.ConstantBias'] == [0.19] * 3
    assert p['Accelerometer.AxesMisalignment'] == [100, 0, 0, 2, 100, 0, 2, 0, 100]
    assert p['Gyroscope.AxesMisalignment'] == [100, 1, 0, 0, 100, 0, 0, 0, 100]
    assert p['Gyroscope.MeasurementRange'] == 0.0
    assert p['Gyroscope.BiasInstabilityCoefficients.Denominator'] == [1.0, -0.9]
    assert [w.split(': ')[1] for w in imu.warnings] == [
        'imuSensor.MagneticField', 'imuSensor.Accelerometer.TemperatureBias']
    n = 20_000
    w, f, q = static_truth(n)
    out = make_imu_model(imu.model, seed=1, **imu.params).sample_arrays(np.arange(n) / 200.0,
                                                                        w, f, q)
    # single-sided at 200 Hz: σ = N·√200 (the random walk adds < 1 % over 100 s)
    white = np.diff(out.angular_velocity, axis=0).std(0) / np.sqrt(2)
    assert white == pytest.approx(np.array([0.01, 0.02, 0.03]) * np.sqrt(200), rel=0.03)
    acc = out.linear_acceleration
    assert np.allclose(acc / 0.0023928, np.round(acc / 0.0023928), atol=1e-9)
    assert acc[:, 0].mean() == pytest.approx(0.19, abs=0.003)
    # the z axis: 9.80665 + 0.19 + 2 % of the (zero) x reading: within the range, quantised
    assert acc[:, 2].mean() == pytest.approx(9.99665, abs=0.003)


@pytest.mark.parametrize('text, expected', [
    ('imuSensor:\n  Accelerometer:\n    NoiseDensty: 0.1\n',
     'imuSensor.Accelerometer.NoiseDensty: not an accelparams property'),
    ('imuSensor:\n  Gyroscope:\n    NoiseDensity: -0.1\n',
     "parameter 'Gyroscope.NoiseDensity': got"),
    ('imuSensor:\n  Gyroscope:\n    NoiseDensity: [1, 2]\n',
     'imuSensor.Gyroscope.NoiseDensity: expected a number or 3 numbers'),
    ('imuSensor:\n  Gyroscope:\n    AxesMisalignment: [[1, 2, 3], [4, 5, 6]]\n',
     'imuSensor.Gyroscope.AxesMisalignment: expected a number, 3 numbers or a 3-by-3'),
    ('imuSensor:\n  Accelerometer:\n    MeasurementRange: 0\n',
     'imuSensor.Accelerometer.MeasurementRange: expected a positive number or Inf'),
    ('imuSensor:\n  Accelerometer:\n    Resolution: fine\n',
     "imuSensor.Accelerometer.Resolution: expected a finite number, got 'fine'"),
    ('imuSensor:\n  Temperature: 35\n', 'imuSensor.Temperature: 35 °C: the temperature terms'),
    ('imuSensor:\n  Gyroscope:\n    AccelerationBias: 0.3\n',
     'imuSensor.Gyroscope.AccelerationBias: the gyroscope acceleration sensitivity'),
    ('imuSensor:\n  Gyroscope:\n    BiasInstabilityCoefficients: {Numerator: 1, Poles: 2}\n',
     'BiasInstabilityCoefficients: expected a mapping of Numerator and Denominator'),
    ('imuSensor:\n  IMUSampleRate: 100\n', 'imuSensor.IMUSampleRate: not an imuSensor property'),
    ('insSensor:\n  RollAccuracy: 0.2\n', 'insSensor: not supported'),
])
def test_matlab_imu_bad_property_names_it(tmp_path, text, expected):
    with pytest.raises(ValueError) as err:
        read_matlab(_write(tmp_path, 'bad.yaml', text))
    assert expected in str(err.value) and 'bad.yaml' in str(err.value)


def test_cli_from_matlab_writes_the_imu_node_parameters(tmp_path):
    """`vepd sensors from-matlab` with an imuSensor: the imu node's model, rate and properties."""
    out = tmp_path / 'sensors.yaml'
    res = _vepd('sensors', 'from-matlab', _write(tmp_path, 'm.yaml', MATLAB_IMU_YAML),
                '--out', out)
    assert res.returncode == 0, res.stderr
    imu = node_section(out, 'imu_noise_node')
    assert (imu['model'], imu['rate_hz']) == ('matlab_imu', 200.0)
    assert imu['Gyroscope.NoiseType'] == 'single-sided'
    res = _vepd('sensors', 'from-matlab', _write(tmp_path, 'bad.yaml',
                                                 'imuSensor:\n  Gyroscope: 3\n'))
    assert res.returncode == 2 and 'Traceback' not in res.stderr
    assert 'imuSensor.Gyroscope: expected a mapping of gyroparams properties' in res.stderr


def test_load_sensor_file_reads_every_format(tmp_path):
    """One entry for any file a user keeps: SDF/URDF, parameters YAML, MATLAB YAML, CARLA."""
    from vepd_ros.io.simconfig import load_sensor_file

    sdf = _write(tmp_path, 'robot.sdf', GZ_SDF)
    assert load_sensor_file(sdf, 'gps').model == 'gz_navsat'
    assert load_sensor_file(sdf, 'imu').model == 'gz_imu'
    params = _write(tmp_path, 'p.yaml', 'gps_noise_node:\n  ros__parameters:\n'
                    '    model: ch_gauss\n    rate_hz: 5.0\n    gauss_sigma_m: [0.1, 0.1, 0.2]\n'
                    '    seed: 3\n')
    cfg = load_sensor_file(params, 'gps')
    assert (cfg.model, cfg.rate_hz) == ('ch_gauss', 5.0)
    assert cfg.params == {'gauss_sigma_m': [0.1, 0.1, 0.2]}
    matlab = _write(tmp_path, 'm.yaml', 'gpsSensor:\n  DecayFactor: 0.5\n')
    assert load_sensor_file(matlab, 'gps').params == {'DecayFactor': 0.5}
    carla = _write(tmp_path, 'c.json', '{"sensor.other.imu": {"noise_gyro_bias_z": 0.1}}')
    assert load_sensor_file(carla, 'imu').model == 'carla_imu'
    with pytest.raises(ValueError, match='no GPS sensor in it'):
        load_sensor_file(carla, 'gps')


@pytest.mark.slow
def test_study_takes_a_simulator_configuration_directly(tmp_path):
    """`vepd study --gps-config robot.sdf`: the file's GPS model, its values, Sim/robot/."""
    sdf = _write(tmp_path, 'robot.sdf', GZ_SDF)
    outs = []
    for k in range(2):
        out = tmp_path / f'study{k}'
        res = _vepd('study', '--models', 'ch_rw', '--gps-config', sdf, '--gps-config',
                    f'mine={sdf}', '--scenarios', 'circle', '--runs', 2, '--duration', 5,
                    '--reference', 'rtk', '--seed', 1, '--n-boot', 0, '--out', out, '--quiet')
        assert res.returncode == 0, res.stderr
        outs.append(out)
    result = json.loads((outs[0] / 'result.json').read_text())
    assert result['study']['configured']['robot']['model'] == 'gz_navsat'
    assert result['study']['configured']['robot']['params'] == read_sdf(sdf)[0].params
    assert set(result['models']) == {'ch_rw', 'robot', 'mine'}
    # the file's GPS <update_rate> 5 is said, not applied: every side runs at 10 Hz
    assert result['study']['configured']['robot']['rate_hz'] == 5.0
    assert result['study']['configured']['robot']['rate_used_hz'] == 10.0
    assert any('robot: the configured rate 5 Hz is not used' in w for w in result['warnings'])
    # same seed, same label: the same runs; another label draws other noise
    robot = [(o / 'Sim' / 'robot' / 'circle_1.csv').read_bytes() for o in outs]
    assert robot[0] == robot[1]
    assert robot[0] != (outs[0] / 'Sim' / 'mine' / 'circle_1.csv').read_bytes()
    bad = _vepd('study', '--gps-config', tmp_path / 'none.sdf', '--reference', 'rtk', '--out',
                tmp_path / 'x')
    assert bad.returncode == 2 and 'none.sdf: no such sensor configuration file' in bad.stderr
    assert not (tmp_path / 'x').exists()


# -- held to the nodes' rules (issue 24): numbers as the format defines them, duplicates refused,
# values within the bounds the nodes enforce, nothing that makes the output non-finite


def _sdf(tmp_path, horizontal='2e-6', vertical='<stddev>0.4</stddev>', rate='5'):
    text = GZ_SDF.replace('<stddev>2e-6</stddev>', f'<stddev>{horizontal}</stddev>') \
        .replace('<stddev>0.4</stddev>', vertical).replace('<update_rate>5<',
                                                           f'<update_rate>{rate}<')
    path = tmp_path / 'robot.sdf'
    path.write_text(text)
    return path


@pytest.mark.parametrize('text', ['0_4', '0x1p-2', 'nan', 'inf', '1e308e', '４'])
def test_sdf_numbers_are_xml_decimals_not_python_floats(tmp_path, text):
    with pytest.raises(ValueError, match=r'robot\.sdf: line \d+: <stddev>: expected a finite '
                                         r'decimal'):
        read_sdf(_sdf(tmp_path, horizontal=text))


def test_carla_string_numbers_are_decimals(tmp_path):
    path = tmp_path / 'c.json'
    path.write_text(json.dumps({'sensor.other.gnss': {'noise_alt_stddev': '0_4'}}))
    with pytest.raises(ValueError, match='noise_alt_stddev: expected a finite decimal'):
        read_carla(path)
    path.write_text(json.dumps({'sensor.other.gnss': {'noise_alt_stddev': '0.4',
                                                      'sensor_tick': '1_0'}}))
    with pytest.raises(ValueError, match='sensor_tick'):
        read_carla(path)


def test_yaml_numbers_follow_yaml_1_2(tmp_path):
    path = tmp_path / 'm.yaml'
    path.write_text('gpsSensor:\n  HorizontalPositionAccuracy: 1_0\n')
    with pytest.raises(ValueError, match='HorizontalPositionAccuracy'):
        read_matlab(path)


def test_duplicated_sdf_elements_are_refused_naming_both_lines(tmp_path):
    dup = _sdf(tmp_path, vertical='<stddev>0.4</stddev>\n<stddev>0.9</stddev>')
    with pytest.raises(ValueError, match=r'line \d+: <noise><stddev> given twice \(also line '):
        read_sdf(dup)
    path = tmp_path / 'two.sdf'
    path.write_text(GZ_SDF.replace('<update_rate>5</update_rate>',
                                   '<update_rate>5</update_rate><update_rate>50</update_rate>'))
    with pytest.raises(ValueError, match='<update_rate> given twice'):
        read_sdf(path)


def test_values_that_would_make_the_output_non_finite_are_refused_naming_the_field(tmp_path):
    # an SDF stddev of 1e308: every fix would be NaN; refused at load with the parameter named
    with pytest.raises(ValueError, match=r'robot\.sdf: line \d+: navsat: parameter '
                                         r"'position_sensing.vertical.stddev': got 1e\+308"):
        read_sdf(_sdf(tmp_path, vertical='<stddev>1e308</stddev>'))
    path = tmp_path / 'c.json'
    path.write_text(json.dumps({'sensor.other.gnss': {'noise_alt_stddev': '1e300'}}))
    with pytest.raises(ValueError, match='noise_alt_stddev'):
        read_carla(path)


@pytest.mark.parametrize('rate, field', [('-5', '<update_rate>'), ('1e9', '<update_rate>')])
def test_rates_within_the_nodes_bounds(tmp_path, rate, field):
    with pytest.raises(ValueError, match=f'{field}: the rate .* outside what gps_noise_node runs'):
        read_sdf(_sdf(tmp_path, rate=rate))


def test_update_rate_zero_is_every_step_the_node_default_with_a_warning(tmp_path):
    (gps, _) = read_sdf(_sdf(tmp_path, rate='0'))
    assert gps.rate_hz is None and any('update_rate' in w for w in gps.warnings)
    path = tmp_path / 'c.json'
    path.write_text(json.dumps({'sensor.other.gnss': {'sensor_tick': '-0.1'}}))
    with pytest.raises(ValueError, match='sensor_tick'):
        read_carla(path)


def test_node_parameters_file_is_read_as_the_node_reads_it(tmp_path):
    from vepd_ros.io.simconfig import load_sensor_file

    path = tmp_path / 'p.yaml'
    path.write_text('gps_noise_node:\n  ros__parameters:\n    model: ch_gauss\n'
                    '    topic_timeout_s: 3.0\n    rate_hz: 5.0\n'
                    '    gauss_sigma_m: [0.5, 0.5, 1.0]\n')
    cfg = load_sensor_file(path, 'gps')
    assert cfg.spec.node_params == {'topic_timeout_s': 3.0} and cfg.rate_hz == 5.0
    assert cfg.params == {'gauss_sigma_m': [0.5, 0.5, 1.0]}
    path.write_text(path.read_text().replace('gauss_sigma_m', 'gauss_sigm_m'))
    with pytest.raises(ValueError, match="'gauss_sigm_m'.*gauss_sigma_m"):
        load_sensor_file(path, 'gps')
    # config_file inside a section: the simulator file gives the model; a loop is refused
    sdf = _sdf(tmp_path)
    path.write_text(f'gps_noise_node:\n  ros__parameters:\n    config_file: {sdf}\n'
                    f'    position_sensing.vertical.stddev: 0.7\n')
    cfg = load_sensor_file(path, 'gps')
    assert cfg.model == 'gz_navsat' and cfg.params['position_sensing.vertical.stddev'] == 0.7
    assert cfg.params['position_sensing.horizontal.stddev'] == 2e-6
    path.write_text(f'gps_noise_node:\n  ros__parameters:\n    config_file: {path}\n')
    with pytest.raises(ValueError, match='loop'):
        load_sensor_file(path, 'gps')
