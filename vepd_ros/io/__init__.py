# Copyright 2026 vepd_ros developers  # noqa: A005 vepd_ros.io, reached only by absolute imports
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Real-data input/output: ROS 1/2 bags (rosbags), INS truth adapters, splitting, topic profiles.

No rclpy here: messages are rosbags dataclasses with the ROS field names, which the judge's message
layer accepts as duck-typed ROS messages.
"""
