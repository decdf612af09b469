# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Ground truth without a simulator: the paper's manoeuvres driven through a 4-DOF kinematic bicycle.

``generate(scenario, duration_s, seed)`` returns a ``Trajectory``: pose (ENU), body velocity (FLU),
body angular rate and specific force (gravity included, REP-103/REP-145) on a fine internal grid;
``Trajectory.sample(t)`` gives it at any sensor's own sample times.
"""

from vepd_ros.truth.scenarios import (
    canonical_scenario,
    generate,
    SCENARIO_ALIASES,
    ScenarioParams,
    SCENARIOS,
)
from vepd_ros.truth.trajectory import Trajectory
from vepd_ros.truth.vehicle import VehicleParams

__all__ = [
    'Trajectory',
    'SCENARIOS',
    'SCENARIO_ALIASES',
    'ScenarioParams',
    'VehicleParams',
    'generate',
    'canonical_scenario',
]
