# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The built-in judge's message layer against robot_localization's real ekf_node (issue 23).

Each case is played into the real ``ekf_node`` (built by ``make rl``) on a stepped sim clock by
``rl_node_replay.replay_ekf`` and into the built-in ``RosFilter`` on the same schedule; every
/odometry/filtered is compared: the same ticks, the same stamps, the state and the published
blocks of P.

Tolerance (derived, both sides double precision): the rl_golden check bounds the filter core at
state 1e-9 (positions 1e-8) and P 1e-9 relative, for a different operation order (Eigen's products
and LU inverse against numpy's and the adjugate) over 40 s; the message layer adds a few rotations
and a quaternion round trip per message, each a few ulps. The odometry message carries the
orientation as a quaternion, read back to roll/pitch/yaw on both sides the same way. The measured
maxima are printed (``-s``) and stated in docs/judge.md.
"""

from __future__ import annotations

import pytest
from rl_node_replay import (
    builtin_ekf,
    compare_ekf,
    ekf_ticks,
    golden_case,
    replay_ekf,
    synthetic_case,
)

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ATOL_STATE, ATOL_POSITION, RTOL_P = 1e-9, 1e-8, 1e-9


def _transforms(tf_static):
    from vepd_ros.judge.transforms import StaticTransforms

    tf = StaticTransforms()
    for parent, child, t, q in tf_static:
        tf.add(parent, child, t, quaternion=q)
    return tf


def _run_case(rl_judge, domain_id, ros_ctx, params, events, tf_static=()):
    from vepd_ros.judge.config import load_ekf_params

    period = load_ekf_params(params).period_ns
    ticks = ekf_ticks(period, events)
    outs, f = builtin_ekf(params, events, ticks, _transforms(tf_static))
    expected = {t: stamp for t, stamp, _, _ in outs}

    def replay(settle_s, tf_wait_s):
        real = replay_ekf(ros_ctx, str(rl_judge.executable('ekf_node')), rl_judge.env(domain_id),
                          params, events, ticks, expected, tf_static,
                          str(rl_judge.executable('static_transform_publisher')),
                          settle_s=settle_s, quiet_s=max(0.03, settle_s), tf_wait_s=tf_wait_s)
        return real, compare_ekf(real, outs)

    real, dev = replay(0.01, 0.5)
    print(f'\n{dev}  dropped={f.dropped}')
    if not dev.ok(ATOL_STATE, ATOL_POSITION, RTOL_P):
        # The stepped schedule is a wall-clock race the harness can lose on a loaded machine
        # (CI: a tick that overtook a message, or a /tf_static not yet in the node's buffer). A
        # judge difference does not depend on the pace: the same case, paced 10x slower, decides.
        print(f'replayed at 10x the settle time after: {dev}\n{real.log[-2000:]}')
        real, dev = replay(0.1, 3.0)
        print(f'paced 10x slower: {dev}')
    assert not real.missing, f'no output at ticks {real.missing[:5]}...\n{real.log[-3000:]}'
    return dev, f, real


@pytest.mark.parametrize('scenario', ['s1_circle2d_odom_imu_gps', 's2_gps_zero_cov_imu_3d'])
def test_rl_golden_raw_messages_through_the_real_ekf_node(
        rl_judge, shared_data, domain_id, ros_ctx, scenario):
    """rl_golden's raw messages (first 6 s) in the real node and the built-in judge."""
    params, events = golden_case(shared_data / 'rl_golden' / scenario, 6.0)
    dev, _, _ = _run_case(rl_judge, domain_id, ros_ctx, params, events)
    assert dev.ok(ATOL_STATE, ATOL_POSITION, RTOL_P), dev


@pytest.mark.parametrize('case', ['frames', 'inputs', 'differential'])
def test_message_layer_cases_through_the_real_ekf_node(rl_judge, domain_id, ros_ctx, case):
    """Rotated IMU, offset frames, lever arms, bad inputs, differential/relative modes."""
    params, events, tf_static = synthetic_case(case)
    dev, _, _ = _run_case(rl_judge, domain_id, ros_ctx, params, events, tf_static)
    assert dev.ok(ATOL_STATE, ATOL_POSITION, RTOL_P), dev


def test_harness_reproduces_a_node_with_the_same_loop(shared_data, domain_id, ros_ctx):
    """
    Check the harness itself: the built-in judge_node, driven as the real node is, gives RosFilter.

    ``judge_node`` runs the built-in judge's loop over rclpy on sim time: every output of the
    stepped replay (tick, stamp, state, P) must equal the in-process ``RosFilter`` bit for bit, so
    a deviation of the real node is the node's, not the harness's schedule. Runs without
    ``make rl``.
    """
    from ros_helpers import console_script, ros_env

    params, events = golden_case(shared_data / 'rl_golden' / 's1_circle2d_odom_imu_gps', 2.0)
    from vepd_ros.judge.config import load_ekf_params

    ticks = ekf_ticks(load_ekf_params(params).period_ns, events)
    outs, _ = builtin_ekf(params, events, ticks)
    real = replay_ekf(ros_ctx, console_script('judge_node'), ros_env(domain_id), params, events,
                      ticks, {t: stamp for t, stamp, _, _ in outs})
    dev = compare_ekf(real, outs)
    assert not real.missing, real.log[-3000:]
    assert dev.ok(0.0, 0.0, 0.0), dev
