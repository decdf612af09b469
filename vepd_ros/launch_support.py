# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Glue between ``launch/*.launch.py`` and the graphs of ``vepd_ros.ros_graph``.

launch_ros glue for ``launch/*.launch.py`` (real ROS 2 installs only: imports launch and
launch_ros).

Every launch argument is an argument of the graph in ``vepd_ros.ros_graph``; the nodes come from
``build_graph``, the same description ``vepd run`` composes in-process and the tests exercise.

What launch adds, because every node is its own process here:
- the graph ends itself: sim_judge's and bag_replay's evaluator exits once its result is published
  (``exit_when_done``) and its exit shuts the launch down (``OnProcessExit`` -> ``Shutdown``);
  truth_node stops /clock after its last run and exits. live_eval evaluates a rolling window
  forever by design: stop it with Ctrl-C (SIGINT; every finished run is on disk, the run in
  progress is not written).
- lockstep sim time: every node on /clock reports on ``/vepd/progress`` how many messages it has
  taken and published per topic whenever it is idle, and truth_node (``pace_nodes``) takes its
  next step only once every message published so far has been taken: the step order of ``vepd
  run``, so the results are the same. A machine too slow for ``time_scale`` makes the run take
  longer; it does not lose or reorder messages.
- bag_replay: ``ros2 bag play --clock`` where rosbag2 is installed, else the package's
  ``bag_player_node``; the single run is written once the input has been quiet for a few seconds
  (the bag ended).
"""

from __future__ import annotations

import importlib.util

from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    EmitEvent,
    ExecuteProcess,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from vepd_ros.ros_graph import build_graph, GRAPH_ARGS, paced_nodes, typed_args
from vepd_ros.yamlio import yaml_value

BAG_QUIET_S = 3.0
"""bag_replay: the single run is complete once no message came for this long (s, wall clock)."""


def _launch_parameters(graph: str, n, nodes: list) -> list:
    """
    Return the parameters of node ``n`` under launch.

    The graph's parameters of node ``n`` plus what running it as its own process under launch
    needs.
    """
    params = list(n.parameters)
    extra = {}
    if n.role == 'truth' and params and params[0].get('publish_clock'):
        extra = {
            'shutdown_when_done': True,
            'pace_nodes': paced_nodes(n, nodes),
        }
    elif n.role == 'truth':
        extra = {'shutdown_when_done': True}
    elif n.role == 'evaluator' and not params[0].get('rolling'):
        extra = {'exit_when_done': True}
    elif (
        n.role == 'recorder'
        and graph == 'bag_replay'
        and params[0].get('segmentation') == 'single'
    ):
        extra = {'end_after_quiet_s': BAG_QUIET_S}
    elif n.role == 'bag':
        extra = {'shutdown_when_done': True, 'pace_nodes': paced_nodes(n, nodes)}
    if extra:
        params[0] = {**params[0], **extra}
    return params


def _shutdown_on_failure(event, context):
    """Shut the launch down when a process exits with a non-zero status (``OnProcessExit``)."""
    if event.returncode:
        return [
            EmitEvent(
                event=Shutdown(
                    reason=f'{event.action.process_details["name"]} exited with status '
                           f'{event.returncode}'
                )
            )
        ]
    return None


def _actions(context, graph: str):
    raw = {p.name: LaunchConfiguration(p.name).perform(context) for p in GRAPH_ARGS[graph]}
    values = typed_args(graph, raw)
    nodes = build_graph(graph, values)
    rosbag2 = importlib.util.find_spec('ros2bag') is not None
    actions = []
    if graph == 'bag_replay' and rosbag2:
        actions.append(
            ExecuteProcess(
                cmd=[
                    'ros2',
                    'bag',
                    'play',
                    values['bag'],
                    '--clock',
                    '--rate',
                    str(values['rate']),
                ],
                output='screen',
            )
        )
    evaluator = None
    for n in nodes:
        if n.role == 'bag' and rosbag2:
            continue  # ros2 bag play (above) plays the bag
        action = Node(
            package=n.package,
            executable=n.executable,
            name=n.name,
            namespace=n.namespace or '',
            parameters=_launch_parameters(graph, n, nodes),
            remappings=n.remappings,
            arguments=n.arguments,
            output='screen',
        )
        actions.append(action)
        if n.role == 'evaluator':
            evaluator = action
    # A node that fails (a stranger on the domain, bad input at start) ends the launch instead of
    # leaving the rest of the graph waiting for data that will never come.
    actions.append(RegisterEventHandler(OnProcessExit(on_exit=_shutdown_on_failure)))
    if evaluator is not None and graph != 'live_eval':
        actions.append(
            RegisterEventHandler(
                OnProcessExit(
                    target_action=evaluator,
                    on_exit=[
                        EmitEvent(event=Shutdown(reason='the evaluator has published its result'))
                    ],
                )
            )
        )
    return actions


def launch_description(graph: str) -> LaunchDescription:
    args = [
        DeclareLaunchArgument(
            p.name,
            default_value=yaml_value(p.default) if not isinstance(p.default, str) else p.default,
            description=p.description,
        )
        for p in GRAPH_ARGS[graph]
    ]
    return LaunchDescription(args + [OpaqueFunction(function=_actions, args=[graph])])
