# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Generate the paper's manoeuvres as open-loop inputs to the bicycle model.

The paper's manoeuvres — rest, straight line, half-sine (sine), circle — as open-loop inputs to the
bicycle model, with seeded run-to-run jitter like real repeated runs (speed, radius, amplitude,
start heading, and slow wander of throttle and steering).

Every run starts standing still for ``start_delay_s`` (the real runs start parked), then drives.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import math

import numpy as np
from vepd_ros import naming
from vepd_ros.naming import SCENARIO_ALIASES, SCENARIOS
from vepd_ros.truth.trajectory import Trajectory
from vepd_ros.truth.vehicle import first_order_zoh, simulate, VehicleParams

DEFAULT_SPEED_MPS = {'rest': 0.0, 'straight': 1.5, 'circle': 1.0, 'sine': 1.2}


@dataclass(frozen=True)
class ScenarioParams:
    """Nominal manoeuvre and the spread of repeated runs (1-σ unless stated)."""

    speed_mps: float | None = None  # None: scenario default (DEFAULT_SPEED_MPS)
    radius_m: float = 2.0  # circle
    sine_amplitude_m: float = 1.0  # sine: lateral amplitude of the path
    sine_period_s: float = 8.0  # sine: steering period
    start_delay_s: float = 1.0
    heading_rad: float = 0.0  # nominal start heading (ENU, 0 = east)
    jitter: bool = True
    speed_jitter_frac: float = 0.05
    radius_jitter_frac: float = 0.05
    amplitude_jitter_frac: float = 0.10
    heading_jitter_rad: float = 0.05
    speed_wander_mps: float = 0.03  # Ornstein–Uhlenbeck wander of the speed command
    speed_wander_tau_s: float = 2.0
    steering_wander_rad: float = 0.003  # OU wander of the steering command
    steering_wander_tau_s: float = 1.0


def canonical_scenario(name: str) -> str:
    """Return the canonical name of a scenario this module generates; unknown names raise."""
    key = naming.canonical_scenario(name)
    if key not in SCENARIOS:
        raise ValueError(
            f"unknown scenario '{name}': expected one of {', '.join(SCENARIOS)} "
            f'(aliases: {", ".join(f"{a}={b}" for a, b in SCENARIO_ALIASES.items())})'
        )
    return key


def _ou(rng: np.random.Generator, n: int, h: float, sigma: float, tau_s: float) -> np.ndarray:
    """
    Draw stationary Ornstein–Uhlenbeck samples on a grid of step h.

    x[k+1] = a x[k] + σ√(1−a²) w[k].
    """
    if sigma <= 0:
        rng.standard_normal(n)  # keep the random stream aligned whatever the parameters
        return np.zeros(n)
    a = np.exp(-h / tau_s)
    w = rng.standard_normal(n)
    return first_order_zoh(sigma * np.sqrt(1 - a * a) * w, a, 1.0, y0=sigma * w[0])


MAX_TRUTH_SAMPLES = 20_000_000
"""Most internal truth samples one run may have (5.5 h at the default 1 kHz; each array is 160 MB
then): longer runs are refused with a clear error instead of allocating without bound."""


