# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""robot_localization YAML parsing: layouts, covariance forms, defaults, discovery, rejection."""

from __future__ import annotations

import numpy as np
import pytest
from test_yamlio_loader import _write
from vepd_ros.judge.config import load_ekf_params
from vepd_ros.params import ParameterError

YAML = """
ekf_filter_node:
  ros__parameters:
    frequency: 35.0
    two_d_mode: false
    odom0: odometry/gps
    odom0_config: [true, true, true, false, false, false, false, false, false, false, false, false, false, false, false]
    imu0: imu/data
    imu0_config: [false, false, false, true, true, true, false, false, false, true, true, true, true, true, true]
    imu0_remove_gravitational_acceleration: true
    imu0_linear_acceleration_rejection_threshold: 3.0
    imu2: ignored/because/imu1/missing
navsat_transform:
  ros__parameters:
    frequency: 10.0
"""  # noqa: E501 (one ekf row per line; the string's value must not change)


def test_node_yaml_defaults_and_discovery(tmp_path):
    path = tmp_path / 'ekf.yaml'
    path.write_text(YAML.replace('    imu2: ignored/because/imu1/missing\n', ''))
    p = load_ekf_params(path)
    assert p.frequency == 35.0 and p.sensor_timeout == pytest.approx(1 / 35.0)
    assert p.period_ns == 28571428
    assert p.world_frame == 'odom' and p.base_link_frame_output == 'base_link'
    np.testing.assert_array_equal(
        np.diag(p.process_noise_covariance),
        [
            0.05,
            0.05,
            0.06,
            0.03,
            0.03,
            0.06,
            0.025,
            0.025,
            0.04,
            0.01,
            0.01,
            0.02,
            0.01,
            0.01,
            0.015,
        ],
    )
    np.testing.assert_array_equal(p.initial_estimate_covariance, 1e-9 * np.eye(15))
    names = [st.name for st in p.subtopics()]
    assert names == ['odom0_pose', 'imu0_pose', 'imu0_twist', 'imu0_acceleration']
    acc = p.subtopics()[-1]
    assert acc.rejection_threshold == 3.0 and acc.update_vector[12:15] == (True, True, True)
    assert not any(acc.update_vector[:12])


def test_discovery_stops_at_gap_and_unknown_is_named():
    with pytest.raises(ParameterError, match='imu2'):
        load_ekf_params(YAML + '\n', node_name='ekf_filter_node')


def test_wildcard_and_225_form():
    full = np.diag(np.arange(1, 16) * 0.01)
    doc = {
        '/**': {'ros__parameters': {'frequency': 20.0}},
        'ekf_filter_node': {
            'ros__parameters': {
                'process_noise_covariance': full.ravel().tolist(),
                'initial_estimate_covariance': [1e-3] * 15,
            }
        },
    }
    p = load_ekf_params(doc)
    assert p.frequency == 20.0
    np.testing.assert_array_equal(p.process_noise_covariance, full)
    np.testing.assert_array_equal(p.initial_estimate_covariance, 1e-3 * np.eye(15))


@pytest.mark.parametrize(
    'params,name',
    [
        ({'frequency': 'fast'}, 'frequency'),
        ({'two_d_mode': 1}, 'two_d_mode'),
        ({'process_noise_covariance': [0.1] * 14}, 'process_noise_covariance'),
        ({'odom0': 'x', 'odom0_config': [True] * 14}, 'odom0_config'),
        ({'odom0': 'x', 'odom0_pose_rejection_threshold': 'a'}, 'odom0_pose_rejection_threshold'),
        ({'frequncy': 30.0}, 'frequncy'),
        ({'use_control': True}, 'use_control'),
        ({'smooth_lagged_data': True}, 'smooth_lagged_data'),
        ({'frequency': 0.0}, 'frequency'),
    ],
)
def test_bad_parameters_rejected_by_name(params, name):
    with pytest.raises(ParameterError) as exc:
        load_ekf_params({'ekf_filter_node': {'ros__parameters': params}})
    assert exc.value.name == name


