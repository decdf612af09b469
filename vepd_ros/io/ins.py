# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Ground-truth adapters: INS / odometry / simulator messages → one common truth stream.

``TruthStream`` holds, per message: header stamp and arrival (ns), world velocity (v_east, v_north,
v_up; ENU, m/s), the horizontal ``speed`` = hypot(v_east, v_north) (the paper's scalar; the lab's
own loggers used single components, art_conventions §3–4), and the body-frame planar velocity (vx
forward, vy left) when an orientation is known (NaN otherwise).

Supported types and the frame each assumes (every assumption is a parameter), as
type — velocity taken from — frame (parameter, default):

* nav_msgs/Odometry — twist.twist.linear — ``odom_twist_frame='child'`` (REP-105:
  child_frame_id, rotated to the world by pose orientation); ``'world'`` if the producer writes
  world-frame twist;
* geometry_msgs/TwistStamped, TwistWithCovarianceStamped — twist(.twist).linear —
  ``twist_frame='world'`` (ENU world, e.g. Chrono's ``state/twist``); ``'body'`` (FLU vehicle; no
  E/N then, speed = hypot(vx, vy)); ``'ned'``;
* sbg_driver/SbgGpsVel, SbgEkfNav — velocity — ``sbg_frame='ned'`` (driver default
  ``use_enu: false``: x North, y East, z Down); ``'enu'``;
* chrono_ros_interfaces/Body — twist.linear — world frame of Chrono (Z up; X, Y taken as east,
  north), orientation from pose → body vx.

Orientation: Odometry and Body carry one (a quaternion with |q| far from 1, like Chrono fork's
w-in-x bug, is treated as unknown: vx = vy = NaN, speed still from the world velocity). The SBG
velocity messages and Twist* carry none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
from vepd_ros.frames import rotation_matrix_from_quaternion
from vepd_ros.streams import NS

TRUTH_TYPES = (
    'nav_msgs/msg/Odometry',
    'geometry_msgs/msg/TwistStamped',
    'geometry_msgs/msg/TwistWithCovarianceStamped',
    'sbg_driver/msg/SbgGpsVel',
    'sbg_driver/msg/SbgEkfNav',
    'chrono_ros_interfaces/msg/Body',
)
ODOM_TWIST_FRAMES = ('child', 'world')
TWIST_FRAMES = ('world', 'body', 'ned')
SBG_FRAMES = ('ned', 'enu')


def normalize_type(msgtype: str) -> str:
    """'pkg/Name' (ROS 1 style) → 'pkg/msg/Name'."""
    parts = msgtype.split('/')
    return f'{parts[0]}/msg/{parts[1]}' if len(parts) == 2 else msgtype


@dataclass
class TruthOptions:
    odom_twist_frame: str = 'child'
    twist_frame: str = 'world'
    sbg_frame: str = 'ned'
    stamp: str = 'header'  # which time is the truth time: 'header' stamp or 'arrival'

    def __post_init__(self):
        for name, allowed in (
            ('odom_twist_frame', ODOM_TWIST_FRAMES),
            ('twist_frame', TWIST_FRAMES),
            ('sbg_frame', SBG_FRAMES),
            ('stamp', ('header', 'arrival')),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f'truth option {name}={getattr(self, name)!r}: expected one of '
                    f'{", ".join(allowed)}'
                )


@dataclass
class TruthStream:
    stamp_ns: np.ndarray  # truth time (header stamp, or arrival with stamp='arrival'), int64
    arrival_ns: np.ndarray  # bag receive time, int64
    v_east: np.ndarray
    v_north: np.ndarray
    v_up: np.ndarray
    speed: np.ndarray  # horizontal speed, m/s
    vx: np.ndarray  # body forward, NaN when no orientation
    vy: np.ndarray  # body left, NaN when no orientation
    msgtype: str = ''
    frame: str = ''  # the frame assumption used, for the run sidecar
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.stamp_ns.size)

    @property
    def stamp_s(self) -> np.ndarray:
        return self.stamp_ns / 1e9

    @property
    def has_body(self) -> bool:
        return bool(len(self)) and bool(np.all(np.isfinite(self.vx)))

    def window(
        self, start_ns: int | None, stop_ns: int | None, on: str = 'stamp'
    ) -> 'TruthStream':
        """Return the samples with time in [start_ns, stop_ns) on 'stamp' or 'arrival'."""
        t = self.stamp_ns if on == 'stamp' else self.arrival_ns
        m = np.ones(t.shape, bool)
        if start_ns is not None:
            m &= t >= start_ns
        if stop_ns is not None:
            m &= t < stop_ns
        return TruthStream(
            *(
                getattr(self, k)[m]
                for k in (
                    'stamp_ns',
                    'arrival_ns',
                    'v_east',
                    'v_north',
                    'v_up',
                    'speed',
                    'vx',
                    'vy',
                )
            ),
            msgtype=self.msgtype,
            frame=self.frame,
            meta=dict(self.meta),
        )


def _v(v):
    return (float(v.x), float(v.y), float(v.z))


def _q(o):
    return (float(o.x), float(o.y), float(o.z), float(o.w))


_NOQ = (np.nan, np.nan, np.nan, np.nan)


