# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test judge_node over DDS.

judge_node over DDS: fed Imu + Odometry, publishes odometry/filtered at its frequency, stamped with
the last measurement time.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from ros_helpers import spin_until
from vepd_ros.streams import TOPIC_IMU, TOPIC_ODOM_FILTERED

NS = 1_000_000_000


def gyro_only_imu(t_ns: int, wz: float):
    """
    Build an Imu in base_link with only the angular velocity set.

    Orientation and acceleration covariance[0] = -1.
    """
    from sensor_msgs.msg import Imu
    from vepd_ros.nodes.stamps import ns_to_stamp

    m = Imu()
    m.header.stamp, m.header.frame_id = ns_to_stamp(t_ns), 'base_link'
    m.angular_velocity.z = wz
    m.angular_velocity_covariance[0] = m.angular_velocity_covariance[
        4
    ] = m.angular_velocity_covariance[8] = 1e-3
    m.orientation_covariance[0] = m.linear_acceleration_covariance[0] = -1.0
    return m


def test_judge_node_publishes_filtered_odometry(ros_ctx, executor):
    from nav_msgs.msg import Odometry
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Imu
    from vepd_ros.nodes.judge_node import JudgeNode
    from vepd_ros.nodes.qos import SENSOR_QOS
    from vepd_ros.nodes.stamps import ns_to_stamp, stamp_to_ns

    imu_cfg = [False] * 3 + [True] * 3 + [False] * 3 + [True] * 6
    gps_cfg = [True] * 3 + [False] * 12
    judge = JudgeNode(
        context=ros_ctx,
        parameter_overrides=[
            Parameter('frequency', value=20.0),
            Parameter('imu0', value='imu/data'),
            Parameter('imu0_config', value=imu_cfg),
            Parameter('imu0_remove_gravitational_acceleration', value=True),
            Parameter('odom0', value='odometry/gps'),
            Parameter('odom0_config', value=gps_cfg),
        ],
    )
    peer = rclpy.create_node('judge_test_peer', context=ros_ctx)
    pub_imu = peer.create_publisher(Imu, 'imu/data', SENSOR_QOS)
    pub_gps = peer.create_publisher(Odometry, 'odometry/gps', SENSOR_QOS)
    got = []
    peer.create_subscription(Odometry, 'odometry/filtered', got.append, 50)
    executor.add_node(judge)
    executor.add_node(peer)
    assert spin_until(
        executor,
        lambda: (
            pub_imu.get_subscription_count()
            and pub_gps.get_subscription_count()
            and peer.count_publishers('odometry/filtered')
        ),
        10,
    )
    sent = []

    def send():
        t = judge.get_clock().now().nanoseconds
        m = Imu()
        m.header.stamp, m.header.frame_id = ns_to_stamp(t), 'base_link'
        m.orientation.w = 1.0
        m.linear_acceleration.z = 9.80665
        for c in (
            m.orientation_covariance,
            m.angular_velocity_covariance,
            m.linear_acceleration_covariance,
        ):
            c[0] = c[4] = c[8] = 1e-3
        pub_imu.publish(m)
        g = Odometry()
        g.header.stamp, g.header.frame_id = ns_to_stamp(t), 'odom'
        g.pose.pose.position.x = 1.0
        g.pose.pose.orientation.w = 1.0
        g.pose.covariance[0] = g.pose.covariance[7] = g.pose.covariance[14] = 0.25
        pub_gps.publish(g)
        sent.append(t)

    feeder = peer.create_timer(0.02, send)
    assert spin_until(executor, lambda: len(got) >= 20, 20)
    feeder.cancel()
    stamps = np.array([stamp_to_ns(m.header.stamp) for m in got])
    assert np.all(np.diff(stamps) > 0)  # published only when the stamp moved forward
    assert set(stamps.tolist()) <= set(sent)  # stamp = a measurement time, never the tick time
    assert got[-1].header.frame_id == 'odom' and got[-1].child_frame_id == 'base_link'
    assert got[-1].pose.pose.position.x == pytest.approx(1.0, abs=0.2)
    # cadence: at most one output per timer tick (20 Hz)
    span = (stamps[-1] - stamps[0]) / NS
    assert len(stamps) - 1 <= span * 20 + 2
    judge.destroy_node()
    peer.destroy_node()


