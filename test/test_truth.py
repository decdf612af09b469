# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Ground truth obeys the laws it claims.

Ground truth obeys the laws it claims: pose = ∫velocity, specific force = a − g, seeded jitter.
"""

import numpy as np
import pytest
from vepd_ros.frames import GRAVITY_MPS2
from vepd_ros.seeding import derive_seed, run_plan
from vepd_ros.truth import generate, SCENARIOS
from vepd_ros.truth.scenarios import canonical_scenario

RATE_HZ = 100.0


def _published(scenario, seed=3, duration_s=30.0):
    traj = generate(scenario, duration_s, seed=seed)
    return traj.sample(np.arange(int(duration_s * RATE_HZ) + 1) / RATE_HZ)


@pytest.mark.parametrize('scenario', SCENARIOS)
def test_integrated_velocity_reproduces_pose_within_1cm(scenario):
    s = _published(scenario)
    v = s.velocity_enu
    dt = np.diff(s.t_s)[:, None]
    integrated = s.position_enu[0] + np.vstack(
        [np.zeros(3), np.cumsum(0.5 * dt * (v[1:] + v[:-1]), axis=0)]
    )
    assert np.abs(integrated - s.position_enu).max() < 0.01


@pytest.mark.parametrize('scenario', SCENARIOS)
def test_specific_force_at_rest_is_plus_g_on_z(scenario):
    s = _published(scenario)
    # Parked: the whole 'rest' run, and the first second of every other run (start_delay_s).
    at_rest = np.ones(len(s), bool) if scenario == 'rest' else s.t_s < 1.0
    assert (s.speed[at_rest] == 0.0).all()
    np.testing.assert_array_equal(
        s.specific_force_body[at_rest], np.tile([0.0, 0.0, GRAVITY_MPS2], (at_rest.sum(), 1))
    )


@pytest.mark.parametrize('scenario', ['straight', 'circle', 'sine'])
def test_finite_difference_acceleration_matches_specific_force_minus_gravity(scenario):
    s = _published(scenario)
    v = s.velocity_enu
    fd = (v[2:] - v[:-2]) / (s.t_s[2:] - s.t_s[:-2])[:, None]
    a_world = np.einsum('nij,nj->ni', s.rotation, s.specific_force_body) - [0.0, 0.0, GRAVITY_MPS2]
    err = np.abs(fd - a_world[1:-1])
    moving = slice(int(1.1 * RATE_HZ), None)  # skip the step in throttle at the start of motion
    assert err[moving].max() < 0.02  # m/s²; the accelerations themselves are ~0.5–2 m/s²
    assert np.median(err[moving]) < 2e-3


def test_moving_scenarios_reach_scale_vehicle_speeds():
    for scenario in ['straight', 'circle', 'sine']:
        s = _published(scenario)
        assert 0.8 < s.speed[-100:].mean() < 2.2, scenario


def test_circle_turns_at_the_commanded_radius():
    s = generate('circle', 30.0, seed=5)
    moving = s.t_s > 5.0
    radius = s.velocity_body[moving, 0] / s.angular_velocity_body[moving, 2]
    assert abs(np.median(radius) - s.meta['radius_m']) < 0.05 * s.meta['radius_m']


def test_same_seed_is_bit_identical_and_runs_differ():
    a, b = generate('sine', 20.0, seed=11), generate('sine', 20.0, seed=11)
    np.testing.assert_array_equal(a.position_enu, b.position_enu)
    seeds = [sd for _, _, sd in run_plan(7, ['sine'], 3)]
    assert len(set(seeds)) == 3 and seeds[0] == derive_seed(7, 'truth', 'sine', 1)
    # by name, not position: adding a scenario in front does not change the others' seeds
    assert [sd for sc, _, sd in run_plan(7, ['circle', 'sine'], 3) if sc == 'sine'] == seeds
    runs = [generate('sine', 20.0, seed=sd) for sd in seeds]
    ends = np.array([r.position_enu[-1] for r in runs])
    assert np.ptp(ends, axis=0)[:2].max() > 0.1  # repeated runs do not coincide
    speeds = [r.meta['speed_mps'] for r in runs]
    assert np.std(speeds) > 0.005


def test_unknown_scenario_names_the_allowed_values():
    with pytest.raises(
        ValueError, match="unknown scenario 'spiral'.*rest, straight, circle, sine"
    ):
        generate('spiral', 10.0)
    assert canonical_scenario('path') == 'straight' and canonical_scenario('half_sine') == 'sine'
