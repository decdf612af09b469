# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Co-simulate the judge graph offline: ekf_node + navsat_transform_node, without transport.

Offline co-simulation of the judge graph: ekf_node + navsat_transform_node, IMU + NavSatFix in,
/odometry/filtered out — the whole ROS graph of design §1 without transport.

Timing model (deterministic; one model for the single run, the batch and `vepd judge replay`):
* zero transport latency: a message exists for its subscriber at its **arrival** time (a bag's
  record time; for simulated data arrival = header stamp unless given);
* each node's timer fires at its own frequency: ekf ticks at ``ekf_first_tick_ns +
  k·(1/frequency)``, navsat ticks at ``navsat_first_tick_ns + k·(1/frequency)`` (periods truncated
  to ns, as std::chrono does); by default both nodes start at the first arrival, so the first ticks
  are one period later (navsat: plus its ``delay``);
* the EKF queue receives a message at its arrival; the EKF state only changes inside its timer
  callback, so preparing the message at arrival or at the next tick is the same thing (the
  rl_golden delivery rule);
* the feedback loop: each published /odometry/filtered goes to navsat at the EKF tick time; each
  /odometry/gps goes to the EKF queue at the navsat tick time (stamp = fix stamp);
* same-instant order: sensor arrivals, then the navsat tick, then the EKF tick.
The data ends at the last arrival (``t_end_ns``); ticks run up to and including it.

Batch form (the offline study; vectorised over K runs that share message timing)::

    run_judge_batch(ekf_params, navsat_params, imu, gps, tf=None, *, t_start_ns=None,
                    t_end_ns=None, ekf_first_tick_ns=None, navsat_first_tick_ns=None,
                    full_covariance=False, gravity_frame='imu') -> dict

    gravity_frame  'imu' (default: ROS 1 and ROS 2 after PR #946) or 'base_link' (the 3.5/3.6
                 snapshot); only matters for an IMU mounted rotated — see ``imu_gravity_removal``
    ekf_params   EkfParams, a path to robot_localization's ekf YAML, or a mapping
                 (``load_judge_params``)
    navsat_params  mapping / YAML path for navsat_transform, or None (no navsat: GPS not used)
    imu  dict: 'stamp_ns' (n,) int64; optional 'arrival_ns' (n,); 'angular_velocity' (K, n, 3);
         'linear_acceleration' (K, n, 3) (specific force, +g on z at rest); optional 'orientation'
         (K, n, 4) x y z w (default all zeros = "no orientation", read as identity upstream);
         optional '*_covariance' (9,) / (n, 9) / (K, n, 9) for 'orientation', 'angular_velocity',
         'linear_acceleration' (default zeros, clamped to 1e-9 by the filter); 'frame_id' (default
         base_link)
    gps  dict: 'stamp_ns' (m,); optional 'arrival_ns'; 'latitude', 'longitude', 'altitude' (K, m)
         deg/m; optional 'position_covariance' (9,) / (m, 9) / (K, m, 9) (default zeros, the
         Chrono case); optional 'status' (K, m) (default 0; −1 or NaN positions are ignored by
         navsat); 'frame_id' (default 'base_link')
    returns dict: 'stamp_ns' (T,) published /odometry/filtered stamps, 'tick_ns' (T,), 'state'
         (K, T, 15), 'p_diag' (K, T, 15) (or 'P' (K, T, 15, 15)), the state columns by name 'x' 'y'
         'z' 'roll' 'pitch' 'yaw' 'vx' 'vy' 'vz' 'vroll' 'vpitch' 'vyaw' 'ax' 'ay' 'az' (K, T) —
         velocities in the body frame, as robot_localization publishes them — 'speed' (K, T) =
         hypot(vx, vy), and 'gps_odom_stamp_ns' (G,) + 'gps_odom_position' (K, G, 3): what navsat
         published.

Runs whose GPS validity (NO_FIX / NaN) differs are split into groups with equal validity patterns,
because navsat's publication times, and so the EKF's timing, depend on it.

``run_graph`` runs any EKF sensors (prepared arrays) with optional navsat inputs through the node
loop ``engine.run``, navsat as a second timer; ``vepd judge replay`` uses it with K = 1.

