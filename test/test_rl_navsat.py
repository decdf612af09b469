# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The built-in navsat_transform (judge/navsat.py) against robot_localization's real node (issue 23).

The same messages go, step by step, into the real ``navsat_transform_node`` (built by
``make rl``; ``rl_node_replay.replay_navsat``) and into ``NavSatCore``: every odometry/gps and
gps/filtered is compared (step, stamp, frames, position, covariance; latitude, longitude,
altitude).

Tolerance (derived): positions are UTM coordinates (~5e6 m) put through a few rigid transforms,
so double rounding is ~1e-9 m; pyproj reproduces GeographicLib's UTM to 2e-9 m
(rl_golden/navsat_utm): 1e-7 m is 50× that and still a thousandth of the smallest lever arm
here. Latitude/longitude 1e-12° (~1e-7 m), covariances 1e-12 relative.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from rl_node_replay import (
    builtin_navsat,
    fix_msg,
    imu_msg,
    odom_msg,
    replay_navsat,
)

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ATOL_M, ATOL_DEG, RTOL_COV = 1e-7, 1e-12, 1e-12
T0 = 1_700_000_000 * 10**9


def _q(yaw, roll=0.0, pitch=0.0):
    from vepd_ros.frames import quaternion_from_rpy

    return [float(v) for v in np.asarray(quaternion_from_rpy(roll, pitch, yaw), float).ravel()]


FIX_COV = [1.0, 0.1, 0.0, 0.1, 2.0, 0.0, 0.0, 0.0, 4.0]


YAW = 0.4  # the odometry's yaw, constant: navsat's world→base_link lookup is a static TF here


def _steps(lat0, lon0, fix_frame='gps', n=5, imu=True, child='base_link'):
    """
    Return the steps of a drive: odometry, IMU, then odometry and fixes alternately.

    Each fix is stamped as the odometry before it. The odometry's orientation stays that of the
    static odom→base_link transform (``WORLD_BASE``) navsat looks up for its lever arm.
    """
    steps = []
    pose_cov = list(np.diag([0.5, 0.6, 0.7, 0.01, 0.02, 0.03]).ravel())
    steps.append([('odometry/filtered',
                   odom_msg(T0, 'odom', child, (1.0, 2.0, 0.1), _q(YAW), pose_cov))])
    if imu:
        steps.append([('imu', imu_msg(T0 + 10**7, 'imu_link', _q(1.0, 0.02, -0.01)))])
    for k in range(n):
        t = T0 + (k + 1) * 10**8
        steps.append([('odometry/filtered', odom_msg(
            t, 'odom', child, (1.0 + 0.8 * k, 2.0 + 0.3 * k, 0.1), _q(YAW), pose_cov))])
        steps.append([('gps/fix', fix_msg(t, fix_frame, lat0 + 7e-6 * k, lon0 + 1e-5 * k,
                                          520.0 + 0.1 * k, FIX_COV))])
    return steps


LEVER = ('base_link', 'gps', (0.5, 0.2, 1.0), (0.0, 0.0, 0.0, 1.0))
IMU_MOUNT = ('base_link', 'imu_link', (0.0, 0.0, 0.0), _q(0.3))
WORLD_BASE = ('odom', 'base_link', (0.0, 0.0, 0.0), _q(YAW))
CASES = {
    # datum, UTM zone 32N, declination + yaw offset + convergence, lever arm, IMU mounted yawed
    'lever_arm': ({'magnetic_declination_radians': 0.05, 'yaw_offset': 0.1},
                  _steps(48.1, 11.5), (LEVER, IMU_MOUNT, WORLD_BASE)),
    # southern hemisphere, zero_altitude, the EKF's own yaw, the fix in base_link
    'south_zero_alt_odometry_yaw': ({'zero_altitude': True, 'use_odometry_yaw': True},
                                    _steps(-33.9, 151.2, 'base_link', imu=False), (WORLD_BASE,)),
    # Norway's exception zone 32V
    'norway_zone': ({}, _steps(60.5, 5.5), (LEVER, IMU_MOUNT, WORLD_BASE)),
    # the lever arm in zone 32V with the EKF's own yaw: the real node keeps its IMU-less
    # subscriptions, so every step is compared (see REAL_NODE_STALLS)
    'lever_arm_odometry_yaw': ({'use_odometry_yaw': True, 'magnetic_declination_radians': 0.05,
                                'yaw_offset': 0.1},
                               _steps(60.5, 5.5, imu=False), (LEVER, WORLD_BASE)),
}