def _extract(msgtype: str):
    """Msg → (linear xyz, quaternion xyzw or NaN) for each supported type."""
    if msgtype == 'nav_msgs/msg/Odometry':
        return lambda m: (_v(m.twist.twist.linear), _q(m.pose.pose.orientation))
    if msgtype == 'geometry_msgs/msg/TwistStamped':
        return lambda m: (_v(m.twist.linear), _NOQ)
    if msgtype == 'geometry_msgs/msg/TwistWithCovarianceStamped':
        return lambda m: (_v(m.twist.twist.linear), _NOQ)
    if msgtype in ('sbg_driver/msg/SbgGpsVel', 'sbg_driver/msg/SbgEkfNav'):
        return lambda m: (_v(m.velocity), _NOQ)
    if msgtype == 'chrono_ros_interfaces/msg/Body':
        return lambda m: (_v(m.twist.linear), _q(m.pose.orientation))
    raise ValueError(
        f'no ground-truth adapter for message type {msgtype}; supported: {", ".join(TRUTH_TYPES)}'
    )


def frame_assumption(msgtype: str, opts: TruthOptions) -> str:
    msgtype = normalize_type(msgtype)
    if msgtype == 'nav_msgs/msg/Odometry':
        return f'odometry twist in {opts.odom_twist_frame} frame'
    if msgtype.startswith('geometry_msgs/'):
        return f'twist in {opts.twist_frame} frame'
    if msgtype.startswith('sbg_driver/'):
        return f'SBG velocity in {opts.sbg_frame.upper()}'
    return 'Chrono world-frame velocity (Z up), body orientation from pose'


def is_truth_type(msgtype: str) -> bool:
    return normalize_type(msgtype) in TRUTH_TYPES


def truth_from_arrays(
    msgtype: str, stamp_ns, arrival_ns, linear, quat, opts: TruthOptions | None = None
) -> TruthStream:
    """
    Convert raw messages of ``msgtype`` to a TruthStream.

    The conversion itself, vectorised: raw linear velocity (n,3) and orientation (n,4, NaN = none).
    """
    opts = opts or TruthOptions()
    msgtype = normalize_type(msgtype)
    _extract(msgtype)  # validates the type
    lin = np.asarray(linear, float).reshape(-1, 3)
    q = np.asarray(quat, float).reshape(-1, 4)
    n = len(lin)
    qn = np.linalg.norm(q, axis=1)
    q_ok = np.isfinite(qn) & (np.abs(qn - 1.0) < 1e-3)
    R = np.full((n, 3, 3), np.nan)
    if q_ok.any():
        R[q_ok] = rotation_matrix_from_quaternion(q[q_ok])
    world = np.full((n, 3), np.nan)
    body = np.full((n, 3), np.nan)
    if msgtype.startswith('sbg_driver/'):
        world = lin[:, [1, 0, 2]] * [1, 1, -1] if opts.sbg_frame == 'ned' else lin.copy()
    elif msgtype == 'nav_msgs/msg/Odometry' and opts.odom_twist_frame == 'child':
        body = lin.copy()
        world = np.einsum('nij,nj->ni', R, lin)
    elif msgtype.startswith('geometry_msgs/') and opts.twist_frame == 'body':
        body = lin.copy()
    elif msgtype.startswith('geometry_msgs/') and opts.twist_frame == 'ned':
        world = lin[:, [1, 0, 2]] * [1, 1, -1]
    else:  # world-frame twist, Odometry 'world', Chrono Body
        world = lin.copy()
    if not np.all(np.isfinite(body)):  # body from world where the orientation is known
        b = np.einsum('nji,nj->ni', R, world)
        fill = ~np.isfinite(body).all(axis=1)
        body[fill] = b[fill]
    speed = np.hypot(world[:, 0], world[:, 1])
    nos = ~np.isfinite(speed)
    speed[nos] = np.hypot(body[nos, 0], body[nos, 1])
    stamp = np.asarray(stamp_ns, np.int64)
    arr = np.asarray(arrival_ns, np.int64)
    if opts.stamp == 'arrival':
        stamp = arr.copy()
    return TruthStream(
        stamp,
        arr,
        world[:, 0],
        world[:, 1],
        world[:, 2],
        speed,
        body[:, 0],
        body[:, 1],
        msgtype=msgtype,
        frame=frame_assumption(msgtype, opts),
    )


def truth_from_messages(
    items: Iterable[tuple[int, object]], msgtype: str, opts: TruthOptions | None = None
) -> TruthStream:
    """[(arrival_ns, msg)] of one truth topic → TruthStream (in the given order)."""
    msgtype = normalize_type(msgtype)
    ex = _extract(msgtype)
    st, arr, lin, q = [], [], [], []
    for t_ns, m in items:
        s = m.header.stamp
        st.append(int(s.sec) * NS + int(s.nanosec))
        arr.append(int(t_ns))
        a, b = ex(m)
        lin.append(a)
        q.append(b)
    return truth_from_arrays(
        msgtype,
        np.array(st, np.int64),
        np.array(arr, np.int64),
        np.array(lin, float).reshape(-1, 3),
        np.array(q, float).reshape(-1, 4),
        opts,
    )


def read_truth(path, topic: str, opts: TruthOptions | None = None, **kw) -> TruthStream:
    """Read the truth stream of ``topic`` in a bag (type taken from the bag)."""
    from vepd_ros.io.bags import Bag

    with Bag(path) as bag:
        msgtype = normalize_type(bag.msgtype(topic))
        if not is_truth_type(msgtype):
            from vepd_ros.io.bags import BagError

            raise BagError(
                f'{path}: topic {topic} is {msgtype}, which is not a ground-truth type '
                f'({", ".join(TRUTH_TYPES)})',
                path,
                topic,
                msgtype,
            )
        return truth_from_messages(
            ((t, m) for t, _, _, m in bag.messages([topic], **kw)), msgtype, opts
        )
