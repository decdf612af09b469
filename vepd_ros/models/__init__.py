# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
GPS and IMU noise models, geodesy, satellite geometry and calibration (numpy only, no ROS).

``gps.make_gps_model(name, seed, **params)`` and ``imu.make_imu_model(name, seed, **params)`` build
stateful streaming models; ``sensors.simulate_sensors`` runs both over a truth trajectory exactly
as the nodes do. See docs/models.md for the laws, the anchors (Chrono, AirSim, USARSim, Gazebo) and
the paper's settings.

``DEFAULT_IMU_MODEL``: the IMU model every command and graph uses unless told (the paper's
experiments ran it on every side), named here so that loading it costs no numpy.
"""

DEFAULT_IMU_MODEL = 'ch_drift_paper'