def _compare(real, built):
    dev = {'n': [], 'pos': 0.0, 'cov': 0.0, 'deg': 0.0, 'alt': 0.0, 'stamps': True,
           'frames': True}
    for topic in ('odometry/gps', 'gps/filtered'):
        r, b = real.outputs[topic], built[topic]
        dev['n'].append((topic, len(r), len(b)))
        for pr, (step, pb) in zip(r, b):
            dev['stamps'] &= pr.tick_ns == step and pr.stamp_ns == int(pb['stamp_ns'][0])
            m = pr.msg
            if topic == 'odometry/gps':
                dev['frames'] &= (m.header.frame_id == pb['frame_id']
                                  and m.child_frame_id == pb['child_frame_id'])
                p = m.pose.pose.position
                dev['pos'] = max(dev['pos'], float(np.max(np.abs(
                    np.array([p.x, p.y, p.z]) - pb['position'][0]))))
                c_r, c_b = np.asarray(m.pose.covariance), pb['pose_covariance'][0]
            else:
                dev['frames'] &= m.header.frame_id == pb['frame_id']
                dev['deg'] = max(dev['deg'], abs(m.latitude - pb['latitude'][0]),
                                 abs(m.longitude - pb['longitude'][0]))
                dev['alt'] = max(dev['alt'], abs(m.altitude - pb['altitude'][0]))
                c_r, c_b = np.asarray(m.position_covariance), pb['position_covariance'][0]
            scale = max(float(np.max(np.abs(c_r))), 1e-300)
            dev['cov'] = max(dev['cov'], float(np.max(np.abs(c_r - c_b))) / scale)
    return dev


# Settled (issue 23): in IMU mode the real node stops after its first output, lever arm or not: an
# upstream behaviour of the node as built here, not the harness's stepping. navsat_transform.cpp
# (3.6.0) destroys its IMU subscription inside the timer callback that computes the transform
# (``imu_sub_.reset()``), and rclcpp 29.3's executor (../shared/ros2_sources) does not survive
# that: a destroyed entity does not ask for a rebuild (``entities_need_rebuild_`` is set by guard
# conditions, which creation triggers and destruction does not), so the executor's wait set keeps
# the expired weak entry; ``storage_rebuild_rcl_wait_set_with_sets`` skips it when it fills the rcl
# wait set ("flag for pruning", never pruned outside ``collect_entities``), which shifts every
# later subscription's rcl index one below its rclcpp storage index;
# ``WaitResult::next_ready_subscription`` maps a ready rcl slot ``ii`` to storage entry ``ii``
# (the expired one → nullptr: ``get_next_ready_executable``'s loop ends; after it, the wrong
# subscription), so the subscription(s) after the IMU's in the wait set's order (by handle
# address) are never taken again: their depth-1 reader stays ready, ``rcl_wait``
# returns at once (the busy loop: 0.99 s CPU over the replay against 0.12 s with
# use_odometry_yaw, the node alive; upstream's issue cra-ros-pkg/robot_localization#890 reports
# navsat_transform above 100 % CPU in IMU mode on Jazzy), and no new fix or odometry reaches the
# callbacks: nothing more is published however long the harness waits. rclcpp reworked this after
# 29.3 (ros2/rclcpp#2745, "Executor strong reference fix", Feb 2025; not tried here: a rebuild
# of rclcpp; the mechanism is read in the sources and fits every measurement, a patched build
# would confirm it). Not the harness's stepping either: a plain stream (odometry, IMU and a fix
# every 0.1 s for 3 s, replay_navsat with step_s=0.1) gave 1 odometry/gps in IMU mode and 30 of
# 30 with use_odometry_yaw. Without an IMU subscription (use_odometry_yaw, the sim graph's
# configuration) nothing is destroyed: 'lever_arm_odometry_yaw' compares the lever arm in zone
# 32V at every step, and the outputs before the stall equal the built-in's (9.3e-10 m). Not
# strict: the stall is a race (a fresh CI run of b5ef9f4 saw norway_zone pass, all 9 outputs
# equal), so a run that escapes it is no news; a fixed executor makes them pass every time.
REAL_NODE_STALLS = {'lever_arm', 'norway_zone'}


