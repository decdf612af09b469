# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Bag → runs: the judging half of ``vepd bag`` (``io.bagrun`` reads the bag and cuts the segments).

For each segment run the judge step of the study (``pipelines.judge_step.judge``: navsat_transform
+ ekf, robot_localization's own YAML) over the segment's GPS and IMU, or take the bag's own
/odometry/filtered (``estimate='recorded'``). Each segment becomes a ``RunRecord``:

* run zero = the earliest header stamp of the segment's GPS/IMU/truth messages;
* se_time, se_vel = estimate stamps − zero, hypot(vx, vy) of the estimate's body-frame twist;
* gt_time, gt_vel = truth stamps − zero (≥ 0), horizontal truth speed; body components too when the
  truth has an orientation (Odometry, Chrono Body) — then the record is built from components like
  the offline study's.

Hybrid experiments (paper §III-A): ``replace={'imu': MODEL}`` feeds the judge a simulated IMU
generated from the truth (a planar ``Trajectory`` rebuilt from the truth velocity: heading from the
orientation or from the course over ground, yaw rate and acceleration by differentiation) and keeps
the real GPS; ``{'gps': MODEL}`` the reverse (datum = the segment's first real fix). Seeds:
``derive_seed(seed, 'imu'|'gps', label, scenario, j)``.

Everything is computed before anything is written, so a bad bag leaves no run file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from vepd_ros.io.bagrun import BagStreams, cut_window, in_order, stamps_in_order
from vepd_ros.io.ins import TruthStream
from vepd_ros.pipelines.judge_step import judge
from vepd_ros.streams import fix_fields, imu_fields, NS, ns_from_s, Stream


@dataclass
class BagRun:
    record: object  # vepd_ros.runs.format.RunRecord
    scenario: str
    meta: dict


MAX_TRUTH_SPEED_MPS = 1e3
"""Truth samples faster than this (or not finite) are dropped and counted, never scored."""


# ------------------------------------------------------------------------------------------------
# hybrid
def truth_trajectory(truth: TruthStream, zero_ns: int):
    """
    Rebuild a planar ``vepd_ros.truth.Trajectory`` from a truth stream (t from ``zero_ns``).

    Heading: from the body components when known (yaw = atan2 of world velocity minus the body slip
    angle), else the course over ground atan2(v_north, v_east), held while slower than 0.2 m/s.
    Position: trapezoidal integral of the world velocity. Yaw rate and acceleration: np.gradient.
    """
    from vepd_ros.truth.trajectory import Trajectory

    t = (truth.stamp_ns - zero_ns) / 1e9
    keep = np.concatenate([[True], np.diff(t) > 0])
    t = t[keep]
    vE, vN, vU = truth.v_east[keep], truth.v_north[keep], np.nan_to_num(truth.v_up[keep])
    if not (np.all(np.isfinite(vE)) and np.all(np.isfinite(vN))):
        raise ValueError(
            'the truth has no world-frame velocity (body-frame twist without orientation); '
            'a simulated sensor cannot be generated from it'
        )
    course = np.arctan2(vN, vE)
    if truth.has_body:
        vx, vy = truth.vx[keep], truth.vy[keep]
        yaw = course - np.arctan2(vy, vx)
        slow = np.hypot(vx, vy) < 0.2
    else:
        vx, vy = np.hypot(vE, vN), np.zeros_like(vE)
        yaw = course.copy()
        slow = vx < 0.2
    if np.all(slow):
        yaw[:] = 0.0
    else:
        first = int(np.argmax(~slow))
        yaw[:first] = yaw[first]
        for i in range(first + 1, len(yaw)):
            if slow[i]:
                yaw[i] = yaw[i - 1]
    yaw = np.unwrap(yaw)
    world = np.stack([vE, vN, vU], axis=1)
    dt = np.diff(t)
    pos = np.concatenate(
        [np.zeros((1, 3)), np.cumsum(0.5 * (world[1:] + world[:-1]) * dt[:, None], axis=0)]
    )
    n = len(t)
    wz = np.gradient(yaw, t) if n > 1 else np.zeros(n)
    acc_w = (
        np.stack([np.gradient(world[:, k], t) for k in range(3)], axis=1)
        if n > 1
        else np.zeros((n, 3))
    )
    cy, sy = np.cos(yaw), np.sin(yaw)
    acc_b = np.stack(
        [cy * acc_w[:, 0] + sy * acc_w[:, 1], -sy * acc_w[:, 0] + cy * acc_w[:, 1], acc_w[:, 2]],
        axis=1,
    )
    zeros = np.zeros(n)
    return Trajectory(
        t,
        pos,
        zeros,
        zeros.copy(),
        yaw,
        np.stack([vx, vy, vU], axis=1),
        np.stack([zeros, zeros, wz], axis=1),
        acc_b,
        meta={'source': 'truth stream'},
    )


def simulate_replacement(
    truth: TruthStream,
    zero_ns: int,
    role: str,
    model: str,
    seed: int,
    *,
    imu_rate_hz: float = 100.0,
    gps_rate_hz: float = 10.0,
    datum=None,
) -> dict:
    """Simulate IMU or GPS arrays (run_judge_batch layout, K=1 rows) from the truth."""
    from vepd_ros.models.geodesy import DEFAULT_DATUM
    from vepd_ros.models.sensors import simulate_sensors

    traj = truth_trajectory(truth, zero_ns)
    if role == 'imu':
        s = simulate_sensors(
            traj,
            'none',
            model,
            gps_rate_hz=gps_rate_hz,
            imu_rate_hz=imu_rate_hz,
            seed=seed,
            datum=datum or DEFAULT_DATUM,
        )
        st = zero_ns + ns_from_s(s.imu.t_s)
        return {
            'stamp_ns': st,
            'arrival_ns': st.copy(),
            **imu_fields(s.imu),
            'frame_id': 'base_link',
        }
    if role == 'gps':
        s = simulate_sensors(
            traj,
            model,
            'none',
            gps_rate_hz=gps_rate_hz,
            imu_rate_hz=imu_rate_hz,
            seed=seed,
            datum=datum or DEFAULT_DATUM,
        )
        return {
            'stamp_ns': zero_ns + ns_from_s(s.gps.stamp_s),
            'arrival_ns': zero_ns + ns_from_s(s.gps.publish_s),
            **fix_fields(s.gps, s.gps_lla),
            'frame_id': 'base_link',  # simulated at the truth: base_link's origin
        }
    raise ValueError(f"--replace {role}=...: role must be 'imu' or 'gps'")


# ------------------------------------------------------------------------------------------------
# judging
def judge_segment(
    imu: dict, gps: dict | None, ekf_config, navsat_config, static_tf=(), gravity_frame='imu'
):
    """
    Run the built-in judge over one segment's IMU and GPS (K = 1).

    The judge step of the study (``pipelines.judge_step.judge``) with one run. Returns (stamp_ns,
    vx, vy, dropped).
    """
    from vepd_ros.judge.navsat import StaticTF

    tf = StaticTF.parse(static_tf) if static_tf else None
    res = judge(
        _stream('imu', imu),
        _stream('fix', gps) if gps is not None and len(gps['stamp_ns']) else None,
        ekf_yaml=ekf_config,
        navsat_yaml=navsat_config,
        tf=tf,
        gravity_frame=gravity_frame,
    )
    st, vx, vy = res.velocity(0)
    return np.asarray(st, np.int64), np.asarray(vx, float), np.asarray(vy, float), res.dropped


def _stream(kind: str, d: dict):
    """Return one run's arrays (this module's dict layout) as a K = 1 ``Stream``."""
    return Stream(
        kind,
        d['stamp_ns'],
        d.get('arrival_ns'),
        d.get('frame_id', ''),
        fields={
            k: v[None]
            for k, v in d.items()
            if isinstance(v, np.ndarray) and k not in ('stamp_ns', 'arrival_ns')
        },
    )


def make_runs(
    streams: BagStreams,
    segments,
    *,
    estimate: str = 'judge',
    ekf_config=None,
    navsat_config=None,
    static_tf=(),
    gravity_frame: str = 'imu',
    replace: dict | None = None,
    seed: int = 0,
    label: str = 'real',
    j_start: dict | None = None,
    sim_rates: dict | None = None,
    meta: dict | None = None,
) -> list[BagRun]:
    """One ``BagRun`` per segment (nothing written)."""
    from vepd_ros.metrics.records import RunRecord
    from vepd_ros.seeding import derive_seed

    replace = dict(replace or {})
    rates = dict(sim_rates or {})
    out = []
    next_j = dict(j_start or {})
    for seg in segments:
        a, b = seg.start_ns, seg.end_ns
        imu, gps, odom = (cut_window(d, a, b) for d in (streams.imu, streams.gps, streams.odom))
        tr = streams.truth.window(a, b + 1, on='arrival')
        where = (
            f'{streams.path} [{(a - streams.start_ns) / NS:.2f}, '
            f'{(b - streams.start_ns) / NS:.2f}] s'
        )
        if len(tr) < 2:
            raise ValueError(f'{where}: fewer than 2 truth messages in the run')
        early = {}
        imu, early['imu'] = in_order(imu)
        gps, early['gps'] = in_order(gps)
        tr_ok = stamps_in_order(tr.stamp_ns, tr.arrival_ns)
        early['truth'] = int((~tr_ok).sum())
        firsts = [int(tr.stamp_ns[tr_ok].min())] + [
            int(d['stamp_ns'].min()) for d in (imu, gps) if d is not None and len(d['stamp_ns'])
        ]
        zero = min(firsts)
        j = next_j.get(seg.scenario, 1)
        next_j[seg.scenario] = j + 1
        m = dict(meta or {})
        if estimate == 'recorded':
            if odom is None or not len(odom['stamp_ns']):
                raise ValueError(f'{where}: no recorded odometry messages in the run')
            st, vx, vy, dropped = odom['stamp_ns'], odom['vx'], odom['vy'], {}
        else:
            for role, model in replace.items():
                sd = derive_seed(seed, role, label, seg.scenario, j)
                datum = None
                if role == 'gps' and gps is not None and len(gps['latitude']):
                    datum = (
                        float(gps['latitude'][0]),
                        float(gps['longitude'][0]),
                        float(gps['altitude'][0]),
                    )
                sim = simulate_replacement(
                    tr,
                    zero,
                    role,
                    model,
                    sd,
                    imu_rate_hz=rates.get('imu', 100.0),
                    gps_rate_hz=rates.get('gps', 10.0),
                    datum=datum,
                )
                if role == 'imu':
                    imu = sim
                else:
                    gps = sim
                m.setdefault('replaced', {})[role] = {'model': model, 'seed': sd}
            if imu is None or not len(imu['stamp_ns']):
                raise ValueError(f'{where}: no IMU messages in the run')
            from vepd_ros.judge.rl_graph import FixFrameError, SpanError

            try:
                st, vx, vy, dropped = judge_segment(
                    imu, gps, ekf_config, navsat_config, static_tf, gravity_frame
                )
            except FixFrameError as exc:
                fix_topic = streams.topics.get('gps') or 'the NavSatFix topic'
                raise ValueError(f'{where}: {fix_topic}: {exc}') from None
            except SpanError as exc:
                late = max(
                    (
                        (role, int(np.max(d['stamp_ns'])))
                        for role, d in (('imu', imu), ('gps', gps))
                        if d is not None and len(d['stamp_ns'])
                    ),
                    key=lambda x: x[1],
                )
                raise ValueError(
                    f'{where}: {exc}; latest stamp: {late[0]} topic at {late[1] / 1e9:.6g} s'
                ) from None
            if len(st) < 2 or not (np.isfinite(vx).all() and np.isfinite(vy).all()):
                from vepd_ros.judge.rl_graph import explain_no_estimate

                what = f'{len(st)} estimate(s)' if len(st) < 2 else 'a non-finite estimate'
                raise ValueError(f'{where}: the judge gave {what}; {explain_no_estimate(dropped)}')
        dropped = dict(dropped)
        for role, n in early.items():
            if n:
                dropped[f'{role}: stamp out of order or far from its arrival time'] = n
        se_t = (st - zero) / 1e9
        gt_keep = (tr.stamp_ns >= zero) & tr_ok
        sane = np.abs(tr.speed) <= MAX_TRUTH_SPEED_MPS  # False for NaN
        if tr.has_body:
            sane &= (np.abs(tr.vx) <= MAX_TRUTH_SPEED_MPS) & (np.abs(tr.vy) <= MAX_TRUTH_SPEED_MPS)
        if not sane[gt_keep].all():
            dropped[f'truth: speed not finite or beyond {MAX_TRUTH_SPEED_MPS:g} m/s'] = int(
                (~sane[gt_keep]).sum()
            )
            gt_keep &= sane
        gt_t = (tr.stamp_ns[gt_keep] - zero) / 1e9
        if tr.has_body:
            rec = RunRecord.from_components(se_t, vx, vy, gt_t, tr.vx[gt_keep], tr.vy[gt_keep])
        else:
            rec = RunRecord(
                np.asarray(se_t, float),
                np.hypot(vx, vy),
                np.asarray(gt_t, float),
                tr.speed[gt_keep],
                np.asarray(vx, float),
                np.asarray(vy, float),
                None,
                None,
            )
        m.update(
            {
                'source': 'vepd bag',
                'bag': str(streams.path),
                'topics': streams.topics,
                'truth_type': tr.msgtype,
                'truth_frame': tr.frame,
                'estimate': estimate,
                'segment': {
                    'start_ns': int(a),
                    'end_ns': int(b),
                    'zero_stamp_ns': int(zero),
                    'start_s_from_bag_start': (a - streams.start_ns) / NS,
                    'duration_s': (b - a) / NS,
                },
                'message_counts': {
                    'imu': 0 if imu is None else int(len(imu['stamp_ns'])),
                    'gps': 0 if gps is None else int(len(gps['stamp_ns'])),
                    'truth': int(len(gt_t)),
                    'estimate': int(len(se_t)),
                },
                'dropped': {str(k): v for k, v in dict(dropped).items()}
                if isinstance(dropped, dict)
                else dropped,
                'j': j,
            }
        )
        out.append(BagRun(rec, seg.scenario, m))
    return out