def generate(
    scenario: str,
    duration_s: float = 30.0,
    seed: int = 0,
    params: ScenarioParams = ScenarioParams(),
    vehicle: VehicleParams = VehicleParams(),
    internal_rate_hz: float = 1000.0,
) -> Trajectory:
    """One run of ``scenario`` on a uniform internal grid (``internal_rate_hz``), seeded."""
    scenario = canonical_scenario(scenario)
    if not duration_s > 0:
        raise ValueError(f'duration_s must be > 0, got {duration_s}')
    rng = np.random.default_rng(seed)
    # Draw every jitter in a fixed order so a seed means the same thing for every scenario.
    z = rng.standard_normal(4)
    p = params
    if not p.jitter:
        z[:] = 0.0
        p = replace(p, speed_wander_mps=0.0, steering_wander_rad=0.0)
    speed = (DEFAULT_SPEED_MPS[scenario] if p.speed_mps is None else p.speed_mps) * (
        1 + p.speed_jitter_frac * z[0]
    )
    radius = p.radius_m * (1 + p.radius_jitter_frac * z[1])
    amplitude = p.sine_amplitude_m * (1 + p.amplitude_jitter_frac * z[2])
    heading0 = p.heading_rad + p.heading_jitter_rad * z[3]

    if not (
        math.isfinite(duration_s) and math.isfinite(internal_rate_hz) and internal_rate_hz > 0
    ):
        raise ValueError(
            f'duration_s ({duration_s}) and internal_rate_hz ({internal_rate_hz}) '
            f'must be finite, '
            'the rate > 0'
        )
    if duration_s * internal_rate_hz >= MAX_TRUTH_SAMPLES:
        raise ValueError(
            f'a {duration_s:g} s run at internal_rate_hz {internal_rate_hz:g} needs '
            f'{duration_s * internal_rate_hz:.3g} truth samples, more than the '
            f'{MAX_TRUTH_SAMPLES} '
            f'allowed ({MAX_TRUTH_SAMPLES / internal_rate_hz:g} s at this rate)'
        )
    h = 1.0 / internal_rate_hz
    n = int(round(duration_s * internal_rate_hz)) + 1
    t = np.arange(n) * h
    moving = (t >= p.start_delay_s) & (scenario != 'rest')
    speed_wander = _ou(rng, n, h, p.speed_wander_mps, p.speed_wander_tau_s)
    steer_wander = _ou(rng, n, h, p.steering_wander_rad, p.steering_wander_tau_s)
    v_cmd = np.where(moving, np.maximum(speed + speed_wander, 0.0), 0.0)
    wheelbase_m = vehicle.wheelbase_m
    if scenario == 'circle':
        steer = np.full(n, np.arctan(wheelbase_m / radius))
    elif scenario == 'sine':
        # Lateral amplitude A of a path driven at speed v with δ = δ0 cos(2πt/T): A ≈ v² δ0 T² /
        # (4π² l).
        delta0 = (
            amplitude * 4 * np.pi**2 * wheelbase_m / (max(speed, 1e-6) ** 2 * p.sine_period_s**2)
        )
        steer = delta0 * np.cos(2 * np.pi * (t - p.start_delay_s) / p.sine_period_s)
    else:
        steer = np.zeros(n)
    steer = np.where(moving, steer + steer_wander, 0.0)
    pos, yaw, v, v_dot, omega = simulate(
        vehicle, t, vehicle.throttle_for_speed(v_cmd), steer, heading0
    )
    if scenario == 'sine' and moving.any():
        # Centre the weave on the start heading: the speed ramp makes the first half-period
        # lopsided. The model is invariant to a rotation of the start heading, so rotate the whole
        # run.
        d = heading0 - float(np.mean(yaw[moving]))
        c, s_ = np.cos(d), np.sin(d)
        yaw = yaw + d
        pos[:, 0], pos[:, 1] = c * pos[:, 0] - s_ * pos[:, 1], s_ * pos[:, 0] + c * pos[:, 1]
    zeros = np.zeros(n)
    return Trajectory(
        t_s=t,
        position_enu=pos,
        roll=zeros,
        pitch=zeros.copy(),
        yaw_unwrapped=yaw,
        velocity_body=np.stack([v, zeros, zeros], axis=-1),
        angular_velocity_body=np.stack([zeros, zeros, omega], axis=-1),
        acceleration_body=np.stack([v_dot, v * omega, zeros], axis=-1),
        meta={
            'scenario': scenario,
            'seed': int(seed),
            'duration_s': float(duration_s),
            'speed_mps': float(speed),
            'radius_m': float(radius),
            'sine_amplitude_m': float(amplitude),
            'heading0_rad': float(heading0),
        },
    )
