# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A node on sim time names a missing input only after the graph has started, in sim seconds.

``TopicWatchdog`` on sim time: while /clock has not come (the graph is still coming up: truth_node
holds it until every subscriber is there, which on a loaded machine takes longer than any fixed
wait) it says nothing about its inputs; from the first /clock it counts ``timeout_s`` of sim
time; and when nothing publishes /clock at all it names that, after ``startup_s`` wall seconds.
Nodes on wall time keep their wall-clock timeout (test_graph_reliability.py).
"""

from __future__ import annotations

import time

import pytest
from ros_helpers import spin_until

pytestmark = pytest.mark.ros


def _sim_node(ctx, name):
    import rclpy
    from rclpy.parameter import Parameter

    return rclpy.create_node(
        name, context=ctx, parameter_overrides=[Parameter('use_sim_time', value=True)]
    )


def test_sim_time_watchdog_waits_for_the_graph_then_counts_sim_seconds(ros_ctx, executor):
    from rosgraph_msgs.msg import Clock
    from vepd_ros.nodes.health import TopicWatchdog

    node = _sim_node(ros_ctx, 'watched')
    dog = TopicWatchdog(node, timeout_s=1.0, startup_s=1.0)
    dog.watch('/x', lambda: False)
    src = _sim_node(ros_ctx, 'clock_src')
    pub = src.create_publisher(Clock, '/clock', 10)
    for n in (node, src):
        executor.add_node(n)
    assert spin_until(executor, lambda: pub.get_subscription_count() > 0, 10)

    # the clock's owner is there but holds /clock (start-up): 1.5 wall s, more than both
    # timeouts, and not a word
    t_end = time.monotonic() + 1.5
    spin_until(executor, lambda: time.monotonic() > t_end, 5)
    dog.check()
    assert dog.missing() == [] and dog.reported == []

    def clock_at(t_s):
        pub.publish(Clock(clock=rclpy_time(t_s)))
        want = int(t_s * 1e9)
        assert spin_until(executor, lambda: node.get_clock().now().nanoseconds == want, 10)
        dog.check()

    clock_at(100.0)  # the graph starts: sim time counts from here
    clock_at(100.9)
    assert dog.missing() == [] and dog.reported == []
    clock_at(101.0)
    assert dog.missing() == ['no message on /x after 1 s of sim time']
    assert dog.reported == ['no message on /x after 1 s of sim time']


def test_sim_time_watchdog_names_a_missing_clock(ros_ctx, executor):
    from vepd_ros.nodes.health import TopicWatchdog

    node = _sim_node(ros_ctx, 'watched_alone')
    dog = TopicWatchdog(node, timeout_s=0.5, startup_s=1.0)
    dog.watch('/x', lambda: False)
    executor.add_node(node)
    assert spin_until(executor, lambda: bool(dog.missing()), 10)
    assert dog.missing() == ['no publisher on /clock after 1 s']
    dog.check()
    assert dog.reported == ['no publisher on /clock after 1 s']


def rclpy_time(t_s: float):
    """Return ``t_s`` seconds as builtin_interfaces/Time."""
    from builtin_interfaces.msg import Time

    ns = int(round(t_s * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
