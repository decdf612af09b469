# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test-data generators: synthetic inputs for tests, benchmarks and demos (no ROS import).

Kept apart from the cores (models, judge, runs, ...), which never import this package.
``synthetic_runs``: run batches with the properties of real ones (``synthetic_run``,
``write_synthetic_root``); ``judge_inputs``: IMU/GPS arrays of a vehicle on a circle for the judge
(``circle_inputs``).
"""