def test_judge_node_on_sim_time_processes_the_ticks_a_clock_jump_skipped(ros_ctx, executor):
    """
    On a /clock jump over several periods the judge still processes every skipped tick.

    /clock jumping over several timer periods (a busy executor, a slow simulator step): rcl fires
    the timer once; the judge still processes every nominal tick k·period in between, in order, so
    its outputs stay on the offline study's tick schedule (one output per tick, stamped with the
    last measurement before it).
    """
    from nav_msgs.msg import Odometry
    import rclpy
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu
    from vepd_ros.nodes.judge_node import JudgeNode
    from vepd_ros.nodes.qos import SENSOR_QOS
    from vepd_ros.nodes.stamps import ns_to_stamp, stamp_to_ns

    period = NS // 20
    judge = JudgeNode(
        context=ros_ctx,
        parameter_overrides=[
            Parameter('use_sim_time', value=True),
            Parameter('frequency', value=20.0),
            Parameter('imu0', value='imu/data'),
            Parameter('imu0_config', value=[False] * 9 + [True] * 3 + [False] * 3),
        ],
    )
    peer = rclpy.create_node('judge_clock_peer', context=ros_ctx)
    pub_clock = peer.create_publisher(Clock, '/clock', 10)
    pub_imu = peer.create_publisher(Imu, 'imu/data', SENSOR_QOS)
    got = []
    peer.create_subscription(Odometry, 'odometry/filtered', got.append, 100)
    executor.add_node(judge)
    executor.add_node(peer)
    assert spin_until(
        executor,
        lambda: (
            pub_imu.get_subscription_count()
            and pub_clock.get_subscription_count()
            and peer.count_publishers('odometry/filtered')
        ),
        10,
    )

    def clock(t_ns):
        pub_clock.publish(Clock(clock=ns_to_stamp(t_ns)))
        return spin_until(executor, lambda: judge.get_clock().now().nanoseconds == t_ns, 5)

    t0 = 10 * NS
    assert clock(t0)
    imu_stamps = [
        t0 + i * 10_000_000 for i in range(1, 41)
    ]  # 100 Hz for 0.4 s, ahead of the clock
    for i, t in enumerate(imu_stamps, 1):
        pub_imu.publish(gyro_only_imu(t, 0.1))
        assert spin_until(
            executor, lambda: judge.filter.queued == i, 5
        )  # one at a time: best effort, depth 10
    assert clock(t0 + 8 * period)  # one jump over 8 timer periods
    assert spin_until(executor, lambda: len(got) >= 8, 5), len(got)
    stamps = [stamp_to_ns(m.header.stamp) for m in got]
    assert stamps == [t0 + k * period for k in range(1, 9)]  # every nominal tick, in order
    judge.destroy_node()
    peer.destroy_node()


def test_judge_node_publish_on_measurement_publishes_each_fused_measurement_at_once(
    ros_ctx, executor
):
    """
    With publish_on_measurement every fused IMU message yields an output at once.

    publish_on_measurement (vepd_ros's low-latency switch, wall clock): every IMU message yields an
    output stamped with it, without waiting for the (here 1 Hz) timer; with use_sim_time the switch
    is refused.
    """
    from nav_msgs.msg import Odometry
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Imu
    from vepd_ros.nodes.judge_node import JudgeNode
    from vepd_ros.nodes.qos import SENSOR_QOS
    from vepd_ros.nodes.stamps import stamp_to_ns
    from vepd_ros.params import ParameterError

    imu = [
        Parameter('imu0', value='imu/data'),
        Parameter('imu0_config', value=[False] * 9 + [True] * 3 + [False] * 3),
    ]
    with pytest.raises(ParameterError, match='publish_on_measurement'):
        JudgeNode(
            context=ros_ctx,
            parameter_overrides=[
                Parameter('use_sim_time', value=True),
                Parameter('publish_on_measurement', value=True),
                *imu,
            ],
        )
    judge = JudgeNode(
        context=ros_ctx,
        parameter_overrides=[
            Parameter('frequency', value=1.0),
            Parameter('publish_on_measurement', value=True),
            *imu,
        ],
    )
    peer = rclpy.create_node('judge_arrival_peer', context=ros_ctx)
    pub_imu = peer.create_publisher(Imu, 'imu/data', SENSOR_QOS)
    got = []
    peer.create_subscription(Odometry, 'odometry/filtered', got.append, 100)
    executor.add_node(judge)
    executor.add_node(peer)
    assert spin_until(
        executor,
        lambda: pub_imu.get_subscription_count() and peer.count_publishers('odometry/filtered'),
        10,
    )
    sent = []
    for i in range(10):
        t = (
            judge.get_clock().now().nanoseconds - 1_000_000
        )  # stamped just before now, as a live sensor
        pub_imu.publish(gyro_only_imu(t, 0.1 * i))
        sent.append(t)
        assert spin_until(executor, lambda: len(got) == i + 1, 0.5), (
            f'no output for measurement {i} within 0.5 s'
        )
    assert [stamp_to_ns(m.header.stamp) for m in got] == sent
    # the timer firing while a measurement waits in the subscription: the drained message ticks
    # first, and the timer's own tick must not look like the clock going backwards (no reset,
    # filter state kept)
    resets = judge.filter.resets
    pub_imu.publish(gyro_only_imu(judge.get_clock().now().nanoseconds - 1_000_000, 1.0))
    time.sleep(0.1)  # delivered to the reader, not yet taken
    judge.timer.callback()  # the timer firing, as the executor calls it
    assert judge.filter.resets == resets and judge.filter.ekf.initialized
    assert spin_until(
        executor, lambda: len(got) == 11, 2
    )  # the drained message was fused and published
    wz = [m.twist.twist.angular.z for m in got]  # each output has fused its measurement
    assert all(b > a for a, b in zip(wz[1:], wz[2:])) and wz[-1] > 0.3
    judge.destroy_node()
    peer.destroy_node()


