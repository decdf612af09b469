# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Guard against foreign publishers on a graph's input topics.

Foreign publishers: a graph stops at once when someone else publishes on its truth, sensor or
/clock topics.

Two graphs on one DDS domain (two demos on a machine, a demo beside a running robot) read each
other's ``/ground_truth/*`` and ``/clock``: runs are corrupted without a word, or time goes
backwards. Every data topic of a vepd_ros graph has exactly one publisher by construction
(truth_node or a simulator on the truth topics and /clock, one noise node per chain's sensor topic,
one navsat and one EKF per chain), so a second one is a stranger. Two checks, one rule:

- the one-process runner (``vepd run``) knows its own nodes: ``foreign_publishers(node, topics,
  own)`` lists every publisher on the topics its nodes publish that is not one of them;
- a node started on its own (``ros2 launch``, ``ros2 run``) knows only its inputs:
  ``watch_inputs(node)`` checks, once a second, that each topic it subscribes to has publishers
  from one node at most, and stops the node with the error otherwise (``node.foreign_publisher``
  holds the message; ``run_node`` exits 1).

Topics that have many publishers by design are not checked (``MULTI_PUBLISHER_TOPICS``).
"""

from __future__ import annotations

from typing import Iterable

from vepd_ros.streams import TOPIC_PROGRESS, TOPIC_RUNS

MULTI_PUBLISHER_TOPICS = frozenset(
    {
        '/rosout',
        '/parameter_events',
        '/diagnostics',
        '/tf',
        '/tf_static',
        TOPIC_RUNS,
        TOPIC_PROGRESS,
    }
)
"""Topics every node (or every chain's recorder) publishes on: more than one publisher is normal
there."""

UNKNOWN_NODE = '_NODE_NAME_UNKNOWN_'
CHECK_PERIOD_S = 1.0


class ForeignPublisherError(RuntimeError):
    """A publisher that is not part of this graph was found on one of its data topics."""


def fqn(namespace: str, name: str) -> str:
    """Fully qualified node name: ('/', 'a') -> '/a', ('/ns', 'a') -> '/ns/a'."""
    return namespace.rstrip('/') + '/' + name


def _describe(info) -> str:
    if info.node_name == UNKNOWN_NODE or not info.node_name:
        return 'an unnamed participant (a DDS application, or a node not yet fully discovered)'
    return f'node {fqn(info.node_namespace, info.node_name)}'


def fix_hint(domain_id: int | None = None) -> str:
    where = f' (this graph is on ROS_DOMAIN_ID={domain_id})' if domain_id is not None else ''
    return (
        'another graph publishes on this domain'
        + where
        + ': stop it, or run this graph on another '
        'domain (ROS_DOMAIN_ID=<unused number>, or let `vepd run` pick a free one by leaving '
        'ROS_DOMAIN_ID unset)'
    )


def foreign_publishers(node, topics: Iterable[str], own: set[str] | None = None) -> list[str]:
    """
    Error texts, one per topic with a stranger on it.

    ``own``: the fully qualified names of this graph's nodes (any other publisher is a stranger);
    None: publishers from more than one node are.
    """
    problems = []
    for topic in sorted(set(topics) - MULTI_PUBLISHER_TOPICS):
        infos = node.get_publishers_info_by_topic(topic)
        if own is not None:
            strangers = [i for i in infos if fqn(i.node_namespace, i.node_name) not in own]
        else:
            names = {fqn(i.node_namespace, i.node_name) for i in infos}
            strangers = infos if len(names) > 1 else []
        if strangers:
            who = '; '.join(sorted({_describe(i) for i in strangers}))
            problems.append(f'{topic}: a publisher that is not part of this graph ({who})')
    return problems


def published_topics(nodes) -> set[str]:
    """Every topic the given rclpy nodes publish on."""
    return {p.topic_name for n in nodes for p in n.publishers}


def other_participants(node, own: set[str]) -> list[str]:
    """
    List the other nodes on this domain.

    Nodes visible on this domain that are not in ``own`` (for the start-up check of a leased
    domain).
    """
    return sorted(
        fqn(ns, name)
        for name, ns in node.get_node_names_and_namespaces()
        if fqn(ns, name) not in own
    )


def watch_inputs(node, period_s: float = CHECK_PERIOD_S):
    """
    Stop ``node`` when a second node publishes on one of its input topics.

    Stop ``node`` (shut its context down) when one of its input topics has publishers from more
    than one node; the error is logged and kept in ``node.foreign_publisher``. Returns the timer
    (steady clock).
    """
    from rclpy.clock import Clock, ClockType

    node.foreign_publisher = None
    pending = {'unnamed': False}

    def check():
        if node.foreign_publisher is not None or not node.context.ok():
            return
        problems = foreign_publishers(node, {s.topic_name for s in node.subscriptions})
        unnamed = any('unnamed participant' in p for p in problems)
        pending['unnamed'], was_unnamed = unnamed, pending['unnamed']
        if unnamed and not was_unnamed:
            return  # DDS announces a publisher before its node's name: look again next time
        if problems:
            node.foreign_publisher = (
                '; '.join(problems) + ' -- ' + fix_hint(node.context.get_domain_id())
            )
            node.get_logger().error('stopping: ' + node.foreign_publisher)
            import rclpy

            rclpy.try_shutdown(context=node.context)

    return node.create_timer(period_s, check, clock=Clock(clock_type=ClockType.STEADY_TIME))
