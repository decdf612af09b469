"""launch_ros glue for ``launch/*.launch.py`` (real ROS 2 installs only: imports launch and launch_ros).

Every launch argument is an argument of the graph in ``vepd_ros.graph``; the nodes come from
``build_graph``, the same description ``vepd run`` composes in-process and the tests exercise.
"""
from __future__ import annotations

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from vepd_ros.graph import GRAPH_ARGS, _yaml_value, build_graph, typed_args


def _actions(context, graph: str):
    raw = {p.name: LaunchConfiguration(p.name).perform(context) for p in GRAPH_ARGS[graph]}
    values = typed_args(graph, raw)
    actions = []
    if graph == 'bag_replay':
        actions.append(ExecuteProcess(cmd=['ros2', 'bag', 'play', values['bag'], '--clock', '--rate', str(values['rate'])],
                                      output='screen'))
    for n in build_graph(graph, values):
        if n.role == 'bag':
            continue                      # ros2 bag play (above) plays the bag under launch
        actions.append(Node(package=n.package, executable=n.executable, name=n.name, namespace=n.namespace or '',
                            parameters=n.parameters, remappings=n.remappings, output='screen'))
    return actions


def launch_description(graph: str) -> LaunchDescription:
    args = [DeclareLaunchArgument(p.name, default_value=_yaml_value(p.default) if not isinstance(p.default, str)
                                  else p.default, description=p.description) for p in GRAPH_ARGS[graph]]
    return LaunchDescription(args + [OpaqueFunction(function=_actions, args=[graph])])
