# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Stream schema: the one place for time units, topic names and sensor sample arrays.

Every core (models, truth, io, judge, runs) and every front (nodes, launch, commands) takes the
nanoseconds-per-second constant and the suite's ROS topic names from here; nothing else spells
them. This module imports numpy only, so any module may import it without a cycle.
"""

from __future__ import annotations

NS = 1_000_000_000
"""Nanoseconds per second (ROS ``builtin_interfaces/Time`` resolution)."""

# Topics of the simulated graph (truth_node -> noise nodes -> judge -> recorder -> evaluator).
TOPIC_GROUND_TRUTH = '/ground_truth/odometry'
"""nav_msgs/Odometry: noise-free vehicle state from truth_node (the recorder's reference)."""
TOPIC_GROUND_TRUTH_IMU = '/ground_truth/imu'
"""sensor_msgs/Imu: noise-free specific force and rate from truth_node (imu_noise_node input)."""
TOPIC_RUN_EVENTS = '/ground_truth/run'
"""std_msgs/String (JSON): run start/end events from truth_node."""
TOPIC_GPS_FIX = '/gps/fix'
"""sensor_msgs/NavSatFix: simulated or real GPS fixes (the judge's GPS input)."""
TOPIC_IMU = '/imu/data'
"""sensor_msgs/Imu: simulated or real IMU samples (the judge's IMU input)."""
TOPIC_ODOM_FILTERED = '/odometry/filtered'
"""nav_msgs/Odometry: the judge's state estimate (robot_localization's default output)."""
TOPIC_INS_VELOCITY = '/sbg/gps_vel'
"""sbg_driver/SbgGpsVel: INS velocity used as ground truth in recorded bags (ART, NED)."""
TOPIC_RUNS = '/vepd/runs'
"""std_msgs/String (JSON): completed (E, S) run records from the recorder."""
TOPIC_RESULT = '/vepd/result'
"""std_msgs/String (JSON): the evaluator's VEPD result."""
TOPIC_PROGRESS = '/vepd/progress'
"""std_msgs/String (JSON): per-node simulated-time progress (truth_node's pacing)."""