@pytest.mark.parametrize('case', [
    pytest.param(c, marks=pytest.mark.xfail(strict=False, reason=(
        'upstream: navsat_transform_node destroys its IMU subscription in a timer callback; '
        "rclcpp 29.3's executor then maps ready subscriptions to the expired entry, busy-waits "
        'and never takes the fixes again: only its first output is published')))
    if c in REAL_NODE_STALLS else c
    for c in sorted(CASES)
])
def test_navsat_against_the_real_node(rl_judge, domain_id, ros_ctx, case):
    extra, steps, tf_static = CASES[case]
    params = {'frequency': 30.0, 'publish_filtered_gps': True, **extra}
    built, nav = builtin_navsat(params, steps, tf_static)
    real = replay_navsat(ros_ctx, str(rl_judge.executable('navsat_transform_node')),
                         rl_judge.env(domain_id), params, steps, tf_static,
                         str(rl_judge.executable('static_transform_publisher')))
    dev = _compare(real, built)
    print(f'\n{case}: {dev} dropped={nav.dropped}')
    for topic, n_real, n_built in dev['n']:
        assert n_real == n_built and n_real > 0, (topic, dev, real.log[-3000:])
    assert dev['stamps'] and dev['frames'], dev
    assert dev['pos'] <= ATOL_M and dev['alt'] <= ATOL_M and dev['deg'] <= ATOL_DEG, dev
    assert dev['cov'] <= RTOL_COV, dev
    assert math.isfinite(dev['pos'])


def test_without_a_transform_to_the_fix_frame_both_navsats_publish_the_origin(
        rl_judge, domain_id, ros_ctx):
    """
    Show what robot_localization does when base_link → the fix's frame cannot be looked up.

    Read in navsat_transform.cpp (getRobotOriginWorldPose): the robot pose starts as identity and
    is set only when both lookups succeed, so without base_link → 'gps' odometry/gps is published
    at (0, 0, 0) — the sim graph's situation before its fixes said base_link (the issue's "cannot
    find base_link → gps ten times a second"). The built-in navsat does the same (docs/judge.md,
    difference 11) and counts each such output; the offline judge refuses such input. The EKF's
    own yaw (no IMU subscription), so the real node does not stall (REAL_NODE_STALLS).
    """
    steps = _steps(48.1, 11.5, imu=False)
    params = {'frequency': 30.0, 'publish_filtered_gps': True, 'use_odometry_yaw': True}
    real = replay_navsat(ros_ctx, str(rl_judge.executable('navsat_transform_node')),
                         rl_judge.env(domain_id), params, steps, (WORLD_BASE,),
                         str(rl_judge.executable('static_transform_publisher')))
    built, nav = builtin_navsat(params, steps, (WORLD_BASE,))
    out = real.outputs['odometry/gps']
    assert out, real.log[-3000:]
    pos = np.array([[m.msg.pose.pose.position.x, m.msg.pose.pose.position.y,
                     m.msg.pose.pose.position.z] for m in out])
    print(f'\nodometry/gps positions without base_link→gps: {pos.tolist()}; {nav.dropped}')
    assert (pos == 0.0).all(), pos
    got = np.array([o['position'][0] for _, o in built['odometry/gps']])
    assert len(got) == len(out) and (got == 0.0).all(), (len(got), len(out), got)
    assert sum(nav.dropped.values()) == len(got), nav.dropped