``use_control`` (on in ART's ekf.yaml, but nothing publishes cmd_vel there) is emulated here as
robot_localization does with a command that is always timed out: each prediction decelerates the
controlled velocities toward 0 (``control_timeout`` passed), linear axes measured by an IMU
excluded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from vepd_ros.frames import quaternion_from_rpy
from vepd_ros.judge import engine
from vepd_ros.judge.config import EkfParams, load_ekf_params
from vepd_ros.judge.ekf import Ekf, STATE_NAMES
from vepd_ros.judge.measurements import MeasurementBuilder
from vepd_ros.judge.navsat import (
    fix_frame_problem, gps_batch_arrays, load_navsat_params, NavSatCore, utm_forward
)
from vepd_ros.judge.transforms import StaticTransforms
from vepd_ros.perf import gc_paused
from vepd_ros.streams import topic_key

GPS_ODOM_TOPIC = 'odometry/gps'


class SpanError(ValueError):
    """The data span needs more than MAX_TICKS filter cycles (callers add the file and topic)."""


class FixFrameError(ValueError):
    """navsat_transform could not place the fixes on base_link (``navsat.fix_frame_problem``)."""


MAX_TICKS = 50_000_000
"""Most filter cycles one replay runs (about 14 h at 1 kHz, 19 days at 30 Hz): the time grid is
allocated up front, so a message stamped years outside a recording (a clock glitch) is an error
naming the span, not a many-GiB allocation."""
_CONTROL_KEYS = (
    'control_timeout',
    'control_config',
    'acceleration_limits',
    'acceleration_gains',
    'deceleration_limits',
    'deceleration_gains',
    'stamped_control',
)


# ----------------------------------------------------------------------------------------------
# params
@dataclass
class ControlParams:
    """The control block of ekf_node (reference §8), with the command always timed out."""

    update_vector: tuple
    acceleration_limits: tuple
    acceleration_gains: tuple
    deceleration_limits: tuple
    deceleration_gains: tuple


@dataclass
class JudgeParams:
    ekf: EkfParams
    control: ControlParams | None = None


def load_judge_params(source, node_name: str | None = None) -> JudgeParams:
    """
    robot_localization ekf YAML (path, text or mapping) → EkfParams plus the control block.

    ``load_ekf_params`` refuses ``use_control: true``; the ART file has it, so it is read here:
    the control parameters are taken aside and emulated by the graph (command always timed out).
    """
    if isinstance(source, JudgeParams):
        return source
    if isinstance(source, EkfParams):
        return JudgeParams(source, None)
    from vepd_ros.judge.config import DEFAULT_NODE_NAME
    from vepd_ros.params_file import node_section

    raw = node_section(
        source, node_name, what='ekf configuration', default_names=(DEFAULT_NODE_NAME,)
    )
    # use_control is read here (load_ekf_params refuses it): the graph emulates the control block
    use_control = raw.get('use_control') is True
    if use_control:
        raw['use_control'] = False
    params = load_ekf_params(raw)
    if not params.sensors and not isinstance(source, Mapping):
        where = 'the ekf configuration text' if '\n' in str(source) else str(source)
        raise ValueError(
            f'{where}: no sensor (odom0 / pose0 / twist0 / imu0) in its ros__parameters: '
            'the judge would never initialise'
        )
    if not use_control:
        return JudgeParams(params, None)
    ex = params.extra
    cfg = list(ex.get('control_config') or [False] * 6)
    for s in params.sensors:  # an IMU measuring that linear acceleration disables it
        if s.kind == 'imu':
            for i in range(3):
                if s.config[12 + i]:
                    cfg[i] = False
    al = tuple(ex.get('acceleration_limits') or (1.0,) * 6)
    ag = tuple(ex.get('acceleration_gains') or (1.0,) * 6)
    ctl = ControlParams(
        tuple(cfg),
        al,
        ag,
        tuple(ex.get('deceleration_limits') or al),
        tuple(ex.get('deceleration_gains') or ag),
    )
    return JudgeParams(params, ctl if any(cfg) else None)


class _ControlledEkf(Ekf):
    """
    Ekf with robot_localization's control deceleration for a timed-out command.

    Ekf whose prediction first applies robot_localization's control acceleration for a timed-out
    (zero) command: ``kernel.control_change`` and x⁺ = A(x)·(x + δ) in ``kernel.predict`` (A, the
    Jacobian and Q from the prior state, as upstream).
    """

    def __init__(self, control: ControlParams, **kw):
        super().__init__(**kw)
        self.ctl = control
        self._idx = [i for i in range(6) if control.update_vector[i]]
        # per controlled axis (state column, deceleration limit/gain, acceleration limit/gain)
        self._axes = tuple(
            (
                i,
                control.deceleration_limits[i],
                control.deceleration_gains[i],
                control.acceleration_limits[i],
                control.acceleration_gains[i],
            )
            for i in self._idx
        )

    def predict(self, dt: float, control=None) -> None:
        """Advance by ``dt`` with the control change of the timed-out command."""
        super().predict(dt, self._axes)


GRAVITY_FRAMES = ('imu', 'base_link')


def imu_gravity_removal(
    params: EkfParams, tf, sensor, frame_id: str, q, a, ocov, gravity_frame: str = 'imu'
):
    """
    Gravity removal of an IMU with orientation, in the order of ``gravity_frame``.

    'imu': subtract R_msgᵀ·(0,0,g) (relative: Rotᵀ·R_msgᵀ·(0,0,g)) from the raw acceleration in the
    IMU frame, then rotate — robot_localization ROS 1 (noetic; the source of the upstream bag-test
    numbers) and ROS 2 after PR #946 (2025-09). 'base_link': leave it to the message layer, which
    subtracts after rotating to base_link — the 3.5/3.6 snapshot (reference §6.5), wrong for
    rotated IMUs. Identical for an IMU mounted without rotation. Returns (sensor', a'): sensor' has
    the removal switched off when it was done here (messages without orientation, covariance[0] ==
    −1, are left to the message layer).
    """
    if gravity_frame not in GRAVITY_FRAMES:
        raise ValueError(f'gravity_frame {gravity_frame!r}: expected one of {GRAVITY_FRAMES}')
    if gravity_frame == 'base_link' or not sensor.remove_gravitational_acceleration:
        return sensor, a
    if np.any(np.abs(np.asarray(ocov)[..., 0] + 1.0) < 1e-9):
        return sensor, a
    import dataclasses

    from vepd_ros.frames import quat_matrix
    from vepd_ros.judge.measurements import tf2_quaternion

    g = params.gravitational_acceleration
    # read as prepareAcceleration reads it (all-zero or non-finite: NaN, which the message layer
    # ignores and counts)
    grav = g * quat_matrix(tf2_quaternion(q, zero_is_identity=False))[..., 2, :]  # R_msgᵀ(0,0,g)
    if sensor.relative:
        try:
            Rt, _ = (
                tf.lookup(params.base_link_frame, frame_id or params.base_link_frame)
                if tf is not None
                else (np.eye(3), None)
            )
        except LookupError:
            return sensor, a
        if Rt is None:
            return sensor, a
        grav = grav @ Rt  # Rotᵀ·(R_msgᵀ g), row form
    return dataclasses.replace(sensor, remove_gravitational_acceleration=False), np.asarray(
        a, float
    ) - grav


def with_sensors(params: EkfParams, sensors) -> EkfParams:
    import dataclasses

    return dataclasses.replace(params, sensors=list(sensors))


def make_judge_ekf(jp: JudgeParams, k: int) -> Ekf:
    p = jp.ekf
    kw = {
        'process_noise': p.process_noise_covariance,
        'initial_covariance': p.initial_estimate_covariance,
        'initial_state': p.initial_state,
        'k': k,
        'dynamic_process_noise': p.dynamic_process_noise_covariance,
    }
    return _ControlledEkf(jp.control, **kw) if jp.control is not None else Ekf(**kw)


def _navsat_params(source) -> dict | None:
    return None if source is None else load_navsat_params(source)


# ----------------------------------------------------------------------------------------------
# engine
@dataclass
class NavsatInputs:
    """What navsat_transform receives besides odometry/filtered, as arrays (K leading axis)."""

    fix_arrival_ns: np.ndarray
    fix_stamp_ns: np.ndarray
    lat: np.ndarray  # (K, m)
    lon: np.ndarray
    alt: np.ndarray
    cov: np.ndarray  # (K, m, 9)
    status: np.ndarray  # (K, m)
    fix_frame: str = 'base_link'  # the antenna at base_link's origin
    imu_arrival_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    imu_stamp_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    imu_quat: np.ndarray | None = None  # (K, n, 4)
    imu_frame: str = 'imu'


@dataclass
class GraphResult:
    tick_ns: np.ndarray
    stamp_ns: np.ndarray
    state: np.ndarray  # (K, T, 15)
    cov: np.ndarray  # (K, T, 15) diagonal or (K, T, 15, 15)
    gps_odom_stamp_ns: np.ndarray
    gps_odom_position: np.ndarray  # (K, G, 3)
    gps_filtered: list = field(default_factory=list)
    dropped: dict = field(default_factory=dict)

    def as_dict(self, full_covariance: bool = False) -> dict:
        out = {
            'stamp_ns': self.stamp_ns,
            'tick_ns': self.tick_ns,
            'state': self.state,
            ('P' if full_covariance else 'p_diag'): self.cov,
            'gps_odom_stamp_ns': self.gps_odom_stamp_ns,
            'gps_odom_position': self.gps_odom_position,
        }
        for i, name in enumerate(STATE_NAMES):
            out[name.lower()] = self.state[:, :, i]
        out['speed'] = np.hypot(self.state[:, :, 6], self.state[:, :, 7])
        return out


def run_graph(
    judge: JudgeParams,
    series: list,
    k: int,
    navsat: dict | None = None,
    nav_in: NavsatInputs | None = None,
    tf: StaticTransforms | None = None,
    builder: MeasurementBuilder | None = None,
    *,
    t_start_ns: int,
    t_end_ns: int,
    ekf_first_tick_ns: int | None = None,
    navsat_first_tick_ns: int | None = None,
    full_covariance: bool = False,
    keep_unpublished: bool = False,
    record_filtered_gps: bool = False,
) -> GraphResult:
    """
    Run the event loop.

    ``series``: prepared EKF measurement series (``MeasurementBuilder.*_arrays`` with
    ``arrivals``), in the order upstream callbacks would enqueue same-arrival parts. With
    ``navsat`` (params) and ``nav_in``, navsat_transform runs and its odometry/gps goes to the EKF
    sensor whose topic is odometry/gps (prepared by ``builder``). The loop is ``engine.run`` with
    navsat as a second timer (K = 1: its float path unless ``K1_LOOP`` is off).
    """
    p = judge.ekf
    ekf = make_judge_ekf(judge, k)
    builder = builder or MeasurementBuilder(p, tf)
    period = p.period_ns
    first = t_start_ns + period if ekf_first_tick_ns is None else int(ekf_first_tick_ns)
    n_ticks = (int(t_end_ns) - first) // period + 1 if t_end_ns >= first else 0
    if n_ticks > MAX_TICKS:
        raise SpanError(
            f'the data span {(int(t_end_ns) - int(t_start_ns)) / 1e9:.6g} s needs '
            f'{n_ticks} filter cycles at {1e9 / period:g} Hz, more than {MAX_TICKS}: '
            'a message stamped far outside the recording? (check the header stamps)'
        )
    ekf_ticks = (
        np.arange(first, t_end_ns + 1, period, dtype=np.int64)
        if n_ticks
        else np.zeros(0, np.int64)
    )
    # navsat
    nav = None
    nav_ticks = np.zeros(0, np.int64)
    gps_sensor = None
    if navsat is not None and nav_in is not None:
        nav = NavSatCore(navsat, k=k, tf=tf)
        # upstream would fuse every fix at the origin: refused here, not scored (the nodes, and
        # NavSatCore itself, behave as upstream and count those fixes)
        problem = nav_in.fix_arrival_ns.size and fix_frame_problem(
            tf, p.base_link_frame_output, nav_in.fix_frame
        )
        if problem:
            raise FixFrameError(problem)
        # the node's timer starts at t_start_ns, or so that its first callback is at
        # navsat_first_tick_ns
        nstart = (
            int(t_start_ns)
            if navsat_first_tick_ns is None
            else int(navsat_first_tick_ns) - nav.delay_ns - nav.period_ns
        )
        nfirst = nstart + nav.delay_ns + nav.period_ns
        if (int(t_end_ns) - nfirst) // nav.period_ns + 1 > MAX_TICKS:
            span_s = (int(t_end_ns) - int(t_start_ns)) / 1e9
            raise SpanError(
                f'the data span {span_s:.6g} s needs '
                f'more than {MAX_TICKS} navsat_transform cycles: a message stamped '
                'far outside the recording? (check the header stamps)'
            )
        nav_ticks = nav.timer_ticks(nstart, int(t_end_ns))
        for s in p.sensors:
            if s.kind == 'odom' and topic_key(s.topic) == GPS_ODOM_TOPIC:
                gps_sensor = s
                break
        # navsat static events: fixes and IMU orientation, by arrival (IMU only matters before the
        # datum, and not at all without the imu subscription: use_odometry_yaw, manual datum)
        imu_arr = nav_in.imu_arrival_ns if nav.imu_sub_active else np.zeros(0, np.int64)
        ev_t = np.concatenate([nav_in.fix_arrival_ns, imu_arr]).astype(np.int64)
        ev_kind = np.concatenate(
            [np.zeros(nav_in.fix_arrival_ns.size, np.int8), np.ones(imu_arr.size, np.int8)]
        )
        ev_idx = np.concatenate([np.arange(nav_in.fix_arrival_ns.size), np.arange(imu_arr.size)])
        o = np.lexsort((ev_kind, ev_t))
        nev_t, nev_kind, nev_idx = ev_t[o].tolist(), ev_kind[o].tolist(), ev_idx[o].tolist()
        # UTM of every fix at once (navsat projects each fix in its own standard zone)
        fx, fy, fzone, fnorth = utm_forward(np.nan_to_num(nav_in.lat), np.nan_to_num(nav_in.lon))
    ne = [0]

    def nav_feed_until(t):
        i = ne[0]
        while i < len(nev_t) and nev_t[i] <= t:
            j = nev_idx[i]
            if nev_kind[i] == 0:
                nav.on_fix(
                    int(nav_in.fix_stamp_ns[j]),
                    nav_in.lat[:, j],
                    nav_in.lon[:, j],
                    nav_in.alt[:, j],
                    cov=nav_in.cov[:, j],
                    status=nav_in.status[:, j],
                    frame_id=nav_in.fix_frame,
                    utm=(fx[:, j], fy[:, j], fzone[:, j], fnorth[:, j]),
                )
            elif nav.imu_sub_active:
                nav.on_imu(
                    int(nav_in.imu_stamp_ns[j]), nav_in.imu_quat[:, j], frame_id=nav_in.imu_frame
                )
            i += 1
        ne[0] = i

    gps_stamps, gps_pos, filtered = [], [], []
    world, base_out = p.world_frame, p.base_link_frame_output
    zero3 = np.zeros((k, 1, 3))
    zero36 = np.zeros((k, 1, 36))

    def navsat_timer(now: int) -> list:
        """
        Run navsat's timer callback at ``now``.

        Navsat's timer callback at ``now``: its odometry/gps publication as EKF series (arrival
        now).
        """
        nav_feed_until(now)
        godom, gfilt = nav.tick(filtered=record_filtered_gps)
        if gfilt is not None:
            filtered.append(gfilt)
        if godom is None:
            return []
        if not godom['valid'].all():
            raise ValueError(
                'navsat published for some runs only; split the batch by GPS validity'
            )
        st = int(godom['stamp_ns'][0])
        gps_stamps.append(st)
        gps_pos.append(godom['position'].copy())
        if gps_sensor is None:
            return []
        return builder.odometry_arrays(
            gps_sensor,
            np.array([st], np.int64),
            godom['position'][:, None, :],
            godom['quaternion'][:, None, :],
            godom['pose_covariance'][:, None, :],
            zero3,
            zero3,
            zero36,
            frame_id=godom['frame_id'] or world,
            child_frame_id='',
            arrivals=np.array([now], np.int64),
        )

    def odometry_to_navsat(now: int, stamp: int) -> None:
        """
        Hand a published /odometry/filtered to navsat (at the EKF tick time).

        A published /odometry/filtered reaches navsat (at the EKF tick time); the message (pose
        quaternion, pose covariance) is built only if navsat reads it.
        """
        nav_feed_until(now)
        x, P6 = ekf.x.copy(), ekf.P[:, 0:6, 0:6].copy()
        nav.on_odom_deferred(
            stamp,
            lambda: (x[:, 0:3], quaternion_from_rpy(x[:, 3], x[:, 4], x[:, 5]), P6.reshape(k, 36)),
            frame_id=world,
            child_frame_id=base_out,
        )

    out = engine.NodeOutputs(p, ekf_ticks.size, k, full_covariance, keep_unpublished)
    with gc_paused():  # the loop's queue entries and lists are acyclic (perf.gc_paused)
        engine.run(
            ekf,
            series,
            ekf_ticks,
            out,
            timer=None if nav is None else engine.Timer(nav_ticks, navsat_timer),
            on_publish=None if nav is None else odometry_to_navsat,
            scalar=k == 1 and K1_LOOP,
        )
    G = len(gps_stamps)
    x_out, P_out = out.arrays()
    return GraphResult(
        out.tick[: out.rows],
        out.stamp[: out.rows],
        x_out,
        P_out,
        np.array(gps_stamps, np.int64),
        np.stack(gps_pos, 1) if G else np.zeros((k, 0, 3)),
        filtered,
        _drops(builder, nav, ekf),
    )


def explain_no_estimate(
    dropped: Mapping[str, int] | None, static_tf_option: str = '--static-tf'
) -> str:
    """
    Explain from its drop counts why a judge run gave no usable estimate.

    Why a judge run gave no usable estimate, from its drop counts, and what to pass: a missing
    static transform names the frames and the ``--static-tf "PARENT CHILD x y z roll pitch yaw"``
    to give.
    """
    import re

    dropped = dict(dropped or {})
    hints, seen = [], set()
    for reason in dropped:
        m = re.search(r"no transform from '([^']*)' to '([^']*)'", reason)
        if m and (m[2], m[1]) not in seen:
            seen.add((m[2], m[1]))
            hints.append(
                f'no static transform {m[2]} -> {m[1]} (the {m[1]!r} frame of the '
                f'messages): pass '
                f'{static_tf_option} "{m[2]} {m[1]} X Y Z ROLL PITCH YAW" (the sensor '
                f'mounting)'
            )
    if hints:
        return '; '.join(hints)
    if dropped:
        top = sorted(dropped.items(), key=lambda kv: -kv[1])[:3]
        return 'messages dropped: ' + ', '.join(f'{k} ({v})' for k, v in top)
    return 'no message reached the filter (check the topics and their stamps)'


def _drops(builder, nav, ekf) -> dict:
    """
    Count every message the graph dropped, by reason.

    Every message the graph dropped, by reason: the EKF's message layer and update guard, and
    navsat's.
    """
    out = dict(builder.dropped)
    out.update(getattr(ekf, 'drops', {}))
    if nav is not None:
        for reason, n in nav.dropped.items():
            out['navsat ' + reason] = out.get('navsat ' + reason, 0) + n
    return out


K1_LOOP = True
"""K = 1 graphs run ``engine.run``'s float path; False: its array path, message by message as for
K > 1 (the reference the float path is tested against, bit for bit)."""


# ----------------------------------------------------------------------------------------------
# batch
def _kn(a, K, n, width, name, default=0.0):
    """Broadcast an input to (K, n, width) floats."""
    if a is None:
        return np.full((K, n, width), default, float)
    a = np.asarray(a, float)
    try:
        return np.broadcast_to(a, (K, n, width))
    except ValueError:
        raise ValueError(
            f'{name}: shape {a.shape} does not broadcast to (K={K}, n={n}, {width})'
        ) from None


def run_judge_batch(
    ekf_params,
    navsat_params,
    imu: Mapping[str, Any],
    gps: Mapping[str, Any] | None = None,
    tf: StaticTransforms | None = None,
    *,
    t_start_ns: int | None = None,
    t_end_ns: int | None = None,
    ekf_first_tick_ns: int | None = None,
    navsat_first_tick_ns: int | None = None,
    full_covariance: bool = False,
    gravity_frame: str = 'imu',
) -> dict:
    """Run the judge (ekf + navsat) over K runs with identical timing; see the module docstring."""
    judge = load_judge_params(ekf_params)
    nparams = _navsat_params(navsat_params)
    p = judge.ekf
    w = np.asarray(imu['angular_velocity'], float)
    if w.ndim != 3:
        raise ValueError(f"imu['angular_velocity']: expected (K, n, 3), got {w.shape}")
    K, n = w.shape[:2]
    stamps = np.asarray(imu['stamp_ns'], np.int64)
    if stamps.shape != (n,):
        raise ValueError(f"imu['stamp_ns']: expected ({n},), got {stamps.shape}")
    arrivals = np.asarray(imu.get('arrival_ns', stamps), np.int64)
    a = _kn(imu['linear_acceleration'], K, n, 3, "imu['linear_acceleration']")
    q = _kn(imu.get('orientation'), K, n, 4, "imu['orientation']")
    ocov = _kn(imu.get('orientation_covariance'), K, n, 9, "imu['orientation_covariance']")
    wcov = _kn(
        imu.get('angular_velocity_covariance'), K, n, 9, "imu['angular_velocity_covariance']"
    )
    acov = _kn(
        imu.get('linear_acceleration_covariance'), K, n, 9, "imu['linear_acceleration_covariance']"
    )
    imu_frame = imu.get('frame_id') or p.base_link_frame

    if gps is not None and nparams is not None:
        lat, lon, alt, status = gps_batch_arrays(gps, K)
        m = lat.shape[1]
        valid = (status != -1) & ~np.isnan(lat) & ~np.isnan(lon) & ~np.isnan(alt)
        patterns, inverse = np.unique(valid, axis=0, return_inverse=True)
        if len(patterns) > 1:  # different navsat timing per group
            return _split_by_pattern(
                inverse.ravel(),
                len(patterns),
                K,
                ekf_params=judge,
                navsat_params=nparams,
                imu=imu,
                gps=gps,
                tf=tf,
                t_start_ns=t_start_ns,
                t_end_ns=t_end_ns,
                ekf_first_tick_ns=ekf_first_tick_ns,
                navsat_first_tick_ns=navsat_first_tick_ns,
                full_covariance=full_covariance,
                gravity_frame=gravity_frame,
            )
    sensors, a_imu = [], {}
    for s in p.sensors:
        if s.kind == 'imu':
            s, a_imu[s.name] = imu_gravity_removal(p, tf, s, imu_frame, q, a, ocov, gravity_frame)
        sensors.append(s)
    p = with_sensors(p, sensors)
    judge = JudgeParams(p, judge.control)
    builder = MeasurementBuilder(p, tf)
    series = []
    for s in p.sensors:
        if s.kind == 'imu':
            series += builder.imu_arrays(
                s,
                stamps,
                q,
                w,
                a_imu[s.name],
                ocov,
                wcov,
                acov,
                frame_id=imu_frame,
                arrivals=arrivals,
            )
    nav_in = None
    arr_all = [arrivals]
    if gps is not None and nparams is not None:
        gst = np.asarray(gps['stamp_ns'], np.int64)
        garr = np.asarray(gps.get('arrival_ns', gst), np.int64)
        arr_all.append(garr)
        nav_in = NavsatInputs(
            garr,
            gst,
            lat,
            lon,
            alt,
            _kn(gps.get('position_covariance'), K, m, 9, "gps['position_covariance']"),
            status,
            gps.get('frame_id', 'base_link'),
            imu_arrival_ns=arrivals,
            imu_stamp_ns=stamps,
            imu_quat=q,
            imu_frame=imu_frame,
        )
    arr_cat = np.concatenate(arr_all)
    t0 = int(arr_cat.min()) if t_start_ns is None else int(t_start_ns)
    t1 = int(arr_cat.max()) if t_end_ns is None else int(t_end_ns)
    res = run_graph(
        judge,
        series,
        K,
        nparams,
        nav_in,
        tf,
        builder,
        t_start_ns=t0,
        t_end_ns=t1,
        ekf_first_tick_ns=ekf_first_tick_ns,
        navsat_first_tick_ns=navsat_first_tick_ns,
        full_covariance=full_covariance,
    )
    out = res.as_dict(full_covariance)
    out['dropped'] = dict(res.dropped)
    return out


def _split_by_pattern(groups, n_groups, K, *, imu, gps, **kw) -> dict:
    """
    Run each GPS-validity group as its own batch.

    Results per run are kept in run order as lists.
    """
    outs = [None] * K
    for g in range(n_groups):
        rows = np.flatnonzero(groups == g)
        sub_imu = {
            k: (v[rows] if isinstance(v, np.ndarray) and v.ndim >= 2 and v.shape[0] == K else v)
            for k, v in imu.items()
        }
        sub_gps = {
            k: (np.asarray(v)[rows] if np.ndim(v) >= 2 and np.shape(v)[0] == K else v)
            for k, v in gps.items()
        }
        r = run_judge_batch(imu=sub_imu, gps=sub_gps, **kw)
        for i, run in enumerate(rows):
            outs[run] = {
                key: (val[i] if isinstance(val, np.ndarray) and val.ndim >= 2 else val)
                for key, val in r.items()
            }
    return {'runs': outs, 'split': True}
