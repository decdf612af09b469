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
  (``exit_when_done``; it prints the result's tables and where they were written) and its exit
  shuts the launch down (``OnProcessExit`` -> ``Shutdown``); truth_node stops /clock after its
  last run and exits. A launch that ends without a result — the evaluator could not score the
  runs, or the launch was shut down before it had one — exits non-zero, naming the cause
  (``NoResult``: ``ros2 launch`` returns 1 when an event handler raises); a user's Ctrl-C ends
  it with status 0 and a warning that it has no result. live_eval evaluates a
  rolling window forever by design: stop it with Ctrl-C (SIGINT; every finished run is on disk,
  the run in progress is not written).
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
from pathlib import Path
import time

from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    EmitEvent,
    ExecuteProcess,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.event_handlers import OnProcessExit, OnShutdown
from launch.events import Shutdown
from launch.logging import get_logger as launch_logger
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from vepd_ros.ros_graph import build_graph, GRAPH_ARGS, paced_nodes, typed_args
from vepd_ros.runs.safety import load_json, RunFileError
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


class NoResult(RuntimeError):
    """The launch ended without a VEPD result (``ros2 launch`` then exits 1 with this text)."""


def _on_evaluator_exit(event, context, output_dir: str, shutdowns: list, started: float):
    """
    End the launch on the evaluator's exit; raise ``NoResult`` when there is no result.

    A result is a complete ``result.json`` in ``output_dir`` written since ``started`` (not one an
    earlier launch left) by an evaluator that exited 0. Without one the cause is result.json's
    ``error`` (the runs could not be scored), else the first reason the launch was shut down for
    (``shutdowns``: the ``Shutdown`` events, recorded by ``OnShutdown``), else the evaluator's
    status. A user's Ctrl-C is no failure to report: the launch ends as it was asked to, with a
    warning that it has no result.
    """
    path = Path(output_dir) / 'result.json'
    res = None
    try:
        if path.stat().st_mtime >= started:
            res = load_json(path, 'result file')
    except (OSError, RunFileError):
        pass
    if event.returncode == 0 and res is not None and res.get('complete', True):
        return [EmitEvent(event=Shutdown(reason='the evaluator has published its result'))]
    if res is not None and res.get('error'):
        cause = f'the runs could not be scored: {res["error"]} ({path})'
    elif shutdowns:
        cause = f'the launch was shut down before the evaluator had one: {shutdowns[0].reason}'
    else:
        cause = f'the evaluator exited with status {event.returncode} before it had one'
    if shutdowns and shutdowns[0].due_to_sigint:
        launch_logger('vepd_ros').warning(f'interrupted: no VEPD result ({output_dir})')
        return None
    raise NoResult(f'no VEPD result: {cause}')


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
        shutdowns = []  # the launch's Shutdown events, first first
        started = time.time()
        actions += [
            RegisterEventHandler(
                OnShutdown(on_shutdown=lambda event, _ctx: shutdowns.append(event))
            ),
            RegisterEventHandler(
                OnProcessExit(
                    target_action=evaluator,
                    on_exit=lambda event, ctx: _on_evaluator_exit(
                        event, ctx, values['output_dir'], shutdowns, started
                    ),
                )
            ),
        ]
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
