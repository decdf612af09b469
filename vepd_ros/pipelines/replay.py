# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd judge replay``: recorded messages through a judge, /odometry/filtered out as CSV.

    vepd judge replay --ekf-config YAML [--navsat-config YAML] INPUT --out CSV
                      [--static-tf "parent child x y z roll pitch yaw"]... [--remap FROM:=TO]...
                      [--gps-topic TOPIC] [--navsat-imu-topic TOPIC] [--judge builtin|bicycle]

INPUT is a bag — ROS 1 (``.bag``) or ROS 2 (directory with metadata.yaml, ``.db3``/``.mcap``), read
with rosbags — or a directory of raw CSVs (``raw_<sensor>.csv`` per EKF sensor name, e.g.
raw_imu0.csv, in the rl_golden layout; ``raw_fix.csv`` for NavSatFix with columns stamp_ns,
arrival_ns, frame_id, status, latitude, longitude, altitude, pcov0..pcov8).

In a bag the **record time is the arrival** and header.stamp the measurement time; messages are
delivered in arrival order, with the timing model of ``judge.rl_graph`` (each node's timer at
its frequency, started at the first arrival; zero latency). EKF inputs are matched to the config's
``odomN/poseN/twistN/imuN`` topics (leading '/' ignored; ``--remap`` renames bag topics first).
With ``--navsat-config`` the NavSatFix topic (``--gps-topic``, default: the only NavSatFix topic)
goes through navsat_transform and its odometry/gps to the EKF sensor whose topic is odometry/gps;
the navsat ``imu`` input is ``--navsat-imu-topic`` (default: the EKF's imu0 topic —
robot_localization's ROS 2 code subscribes ``imu``, remap it to your IMU topic).

Static transforms (``--static-tf``, repeatable; radians, fixed-axis roll pitch yaw or a quaternion
qx qy qz qw) stand in for /tf_static. Note ROS 1 ``static_transform_publisher`` takes x y z **yaw
pitch roll**: robot_localization's test1.bag transform ``0 -0.3 0.52 -1.570796327 0 1.570796327
base_link imu_link`` is ``--static-tf "base_link imu_link 0 -0.3 0.52 1.570796327 0 -1.570796327"``
here.

Output CSV, one row per published /odometry/filtered message: tick_ns (publication time), stamp_ns,
frame_id, child_frame_id, x y z, qx qy qz qw, roll pitch yaw, vx vy vz vroll vpitch vyaw (body
frame), speed = hypot(vx, vy), and the variances var_<state> of the 15 states.

Here, in order: the readers (``read_bag``, ``read_csv_dir``, ``load_inputs``: {topic (no leading
'/'): ``TopicArrays``} in arrival order), each judge's replay (``replay_builtin``: ekf + navsat
through ``judge.rl_graph.run_graph``; ``replay_bicycle``: ``judge.bicycle.run_bicycle_batch``),
``replay`` (the judge by name, ``REPLAYS``) and the command (options, the CSV written).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field, fields
import math
from pathlib import Path

import numpy as np
from vepd_ros.frames import quaternion_from_rpy
from vepd_ros.judge.ekf import STATE_NAMES
from vepd_ros.streams import topic_key


# ----------------------------------------------------------------------------------------------
# reading
@dataclass
class TopicArrays:
    """
    All messages of one topic as arrays, sorted by arrival.

    ``cols``: stamp_ns, arrival_ns and the fields of the ``streams.Stream`` of that kind, under the
    schema's names (no run axis): imu and fix as ``io.bagrun`` reads them for ``vepd bag``; odom,
    pose and twist the parts of an odom stream their message carries.
    """

    kind: str  # imu | odom | pose | twist | fix
    frame_id: str = ''
    child_frame_id: str = ''
    cols: dict = field(default_factory=dict)  # name -> array (n, ...)

    @property
    def n(self) -> int:
        return int(self.cols['arrival_ns'].size)


def _kind(msgtype: str) -> str | None:
    t = msgtype.replace('/msg/', '/')
    return {
        'sensor_msgs/Imu': 'imu',
        'nav_msgs/Odometry': 'odom',
        'sensor_msgs/NavSatFix': 'fix',
        'geometry_msgs/PoseWithCovarianceStamped': 'pose',
        'geometry_msgs/TwistWithCovarianceStamped': 'twist',
    }.get(t)


def _xyz(v):
    return (float(v.x), float(v.y), float(v.z))


