# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The built-in judge, a robot_localization-compatible state estimator in numpy.

The built-in judge: robot_localization-compatible EKF (``ekf``), node-loop emulation (``filter``),
message layer (``measurements``), rl YAML parameters (``config``), static transforms
(``transforms``), golden-scenario runner (``golden``). No rclpy import anywhere in this package.
"""