def test_odom_parts_keep_acceleration_flags():
    """Upstream clears 6..11 from the pose part and 0..5 from the twist part, never 12..14."""
    cfg = [True] * 15
    p = load_ekf_params({'odom0': 'o', 'odom0_config': cfg})
    pose, twist = p.sensors[0].subtopics
    assert pose.update_vector == (True,) * 6 + (False,) * 6 + (True,) * 3
    assert twist.update_vector == (False,) * 6 + (True,) * 9


GOOD_EKF = """ekf_filter_node:
  ros__parameters:
    frequency: 30.0
    two_d_mode: true
    odom0: /odom
    odom0_config: [false, false, false, false, false, false,
                   true, true, false, false, false, true,
                   false, false, false]
"""


def test_good_config_still_reads(tmp_path):
    p = load_ekf_params(_write(tmp_path, GOOD_EKF))
    assert p.frequency == 30.0 and [s.name for s in p.sensors] == ['odom0']


@pytest.mark.parametrize(
    'line, field',
    [
        ('    initial_state: [.nan, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]', 'initial_state'),
        ('    initial_state: [.inf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]', 'initial_state'),
        ('    gravitational_acceleration: .nan', 'gravitational_acceleration'),
        ('    gravitational_acceleration: -9.8', 'gravitational_acceleration'),
        ('    frequency: 1.0e-300', 'frequency'),
        ('    frequency: 1.0e12', 'frequency'),
        ('    sensor_timeout: .inf', 'sensor_timeout'),
    ],
)
def test_bad_ekf_field_is_named(tmp_path, line, field):
    text = GOOD_EKF.replace('    frequency: 30.0\n', '') + line + '\n'
    with pytest.raises(ParameterError, match=field):
        load_ekf_params(_write(tmp_path, text))


@pytest.mark.parametrize(
    'content, words',
    [
        ('', 'empty'),
        ('- 1\n- 2\n', 'mapping'),
        ('a: [1, 2\n b: 3\n', 'line 2'),
        ('a: !!python/object/apply:os.system ["echo pwned"]\n', 'python/object'),
        (b'\xff\xfe\x00\x01binary', 'binary'),
        (b'a: \xff\xfe\n', 'UTF-8'),
        ('ekf_filter_node:\n  ros__parameters:\n    frequency: 30.0\n', 'sensor'),
    ],
)
def test_bad_ekf_file_names_the_file(tmp_path, content, words):
    p = _write(tmp_path, content, mode='wb' if isinstance(content, bytes) else 'w')
    with pytest.raises(ValueError) as exc:
        load_ekf_params(p)
    msg = str(exc.value)
    assert words in msg
    assert 'sensor' in words or str(p) in msg


def test_config_errors_quote_bounded_values():
    with pytest.raises(ParameterError) as exc:
        load_ekf_params(
            {'frequency': 30.0, 'odom0': '/odom', 'initial_state': list(range(100000))}
        )
    assert 'initial_state' in str(exc.value) and len(str(exc.value)) < 200


def test_negative_variance_in_a_covariance_is_refused():
    """
    Refuse an initial_estimate_covariance of all -1.

    initial_estimate_covariance of all -1 (attack case judge_ekf_iec_neg) is not a covariance.
    """
    from vepd_ros.judge.config import load_ekf_params
    from vepd_ros.params import ParameterError

    text = (
        'ekf_filter_node:\n  ros__parameters:\n    odom0: odometry/gps\n'
        '    initial_estimate_covariance: [' + ', '.join(['-1.0'] * 15) + ']\n'
    )
    with pytest.raises(ParameterError, match='initial_estimate_covariance'):
        load_ekf_params(text)


def test_ekf_yaml_with_empty_parameters_names_the_file(tmp_path):
    """
    Name the configuration file when its ros__parameters are empty.

    An ekf YAML whose ros__parameters are empty (attack case judge_ekf_empty_params): the error
    names the configuration file, not the bag the judge then never initialised on.
    """
    from vepd_ros.judge.rl_graph import load_judge_params

    path = tmp_path / 'ekf.yaml'
    path.write_text('ekf_filter_node:\n  ros__parameters: {}\n')
    with pytest.raises(ValueError, match=str(path)):
        load_judge_params(path)