def _odom_row(kind, m) -> dict:
    """Return the odom-stream fields an Odometry, PoseWithCovariance(Stamped) or Twist(...) has."""
    r = {}
    if kind != 'twist':
        o = m.pose.pose.orientation
        r.update(
            position=_xyz(m.pose.pose.position),
            orientation=(o.x, o.y, o.z, o.w),
            pose_covariance=np.asarray(m.pose.covariance, float),
        )
    if kind != 'pose':
        r.update(
            linear=_xyz(m.twist.twist.linear),
            angular=_xyz(m.twist.twist.angular),
            twist_covariance=np.asarray(m.twist.covariance, float),
        )
    return r


def _odom_arrays(kind, items) -> dict:
    """[(arrival_ns, message)] of an odom/pose/twist topic → arrays (with frame_id, child)."""
    from vepd_ros.io.bags import stamp_ns

    rs = [_odom_row(kind, m) for _, m in items]
    cols = {k: np.array([r[k] for r in rs]) for k in rs[0]}
    cols['stamp_ns'] = np.array([stamp_ns(m) for _, m in items])
    cols['arrival_ns'] = np.array([t for t, _ in items])
    m0 = items[0][1]
    cols['frame_id'] = m0.header.frame_id
    cols['child_frame_id'] = getattr(m0, 'child_frame_id', '')
    return cols


def read_bag(path: Path, topics: set | None = None, remap: dict | None = None) -> dict:
    """
    Return {topic (no leading '/'): TopicArrays} of the supported message types in a ROS 1/2 bag.

    Read with the one bag reader (``io.bags``): a bag that cannot be read (missing, truncated,
    corrupt, unknown type) is its ``BagError`` naming the file, as in ``vepd bag``. Imu and
    NavSatFix topics are decoded flat where the bag allows it and converted by ``io.bagrun`` as
    in ``vepd bag``.
    """
    from vepd_ros.io.bagrun import fix_arrays, imu_arrays
    from vepd_ros.io.bags import open_bag

    remap = remap or {}
    items: dict = {}  # name after remapping -> (kind, [(arrival_ns, message or flat tuple)])
    with open_bag(path) as bag:
        wanted = {}  # bag topic -> (kind, name after remapping)
        for info in bag.info().topics:
            kind = _kind(info.msgtype)
            name = remap.get(topic_key(info.name), topic_key(info.name))
            if kind is not None and (topics is None or name in topics):
                wanted[info.name] = (kind, name)
        flat = [t for t, (kind, _) in wanted.items() if kind in ('imu', 'fix')]
        for t_ns, topic, _, m in bag.messages(wanted, flat=flat):
            kind, name = wanted[topic]
            items.setdefault(name, (kind, []))[1].append((int(t_ns), m))
    out = {}
    for name, (kind, its) in items.items():
        convert = {'imu': imu_arrays, 'fix': fix_arrays}.get(kind)
        cols = convert(its) if convert else _odom_arrays(kind, its)
        frame, child = cols.pop('frame_id'), cols.pop('child_frame_id', '')
        order = np.argsort(cols['arrival_ns'], kind='stable')
        out[name] = TopicArrays(kind, frame, child, {k: v[order] for k, v in cols.items()})
    return out


