# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Lockstep sim time across DDS participants: truth_node (``pace_nodes``) and a subscriber in another.

The subscriber runs in its own rclpy context (its own DDS participant, as a separate process is)
and is spun by ``spin_reporting``, as ``run_node`` spins every node on /clock. It keeps only the
newest truth message (keep-last 1), so a sample it has not taken before the next one arrives is
lost, and it is slowed by a sleep in its callback. Paced, it still takes every sample, each before
its clock has passed the sample's stamp, and what it receives is the same, bit for bit, however
slow it is.
"""

from __future__ import annotations

import threading
import time

import pytest
from ros_helpers import spin_until

pytestmark = [pytest.mark.ros]

RATE_HZ = 100.0
DURATION_S = 0.5
N_SAMPLES = 51  # floor(0.5 s x 100 Hz) + 1


def _consumer(ctx, delay_s: float):
    from nav_msgs.msg import Odometry
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from vepd_ros.nodes.base import stamp_to_ns

    node = Node(
        'slow_consumer',
        context=ctx,
        parameter_overrides=[Parameter('use_sim_time', Parameter.Type.BOOL, True)],
    )
    node.got = []  # (stamp ns, clock ns when taken, vx)

    def on_truth(msg):
        time.sleep(delay_s)
        node.got.append(
            (
                stamp_to_ns(msg.header.stamp),
                node.get_clock().now().nanoseconds,
                msg.twist.twist.linear.x,
            )
        )

    node.create_subscription(
        Odometry,
        '/ground_truth/odometry',
        on_truth,
        QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE),
    )
    return node


def _paced_run(domain_id: int, delay_s: float, stop_consumer_after: int | None = None):
    """Truth paced by one slow consumer; returns (consumer's samples, truth node's counters)."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from vepd_ros.nodes.base import spin_reporting, TrafficCounter
    from vepd_ros.nodes.truth_node import TruthNode

    ctx_truth, ctx_sub = rclpy.context.Context(), rclpy.context.Context()
    rclpy.init(context=ctx_truth, domain_id=domain_id)
    rclpy.init(context=ctx_sub, domain_id=domain_id)
    try:
        consumer = _consumer(ctx_sub, delay_s)
        ex_sub = SingleThreadedExecutor(context=ctx_sub)
        ex_sub.add_node(consumer)

        def spin_consumer():
            try:
                spin_reporting(ex_sub, TrafficCounter(consumer))
            except ExternalShutdownException:
                pass

        thread = threading.Thread(target=spin_consumer, daemon=True)
        thread.start()
        truth = TruthNode(
            context=ctx_truth,
            parameter_overrides=[
                Parameter(name, value=value)
                for name, value in {
                    'scenario': 'straight',
                    'duration_s': DURATION_S,
                    'rate_hz': RATE_HZ,
                    'runs': 1,
                    'time_scale': 50.0,  # 5000 steps/s: far more than the consumer keeps up with
                    'wait_for_subscribers': 1,
                    'pace_nodes': 1,
                    'pace_timeout_s': 2.0,
                }.items()
            ],
        )
        ex_truth = SingleThreadedExecutor(context=ctx_truth)
        ex_truth.add_node(truth)

        def done():
            if stop_consumer_after is not None and len(consumer.got) >= stop_consumer_after:
                ctx_sub.try_shutdown()  # the subscriber dies mid-run
            return truth.published >= N_SAMPLES and (
                stop_consumer_after is not None or len(consumer.got) >= N_SAMPLES
            )

        assert spin_until(ex_truth, done, timeout_s=120.0), (truth.published, len(consumer.got))
        return list(consumer.got), truth
    finally:
        ctx_sub.try_shutdown()
        ctx_truth.try_shutdown()


def test_a_slow_keep_last_1_subscriber_takes_every_sample_in_step_with_the_clock(domain_id):
    fast, _ = _paced_run(domain_id, 0.0)
    slow, truth = _paced_run(domain_id, 0.004)
    period_ns = int(1e9 / RATE_HZ)
    for got in (fast, slow):
        stamps = [s for s, _, _ in got]
        assert len(stamps) == N_SAMPLES  # none lost, none twice
        assert stamps == [stamps[0] + k * period_ns for k in range(N_SAMPLES)]
        # taken before the subscriber's clock passed it (the data of a step precede its /clock)
        assert all(clock < stamp for stamp, clock, _ in got), got[:5]
    assert [(s, v) for s, _, v in slow] == [(s, v) for s, _, v in fast]
    assert truth.pacer.held_steps > 0  # the consumer did hold truth back


def test_a_subscriber_that_dies_does_not_hang_the_clock(domain_id):
    got, truth = _paced_run(domain_id, 0.0, stop_consumer_after=10)
    assert 10 <= len(got) < N_SAMPLES
    assert truth.published >= N_SAMPLES  # sim time went on after pace_timeout_s
