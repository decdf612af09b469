# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""robot_localization YAML parsing: layouts, covariance forms, defaults, discovery, rejection."""

from __future__ import annotations

import numpy as np
import pytest
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