def read_csv_dir(path: Path, params) -> dict:
    """
    Read a directory of rl_golden raw CSV files.

    raw_<sensor>.csv (rl_golden layout) → {topic: TopicArrays}; raw_fix.csv → 'fix' (NavSatFix).
    """
    from vepd_ros.judge.golden import read_csv

    out = {}

    def cols(d, names, n, default=0.0):
        for c in names:
            if c in d and d[c].dtype == object:
                raise ValueError(
                    f'{path}: column {c} of a raw CSV has text where numbers are expected'
                )
        return np.stack([d[c] if c in d else np.full(n, default) for c in names], axis=-1)

    def need_stamps(d, f):
        if 'stamp_ns' not in d:
            raise ValueError(f'{f}: no stamp_ns column (expected the rl_golden raw CSV layout)')

    for s in params.sensors:
        f = path / f'raw_{s.name}.csv'
        if not f.exists():
            continue
        d = read_csv(f)
        need_stamps(d, f)
        n = d['stamp_ns'].size
        arr = d.get('arrival_ns', d['stamp_ns'])
        c = {'stamp_ns': d['stamp_ns'], 'arrival_ns': arr}
        if s.kind == 'imu':
            c.update(
                orientation=cols(d, ['qx', 'qy', 'qz', 'qw'], n),
                angular_velocity=cols(d, ['wx', 'wy', 'wz'], n),
                linear_acceleration=cols(d, ['ax', 'ay', 'az'], n),
                orientation_covariance=cols(d, [f'ocov{i}' for i in range(9)], n),
                angular_velocity_covariance=cols(d, [f'wcov{i}' for i in range(9)], n),
                linear_acceleration_covariance=cols(d, [f'acov{i}' for i in range(9)], n),
            )
        else:
            q = cols(d, ['qx', 'qy', 'qz', 'qw'], n)
            if 'qw' not in d:
                q[:, 3] = 1.0
            c.update(
                position=cols(d, ['x', 'y', 'z'], n),
                orientation=q,
                pose_covariance=cols(d, [f'pcov{i}' for i in range(36)], n),
                linear=cols(d, ['vx', 'vy', 'vz'], n),
                angular=cols(d, ['wx', 'wy', 'wz'], n),
                twist_covariance=cols(d, [f'tcov{i}' for i in range(36)], n),
            )
        order = np.lexsort((d['seq'] if 'seq' in d else np.arange(n), arr))
        frame = str(d['frame_id'][0]) if 'frame_id' in d else ''
        child = str(d['child_frame_id'][0]) if 'child_frame_id' in d else ''
        out[topic_key(s.topic)] = TopicArrays(
            s.kind, frame, child, {k: v[order] for k, v in c.items()}
        )
    f = path / 'raw_fix.csv'
    if f.exists():
        d = read_csv(f)
        need_stamps(d, f)
        for c in ('latitude', 'longitude', 'altitude'):
            if c not in d or d[c].dtype == object:
                raise ValueError(f'{f}: expected a numeric {c} column')
        n = d['stamp_ns'].size
        arr = d.get('arrival_ns', d['stamp_ns'])
        order = np.argsort(arr, kind='stable')
        c = {
            'stamp_ns': d['stamp_ns'],
            'arrival_ns': arr,
            'latitude': d['latitude'],
            'longitude': d['longitude'],
            'altitude': d['altitude'],
            'status': d['status'] if 'status' in d else np.zeros(n, np.int64),
            'position_covariance': cols(d, [f'pcov{i}' for i in range(9)], n),
        }
        out['fix'] = TopicArrays(
            'fix',
            str(d['frame_id'][0]) if 'frame_id' in d else 'gps',
            '',
            {k: np.asarray(v)[order] for k, v in c.items()},
        )
    return out


# ----------------------------------------------------------------------------------------------
# running
def load_inputs(inp, remap, ekf_params) -> dict:
    """
    Read INPUT, a bag or a directory of rl_golden raw CSVs, as {topic: ``TopicArrays``}.

    ``remap``: ``FROM:=TO`` items renaming bag topics (``--remap``); ``ekf_params``: a function
    returning the EKF parameters whose sensors name the ``raw_<sensor>.csv`` files (called only
    for a CSV directory: the bicycle judge needs no ekf_filter_node section for a bag).
    """
    inp = Path(inp)
    if not inp.exists():
        raise FileNotFoundError(f'{inp}: no such bag or directory')
    rm = {}
    for item in remap or ():
        if ':=' not in item:
            raise ValueError(f'--remap {item!r}: expected FROM:=TO')
        a, b = item.split(':=', 1)
        rm[topic_key(a)] = topic_key(b)
    is_csv_dir = (
        inp.is_dir() and any(inp.glob('raw_*.csv')) and not (inp / 'metadata.yaml').exists()
    )
    return read_csv_dir(inp, ekf_params()) if is_csv_dir else read_bag(inp, remap=rm)


@dataclass(frozen=True)
class ReplayOptions:
    """The options of ``vepd judge replay`` a judge's replay takes (the module doc says each)."""

    navsat_config: str | None = None
    static_tf: tuple = ()
    remap: tuple = ()
    gps_topic: str | None = None
    navsat_imu_topic: str | None = None
    ekf_node_name: str | None = None
    gravity_frame: str = 'imu'


def _fix_topic(data: dict, gps_topic) -> tuple:
    """Return (the NavSatFix topic: ``gps_topic`` or else the only one, None if absent; all)."""
    fixes = [t for t, ta in data.items() if ta.kind == 'fix']
    gt = topic_key(gps_topic) if gps_topic else (fixes[0] if len(fixes) == 1 else None)
    return (gt if gt in data else None), fixes


