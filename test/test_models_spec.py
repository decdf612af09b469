# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The one sensor specification (``models.spec``) and every front that builds it.

Properties: a key is a node parameter or a model parameter or an error naming it and listing the
valid ones; values are checked against the declarations (and a magnitude bound that keeps the
models' output finite); the spec is immutable; the noise nodes declare from the same lists; and
every front — the node (a real rclpy parameters file), ``vepd study``, ``vepd tune``, ``vepd
sensors simulate`` — refuses a misspelled parameter with exit 2, while a node-only parameter
(``topic_timeout_s``) is accepted where a node's section is read.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest
from vepd_ros.models import spec as sp
from vepd_ros.models.sensors import simulate_sensors
from vepd_ros.params import ParameterError
from vepd_ros.truth import generate

BAD = """gps_noise_node:
  ros__parameters:
    model: ch_gauss
    gauss_sigm_m: [0.7, 0.7, 1.5]
"""
GOOD = """gps_noise_node:
  ros__parameters:
    model: ch_gauss
    topic_timeout_s: 3.0
    gauss_sigma_m: [0.7, 0.7, 1.5]
"""


def _vepd(*args, env=None):
    return subprocess.run([sys.executable, '-m', 'vepd_ros.cli', *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=env)


def _names_the_typo(text: str) -> bool:
    return "'gauss_sigm_m'" in text and 'gauss_sigma_m' in text and 'Traceback' not in text


def test_node_and_model_keys_are_sorted_and_unknown_ones_refused():
    s = sp.sensor_spec('gps', {'model': 'ch_gauss', 'gauss_sigma_m': [0.7, 0.7, 1.5],
                               'topic_timeout_s': 3.0, 'use_sim_time': True, 'rate_hz': 5.0})
    assert s.model == 'ch_gauss' and s.rate_hz == 5.0
    assert s.params == {'gauss_sigma_m': [0.7, 0.7, 1.5]}
    assert s.node_params == {'topic_timeout_s': 3.0, 'use_sim_time': True}
    with pytest.raises(ParameterError) as exc:
        sp.sensor_spec('gps', {'gauss_sigm_m': [1.0, 1.0, 1.0]}, model='ch_gauss')
    msg = str(exc.value)
    assert "'gauss_sigm_m'" in msg and 'gauss_sigma_m' in msg and 'topic_timeout_s' in msg
    with pytest.raises(ParameterError, match='model'):
        sp.sensor_spec('imu', model='no_such_model')


def test_values_are_checked_against_the_declarations_and_bounds():
    with pytest.raises(ParameterError, match='gauss_sigma_m'):
        sp.sensor_spec('gps', {'gauss_sigma_m': [-1.0, 1.0, 1.0]}, model='ch_gauss')
    # the bound that keeps the output finite: 1e308 overflows the models; the bound itself not
    with pytest.raises(ParameterError, match='position_sensing.vertical.stddev.*1e\\+06'):
        sp.sensor_spec('gps', {'position_sensing.vertical.stddev': 1e308}, model='gz_navsat')
    ok = sp.sensor_spec('gps', {'position_sensing.vertical.stddev': sp.MAX_MODEL_VALUE},
                        model='gz_navsat')
    run = simulate_sensors(generate('circle', 3.0, seed=1), ok.make_model(0), 'none')
    assert np.isfinite(run.gps_lla[run.gps.published]).all()
    # the rate bounds are the node's own declaration of rate_hz
    high = next(q.high for q in sp.GPS_NODE_PARAMS if q.name == 'rate_hz')
    with pytest.raises(ParameterError, match='rate_hz'):
        sp.sensor_spec('gps', rate_hz=high * 2)
    with pytest.raises(ParameterError, match='rate_hz'):
        sp.sensor_spec('imu', {'rate_hz': -1.0})


def test_a_spec_is_immutable_and_builds_the_same_model_as_its_values():
    s = sp.sensor_spec('gps', {'gauss_sigma_m': [0.3, 0.3, 0.9]}, model='ch_gauss')
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.model = 'ch_rw'
    s.params['gauss_sigma_m'][0] = 99.0  # a copy: the spec keeps its value
    assert s.params == {'gauss_sigma_m': [0.3, 0.3, 0.9]}
    hash(s)
    from vepd_ros.models.gps import make_gps_model

    t = np.arange(20) * 0.1
    truth = np.zeros((20, 3))
    a = s.make_model(5).sample(t, truth)
    b = make_gps_model('ch_gauss', 5, gauss_sigma_m=[0.3, 0.3, 0.9]).sample(t, truth)
    assert np.array_equal(a.error_enu, b.error_enu)
    t2 = s.with_params({'gauss_mean_m': [0.1, 0.0, 0.0]})
    assert t2.params == {'gauss_sigma_m': [0.3, 0.3, 0.9], 'gauss_mean_m': [0.1, 0.0, 0.0]}


def test_split_specs_parts_a_flat_mapping_and_refuses_unknown_names():
    gps, imu = sp.split_specs('ch_gauss', 'allan', {'gauss_sigma_m': [0.1] * 3,
                                                    'gyro_arw': 1e-3})
    assert (gps.params, imu.params) == ({'gauss_sigma_m': [0.1] * 3}, {'gyro_arw': 1e-3})
    with pytest.raises(ParameterError, match="'gauss_sigm_m'.*gauss_sigma_m.*gyro_arw"):
        sp.split_specs('ch_gauss', 'allan', {'gauss_sigm_m': [0.1] * 3})


def test_the_nodes_declare_from_the_same_lists():
    pytest.importorskip('rclpy')
    from vepd_ros.nodes import gps_noise_node, imu_noise_node

    assert gps_noise_node.GPS_NODE_PARAMS is sp.NODE_PARAMS['gps']
    assert imu_noise_node.IMU_NODE_PARAMS is sp.NODE_PARAMS['imu']


@pytest.mark.ros
def test_node_front_refuses_a_misspelled_parameter_in_a_params_file(tmp_path, domain_id):
    from ros_helpers import console_script, ros_env

    bad = tmp_path / 'bad.yaml'
    bad.write_text(BAD)
    proc = subprocess.run([console_script('gps_noise_node'), '--ros-args', '--params-file',
                           str(bad)], env=ros_env(domain_id), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and _names_the_typo(proc.stderr), proc.stderr[-2000:]


def test_study_front_refuses_a_misspelled_parameter_before_touching_out(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text(BAD)
    out = tmp_path / 'out'
    proc = _vepd('study', '--models', 'ch_gauss', '--gps-config', bad, '--scenarios',
                 'straight', '--runs', 2, '--duration', 2, '--reference', 'rtk', '--out', out,
                 '--quiet')
    assert proc.returncode == 2 and _names_the_typo(proc.stderr), proc.stderr[-2000:]
    assert not out.exists()
    proc = _vepd('study', '--models', 'ch_gauss', '--imu-config', bad, '--scenarios',
                 'straight', '--runs', 2, '--duration', 2, '--reference', 'rtk', '--out', out)
    assert proc.returncode == 2 and not out.exists(), proc.stderr[-2000:]


def test_tune_front_refuses_a_misspelled_parameter(tmp_path):
    out = tmp_path / 'tune'
    proc = _vepd('tune', '--model', 'ch_gauss', '--params', 'gauss_sigm_m', '--reference',
                 'rtk', '--trials', 1, '--out', out)
    assert proc.returncode == 2 and _names_the_typo(proc.stderr), proc.stderr[-2000:]
    assert not out.exists()


def test_simulate_front_refuses_a_typo_and_accepts_node_parameters(tmp_path):
    bad, good = tmp_path / 'bad.yaml', tmp_path / 'good.yaml'
    bad.write_text(BAD)
    good.write_text(GOOD.replace('model: ch_gauss', 'model: ch_gauss\n    rate_hz: 5.0'))
    proc = _vepd('sensors', 'simulate', '--gps-params', bad, '--duration', 3, '--out',
                 tmp_path / 'a')
    assert proc.returncode == 2 and _names_the_typo(proc.stderr), proc.stderr[-2000:]
    proc = _vepd('sensors', 'simulate', '--set', 'gauss_sigm_m:=[1,1,1]', '--gps', 'ch_gauss',
                 '--duration', 3, '--out', tmp_path / 'b')
    assert proc.returncode == 2 and _names_the_typo(proc.stderr), proc.stderr[-2000:]
    proc = _vepd('sensors', 'simulate', '--gps-params', good, '--duration', 3, '--out',
                 tmp_path / 'c')
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the file's rate_hz is the rate, as the node would run it: 3 s at 5 Hz
    rows = (tmp_path / 'c' / 'gps.csv').read_text().splitlines()
    assert len(rows) - 1 == 16, len(rows)


def test_simulate_model_flag_overrides_the_files_model_in_process(tmp_path, capsys):
    """
    ``--gps`` given beside ``--gps-params`` names the model; not given, the file's model is used.

    Decided from the parsed arguments, not by scanning ``sys.argv`` (which, for ``main(argv)``
    called in a process, is that process's command line, not the command's).
    """
    from vepd_ros.cli import main

    good = tmp_path / 'good.yaml'
    good.write_text(GOOD)
    common = ['sensors', 'simulate', '--duration', '3', '--seed', '2']
    assert main(common + ['--gps-params', str(good), '--out', str(tmp_path / 'file')]) == 0
    assert main(common + ['--gps-params', str(good), '--gps', 'ch_gauss+airsim',
                          '--out', str(tmp_path / 'flag')]) == 0
    assert main(common + ['--gps', 'ch_gauss+airsim', '--set', 'gauss_sigma_m:=[0.7,0.7,1.5]',
                          '--out', str(tmp_path / 'set')]) == 0
    assert main(common + ['--gps', 'ch_gauss', '--set', 'gauss_sigma_m:=[0.7,0.7,1.5]',
                          '--out', str(tmp_path / 'set_file_model')]) == 0
    gps = {d: (tmp_path / d / 'gps.csv').read_text()
           for d in ('file', 'flag', 'set', 'set_file_model')}
    assert gps['flag'] == gps['set'] != gps['file'] == gps['set_file_model']
