# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Bag replay: ros2 bag play (with its clock) -> judge -> recorder on the INS topic -> evaluator.

Usage: ros2 launch vepd_ros bag_replay.launch.py bag:=real_lot17_1 reference_dir:=vepd_out \
           static_tf:='base_link gps 0 0 0 0 0 0'
       (reference_dir is the root of a stored study: the folder holding Sim/<label>/; the ART
       launch's base_link -> gps, where its fixes are, as vepd bag --profile art brings it).
       A sensor mounting, as vepd bag --static-tf spells it (several separated by ';'):
       static_tf:='base_link imu_link 0 -0.3 0.52 1.570796327 0 -1.570796327'
       (the built-in judge takes it as a parameter; with judge:=robot_localization a tf2_ros
       static_transform_publisher publishes the same numbers on /tf_static).

Ends by itself: the bag's single run is written once the input has been quiet for a few seconds,
the evaluator publishes the result and exits, and the launch shuts down. Where rosbag2 is not
installed (the pip runtime) the package's bag_player_node plays the bag instead of ros2 bag play.

Arguments and nodes: vepd_ros/ros_graph.py ('bag_replay'); vepd run bag_replay name:=value ... runs
the same graph without launch_ros.
"""

from vepd_ros.launch_support import launch_description


def generate_launch_description():
    return launch_description('bag_replay')
