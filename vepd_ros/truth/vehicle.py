# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
4-DOF kinematic bicycle with a DC-motor speed model (MPC paper, ../seeds/003 eq. 1–2).

    ẋ = v cos θ,  ẏ = v sin θ,  θ̇ = v tan δ / l,
    v̇ = (R γ / I) [f1(v, α) − f0(v)],  f1 = τ0 α − τ0 v / (ω0 R γ),  f0 = c1 v / (R γ) + c0

which is linear in v:  v̇ = k_a α − k_v v − k_c  with k_a = Rγτ0/I, k_v = (τ0/ω0 + c1)/I,
k_c = Rγc0/I. The Coulomb term c0 only resists motion (the forcing k_a α − k_c is floored at 0), so
v never turns negative. Steering follows its command through a first-order servo (time constant
``steering_tau_s``).

Both first-order systems are integrated exactly for a zero-order-hold input (one
``scipy.signal.lfilter`` each), so a 30 s run at 1 kHz costs about a millisecond. The numbers below
are 1/6-scale-vehicle-like choices (top speed ≈ 2.6 m/s, speed time constant ≈ 0.55 s); the paper
does not publish identified values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter


@dataclass(frozen=True)
class VehicleParams:
    wheelbase_m: float = 0.48
    wheel_radius_m: float = 0.08
    gear_ratio: float = 0.3
    wheel_inertia_kgm2: float = 0.005
    stall_torque_nm: float = 1.0
    max_motor_speed_radps: float = 200.0
    c0_nm: float = 0.0208
    c1_nms: float = 0.004
    steering_tau_s: float = 0.1
    max_steering_rad: float = 0.5

    @property
    def speed_coefficients(self) -> tuple[float, float, float]:
        """(k_a, k_v, k_c) of v̇ = k_a α − k_v v − k_c."""
        rg, inertia = self.wheel_radius_m * self.gear_ratio, self.wheel_inertia_kgm2
        k_a = rg * self.stall_torque_nm / inertia
        k_v = (self.stall_torque_nm / self.max_motor_speed_radps + self.c1_nms) / inertia
        k_c = rg * self.c0_nm / inertia
        return k_a, k_v, k_c

    @property
    def max_speed_mps(self) -> float:
        k_a, k_v, k_c = self.speed_coefficients
        return (k_a - k_c) / k_v

    def throttle_for_speed(self, v_mps):
        """Steady-state throttle α ∈ [0, 1] that holds speed v (open-loop feed-forward)."""
        k_a, k_v, k_c = self.speed_coefficients
        v = np.asarray(v_mps, dtype=float)
        return np.where(v > 0, np.clip((k_v * v + k_c) / k_a, 0.0, 1.0), 0.0)


def first_order_zoh(u: np.ndarray, a: float, b: float, y0: float = 0.0) -> np.ndarray:
    """y[k+1] = a·y[k] + b·u[k], y[0] = y0 (exact discretisation of a first-order lag)."""
    y = lfilter([0.0, b], [1.0, -a], u)
    if y0:
        y = y + y0 * a ** np.arange(len(u))
    return y


def simulate(
    vehicle: VehicleParams,
    t_s: np.ndarray,
    throttle: np.ndarray,
    steering_cmd_rad: np.ndarray,
    yaw0_rad: float = 0.0,
):
    """
    Integrate the model on the uniform grid ``t_s`` with inputs held over each step.

    Returns (position_enu (N,3), yaw_unwrapped (N,), speed v (N,), v̇ (N,), yaw rate ω (N,)).
    Position and yaw are trapezoidal integrals of the sampled velocity and yaw rate, so the pose is
    by construction the integral of the published velocity.
    """
    h = float(t_s[1] - t_s[0])
    k_a, k_v, k_c = vehicle.speed_coefficients
    forcing = np.maximum(k_a * np.clip(throttle, 0.0, 1.0) - k_c, 0.0)
    a_v = np.exp(-k_v * h)
    v = first_order_zoh(forcing, a_v, (1.0 - a_v) / k_v)
    v_dot = forcing - k_v * v
    a_d = np.exp(-h / vehicle.steering_tau_s)
    delta = first_order_zoh(
        np.clip(steering_cmd_rad, -vehicle.max_steering_rad, vehicle.max_steering_rad),
        a_d,
        1.0 - a_d,
    )
    omega = v * np.tan(delta) / vehicle.wheelbase_m
    yaw = yaw0_rad + _cumtrapz(omega, h)
    pos = np.zeros((len(t_s), 3))
    pos[:, 0] = _cumtrapz(v * np.cos(yaw), h)
    pos[:, 1] = _cumtrapz(v * np.sin(yaw), h)
    return pos, yaw, v, v_dot, omega


def _cumtrapz(f: np.ndarray, h: float) -> np.ndarray:
    out = np.empty_like(f)
    out[0] = 0.0
    np.cumsum(0.5 * h * (f[1:] + f[:-1]), out=out[1:])
    return out
