# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Launch live evaluation on the vehicle: real GPS/IMU -> judge -> recorder -> evaluator.

Live evaluation on the vehicle (Jetson): real /fix and /imu -> judge -> recorder on the INS ->
evaluator over a rolling window of the last K runs against a stored simulated batch.
Usage: ros2 launch vepd_ros live_eval.launch.py reference_dir:=/data/vepd run_duration_s:=20.0
       (reference_dir is the root of a stored study: the folder holding Sim/<label>/, not
       Sim/<label> itself)
       truth_type:=geometry_msgs/msg/TwistStamped where sbg_driver is not installed (the default
       truth_type, sbg_driver/msg/SbgGpsVel, needs ros-$ROS_DISTRO-sbg-driver).

The rolling window re-evaluates on every new run and never ends by itself: stop it with Ctrl-C
(SIGINT to ros2 launch). Every finished run is on disk with its coverage; the run in progress is
not written.

Arguments and nodes: vepd_ros/ros_graph.py ('live_eval'); vepd run live_eval name:=value ... runs
the same graph without launch_ros.
"""

from vepd_ros.launch_support import launch_description


def generate_launch_description():
    return launch_description('live_eval')
