# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A second judge: the 4-DOF bicycle-model EKF of Zhang et al., for sensitivity studies.

A second judge: the 4-DOF bicycle-model EKF of Zhang et al., "Using simulation to design an MPC
policy for field navigation using GPS sensing" (shared/seeds/003, §2.1–2.2), for sensitivity
studies (the VEPD paper's future work: does the sim-to-real ranking depend on the estimator?).

State q = [x, y, θ, v] in a local tangent plane (ENU, origin at the first good fix; θ = heading
from east, counter-clockwise; v = forward speed). The paper drives θ̇ = v·tan(δ)/l and v̇ from a
DC-motor model with throttle/steering inputs, which sensor recordings do not carry; here the IMU
supplies the inputs instead (the paper's "IMU integration" future work): θ̇ = ω_z (IMU yaw rate,
rotated into base_link) and, with ``use_accel_input``, v̇ = a_x (IMU forward specific force; off by
default: v is a random walk).

* prediction, at every IMU sample (Euler step over dt since the last event; the last yaw rate holds
  until the next sample): x += v cosθ dt, y += v sinθ dt, θ += ω dt, v += a dt; F = [[1, 0, −v sinθ
  dt, cosθ dt], [0, 1, v cosθ dt, sinθ dt], [0, 0, 1, 0], [0, 0, 0, 1]] (the paper's eq. 4 with the
  motor and steering terms replaced by the measured inputs); P ← F P Fᵀ + Q·dt;
* correction, at every good fix (status ≠ NO_FIX, finite): z = ENU position of the fix (UTM,
  rotated by the datum's meridian convergence), H = [I₂ 0], R = the fix's horizontal covariance
  with each variance raised to ``min_gps_variance`` (Chrono publishes all-zero covariances);
  standard EKF update with the Joseph form; the heading innovation does not exist (position only);
* initialisation at the first good fix: x = y = 0, θ = ``initial_heading``, v = 0, P = diag(P0);
  IMU samples before it are ignored;
* output on a timer at ``frequency`` (default 35 Hz, as ART's ekf): everything stamped ≤ tick is
  processed in stamp order and the state is published, stamped with the newest processed
  measurement, only when that stamp moved forward (robot_localization's rule, so outputs are
  comparable).

Parameters (YAML section ``bicycle_ekf: {ros__parameters: ...}`` in the ekf file; absent →
defaults, and ``frequency`` falls back to the ekf_filter_node section): ``frequency``,
``process_noise`` [x, y, θ, v] (rates, per second), ``initial_covariance`` [x, y, θ, v],
``initial_heading`` (rad), ``min_gps_variance`` (m²), ``use_accel_input``.

Output dict as ``rl_graph.run_judge_batch``: 'stamp_ns', 'tick_ns', 'state' (K, T, 15) in
robot_localization's state order (x, y, yaw, vx = v; vy = 0; the rest 0), 'p_diag', the named
columns and 'speed' = |v|.
"""

from __future__ import annotations

from dataclasses import dataclass
import heapq
import math
from typing import Any, Mapping

import numpy as np
from vepd_ros.judge import engine
from vepd_ros.judge.ekf import STATE_NAMES
from vepd_ros.judge.navsat import gps_batch_arrays, utm_convergence_deg, utm_forward
from vepd_ros.params import ParameterError
from vepd_ros.params_file import read_document, sections

BICYCLE_DEFAULTS: dict[str, Any] = {
    'frequency': 35.0,
    'process_noise': [0.01, 0.01, 0.02, 0.5],
    'initial_covariance': [1e-4, 1e-4, 1.0, 1.0],
    'initial_heading': 0.0,
    'min_gps_variance': 1e-4,
    'use_accel_input': False,
}
SECTION = 'bicycle_ekf'


def bicycle_params(values: Mapping[str, Any] | None = None) -> dict:
    out = dict(BICYCLE_DEFAULTS)
    for k, v in dict(values or {}).items():
        if k == 'use_sim_time':
            continue
        if k not in BICYCLE_DEFAULTS:
            raise ParameterError(k, v, 'a bicycle_ekf parameter: ' + ', '.join(BICYCLE_DEFAULTS))
        d = BICYCLE_DEFAULTS[k]
        if isinstance(d, bool):
            if not isinstance(v, bool):
                raise ParameterError(k, v, 'a bool')
        elif isinstance(d, float):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ParameterError(k, v, 'a finite number')
            v = float(v)
        else:
            if (
                not isinstance(v, (list, tuple))
                or len(v) != 4
                or any(isinstance(e, bool) or not isinstance(e, (int, float)) or e < 0 for e in v)
            ):
                raise ParameterError(k, v, 'a list of 4 numbers >= 0 (x, y, heading, speed)')
            v = [float(e) for e in v]
        out[k] = v
    if out['frequency'] <= 0:
        raise ParameterError('frequency', out['frequency'], 'a rate > 0 Hz')
    if out['min_gps_variance'] <= 0:
        raise ParameterError('min_gps_variance', out['min_gps_variance'], 'a variance > 0 m²')
    return out


def load_bicycle_params(source) -> dict:
    """
    Build the parameters from a mapping or an ekf YAML.

    From a mapping of bicycle parameters, or an ekf YAML (path/mapping) with a ``bicycle_ekf``
    section (``frequency`` defaults to the ekf_filter_node's).
    """
    if source is None:
        return bicycle_params()
    if isinstance(source, Mapping) and not any(isinstance(v, Mapping) for v in source.values()):
        return bicycle_params(source)
    if hasattr(source, 'ekf'):  # rl_graph.JudgeParams
        return bicycle_params({'frequency': source.ekf.frequency})
    if hasattr(source, 'frequency') and hasattr(source, 'sensors'):  # config.EkfParams
        return bicycle_params({'frequency': source.frequency})
    # the section's own entries only: /** of an ekf file holds ekf_node parameters
    nodes = sections(read_document(source, what='ekf configuration'))[1]
    vals = dict(nodes.get('/' + SECTION, {}))
    if 'frequency' not in vals:
        for name, rp in nodes.items():
            if name != '/' + SECTION and 'frequency' in rp:
                vals['frequency'] = rp['frequency']
                break
    return bicycle_params(vals)


def run_bicycle_batch(
    ekf_params,
    navsat_params=None,
    imu: Mapping[str, Any] | None = None,
    gps: Mapping[str, Any] | None = None,
    tf=None,
    *,
    t_start_ns: int | None = None,
    t_end_ns: int | None = None,
    ekf_first_tick_ns: int | None = None,
    **_ignored,
) -> dict:
    """
    Run the bicycle judge over K runs with identical timing.

    Inputs as ``rl_graph.run_judge_batch`` (``navsat_params`` is unused: the bicycle EKF makes its
    own tangent plane).
    """
    p = load_bicycle_params(ekf_params)
    if imu is None or gps is None:
        raise ValueError('the bicycle judge needs both imu and gps inputs')
    w = np.asarray(imu['angular_velocity'], float)
    if w.ndim != 3:
        raise ValueError(f"imu['angular_velocity']: expected (K, n, 3), got {w.shape}")
    K, n = w.shape[:2]
    ist = np.asarray(imu['stamp_ns'], np.int64)
    iarr = np.asarray(imu.get('arrival_ns', ist), np.int64)
    Rb = np.eye(3)
    frame = imu.get('frame_id') or 'base_link'
    if tf is not None and frame != 'base_link':
        try:
            Rb = tf.lookup('base_link', frame)[0]
        except LookupError:
            raise ValueError(f'imu frame {frame!r}: no transform to base_link') from None
    wz = (w @ Rb.T)[..., 2]
    ax = None
    if p['use_accel_input']:
        ax = (np.broadcast_to(np.asarray(imu['linear_acceleration'], float), (K, n, 3)) @ Rb.T)[
            ..., 0
        ]
    lat, lon, alt, status = gps_batch_arrays(gps, K)
    m = lat.shape[1]
    gcov = np.broadcast_to(
        np.asarray(gps.get('position_covariance', np.zeros(9)), float), (K, m, 9)
    )
    gst = np.asarray(gps['stamp_ns'], np.int64)
    garr = np.asarray(gps.get('arrival_ns', gst), np.int64)
    good = (status != -1) & np.isfinite(lat) & np.isfinite(lon) & np.isfinite(alt)

    # local tangent plane per run: UTM of each fix rotated by the convergence at the first good fix
    gx, gy, _, _ = utm_forward(np.where(good, lat, 0.0), np.where(good, lon, 0.0))
    first = np.argmax(good, axis=1)
    has = good.any(axis=1)
    e = np.full((K, m), np.nan)
    nn = np.full((K, m), np.nan)
    for k in np.flatnonzero(has):
        j = first[k]
        zone = int(utm_forward(lat[k, j], lon[k, j])[2])
        g = math.radians(utm_convergence_deg(lat[k, j], lon[k, j], zone))
        dx, dy = gx[k] - gx[k, j], gy[k] - gy[k, j]
        c, s = math.cos(-g), math.sin(-g)  # grid → true ENU
        e[k], nn[k] = c * dx - s * dy, s * dx + c * dy
    e[~good] = np.nan
    nn[~good] = np.nan
    var = np.maximum(np.stack([gcov[..., 0], gcov[..., 4]], -1), p['min_gps_variance'])
    cxy = np.where(np.isfinite(gcov[..., 1]), gcov[..., 1], 0.0)

    # events by arrival (IMU before GPS at an equal arrival), processed by stamp at the ticks of
    # the node loop (engine.run); published when the stamp moved forward, never a timeout predict
    ev = [_Events(ist, iarr), _Events(gst, garr)]
    ev_arr = np.concatenate([iarr, garr])
    t0 = int(ev_arr.min()) if t_start_ns is None else int(t_start_ns)
    t1 = int(ev_arr.max()) if t_end_ns is None else int(t_end_ns)
    period = int(1e9 / p['frequency'])
    first_tick = t0 + period if ekf_first_tick_ns is None else int(ekf_first_tick_ns)
    ticks = np.arange(first_tick, t1 + 1, period, dtype=np.int64)

    model = BicycleModel(p, K)
    rows_out = engine.NodeOutputs(_LOOP, ticks.size, K, keep_unpublished=False, state_size=4)
    steps = _BicycleSteps(model, wz, ax, good, e, nn, var, cxy)
    engine.run(model, ev, ticks, rows_out, steps=steps)
    rows = rows_out.rows
    out_stamp, out_tick = rows_out.stamp, rows_out.tick
    X, Pd = rows_out.arrays()
    state = np.zeros((K, rows, 15))
    pdiag = np.zeros((K, rows, 15))
    state[..., 0], state[..., 1], state[..., 5], state[..., 6] = (
        X[..., 0],
        X[..., 1],
        X[..., 2],
        X[..., 3],
    )
    pdiag[..., 0], pdiag[..., 1], pdiag[..., 5], pdiag[..., 6] = (
        Pd[..., 0],
        Pd[..., 1],
        Pd[..., 2],
        Pd[..., 3],
    )
    out = {
        'stamp_ns': out_stamp[:rows],
        'tick_ns': out_tick[:rows],
        'state': state,
        'p_diag': pdiag,
        'gps_odom_stamp_ns': np.zeros(0, np.int64),
        'gps_odom_position': np.zeros((K, 0, 3)),
    }
    for i, name in enumerate(STATE_NAMES):
        out[name.lower()] = state[:, :, i]
    out['speed'] = np.abs(X[..., 3]) if rows else np.zeros((K, 0))
    return out


@dataclass(frozen=True)
class _Events:
    """One input's message timing, as the node loop reads a series (``engine.delivery_order``)."""

    stamps: np.ndarray
    arrivals: np.ndarray

    def __len__(self):
        return int(self.stamps.size)


@dataclass(frozen=True)
class _LoopParams:
    """The bicycle node's loop: publish when the stamp moved forward; no timeout prediction."""

    permit_corrected_publication: bool = False
    predict_to_current_time: bool = False
    sensor_timeout_ns: int = np.iinfo(np.int64).max


_LOOP = _LoopParams()


class BicycleModel:
    """The bicycle EKF's state for K runs: x (K, 4) = [x, y, θ, v], P (K, 4, 4), per-run init."""

    def __init__(self, p: Mapping[str, Any], k: int):
        self.K = k
        self.Qr = np.asarray(p['process_noise'], float)
        self.x = np.zeros((k, 4))
        self.x[:, 2] = p['initial_heading']
        self.P = np.tile(np.diag(p['initial_covariance']), (k, 1, 1))
        self.init = np.zeros(k, bool)
        self.last_t = np.full(k, -1, np.int64)
        self.omega = np.zeros(k)
        self.acc = np.zeros(k)

    @property
    def initialized(self) -> bool:
        """Whether some run has had its first good fix."""
        return bool(self.init.any())

    @property
    def last_time_ns(self) -> int:
        """Return the newest processed stamp over the initialised runs (the output stamp)."""
        return int(self.last_t[self.init].max())

    def predict_to(self, t_ns: int) -> None:
        """Never called: the bicycle node makes no timeout prediction (``_LoopParams``)."""
        raise NotImplementedError('the bicycle judge makes no timeout prediction')

    def on_imu(self, t: int, wz, ax) -> None:
        """IMU sample stamped t: predict with the previous inputs, then hold the new ones."""
        _predict(self.x, self.P, self.Qr, self.init, self.last_t, t, self.omega, self.acc)
        self.omega = wz
        if ax is not None:
            self.acc = ax

    def on_fix(self, t: int, good, e, n, var, cxy) -> None:
        """Fix stamped t: initialise the runs without state, predict and correct the others."""
        x, init = self.x, self.init
        new = good & ~init
        if new.any():
            x[new, 0], x[new, 1] = e[new], n[new]
            init |= new
            self.last_t[new] = t
        upd = good & ~new & init
        if upd.any():
            _predict(x, self.P, self.Qr, init & upd, self.last_t, t, self.omega, self.acc)
            _correct(x, self.P, upd, e, n, var, cxy)


class _BicycleSteps:
    """Queue entries of the bicycle node (``engine.run``'s ``steps``): series 0 IMU, 1 GPS."""

    def __init__(self, model: BicycleModel, wz, ax, good, e, n, var, cxy):
        self.model = model
        self.wz, self.ax = wz, ax
        self.good, self.e, self.n, self.var, self.cxy = good, e, n, var, cxy
        self.stamps: list = []
        self.counter = 0

    def add(self, s: _Events) -> int:
        """Register an input; return its index."""
        self.stamps.append(s.stamps.tolist())
        return len(self.stamps) - 1

    def deliver(self, queue: list, js, iis) -> None:
        """Queue samples ``iis`` of inputs ``js`` by (stamp, delivery order)."""
        push, stamps = heapq.heappush, self.stamps
        for j, i in zip(js, iis):
            push(queue, (stamps[j][i], self.counter, j, i))
            self.counter += 1

    def process(self, queue: list, now: int, on_update) -> None:
        """Pop the queue's first entry and apply it."""
        t, _, kind, j = heapq.heappop(queue)
        if kind == 0:
            self.model.on_imu(t, self.wz[:, j], None if self.ax is None else self.ax[:, j])
        else:
            self.model.on_fix(
                t, self.good[:, j], self.e[:, j], self.n[:, j], self.var[:, j], self.cxy[:, j]
            )


def _predict(x, P, Qr, init, last_t, t, omega, acc):
    """
    Step the bicycle model forward to time t (Euler).

    Euler step of the bicycle model to time t for the initialised runs whose last time is before t.
    """
    dt_ns = np.where(init, t - last_t, 0)
    sel = init & (dt_ns > 0)
    if not sel.any():
        return
    dt = np.where(sel, dt_ns * 1e-9, 0.0)
    th, v = x[:, 2], x[:, 3]
    c, s = np.cos(th), np.sin(th)
    # Jacobian F = I + dF; P ← F P Fᵀ + Q dt (explicit for the 4×4 structure)
    F = np.zeros((x.shape[0], 4, 4))
    F[:, 0, 0] = F[:, 1, 1] = F[:, 2, 2] = F[:, 3, 3] = 1.0
    F[:, 0, 2], F[:, 0, 3] = -v * s * dt, c * dt
    F[:, 1, 2], F[:, 1, 3] = v * c * dt, s * dt
    x[:, 0] += v * c * dt
    x[:, 1] += v * s * dt
    x[:, 2] = np.where(sel, _wrap(th + omega * dt), th)
    x[:, 3] += acc * dt
    Pn = F @ P @ F.transpose(0, 2, 1)
    Pn[:, np.arange(4), np.arange(4)] += Qr[None, :] * dt[:, None]
    P[sel] = Pn[sel]
    last_t[sel] = t


def _correct(x, P, sel, ze, zn, var, cxy):
    """Position update (H = [I₂ 0]) for the runs in ``sel``, Joseph form."""
    R = np.zeros((x.shape[0], 2, 2))
    R[:, 0, 0], R[:, 1, 1] = var[:, 0], var[:, 1]
    R[:, 0, 1] = R[:, 1, 0] = cxy
    S = P[:, :2, :2] + R
    Sinv = np.linalg.inv(S)
    G = P[:, :, :2] @ Sinv  # (K, 4, 2)
    nu = np.stack([ze - x[:, 0], zn - x[:, 1]], -1)
    xn = x + np.einsum('kij,kj->ki', G, np.nan_to_num(nu))
    xn[:, 2] = _wrap(xn[:, 2])
    IKH = np.tile(np.eye(4), (x.shape[0], 1, 1))
    IKH[:, :, :2] -= G
    Pn = IKH @ P @ IKH.transpose(0, 2, 1) + G @ R @ G.transpose(0, 2, 1)
    x[sel] = xn[sel]
    P[sel] = Pn[sel]


def _wrap(a):
    return np.mod(np.asarray(a) + np.pi, 2 * np.pi) - np.pi
