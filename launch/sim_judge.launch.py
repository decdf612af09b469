# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Simulation: truth -> GPS/IMU noise models -> judge -> recorder -> evaluator, one chain per model.

Usage: ros2 launch vepd_ros sim_judge.launch.py models:=ch_gauss,ch_rw k:=10 time_scale:=5.0
       judge:=robot_localization (default where installed) | builtin;
       use_truth_node:=false with a simulator.

Ends by itself: once every batch holds k runs the evaluator publishes /vepd/result, writes
result.json and the report, and exits; the launch then shuts down (exit status 0). truth_node paces
accelerated sim time to the slowest chain (/vepd/progress), so a slow machine makes the run longer,
never lossy; every run's sidecar states its coverage (expected vs received samples).

Arguments and nodes: vepd_ros/ros_graph.py ('sim_judge'); vepd run sim_judge name:=value ... runs
the same graph without launch_ros.
"""

from vepd_ros.launch_support import launch_description


def generate_launch_description():
    return launch_description('sim_judge')