_IMU = (
    'orientation',
    'angular_velocity',
    'linear_acceleration',
    'orientation_covariance',
    'angular_velocity_covariance',
    'linear_acceleration_covariance',
)
_POSE = ('position', 'orientation', 'pose_covariance')
_TWIST = ('linear', 'angular', 'twist_covariance')
_BUILDER_INPUTS = {
    'imu': ('imu_arrays', _IMU),
    'odom': ('odometry_arrays', _POSE + _TWIST),
    'pose': ('pose_arrays', _POSE),
    'twist': ('twist_arrays', _TWIST),
}
"""Each EKF input kind: its ``judge.measurements.MeasurementBuilder`` method, the fields taken."""


_FIX = ('latitude', 'longitude', 'altitude', 'position_covariance', 'status')
"""The fix-stream fields, in the order ``judge.rl_graph.NavsatInputs`` takes them."""


def _one_run(cols: dict, fields) -> dict:
    """Return stamp_ns, arrival_ns and ``fields`` of ``cols`` as a one-run stream (run axis 1)."""
    return {
        'stamp_ns': cols['stamp_ns'],
        'arrival_ns': cols['arrival_ns'],
        **{k: cols[k][None] for k in fields},
    }


def replay_builtin(ekf_config, inp, opts: ReplayOptions) -> dict:
    """Replay INPUT through the builtin judge (ekf + navsat, ``judge.rl_graph.run_graph``)."""
    from vepd_ros.judge.rl_graph import (
        GPS_ODOM_TOPIC,
        imu_gravity_removal,
        JudgeParams,
        load_judge_params,
        NavsatInputs,
        run_graph,
        with_sensors,
    )
    from vepd_ros.judge.measurements import MeasurementBuilder
    from vepd_ros.judge.navsat import load_navsat_params, StaticTF

    jp = load_judge_params(
        Path(ekf_config) if not hasattr(ekf_config, 'ekf') else ekf_config, opts.ekf_node_name
    )
    p = jp.ekf
    tf = StaticTF.parse(opts.static_tf)
    data = load_inputs(inp, opts.remap, lambda: p)
    nparams = load_navsat_params(opts.navsat_config) if opts.navsat_config else None
    sensors, acc = [], {}
    for s in p.sensors:
        ta = data.get(topic_key(s.topic))
        if s.kind == 'imu' and ta is not None and ta.kind == 'imu':
            c = ta.cols
            s, acc[s.name] = imu_gravity_removal(
                p,
                tf,
                s,
                ta.frame_id,
                c['orientation'],
                c['linear_acceleration'],
                c['orientation_covariance'],
                opts.gravity_frame,
            )
        sensors.append(s)
    p = with_sensors(p, sensors)
    jp = JudgeParams(p, jp.control)
    builder = MeasurementBuilder(p, tf)
    series, used, arrivals = [], [], []
    for s in p.sensors:
        name = topic_key(s.topic)
        if nparams is not None and s.kind == 'odom' and name == GPS_ODOM_TOPIC:
            continue  # produced by navsat in the loop
        ta = data.get(name)
        if ta is None:
            have = ', '.join('/' + t for t in sorted(data)) or 'none'
            if s.kind == 'odom' and name == GPS_ODOM_TOPIC:
                raise ValueError(
                    f'{inp}: no messages on {s.topic} ({s.name} of {ekf_config}): '
                    f'navsat_transform makes that '
                    f'topic from the NavSatFix topic; pass --navsat-config YAML (e.g. '
                    f'config/navsat.yaml; '
                    f'--gps-topic if several NavSatFix topics). Topics in the input: {have}'
                )
            raise ValueError(
                f'{inp}: no messages on {s.topic} ({s.name} of {ekf_config}); '
                f'topics in the '
                f'input: {have} (rename one with --remap FROM:={s.topic})'
            )
        if ta.kind != s.kind:
            raise ValueError(
                f'{s.name}: topic {s.topic} carries {ta.kind} messages, expected {s.kind}'
            )
        c = dict(ta.cols)
        if s.kind == 'imu':
            c['linear_acceleration'] = acc[s.name]  # gravity removed as configured
        method, names = _BUILDER_INPUTS[s.kind]
        used.append(name)
        arrivals.append(c['arrival_ns'])
        series += getattr(builder, method)(
            s,
            c['stamp_ns'],
            *(c[k] for k in names),
            frame_id=ta.frame_id,
            arrivals=c['arrival_ns'],
            **({'child_frame_id': ta.child_frame_id} if s.kind == 'odom' else {}),
        )
    nav_in = None
    if nparams is not None:
        gt, fixes = _fix_topic(data, opts.gps_topic)
        if gt is None:
            raise ValueError(
                f'--navsat-config given but no NavSatFix topic chosen (found: {fixes or "none"}); '
                'use --gps-topic'
            )
        f = data[gt].cols
        used.append(gt)
        arrivals.append(f['arrival_ns'])
        it = (
            topic_key(opts.navsat_imu_topic)
            if opts.navsat_imu_topic
            else next((topic_key(s.topic) for s in p.sensors if s.kind == 'imu'), None)
        )
        imu = data.get(it) if it else None
        nav_in = NavsatInputs(
            f['arrival_ns'],
            f['stamp_ns'],
            *(f[k][None] for k in _FIX),
            data[gt].frame_id or '',
            imu_arrival_ns=imu.cols['arrival_ns'] if imu else np.zeros(0, np.int64),
            imu_stamp_ns=imu.cols['stamp_ns'] if imu else np.zeros(0, np.int64),
            imu_quat=imu.cols['orientation'][None] if imu else np.zeros((1, 0, 4)),
            imu_frame=imu.frame_id if imu else 'imu',
        )
    if not arrivals:
        raise ValueError(
            f'{inp}: none of the configured topics has messages '
            f'(config: {", ".join(s.topic for s in p.sensors)}; input: {", ".join(sorted(data))})'
        )
    allarr = np.concatenate(arrivals)
    from vepd_ros.judge.rl_graph import FixFrameError, SpanError

    try:
        res = run_graph(
            jp,
            series,
            1,
            nparams,
            nav_in,
            tf,
            builder,
            t_start_ns=int(allarr.min()),
            t_end_ns=int(allarr.max()),
        )
    except FixFrameError as exc:
        raise ValueError(f'{inp}: {gt}: {exc}') from None
    except SpanError as exc:
        spans = {
            t: (int(ta.cols['arrival_ns'].min()), int(ta.cols['arrival_ns'].max()))
            for t, ta in data.items()
            if t in used and ta.cols['arrival_ns'].size
        }
        raise ValueError(
            f'{inp}: {exc}; topic spans (s): '
            + ', '.join(f'{t} [{a / 1e9:.6g}, {b / 1e9:.6g}]' for t, (a, b) in spans.items())
        ) from None
    out = res.as_dict()
    out.update(
        frame_id=p.world_frame,
        child_frame_id=p.base_link_frame_output,
        used_topics=used,
        dropped=res.dropped,
    )
    return out


