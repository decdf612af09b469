# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A configured model scores alike in the sim_judge graph and in the offline study.

``vepd run sim_judge gps_config:=FILE imu_config:=FILE`` against ``vepd study --gps-config FILE
--imu-config FILE`` (``run_study`` with the same ``SensorSpec``s): the graph hands each file to
its noise nodes as ``config_file`` and the nodes build the same spec (``models.spec``), so the
same noise parameters reach the models. Tolerances are test_sim_judge_graph's (per run E within
1 % + 1e-3 m/s, W1 and W2 within 2 % + 0.002), with the reason given there. The configured σ
matters: the same labels scored with gz_navsat's defaults (σ 0) differ from the configured one by
far more than the tolerance, so a graph that dropped the file's values fails.
"""

import json
import subprocess
import sys

import pytest
from ros_helpers import ros_env
from vepd_ros.io.simconfig import load_sensor_file
from vepd_ros.metrics.core import run_metrics
from vepd_ros.params import ParameterError
from vepd_ros.pipelines.study import run_study
from vepd_ros.ros_graph import build_graph
from vepd_ros.runs.format import read_run


SDF = """<sdf version="1.9"><model name="m"><link name="l">
<sensor name="gps1" type="navsat"><update_rate>10</update_rate><navsat><position_sensing>
<horizontal><noise type="gaussian"><stddev>0.000008</stddev></noise></horizontal>
<vertical><noise type="gaussian"><stddev>1.5</stddev></noise></vertical>
</position_sensing></navsat></sensor>
<sensor name="imu1" type="imu"><update_rate>100</update_rate><imu><angular_velocity>
<z><noise type="gaussian"><stddev>0.002</stddev></noise></z></angular_velocity>
<linear_acceleration><x><noise type="gaussian"><stddev>0.05</stddev></noise></x>
</linear_acceleration></imu></sensor>
</link></model></sdf>
"""


def test_graph_hands_each_file_to_its_noise_nodes(tmp_path):
    """gps_config adds a chain whose gps_noise_node reads the file; imu_config every imu node."""
    sdf = tmp_path / 'robot.sdf'
    sdf.write_text(SDF)
    nodes = build_graph('sim_judge', {'models': 'ch_rw', 'gps_config': f'cfg={sdf}',
                                      'imu_config': str(sdf), 'k': 2})
    gps = {n.namespace.strip('/'): n.parameters[0] for n in nodes if n.role == 'gps'}
    imu = [n.parameters[0] for n in nodes if n.role == 'imu']
    assert set(gps) == {'real', 'ch_rw', 'cfg'}
    assert gps['cfg']['config_file'] == str(sdf.resolve()) and gps['cfg']['model'] == 'gz_navsat'
    assert 'config_file' not in gps['ch_rw'] and 'config_file' not in gps['real']
    assert len(imu) == 3 and all(p['config_file'] == str(sdf.resolve()) for p in imu)
    (ev,) = [n for n in nodes if n.role == 'evaluator']
    assert ev.parameters[0]['expected_labels'] == 'ch_rw,cfg'
    bad = tmp_path / 'bad.yaml'
    bad.write_text('gps_noise_node:\n  ros__parameters:\n    gauss_sigm_m: [1.0, 1.0, 1.0]\n')
    for args, name in (({'gps_config': str(bad)}, 'gps_config'),
                       ({'gps_config': f'ch_rw={sdf}'}, 'gps_config'),
                       ({'imu_config': str(tmp_path / 'missing.sdf')}, 'imu_config'),
                       ({'imu_config': str(sdf), 'reference_imu_model': 'ch_drift'},
                        'reference_imu_model')):
        with pytest.raises(ParameterError, match=name):
            build_graph('sim_judge', {'models': 'ch_rw', **args})


def test_graph_says_a_configured_rate_is_not_applied_as_the_study_does(tmp_path):
    """The noise nodes run at 10/100 Hz whatever the file says; the result says so, as a study."""
    from vepd_ros.models.spec import unused_rate_warning

    sdf = tmp_path / 'robot.sdf'
    sdf.write_text(SDF.replace('<update_rate>10<', '<update_rate>5<')
                   .replace('<update_rate>100<', '<update_rate>50<'))
    nodes = build_graph('sim_judge', {'models': 'ch_rw', 'gps_config': f'cfg={sdf}',
                                      'imu_config': str(sdf), 'k': 2})
    (ev,) = [n for n in nodes if n.role == 'evaluator']
    assert ev.parameters[0]['warnings'] == [unused_rate_warning('cfg', 'gps', 5.0),
                                            unused_rate_warning('the IMU', 'imu', 50.0)]
    assert 'cfg: the configured rate 5 Hz is not used' in ev.parameters[0]['warnings'][0]
    assert all('rate_hz' not in n.parameters[0] for n in nodes if n.role in ('gps', 'imu'))
    sdf.write_text(SDF)  # the rates of every side: nothing to say
    nodes = build_graph('sim_judge', {'models': 'ch_rw', 'gps_config': f'cfg={sdf}', 'k': 2})
    (ev,) = [n for n in nodes if n.role == 'evaluator']
    assert ev.parameters[0]['warnings'] == ['']


@pytest.mark.ros
@pytest.mark.slow
def test_configured_model_graph_equals_study(domain_id, tmp_path):
    sdf = tmp_path / 'robot.sdf'
    sdf.write_text(SDF)
    args = {
        'k': 2,
        'models': 'ch_rw',
        'gps_config': f'cfg={sdf}',
        'imu_config': str(sdf),
        'scenarios': 'circle',
        'duration_s': 8.0,
        'time_scale': 10.0,
        'seed': 3,
    }
    cmd = [sys.executable, '-m', 'vepd_ros.cli', 'run', 'sim_judge',
           *[f'{k}:={v}' for k, v in args.items()], f'output_dir:={tmp_path / "graph"}',
           'judge:=builtin', '--json', '--timeout', '600']
    proc = subprocess.run(cmd, env=ros_env(domain_id), capture_output=True, text=True, timeout=660)
    assert proc.returncode == 0, proc.stderr[-3000:]
    graph = json.loads(proc.stdout)
    gps, imu = load_sensor_file(sdf, 'gps').spec, load_sensor_file(sdf, 'imu').spec
    assert (gps.model, imu.model) == ('gz_navsat', 'gz_imu')
    study = run_study(['ch_rw'], ['circle'], 2, duration_s=8.0, reference='rtk',
                      out_dir=tmp_path / 'study', seed=3,
                      workers=1, imu_model=imu, configured={'cfg': gps})
    plain = run_study(['ch_rw'], ['circle'], 2, duration_s=8.0, reference='rtk',
                      out_dir=tmp_path / 'plain', seed=3,
                      workers=1, imu_model='gz_imu',
                      configured={'cfg': gps.with_params(
                          {'position_sensing.horizontal.stddev': 0.0})})

    assert graph['k'] == study['k'] == {'real': {'circle': 2}, 'ch_rw': {'circle': 2},
                                        'cfg': {'circle': 2}}
    for label in ('ch_rw', 'cfg'):
        g, s = graph['models'][label], study['models'][label]
        assert abs(g['W1'] - s['W1']) <= 0.002 + 0.02 * s['W1'], (label, g['W1'], s['W1'])
        assert abs(g['W2'] - s['W2']) <= 0.002 + 0.02 * s['W2'], (label, g['W2'], s['W2'])
    p, s = plain['models']['cfg'], study['models']['cfg']
    assert abs(p['W1'] - s['W1']) > 10 * (0.002 + 0.02 * s['W1']), (p['W1'], s['W1'])
    for side in ('Real', 'Sim/ch_rw', 'Sim/cfg'):
        for j in (1, 2):
            e_graph = run_metrics(
                *read_run(tmp_path / 'graph' / side / f'circle_{j}.csv').signal('speed'))[0]
            e_study = run_metrics(
                *read_run(tmp_path / 'study' / side / f'circle_{j}.csv').signal('speed'))[0]
            assert abs(e_graph - e_study) <= 1e-3 + 0.01 * e_study, (side, j, e_graph, e_study)
    sidecar = json.loads(next((tmp_path / 'graph' / 'Sim' / 'cfg').glob('circle_1*.json'))
                         .read_text())
    assert sidecar['model'] == 'gz_navsat'
