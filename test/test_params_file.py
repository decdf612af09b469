# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""params_file.node_section: the one reader of a node's section in a ROS 2 parameters file."""

from pathlib import Path

import pytest
from vepd_ros.judge.bicycle import load_bicycle_params
from vepd_ros.judge.navsat import load_navsat_params
from vepd_ros.judge.rl_graph import load_judge_params
from vepd_ros.params import ParameterError
from vepd_ros.params_file import node_section

REPO = Path(__file__).resolve().parents[1]

DOC = """\
/**:
  ros__parameters:
    use_sim_time: true
    frequency: 10.0
ns:
  ekf_filter_node:
    ros__parameters:
      frequency: 30.0
navsat_transform:
  ros__parameters:
    zero_altitude: true
"""


def test_wildcard_applies_and_the_node_overrides_it(tmp_path):
    p = tmp_path / 'p.yaml'
    p.write_text(DOC)
    for source in (p, str(p), DOC):
        assert node_section(source, 'ekf_filter_node') == {'use_sim_time': True, 'frequency': 30.0}
        assert node_section(source, '/ns/ekf_filter_node')['frequency'] == 30.0
        assert node_section(source, 'navsat_transform') == {
            'use_sim_time': True,
            'frequency': 10.0,
            'zero_altitude': True,
        }
        # a node the file does not name gets /** alone, as rcl gives it
        assert node_section(source, 'other') == {'use_sim_time': True, 'frequency': 10.0}


def test_without_a_name_the_only_node_or_a_default_name_is_chosen():
    assert node_section({'a': {'ros__parameters': {'x': 1}}}) == {'x': 1}
    two = {'a': {'ros__parameters': {'x': 1}}, 'b': {'ros__parameters': {'x': 2}}}
    assert node_section(two, default_names=('c', 'b')) == {'x': 2}
    with pytest.raises(ParameterError, match='one of the nodes'):
        node_section(two, default_names=('c',))
    assert node_section({'x': 1, 'y': [1, 2]}, 'any') == {'x': 1, 'y': [1, 2]}  # flat mapping


def test_a_missing_node_names_the_file(tmp_path):
    p = tmp_path / 'p.yaml'
    p.write_text('a:\n  ros__parameters:\n    x: 1\n')
    with pytest.raises(ParameterError, match=f'a node in the file {p}: /a'):
        node_section(p, 'b')
    assert node_section(p, 'b', required=False) == {}
    with pytest.raises(ParameterError, match='ros__parameters'):
        node_section({'a': {'ros__parameters': [1, 2]}}, 'a')


def test_the_readers_see_what_node_section_sees():
    ekf = REPO / 'config' / 'ekf.yaml'
    nav = REPO / 'config' / 'navsat.yaml'
    frequency = node_section(ekf, 'ekf_filter_node')['frequency']
    assert load_judge_params(ekf).ekf.frequency == frequency
    assert load_navsat_params(nav)['frequency'] == node_section(nav)['frequency']
    assert load_bicycle_params(ekf)['frequency'] == node_section(ekf)['frequency']
    # /** reaches navsat_transform too (it was dropped when the file had a navsat section)
    two = '/**:\n  ros__parameters:\n    zero_altitude: true\nnavsat_transform:\n  '
    two += 'ros__parameters:\n    use_odometry_yaw: true\n'
    assert load_navsat_params(two)['zero_altitude'] is True
    assert load_navsat_params(two)['use_odometry_yaw'] is True
