# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the bag_replay graph over DDS against the offline judge.

The bag_replay graph over DDS: a ROS 2 bag in the ART layout (/fix, /imu, a truth topic) played on
its own /clock through the built-in judge, recorded as one run, and compared with the offline judge
on the same streams.
"""

import json
import subprocess
import sys

import numpy as np
import pytest
from ros_helpers import ros_env
from vepd_ros.metrics.core import run_metrics
from vepd_ros.pipelines.study import judge_batch, run_records, simulate_run
from vepd_ros.runs.format import read_run

pytestmark = [pytest.mark.ros, pytest.mark.slow]
T0_NS = 100 * 1_000_000_000  # the bag's time base starts at 100 s


def _write_art_bag(path, run):
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_typestore, Stores

    ts = get_typestore(Stores.ROS2_KILTED)
    T = ts.types
    Time, Header = T['builtin_interfaces/msg/Time'], T['std_msgs/msg/Header']
    V3, Q = T['geometry_msgs/msg/Vector3'], T['geometry_msgs/msg/Quaternion']
    s = run.sensors

    def hdr(t_s, frame):
        ns = T0_NS + int(round(t_s * 1e9))
        return ns, Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=frame)

    with Writer(path, version=9, storage_plugin=StoragePlugin.SQLITE3) as w:
        c_fix = w.add_connection('/fix', 'sensor_msgs/msg/NavSatFix', typestore=ts)
        c_imu = w.add_connection('/imu', 'sensor_msgs/msg/Imu', typestore=ts)
        c_gt = w.add_connection('/truth', 'nav_msgs/msg/Odometry', typestore=ts)
        msgs = []
        for k, t in enumerate(s.imu.t_s):
            ns, h = hdr(t, 'base_link')
            q, wv, a = (
                s.imu.orientation[k],
                s.imu.angular_velocity[k],
                s.imu.linear_acceleration[k],
            )
            m = T['sensor_msgs/msg/Imu'](
                header=h,
                orientation=Q(x=q[0], y=q[1], z=q[2], w=q[3]),
                orientation_covariance=s.imu.orientation_covariance[k].reshape(9),
                angular_velocity=V3(x=wv[0], y=wv[1], z=wv[2]),
                angular_velocity_covariance=s.imu.angular_velocity_covariance[k].reshape(9),
                linear_acceleration=V3(x=a[0], y=a[1], z=a[2]),
                linear_acceleration_covariance=s.imu.linear_acceleration_covariance[k].reshape(9),
            )
            msgs.append((ns, c_imu, 'sensor_msgs/msg/Imu', m))
        for k, t in enumerate(s.gps.t_s):
            ns, h = hdr(t, 'gps')
            lat, lon, alt = s.gps_lla[k]
            m = T['sensor_msgs/msg/NavSatFix'](
                header=h,
                status=T['sensor_msgs/msg/NavSatStatus'](status=int(s.gps.status[k]), service=1),
                latitude=lat,
                longitude=lon,
                altitude=alt,
                position_covariance=s.gps.covariance_enu[k].reshape(9),
                position_covariance_type=int(s.gps.covariance_type[k]),
            )
            msgs.append((ns, c_fix, 'sensor_msgs/msg/NavSatFix', m))
        vb = s.truth.velocity_body
        for k, t in enumerate(s.truth_t_s):
            ns, h = hdr(t, 'odom')
            tw = T['geometry_msgs/msg/TwistWithCovariance'](
                twist=T['geometry_msgs/msg/Twist'](
                    linear=V3(x=vb[k, 0], y=vb[k, 1], z=0.0), angular=V3(x=0.0, y=0.0, z=0.0)
                ),
                covariance=np.zeros(36),
            )
            pose = T['geometry_msgs/msg/PoseWithCovariance'](
                pose=T['geometry_msgs/msg/Pose'](
                    position=T['geometry_msgs/msg/Point'](x=0.0, y=0.0, z=0.0),
                    orientation=Q(x=0.0, y=0.0, z=0.0, w=1.0),
                ),
                covariance=np.zeros(36),
            )
            m = T['nav_msgs/msg/Odometry'](
                header=h, child_frame_id='base_link', pose=pose, twist=tw
            )
            msgs.append((ns, c_gt, 'nav_msgs/msg/Odometry', m))
        for ns, c, typ, m in sorted(msgs, key=lambda x: x[0]):
            w.write(c, ns, ts.serialize_cdr(m, typ))


def test_bag_replay_graph_records_the_run_the_offline_judge_computes(domain_id, tmp_path):
    run = simulate_run('real', 'rtk', 'ch_drift_paper', 'circle', 1, 12.0, seed=4)
    bag = tmp_path / 'art_bag'
    _write_art_bag(bag, run)
    out = tmp_path / 'out'
    cmd = [
        sys.executable,
        '-m',
        'vepd_ros.cli',
        'run',
        'bag_replay',
        f'bag:={bag}',
        'gps_topic:=/fix',
        'imu_topic:=/imu',
        'truth_topic:=/truth',
        'truth_type:=nav_msgs/msg/Odometry',
        'scenario:=circle',
        'rate:=3.0',
        f'output_dir:={out}',
        'judge:=builtin',
        '--json',
        '--timeout',
        '90',
    ]
    proc = subprocess.run(cmd, env=ros_env(domain_id), capture_output=True, text=True, timeout=150)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert [r['path'] for r in summary['runs']] == [str(out / 'Real' / 'circle_1.csv')]

    graph = read_run(out / 'Real' / 'circle_1.csv')
    (offline,) = run_records([run], judge_batch([run.sensors]))
    e_graph, s_graph = run_metrics(*graph.signal('speed'))
    e_off, s_off = run_metrics(*offline.signal('speed'))
    # The graph's run starts at its first sample (the bag has no run events), the study's at t = 0:
    # both see the same 12 s. The judge ticks on the bag's clock (periods from the first message)
    # as offline.
    assert abs(len(graph.se_t) - len(offline.se_t)) <= 2
    assert abs(e_graph - e_off) <= 0.01 + 0.2 * e_off, (e_graph, e_off)
    assert abs(s_graph - s_off) <= 0.05, (s_graph, s_off)
