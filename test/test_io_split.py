# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test vepd_ros.io.split and io.profiles: ranges, gaps, runs per bag, topic roles.

vepd_ros.io.split and io.profiles: time ranges (YAML/CSV), standstill gaps, one run per bag; topic
roles.
"""

from __future__ import annotations

import numpy as np
import pytest
from vepd_ros.io import profiles as P
from vepd_ros.io import split as S
from vepd_ros.streams import (
    TOPIC_ART_GPS_FIX, TOPIC_ART_IMU, TOPIC_INS_VELOCITY, TOPIC_ODOM_FILTERED
)

NS = S.NS
B0 = 1_000 * NS


def test_ranges_yaml_and_csv(tmp_path):
    y = tmp_path / 'r.yaml'
    y.write_text(
        'runs:\n  - {start: 0, end: 20, scenario: straight}\n  - {start: 35.5, end: 55.5}\n'
    )
    segs = S.read_ranges(y, bag_start_ns=B0, default_scenario='circle')
    assert segs == [
        S.Segment(B0, B0 + 20 * NS, 'straight'),
        S.Segment(B0 + 35_500_000_000, B0 + 55_500_000_000, 'circle'),
    ]
    c = tmp_path / 'r.csv'
    c.write_text('# comment\nstart,end,scenario\n1000,1010,sine\n')
    assert S.read_ranges(c, bag_start_ns=B0, time_base='absolute') == [
        S.Segment(1000 * NS, 1010 * NS, 'sine')
    ]
    y2 = tmp_path / 'abs.yaml'
    y2.write_text('time_base: absolute\nruns: [{start: 1000, end: 1001}]\n')
    assert S.read_ranges(y2, bag_start_ns=0)[0].start_ns == 1000 * NS


@pytest.mark.parametrize(
    'text,match',
    [
        ('runs: [{start: 5, end: 1}]', 'must be after'),
        ('runs: [{start: a, end: 1}]', 'start: expected a number'),
        ('runs: 3', 'expected a list'),
        ('runs: []', 'no runs'),
    ],
)
def test_bad_ranges_name_the_file(tmp_path, text, match):
    y = tmp_path / 'bad.yaml'
    y.write_text(text)
    with pytest.raises(ValueError, match=match) as ei:
        S.read_ranges(y, bag_start_ns=0)
    assert 'bad.yaml' in str(ei.value)


def _profile():
    t = np.arange(0, 60, 0.1)
    v = np.zeros_like(t)
    v[(t >= 5) & (t < 20)] = 1.0  # run 1
    v[(t >= 30) & (t < 31)] = 1.0  # too short: dropped
    v[(t >= 40) & (t < 55)] = 1.5  # run 2
    v[(t >= 12) & (t < 12.5)] = 0.0  # brief stop inside run 1: not a gap (< min_gap)
    return B0 + np.round(t * NS).astype(np.int64), v


def test_stationary_gaps_make_runs_with_padding():
    t, v = _profile()
    segs = S.split_stationary(
        t, v, threshold=0.05, min_gap_s=2.0, min_run_s=3.0, pad_s=1.0, scenarios=['a', 'b']
    )
    assert [s.scenario for s in segs] == ['a', 'b']
    assert (segs[0].start_ns - B0) / NS == pytest.approx(4.9 - 1.0)
    assert (segs[0].end_ns - B0) / NS == pytest.approx(20.0 + 1.0)
    assert (segs[1].start_ns - B0) / NS == pytest.approx(39.9 - 1.0)
    with pytest.raises(ValueError, match='2 runs found.*1 scenario labels'):
        S.split_stationary(t, v, scenarios=['only'])


def test_whole():
    assert S.whole(1, 2, 'rest') == [S.Segment(1, 2, 'rest')]


def test_profiles_and_overrides():
    art = P.get_profile('art')
    assert (art.topic('gps'), art.topic('imu'), art.topic('truth'), art.topic('odom')) == (
        TOPIC_ART_GPS_FIX,
        TOPIC_ART_IMU,
        TOPIC_INS_VELOCITY,
        TOPIC_ODOM_FILTERED,
    )
    ch = P.get_profile('chrono')
    assert ch.imu_topics() == [
        '/chrono_ros_node/output/accelerometer/data',
        '/chrono_ros_node/output/gyroscope/data',
    ]
    assert ch.topic('truth') == '/chrono_ros_node/output/vehicle/state'
    ov = P.get_profile(
        'chrono',
        P.parse_topic_overrides(['imu=/imu', 'gps=/chrono_ros_node/output/gps/gps3_airsim']),
    )
    assert ov.imu_topics() == [TOPIC_ART_IMU] and ov.topic('gps').endswith('gps3_airsim')
    assert P.get_profile('custom').topic('gps') == ''
    with pytest.raises(ValueError, match="unknown role 'lidar'"):
        P.parse_topic_overrides(['lidar=/scan'])
    with pytest.raises(ValueError, match='unknown profile'):
        P.get_profile('webots')


def test_merge_imu_pairs_accel_with_latest_gyro():
    from dataclasses import dataclass

    @dataclass
    class V:
        x: float
        y: float = 0.0
        z: float = 0.0

    @dataclass
    class M:
        angular_velocity: V
        angular_velocity_covariance: tuple
        linear_acceleration: V

    acc = [(t, M(V(0), (0,), V(float(t)))) for t in (0, 10, 20, 30)]
    gyr = [(t, M(V(float(t) + 0.5), (1,), V(0))) for t in (5, 20)]
    out = P.merge_imu(acc, gyr)
    assert [t for t, _ in out] == [10, 20, 30]
    assert [m.angular_velocity.x for _, m in out] == [5.5, 20.5, 20.5]
    assert [m.linear_acceleration.x for _, m in out] == [10.0, 20.0, 30.0]


@pytest.mark.parametrize(
    'content, words',
    [
        ('start,end\n0,1e300\n', 'magnitude'),
        ('start,end\n0,3_5\n', "'3_5'"),
        ('start,end\n0,inf\n', 'finite'),
        (b'start,end\n\x80\x81\xff,1\n', 'UTF-8'),
        (b'start,end\n0,\x001\n', 'expected a number'),
    ],
)
def test_ranges_csv_errors_name_the_file(tmp_path, content, words):
    """
    Refuse bad --split ranges with a ValueError naming the file.

    --split ranges: a time of 1e300 s (an OverflowError in ns), '3_5' (float() reads 35),
    binary content: a ValueError naming the file, never a traceback or a silent 35 s.
    """
    from vepd_ros.io.split import read_ranges

    p = tmp_path / 'ranges.csv'
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ValueError) as exc:
        read_ranges(p, bag_start_ns=0)
    assert str(p) in str(exc.value) and words in str(exc.value)
