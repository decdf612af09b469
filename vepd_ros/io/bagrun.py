# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Bag → runs: the core of ``vepd bag`` (no rclpy).

For each bag: read the selected topics once in arrival order (``io.bags``), turn the truth topic
into a ``TruthStream`` (``io.ins``), cut the recording into segments (``io.split``), and for each
segment run the built-in judge (``judge.graph.run_judge_batch``: navsat_transform + ekf,
robot_localization's own YAML) over the segment's GPS and IMU — exactly the call the offline study
makes — or take the bag's own /odometry/filtered (``estimate='recorded'``). Each segment becomes a
``RunRecord``:

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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
from vepd_ros.io import split as splitmod
from vepd_ros.io.bags import (
    Bag,
    BagError,
    flat_imu_from_message,
    flat_navsatfix_from_message,
    stamp_ns,
)
from vepd_ros.io.ins import (
    is_truth_type,
    normalize_type,
    truth_from_messages,
    TruthOptions,
    TruthStream,
)
from vepd_ros.io.profiles import merge_imu, Profile
from vepd_ros.perf import gc_paused

NS = 1_000_000_000
IMU_TYPE = 'sensor_msgs/msg/Imu'
FIX_TYPE = 'sensor_msgs/msg/NavSatFix'
ODOM_TYPE = 'nav_msgs/msg/Odometry'


@dataclass
class SplitSpec:
    mode: str = 'whole'  # whole | ranges | stationary
    ranges_file: str | None = None
    time_base: str | None = None
    threshold: float = 0.05
    min_gap_s: float = 2.0
    min_run_s: float = 3.0
    pad_s: float = 1.0
    scenarios: Sequence[str] | None = None  # stationary: labels in run order


@dataclass
class BagStreams:
    """A bag's selected topics as arrays (all in arrival order)."""

    path: Path
    imu: dict | None
    gps: dict | None
    truth: TruthStream
    odom: dict | None
    start_ns: int
    end_ns: int
    counts: dict = field(default_factory=dict)
    topics: dict = field(default_factory=dict)


@dataclass
class BagRun:
    record: object  # vepd_ros.runs.format.RunRecord
    scenario: str
    meta: dict


# ------------------------------------------------------------------------------------------------
# reading
def _first_frame(flats) -> str:
    return next((f[1] for f in flats if f[1]), '')


def _imu_arrays(items) -> dict:
    """[(arrival_ns, Imu message or its flat tuple)] → arrays."""
    n = len(items)
    flats = [m if type(m) is tuple else flat_imu_from_message(m) for _, m in items]
    v = np.array([f[2] for f in flats], float).reshape(n, 37)
    c = np.ascontiguousarray
    return {
        'stamp_ns': np.array([f[0] for f in flats], np.int64).reshape(n),
        'arrival_ns': np.array([t for t, _ in items], np.int64).reshape(n),
        'angular_velocity': c(v[:, 13:16]),
        'linear_acceleration': c(v[:, 25:28]),
        'orientation': c(v[:, 0:4]),
        'orientation_covariance': c(v[:, 4:13]),
        'angular_velocity_covariance': c(v[:, 16:25]),
        'linear_acceleration_covariance': c(v[:, 28:37]),
        'frame_id': _first_frame(flats),
    }


def _gps_arrays(items) -> dict:
    """[(arrival_ns, NavSatFix message or its flat tuple)] → arrays."""
    n = len(items)
    flats = [m if type(m) is tuple else flat_navsatfix_from_message(m) for _, m in items]
    lla = np.array([f[4:7] for f in flats], float).reshape(n, 3)
    return {
        'stamp_ns': np.array([f[0] for f in flats], np.int64).reshape(n),
        'arrival_ns': np.array([t for t, _ in items], np.int64).reshape(n),
        'latitude': lla[:, 0].copy(),
        'longitude': lla[:, 1].copy(),
        'altitude': lla[:, 2].copy(),
        'position_covariance': np.array([f[7] for f in flats], float).reshape(n, 9),
        'status': np.array([f[2] for f in flats], np.int64).reshape(n),
        'frame_id': _first_frame(flats),
    }


def _odom_arrays(items) -> dict:
    n = len(items)
    st, arr, v = np.empty(n, np.int64), np.empty(n, np.int64), np.empty((n, 2))
    for i, (t, m) in enumerate(items):
        arr[i] = t
        st[i] = stamp_ns(m)
        lin = m.twist.twist.linear
        v[i] = (lin.x, lin.y)
    return {'stamp_ns': st, 'arrival_ns': arr, 'vx': v[:, 0], 'vy': v[:, 1]}


MAX_TRUTH_SPEED_MPS = 1e3
"""Truth samples faster than this (or not finite) are dropped and counted, never scored."""
MAX_STAMP_SKEW_S = 1.0
"""A message whose header stamp is off the stream's typical stamp − arrival offset by more than
this, or older than the newest stamp kept before it, is dropped and counted (it would otherwise
move a run's zero or be dropped uncounted by the judge's per-topic guard)."""


def _stamps_in_order(stamp_ns, arrival_ns) -> np.ndarray:
    """
    Return the mask of the messages kept.

    Kept: stamp − arrival within ``MAX_STAMP_SKEW_S`` of the median offset, and stamps
    non-decreasing in arrival order (after the skew cut).
    """
    st = np.asarray(stamp_ns, np.int64)
    if st.size == 0:
        return np.ones(0, bool)
    off = st - np.asarray(arrival_ns, np.int64)
    ok = np.abs(off - np.median(off)) <= MAX_STAMP_SKEW_S * NS
    idx = np.flatnonzero(ok)
    if idx.size:
        kept = st[idx]
        ok[idx] = kept >= np.maximum.accumulate(kept)
    return ok


def _in_order(d: dict | None) -> tuple:
    """(``d`` without out-of-order messages, how many were dropped)."""
    if d is None or not len(d['stamp_ns']):
        return d, 0
    ok = _stamps_in_order(d['stamp_ns'], d['arrival_ns'])
    if ok.all():
        return d, 0

    def cut(v):
        return v[ok] if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == ok.size else v

    return {k: cut(v) for k, v in d.items()}, int((~ok).sum())


def _expect(bag: Bag, topic: str, role: str, types: Sequence[str]) -> str:
    have = normalize_type(bag.msgtype(topic))
    if have not in types:
        raise BagError(
            f'{bag.path}: topic {topic} ({role}) is {have}, expected {" or ".join(types)}',
            bag.path,
            topic,
            have,
        )
    return have


@gc_paused()
def read_bag_streams(
    path,
    profile: Profile,
    *,
    need_sensors: bool = True,
    need_odom: bool = False,
    truth_options: TruthOptions | None = None,
) -> BagStreams:
    """
    Read a bag's gps/imu/truth(/odom) topics in one arrival-ordered pass.

    The garbage collector is paused meanwhile (``perf.gc_paused``).
    """
    topics = {'truth': profile.topic('truth')}
    if not topics['truth']:
        raise ValueError(f'profile {profile.name}: no truth topic; give --topic truth=/name')
    imu_topics = profile.imu_topics()
    if need_sensors:
        if not profile.topic('gps'):
            raise ValueError(f'profile {profile.name}: no gps topic; give --topic gps=/name')
        if not imu_topics:
            raise ValueError(f'profile {profile.name}: no imu topic; give --topic imu=/name')
    with Bag(path) as bag:
        # check every topic and type before reading anything
        ttype = normalize_type(bag.msgtype(topics['truth']))
        if not is_truth_type(ttype):
            raise BagError(
                f'{bag.path}: truth topic {topics["truth"]} is {ttype}, which has no ground-truth '
                f'adapter',
                bag.path,
                topics['truth'],
                ttype,
            )
        sel = [topics['truth']]
        if profile.topic('gps') and (need_sensors or bag.has_topic(profile.topic('gps'))):
            topics['gps'] = profile.topic('gps')
            _expect(bag, topics['gps'], 'gps', [FIX_TYPE])
            sel.append(topics['gps'])
        if imu_topics and (need_sensors or all(bag.has_topic(t) for t in imu_topics)):
            for t in imu_topics:
                _expect(bag, t, 'imu', [IMU_TYPE])
            sel += imu_topics
            topics['imu'] = imu_topics[0] if len(imu_topics) == 1 else imu_topics
        if need_odom:
            if not profile.topic('odom'):
                raise ValueError(f'profile {profile.name}: no odom topic; give --topic odom=/name')
            topics['odom'] = profile.topic('odom')
            _expect(bag, topics['odom'], 'odom', [ODOM_TYPE])
            sel.append(topics['odom'])
        bag.typestore(sel)  # unknown types fail here, before reading
        per = {t: [] for t in sel}
        flat = [topics['gps']] if 'gps' in topics else []
        if (
            'imu' in topics and len(imu_topics) == 1
        ):  # a merged accel + gyro pair needs the objects
            flat.append(imu_topics[0])
        for t_ns, topic, _, msg in bag.messages(sel, flat=flat):
            per[topic].append((t_ns, msg))
    if not per[topics['truth']]:
        raise BagError(
            f'{path}: truth topic {topics["truth"]} has no messages', path, topics['truth']
        )
    imu = gps = odom = None
    if 'imu' in topics:
        items = (
            per[imu_topics[0]]
            if len(imu_topics) == 1
            else merge_imu(per[imu_topics[0]], per[imu_topics[1]])
        )
        imu = _imu_arrays(items)
        if need_sensors and not items:
            raise BagError(
                f'{path}: imu topic {imu_topics[0]} has no messages', path, imu_topics[0]
            )
    if 'gps' in topics:
        gps = _gps_arrays(per[topics['gps']])
        if need_sensors and not per[topics['gps']]:
            raise BagError(
                f'{path}: gps topic {topics["gps"]} has no messages', path, topics['gps']
            )
    if need_odom:
        odom = _odom_arrays(per[topics['odom']])
    truth = truth_from_messages(per[topics['truth']], ttype, truth_options)
    arrivals = [truth.arrival_ns] + [
        d['arrival_ns'] for d in (imu, gps) if d is not None and len(d['arrival_ns'])
    ]
    allarr = np.concatenate(arrivals)
    counts = {t: len(v) for t, v in per.items()}
    return BagStreams(
        Path(path), imu, gps, truth, odom, int(allarr.min()), int(allarr.max()), counts, topics
    )


# ------------------------------------------------------------------------------------------------
# segments
def segments_for(streams: BagStreams, spec: SplitSpec, scenario: str) -> list:
    if spec.mode == 'whole':
        return splitmod.whole(streams.start_ns, streams.end_ns, scenario)
    if spec.mode == 'ranges':
        if not spec.ranges_file:
            raise ValueError('--split ranges needs --ranges FILE')
        return splitmod.read_ranges(
            spec.ranges_file,
            bag_start_ns=streams.start_ns,
            default_scenario=scenario,
            time_base=spec.time_base,
        )
    if spec.mode == 'stationary':
        tr = streams.truth
        segs = splitmod.split_stationary(
            tr.arrival_ns,
            tr.speed,
            threshold=spec.threshold,
            min_gap_s=spec.min_gap_s,
            min_run_s=spec.min_run_s,
            pad_s=spec.pad_s,
            scenarios=list(spec.scenarios) if spec.scenarios else scenario,
        )
        if not segs:
            raise ValueError(
                f'{streams.path}: no motion found between standstills (truth speed never above '
                f'{spec.threshold} m/s for {spec.min_run_s} s)'
            )
        return segs
    raise ValueError(f"split mode {spec.mode!r}: expected 'whole', 'ranges' or 'stationary'")


def _cut(d: dict | None, a: int, b: int) -> dict | None:
    if d is None:
        return None
    m = (d['arrival_ns'] >= a) & (d['arrival_ns'] <= b)
    return {
        k: (v[m] if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == m.size else v)
        for k, v in d.items()
    }


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
        i = s.imu
        st = zero_ns + np.round(i.t_s * NS).astype(np.int64)
        return {
            'stamp_ns': st,
            'arrival_ns': st.copy(),
            'angular_velocity': i.angular_velocity,
            'linear_acceleration': i.linear_acceleration,
            'orientation': i.orientation,
            'orientation_covariance': i.orientation_covariance.reshape(-1, 9),
            'angular_velocity_covariance': i.angular_velocity_covariance.reshape(-1, 9),
            'linear_acceleration_covariance': i.linear_acceleration_covariance.reshape(-1, 9),
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
        g = s.gps
        lla = np.asarray(s.gps_lla, float).copy()
        lla[~np.asarray(g.published, bool)] = np.nan
        return {
            'stamp_ns': zero_ns + np.round(g.stamp_s * NS).astype(np.int64),
            'arrival_ns': zero_ns + np.round(g.publish_s * NS).astype(np.int64),
            'latitude': lla[:, 0],
            'longitude': lla[:, 1],
            'altitude': lla[:, 2],
            'position_covariance': g.covariance_enu.reshape(-1, 9),
            'status': np.asarray(g.status),
            'frame_id': 'gps',
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
    from vepd_ros.pipelines.judge_step import judge

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
    from vepd_ros.streams import Stream

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
    from vepd_ros.runs.format import RunRecord
    from vepd_ros.seeding import derive_seed

    replace = dict(replace or {})
    rates = dict(sim_rates or {})
    out = []
    next_j = dict(j_start or {})
    for seg in segments:
        a, b = seg.start_ns, seg.end_ns
        imu, gps, odom = _cut(streams.imu, a, b), _cut(streams.gps, a, b), _cut(streams.odom, a, b)
        tr = streams.truth.window(a, b + 1, on='arrival')
        where = (
            f'{streams.path} [{(a - streams.start_ns) / NS:.2f}, '
            f'{(b - streams.start_ns) / NS:.2f}] s'
        )
        if len(tr) < 2:
            raise ValueError(f'{where}: fewer than 2 truth messages in the run')
        early = {}
        imu, early['imu'] = _in_order(imu)
        gps, early['gps'] = _in_order(gps)
        tr_ok = _stamps_in_order(tr.stamp_ns, tr.arrival_ns)
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
            from vepd_ros.judge.graph import SpanError

            try:
                st, vx, vy, dropped = judge_segment(
                    imu, gps, ekf_config, navsat_config, static_tf, gravity_frame
                )
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
                from vepd_ros.judge.graph import explain_no_estimate

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
