# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The QoS profiles vepd_ros nodes share, one per kind of topic.

Sensor topics, the ground truth the noise nodes take, and the latched event topics. A profile that
belongs to one mechanism stays with it (``lockstep.PROGRESS_QOS``, the diagnostics publisher's).
"""

from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy

SENSOR_QOS = qos_profile_sensor_data
"""Sensor topics use the sensor-data profile (best effort, keep last 5), as ROS drivers do."""

TRUTH_QOS = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
"""Ground-truth inputs of noise nodes: reliable, deep enough for a burst of accelerated truth."""

EVENT_QOS = QoSProfile(
    depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
"""
Event topics: reliable and latched.

Event topics (JSON in std_msgs/String: run start/end, finished runs, results): reliable and
latched, so a node that joins late still receives what happened before it was discovered.
"""