def replay_bicycle(ekf_config, inp, opts: ReplayOptions) -> dict:
    """
    Replay a bag or CSV directory through the bicycle judge.

    `vepd judge replay --judge bicycle`: the IMU topic is ``--navsat-imu-topic`` or the ekf
    config's imu0 topic (or the only Imu topic), the fix topic ``--gps-topic`` or the only
    NavSatFix topic.
    """
    from vepd_ros.judge.bicycle import run_bicycle_batch
    from vepd_ros.judge.navsat import StaticTF
    from vepd_ros.judge.rl_graph import load_judge_params
    from vepd_ros.params_file import read_document, sections

    nodes = sections(read_document(ekf_config, what='ekf configuration'))[1]
    imu_topic = topic_key(opts.navsat_imu_topic) if opts.navsat_imu_topic else None
    if imu_topic is None:
        for rp in nodes.values():
            if 'imu0' in rp:
                imu_topic = topic_key(rp['imu0'])
    data = load_inputs(inp, opts.remap, lambda: load_judge_params(ekf_config).ekf)
    imus = [t for t, ta in data.items() if ta.kind == 'imu']
    if imu_topic not in data:
        imu_topic = imus[0] if len(imus) == 1 else None
    gt, fixes = _fix_topic(data, opts.gps_topic)
    if imu_topic is None or gt is None:
        raise ValueError(
            f'bicycle judge: need one Imu and one NavSatFix topic (Imu: {imus or "none"}, '
            f'NavSatFix: {fixes or "none"}); use --navsat-imu-topic / --gps-topic'
        )
    ic, fc = data[imu_topic].cols, data[gt].cols
    imu = _one_run(ic, ('angular_velocity', 'linear_acceleration'))
    imu['frame_id'] = data[imu_topic].frame_id or 'base_link'
    gps = _one_run(fc, _FIX)
    r = run_bicycle_batch(ekf_config, None, imu, gps, StaticTF.parse(opts.static_tf))
    r.update(frame_id='odom', child_frame_id='base_link', used_topics=[imu_topic, gt], dropped={})
    return r


