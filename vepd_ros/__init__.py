# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
vepd_ros: Velocity Estimation Performance Difference for simulated GPS and IMU sensors.

Pure cores (no ROS import): ``models``, ``judge``, ``truth``, ``metrics``, ``runs``, ``io``,
``report``, ``pipelines``. Thin rclpy fronts: ``nodes``. Command line: ``cli`` (the ``vepd``
command).
"""

__version__ = '0.1.0'