def test_judge_node_publish_tf_where_tf2_msgs_is_missing_says_so_and_publishes_no_transform(
    ros_ctx, executor, capfd, monkeypatch
):
    """
    Without tf2_msgs, no transform is published, and that is said only where /tf is wanted.

    publish_tf (robot_localization's, default true) needs tf2_msgs/TFMessage: a ROS 2 install has
    it and the judge broadcasts world_frame -> base_link there; the pip runtime has not (no wheel
    exists). None of the suite's nodes reads /tf, so the judge says nothing about it (a newcomer's
    first line of `make demo` used to tell them to install a package they do not need) until
    something subscribes to /tf: then it names the package, once per process (vepd run composes one
    judge per chain).
    """
    import importlib.util

    import rclpy
    from rclpy.parameter import Parameter
    from std_msgs.msg import String
    from vepd_ros.nodes import judge_node as judge_module
    from vepd_ros.nodes.judge_node import JudgeNode

    monkeypatch.setattr(
        judge_module, '_TF_WARNED', False
    )  # another test may have built a judge first
    judge = JudgeNode(
        context=ros_ctx,
        parameter_overrides=[
            Parameter('imu0', value='imu/data'),
            Parameter('imu0_config', value=[False] * 9 + [True] * 6),
        ],
    )
    try:
        if importlib.util.find_spec('tf2_msgs') is not None:
            assert judge.pub_tf is not None and judge.pub_tf.topic_name == '/tf'
        else:
            assert judge.pub_tf is None
            judge._tf_wanted()  # what a tick does every TF_CHECK_EVERY estimates
            assert 'tf2_msgs' not in capfd.readouterr().err  # nobody reads /tf: not a word
            # a /tf reader (its type does not matter to the count; tf2_msgs is what is missing)
            reader = rclpy.create_node('tf_reader', context=ros_ctx)
            reader.create_subscription(String, '/tf', lambda _m: None, 1)
            executor.add_node(judge)
            assert spin_until(executor, lambda: judge.count_subscribers('/tf') > 0, 10)
            judge._tf_wanted()
            err = capfd.readouterr().err
            assert 'tf2_msgs is not installed' in err and 'ros-$ROS_DISTRO-tf2-msgs' in err, err
            executor.remove_node(judge)
        off = JudgeNode(
            context=ros_ctx,
            node_name='judge_no_tf',
            parameter_overrides=[
                Parameter('imu0', value='imu/data'),
                Parameter('imu0_config', value=[False] * 9 + [True] * 6),
                Parameter('publish_tf', value=False),
            ],
        )
        assert off.pub_tf is None and not off._tf_unavailable
        off.destroy_node()
        if importlib.util.find_spec('tf2_msgs') is None:
            again = JudgeNode(
                context=ros_ctx,
                node_name='judge_tf_again',
                parameter_overrides=[
                    Parameter('imu0', value='imu/data'),
                    Parameter('imu0_config', value=[False] * 9 + [True] * 6),
                ],
            )
            assert spin_until(executor, lambda: again.count_subscribers('/tf') > 0, 10)
            again._tf_wanted()
            assert (
                again.pub_tf is None and 'tf2_msgs is not installed' not in capfd.readouterr().err
            )
            again.destroy_node()
            reader.destroy_node()
    finally:
        judge.destroy_node()


