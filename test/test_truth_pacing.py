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
from vepd_ros.streams import TOPIC_GROUND_TRUTH

pytestmark = [pytest.mark.ros]

RATE_HZ = 100.0
DURATION_S = 0.5
N_SAMPLES = 51  # floor(0.5 s x 100 Hz) + 1


def _consumer(ctx, delay_s: float):
    from nav_msgs.msg import Odometry
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from vepd_ros.nodes.stamps import stamp_to_ns

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
        TOPIC_GROUND_TRUTH,
        on_truth,
        QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE),
    )
    return node


def _paced_run(domain_id: int, delay_s: float, stop_consumer_after: int | None = None):
    """Truth paced by one slow consumer; returns (consumer's samples, truth node's counters)."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from vepd_ros.nodes.lifecycle import spin_reporting
    from vepd_ros.nodes.lockstep import TrafficCounter
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


def _report(pacer, node: str, pid: int, **fields) -> None:
    """Hand ``pacer`` one /vepd/progress report (the JSON run_node's nodes publish)."""
    import json

    from std_msgs.msg import String

    body = {'received': {}, 'published': {}, 'matched': {}, 'heard': {}, **fields}
    pacer._on_report(String(data=json.dumps({'node': node, 'pid': pid, **body})))


def _pacer(ros_ctx, pace_nodes: int):
    from rclpy.node import Node
    from vepd_ros.nodes.health import DropCounter
    from vepd_ros.nodes.lockstep import Pacer

    node = Node('clock_source', context=ros_ctx)
    return Pacer(node, pace_nodes, 20.0, DropCounter(node))


def test_a_subscriber_that_has_not_matched_a_reporting_publisher_holds_the_step(ros_ctx):
    # DDS matches each side on its own: a publisher may see its subscriber (matched 1) while that
    # best-effort subscriber has not matched the publisher yet (heard 0) and would drop the sample
    pacer = _pacer(ros_ctx, 2)
    _report(pacer, '/ekf', 1, published={'/odom': 0}, matched={'/odom': 1})
    _report(pacer, '/navsat', 2, received={'/odom': 0}, heard={'/odom': 0})
    assert not pacer.ready()
    _report(pacer, '/navsat', 2, received={'/odom': 0}, heard={'/odom': 1})
    assert pacer.ready()


def test_a_process_a_report_requires_holds_the_step_until_it_has_reported(ros_ctx):
    # judge_supervisor_node names the chain it started; before their first reports the pacer does
    # not know what they subscribe to
    pacer = _pacer(ros_ctx, 1)
    _report(pacer, '/judge_supervisor', 10, requires=[11, 12])
    assert not pacer.ready()
    _report(pacer, '/ekf', 11)
    assert not pacer.ready()
    _report(pacer, '/navsat', 12)
    assert pacer.ready()


def test_subscriptions_a_report_vouches_for_hold_the_step_until_their_publishers_match(ros_ctx):
    # robot_localization's nodes do not report: judge_supervisor_node vouches for their
    # subscriptions, so the noise node's fix (and /clock) waits for them to be matched
    pacer = _pacer(ros_ctx, 2)
    _report(pacer, '/real/judge_supervisor', 10, vouches={'/real/gps/fix': 1})
    _report(pacer, '/real/gps_noise', 11, published={'/real/gps/fix': 0},
            matched={'/real/gps/fix': 0})
    assert not pacer.ready()
    _report(pacer, '/real/gps_noise', 11, published={'/real/gps/fix': 0},
            matched={'/real/gps/fix': 1})
    assert pacer.ready()


def test_the_supervisor_vouches_for_a_robot_localization_chain_only():
    """The real chain's inputs and /clock (one per process) are vouched for; ours report."""
    from vepd_ros.nodes.judge_supervisor_node import chain_vouches

    subs = ['gps/fix', 'odometry/filtered', 'imu/data', 'odometry/gps']
    rl = ['robot_localization', 'robot_localization']
    assert chain_vouches(rl, subs, True) == {
        'gps/fix': 1, 'odometry/filtered': 1, 'imu/data': 1, 'odometry/gps': 1, '/clock': 2,
    }
    assert chain_vouches(rl, subs, False) == dict.fromkeys(subs, 1)  # no /clock off sim time
    assert chain_vouches(['vepd_ros', 'vepd_ros'], subs, True) == {}


def test_the_launch_paces_on_every_reporting_node_the_supervised_chains_included():
    from vepd_ros.ros_graph import paced_nodes
    from vepd_ros.ros_graph import build_graph

    args = {'models': 'ch_rw', 'judge': 'builtin', 'time_scale': 2.0}
    reset = build_graph('sim_judge', args)
    per_run = build_graph('sim_judge', {**args, 'judge_per_run': True})
    driver = next(n for n in reset if n.role == 'truth')
    # 2 chains (real, ch_rw) x (gps, imu, navsat, judge, recorder) + evaluator, one process each
    assert paced_nodes(driver, reset) == 11
    # the same processes, navsat + judge started by one supervisor per chain: 2 more
    driver = next(n for n in per_run if n.role == 'truth')
    assert paced_nodes(driver, per_run) == 13
