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
  last run and exits. A user's Ctrl-C ends it with status 0 and a warning that it has no result;
  every other end without a result fails, naming the cause (below). live_eval evaluates a
  rolling window forever by design: stop it with Ctrl-C (SIGINT; every finished run is on disk,
  the run in progress is not written).
- lockstep sim time: every node on /clock reports on ``/vepd/progress`` how many messages it has
  taken and published per topic whenever it is idle, and truth_node (``pace_nodes``) takes its
  next step only once every message published so far has been taken: the step order of ``vepd
  run``, so the results are the same. A machine too slow for ``time_scale`` makes the run take
  longer; it does not lose or reorder messages.
- a launch that cannot give its result ends non-zero, naming why ("no VEPD result: ..."): a
  process that exits with a non-zero status before the launch is shutting down (a judge chain that
  cannot start: its supervisor exits 1 naming the process, e.g. ``ekf_node exited with status
  127``), an evaluator that could not score the runs (result.json's ``error``), or a shutdown
  before the evaluator's result that is not Ctrl-C (``LaunchFailed``: launch logs it and ``ros2
  launch`` exits 1).
- bag_replay: ``ros2 bag play --clock`` where rosbag2 is installed, else the package's
  ``bag_player_node``; the single run is written once the input has been quiet for a few seconds
  (the bag ended).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
import re
import time

from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    EmitEvent,
    ExecuteProcess,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.event_handlers import OnProcessExit, OnProcessIO, OnShutdown
from launch.events import Shutdown
from launch.logging import get_logger as launch_logger
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from vepd_ros.fileio import load_json, RunFileError
from vepd_ros.ros_graph import build_graph, GRAPH_ARGS, process_parameters, typed_args
from vepd_ros.yamlio import yaml_value

_LOG_PREFIX = re.compile(r'^\[ERROR\] \[[0-9.]+\] \[[^\]]*\]: ')


class LaunchFailed(RuntimeError):
    """
    Why a launch ends without its result; raised in a launch event handler.

    launch catches an exception raised by an event handler, logs it ("Caught exception in launch
    ...: <the message>"), shuts the launch down and makes ``ros2 launch`` exit 1 (Humble and
    Jazzy alike): the one way a launch file has to end with a non-zero status.
    """


class _Outcome:
    """What the handlers of one launch saw: the last error line of each process, a failure."""

    def __init__(self, needs_result: bool, output_dir: str = ''):
        self.needs_result = needs_result  # a non-rolling evaluator: the launch exists for it
        self.output_dir = output_dir
        self.started = time.time()  # a result.json older than this is an earlier launch's
        self.result = False  # the evaluator exited 0 with a complete result.json of this launch
        self.failed = ''
        self.last_error: dict[str, str] = {}

    def on_stderr(self, event) -> None:
        """Keep each process's last logged error line: the cause named when it fails."""
        name = event.action.process_details['name']
        for line in event.text.decode(errors='replace').splitlines():
            if 'ERROR' in line or 'error' in line:
                # without the logger's '[ERROR] [stamp] [node]: ' prefix
                self.last_error[name] = _LOG_PREFIX.sub('', line.strip())[-400:]

    def on_exit(self, event, context):
        """Fail the launch when a process exits non-zero before the launch is shutting down."""
        if not event.returncode or context.is_shutdown:
            return None  # (during shutdown a stopped node's status is not a failure)
        name = event.action.process_details['name']
        cause = self.last_error.get(name)
        self.failed = f'{name} exited with status {event.returncode}' + (
            f' ({cause})' if cause else ''
        )
        raise LaunchFailed(f'no VEPD result: {self.failed}: the launch ends without a result')

    def on_evaluator_exit(self, event, context):
        """
        End the launch once the evaluator has its result; fail, naming why, when it has none.

        A result is a complete ``result.json`` in ``output_dir`` written by this launch (not one an
        earlier launch left) from an evaluator that exited 0. Without one the cause is
        result.json's ``error`` (the runs could not be scored), else the evaluator's status
        (``on_exit`` names a non-zero one first).
        """
        path = Path(self.output_dir) / 'result.json'
        res = None
        try:
            if path.stat().st_mtime >= self.started:
                res = load_json(path, 'result file')
        except (OSError, RunFileError):
            pass
        if event.returncode == 0 and res is not None and res.get('complete', True):
            self.result = True
            return [EmitEvent(event=Shutdown(reason='the evaluator has published its result'))]
        if self.failed or context.is_shutdown or event.returncode:
            # named already; by on_exit with the process's last error line; or, shutting down
            # (Ctrl-C included), by on_shutdown
            return None
        if res is not None and res.get('error'):
            self.failed = f'the runs could not be scored: {res["error"]} ({path})'
        else:
            self.failed = f'the evaluator exited with status {event.returncode} without one'
        raise LaunchFailed(f'no VEPD result: {self.failed}: the launch ends without a result')

    def on_shutdown(self, event, context):
        """Fail a launch that shuts down before its evaluator's result (not on Ctrl-C), named."""
        if not self.needs_result or self.result or self.failed:
            return None
        if event.due_to_sigint:  # the user asked for it: no failure, but no result either
            launch_logger('vepd_ros').warning(f'interrupted: no VEPD result ({self.output_dir})')
            return None
        self.failed = f'shut down before the evaluator published a result ({event.reason})'
        raise LaunchFailed(f'no VEPD result: {self.failed}: the launch ends without a result')


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
            parameters=process_parameters(graph, n, nodes),
            remappings=n.remappings,
            arguments=n.arguments,
            output='screen',
        )
        actions.append(action)
        if n.role == 'evaluator':
            evaluator = action
    # A node that fails (a stranger on the domain, bad input at start, a judge chain that cannot
    # start) ends the launch with a non-zero status naming it, instead of leaving the rest of the
    # graph waiting for data that will never come; so does a launch that ends without a result.
    outcome = _Outcome(
        needs_result=evaluator is not None and graph != 'live_eval',
        output_dir=values['output_dir'],
    )
    actions.append(RegisterEventHandler(OnProcessIO(on_stderr=outcome.on_stderr)))
    actions.append(RegisterEventHandler(OnProcessExit(on_exit=outcome.on_exit)))
    actions.append(RegisterEventHandler(OnShutdown(on_shutdown=outcome.on_shutdown)))
    if outcome.needs_result:
        actions.append(
            RegisterEventHandler(
                OnProcessExit(target_action=evaluator, on_exit=outcome.on_evaluator_exit)
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