def test_judge_node_restarts_at_each_run_like_a_freshly_started_judge(ros_ctx, executor):
    """
    With reset_on_run_events each run's estimates equal a fresh judge's.

    reset_on_run_events (the built-in judge under sim_judge): at a run start announced on
    /ground_truth/run the filter forgets the previous run, so the run's estimates equal those of a
    judge started fresh for it (the offline study's semantics: one filter per run). Run 1 turns at
    0.5 rad/s, run 2 at 0.1 rad/s.
    """
    import json

    from nav_msgs.msg import Odometry
    import rclpy
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu
    from std_msgs.msg import String
    from vepd_ros.nodes.judge_node import JudgeNode
    from vepd_ros.nodes.qos import EVENT_QOS, SENSOR_QOS
    from vepd_ros.nodes.run_events import RUN_EVENTS_TOPIC
    from vepd_ros.nodes.stamps import ns_to_stamp, stamp_to_ns

    period = NS // 20
    common = [
        Parameter('use_sim_time', value=True),
        Parameter('frequency', value=20.0),
        Parameter('imu0', value='imu/data'),
        Parameter('imu0_config', value=[False] * 9 + [True] * 3 + [False] * 3),
    ]
    reset = JudgeNode(
        context=ros_ctx,
        namespace='reset',
        parameter_overrides=common + [Parameter('reset_on_run_events', value=True)],
    )
    fresh = JudgeNode(context=ros_ctx, namespace='fresh', parameter_overrides=common)
    peer = rclpy.create_node('judge_reset_peer', context=ros_ctx)
    pub_clock = peer.create_publisher(Clock, '/clock', 10)
    pub_ev = peer.create_publisher(String, RUN_EVENTS_TOPIC, EVENT_QOS)
    pubs = {
        ns: peer.create_publisher(Imu, f'/{ns}{TOPIC_IMU}', SENSOR_QOS)
        for ns in ('reset', 'fresh')
    }
    got = {'reset': [], 'fresh': []}
    for ns in got:
        peer.create_subscription(Odometry, f'/{ns}{TOPIC_ODOM_FILTERED}', got[ns].append, 100)
    for n in (reset, fresh, peer):
        executor.add_node(n)
    assert spin_until(
        executor,
        lambda: (
            all(p.get_subscription_count() for p in pubs.values())
            and pub_clock.get_subscription_count() >= 2
            and pub_ev.get_subscription_count()
        ),
        10,
    )

    def clock(t_ns):
        pub_clock.publish(Clock(clock=ns_to_stamp(t_ns)))
        return spin_until(
            executor,
            lambda: all(j.get_clock().now().nanoseconds == t_ns for j in (reset, fresh)),
            5,
        )

    def feed(judges, t_start, wz):
        for i in range(20):
            for ns, j in judges:
                before = j._after_arrivals.arrivals  # messages the judge has taken
                pubs[ns].publish(gyro_only_imu(t_start + i * 10_000_000, wz))
                assert spin_until(executor, lambda: j._after_arrivals.arrivals > before, 5)

    t0 = 10 * NS
    assert clock(t0)
    feed([('reset', reset)], t0 + 10_000_000, 0.5)  # run 1: only the resetting judge saw it
    assert clock(t0 + 4 * period)
    t1 = t0 + 6 * period
    pub_ev.publish(
        String(data=json.dumps({'event': 'start', 'scenario': 'circle', 'run': 2, 'stamp_ns': t1}))
    )
    assert spin_until(executor, lambda: reset.runs.pending, 5)
    feed([('reset', reset), ('fresh', fresh)], t1, 0.1)  # run 2: both
    assert clock(t1 + 4 * period)
    assert spin_until(
        executor, lambda: sum(stamp_to_ns(m.header.stamp) >= t1 for m in got['fresh']) >= 3, 5
    )
    spin_until(executor, lambda: False, 0.3)

    def run2(ns):
        return [
            (stamp_to_ns(m.header.stamp), m.twist.twist.angular.z, tuple(m.twist.covariance))
            for m in got[ns]
            if stamp_to_ns(m.header.stamp) >= t1
        ]

    assert any(
        abs(m.twist.twist.angular.z - 0.5) < 0.05 for m in got['reset']
    )  # run 1 was filtered
    # the same estimates at every common tick (which ticks each publishes after a clock jump
    # depends on the tick it last ran, not on the filter state), and nothing of run 1's turn rate
    # left in run 2
    a, b = {s: v for s, *v in run2('reset')}, {s: v for s, *v in run2('fresh')}
    common = sorted(set(a) & set(b))
    assert common and all(a[s] == b[s] for s in common), (a, b)
    assert all(abs(v[0] - 0.1) < 1e-9 for v in a.values())
    for n in (reset, fresh, peer):
        n.destroy_node()