REPLAYS = {'builtin': replay_builtin, 'bicycle': replay_bicycle}
"""The replay of each judge of ``judge.registry.JUDGES``, by name."""


def replay(ekf_config, inp, judge: str = 'builtin', **options) -> dict:
    """
    Run INPUT through the judge named ``judge`` (``judge.registry``).

    ``options`` are the judge's replay options, by name (the fields of ``ReplayOptions``; the
    bicycle judge ignores navsat_config, ekf_node_name and gravity_frame). Returns the
    graph result dict (``GraphResult.as_dict`` plus 'frame_id', 'child_frame_id', 'used_topics').
    """
    from vepd_ros.judge.registry import get_judge

    return REPLAYS[get_judge(judge).name](ekf_config, inp, ReplayOptions(**options))


# ----------------------------------------------------------------------------------------------
# the command
def write_csv(path, r: dict) -> int:
    """Write the /odometry/filtered stream of run 0 as CSV; return the number of rows."""
    st = r['state'][0]
    pd = r['p_diag'][0]
    q = quaternion_from_rpy(st[:, 3], st[:, 4], st[:, 5])
    names = [n.lower() for n in STATE_NAMES]
    head = [
        'tick_ns',
        'stamp_ns',
        'frame_id',
        'child_frame_id',
        'x',
        'y',
        'z',
        'qx',
        'qy',
        'qz',
        'qw',
        'roll',
        'pitch',
        'yaw',
        'vx',
        'vy',
        'vz',
        'vroll',
        'vpitch',
        'vyaw',
        'speed',
    ] + [f'var_{n}' for n in names]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        raise ValueError(f'{path}: a directory; expected the output CSV file name')
    tmp = path.with_name(path.name + '.tmp')
    try:
        with open(tmp, 'w', newline='') as fh:
            w = csv.writer(fh)
            w.writerow(head)
            for i in range(st.shape[0]):
                s = st[i]
                w.writerow(
                    [
                        int(r['tick_ns'][i]),
                        int(r['stamp_ns'][i]),
                        r.get('frame_id', 'odom'),
                        r.get('child_frame_id', 'base_link'),
                    ]
                    + [
                        repr(float(v))
                        for v in (*s[0:3], *q[i], *s[3:6], *s[6:12], math.hypot(s[6], s[7]))
                    ]
                    + [repr(float(v)) for v in pd[i]]
                )
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # never leave a half-written file behind
        raise
    return st.shape[0]


def run_replay(args) -> int:
    """
    Run ``vepd judge replay`` (commands/judge.py) and write its CSV; return the exit status.

    ``args`` has ekf_config, input, out, judge and one attribute per ``ReplayOptions`` field,
    whose parser defaults (None, [], 'imu') mean what the fields' defaults mean.
    """
    out = Path(args.out)
    if out.is_dir() or str(args.out).endswith(('/', '\\')):
        raise ValueError(
            f'--out {args.out}: a directory; expected the output CSV file name (e.g. '
            f'{out / "filtered.csv"})'
        )
    options = {f.name: getattr(args, f.name) for f in fields(ReplayOptions)}
    r = replay(args.ekf_config, args.input, args.judge, **options)
    from vepd_ros.judge.rl_graph import explain_no_estimate

    n = r['state'].shape[1]
    if n == 0:
        raise ValueError(
            f'{args.input}: the judge published no odometry/filtered message; '
            + explain_no_estimate(r.get('dropped'))
        )
    if not np.isfinite(r['state'][0]).all():
        raise ValueError(
            f'{args.input}: the judge state is not finite; '
            + explain_no_estimate(r.get('dropped'))
        )
    n = write_csv(args.out, r)
    last = r['state'][0, -1, 0:3]
    print(
        f'vepd judge replay: {n} odometry/filtered messages from {", ".join(r["used_topics"])} -> '
        f'{args.out}; '
        f'final position {last[0]:.4f} {last[1]:.4f} {last[2]:.4f}'
        + (f'; dropped {r["dropped"]}' if r.get('dropped') else '')
    )
    return 0
