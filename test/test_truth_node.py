# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test truth_node over real DDS, in its own process.

truth_node over real DDS, in its own process: rate on received stamps, /clock mode, bad parameters,
signals.
"""

import json
import signal
import subprocess
import time

import numpy as np
import pytest
from ros_helpers import console_script, ros_env, spin_until, wait_for_output
from vepd_ros.seeding import run_plan
from vepd_ros.streams import TOPIC_GROUND_TRUTH, TOPIC_GROUND_TRUTH_IMU, TOPIC_RUN_EVENTS

pytestmark = pytest.mark.ros


def _spawn(domain_id, *params):
    args = [console_script('truth_node'), '--ros-args']
    for p in params:
        args += ['-p', p]
    return subprocess.Popen(
        args, env=ros_env(domain_id), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _listen(ros_ctx, executor):
    from nav_msgs.msg import Odometry
    import rclpy
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu
    from std_msgs.msg import String

    node = rclpy.create_node('truth_listener', context=ros_ctx)
    got = {'odom': [], 'imu': [], 'clock': [], 'run': [], 'wall': []}
    ns = lambda st: st.sec * 1_000_000_000 + st.nanosec  # noqa: E731
    node.create_subscription(
        Odometry,
        TOPIC_GROUND_TRUTH,
        lambda m: (got['odom'].append(ns(m.header.stamp)), got['wall'].append(time.monotonic())),
        200,
    )
    node.create_subscription(
        Imu,
        TOPIC_GROUND_TRUTH_IMU,
        lambda m: got['imu'].append((ns(m.header.stamp), m.linear_acceleration.z)),
        200,
    )
    node.create_subscription(Clock, '/clock', lambda m: got['clock'].append(ns(m.clock)), 200)
    from vepd_ros.nodes.qos import EVENT_QOS

    node.create_subscription(
        String, TOPIC_RUN_EVENTS, lambda m: got['run'].append(json.loads(m.data)), EVENT_QOS
    )
    executor.add_node(node)
    return node, got


def test_rate_on_received_stamps_is_within_1_percent(ros_ctx, executor, domain_id):
    node, got = _listen(ros_ctx, executor)
    proc = _spawn(
        domain_id,
        'rate_hz:=100.0',
        'duration_s:=4.0',
        'scenario:=circle',
        'shutdown_when_done:=true',
        'wait_for_subscribers:=1',
    )
    try:
        assert spin_until(
            executor, lambda: any(e['event'] == 'end' for e in got['run']), timeout_s=20
        ), got['run']
        spin_until(executor, lambda: len(got['imu']) >= len(got['odom']), timeout_s=2)
    finally:
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0, out
    stamps = np.array(got['odom'])
    assert len(stamps) > 390  # 401 published after the listener matched
    rate = (len(stamps) - 1) / ((stamps[-1] - stamps[0]) * 1e-9)
    assert abs(rate - 100.0) < 1.0
    assert np.all(np.diff(stamps) > 0)
    wall_rate = (len(got['wall']) - 1) / (got['wall'][-1] - got['wall'][0])
    assert 80.0 < wall_rate < 125.0  # real time on the wall clock too (loose: shared CI machine)
    assert got['imu'][0][1] == pytest.approx(9.80665)  # parked at start: specific force +g on z


def test_accelerated_clock_drives_sim_time(ros_ctx, executor, domain_id):
    node, got = _listen(ros_ctx, executor)
    proc = _spawn(
        domain_id,
        'rate_hz:=100.0',
        'duration_s:=6.0',
        'time_scale:=4.0',
        'runs:=2',
        'gap_s:=0.5',
        'shutdown_when_done:=true',
        'wait_for_subscribers:=1',
    )
    try:
        assert spin_until(
            executor, lambda: sum(e['event'] == 'end' for e in got['run']) == 2, timeout_s=25
        ), got['run']
    finally:
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0, out
    stamps, clock = np.array(got['odom']), np.array(got['clock'])
    assert clock[0] >= 1_000_000_000 - 10_000_000 and np.all(np.diff(clock) > 0)
    starts = [e for e in got['run'] if e['event'] == 'start']
    assert [(e['scenario'], e['run']) for e in starts] == [('circle', 1), ('circle', 2)]
    assert [e['seed'] for e in starts] == [seed for _, _, seed in run_plan(0, ['circle'], 2)]
    first_run = stamps[stamps < starts[1]['stamp_ns']]
    sim_span = (first_run[-1] - first_run[0]) * 1e-9
    rate = (len(first_run) - 1) / sim_span
    assert abs(rate - 100.0) < 1.0
    wall = np.array(got['wall'])[: len(first_run)]
    assert (
        sim_span / (wall[-1] - wall[0]) > 2.0
    )  # faster than real time (4x asked; loose for a shared machine)


@pytest.mark.parametrize(
    'param, message',
    [
        ('rate_hz:=-5.0', "parameter 'rate_hz': got -5.0, expected a float > 0.0"),
        (
            'scenario:=spiral',
            "parameter 'scenario': got 'spiral', expected a str; names from rest, straight, "
            'circle, sine',
        ),
        ('duration_s:=0.0', "parameter 'duration_s'"),
        (
            'scenario:=circle,loop',
            "parameter 'scenario': got 'circle,loop', expected a str; names from rest, straight",
        ),
    ],
)
def test_invalid_parameters_stop_the_node_with_a_named_error(domain_id, param, message):
    proc = _spawn(domain_id, param)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert message in out


def test_sigterm_and_sigint_exit_cleanly(domain_id):
    for sig in (signal.SIGTERM, signal.SIGINT):
        proc = _spawn(domain_id, 'duration_s:=30.0')
        wait_for_output(
            proc, 'run 1/1 (circle #1) start', timeout_s=15
        )  # spinning: its first timer callback ran
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=15)
        assert proc.returncode == 0, out
        assert 'Traceback' not in out


def test_a_run_start_event_goes_out_alone_a_step_before_the_run_first_sample(ros_ctx):
    """
    Check that a run's start event has a lockstep step of its own (issue 23).

    Events and samples travel on two topics with no order between them across processes: a noise
    node or the judge that took the run's first sample before its start event restarted one
    sample late. Paced, a step goes out only once every node has taken the previous one, so the
    start event alone in its step reaches every node before the run's first sample; /clock does
    not move in that step.
    """
    from rclpy.parameter import Parameter
    from vepd_ros.nodes.truth_node import TruthNode

    truth = TruthNode(
        context=ros_ctx,
        parameter_overrides=[
            Parameter('publish_clock', value=True),
            Parameter('duration_s', value=0.03),
            Parameter('runs', value=2),
            Parameter('gap_s', value=0.0),
        ],
    )
    log = []

    def record(pub, what):
        publish = pub.publish
        pub.publish = lambda msg: (log.append(what(msg)), publish(msg))

    record(truth.pub_run, lambda msg: json.loads(msg.data)['event'])
    record(truth.pub_odom, lambda msg: 'sample')
    record(truth.pub_clock, lambda msg: 'clock')
    steps = []
    try:
        while truth.run < 1 or truth.samples is not None:
            log.clear()
            assert truth.step()
            steps.append(tuple(log))
    finally:
        truth.destroy_node()
    starts = [i for i, s in enumerate(steps) if 'start' in s]
    assert len(starts) == 2 and all(steps[i] == ('start',) for i in starts), steps
    assert all(steps[i + 1][0] == 'sample' for i in starts), steps
    assert steps[starts[0] + 4] == ('sample', 'end', 'clock'), steps  # 0.03 s: 4 samples
