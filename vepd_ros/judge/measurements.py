# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The message layer: ROS messages (or arrays of them) → 15-vector measurements (reference §6).

One place per fact, two entry points:
* array level — ``MeasurementBuilder.imu_arrays / odometry_arrays / pose_arrays / twist_arrays``: N
  messages of one sensor (in arrival order) with optional leading batch axes (K runs with identical
  timing) → ``MeasurementSeries`` per sub-topic (stamps (N',), z (..., N', 15), Rsub (..., N', m,
  m));
* message level — ``MeasurementBuilder.from_message(sensor, msg)``: any object with the ROS field
  names (rclpy or rosbags messages, or test stand-ins) is turned into 1-sample arrays and goes
  through exactly the same array code.

Done here, as upstream's callbacks do at callback time: the guard against stamps at or before the
last reset (initially 0), the per-sub-topic guard against older stamps, IMU parts skipped when
their covariance[0] == −1, quaternion handling (all-zero → identity, normalised when off by >
0.01), the static transforms, flag-mask rotation (row norm ≥ 1e-6), covariance rotation, the IMU
orientation special case, gravity removal, relative and differential modes and two_d_mode
pseudo-measurements. State-dependent terms (lever arm t×ω_state for twists, −(t×ω)×ω for
accelerations, gravity removal of an IMU without orientation) need the filter state at delivery:
they are carried in ``StateTerms`` and applied by ``MeasurementSeries.at(i, x)``. The
angular-acceleration lever term t×α of the ros2 branch is taken as 0 (not emulated). NaN values
pass through unchanged: the core drops NaN entries (§3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np
from vepd_ros.frames import quat_matrix, rotation_matrix_from_rpy, rpy_from_rotation_matrix
from vepd_ros.judge.config import EkfParams, SensorConfig, SubTopic
from vepd_ros.judge.ekf import STATE_SIZE, wrap
from vepd_ros.judge.transforms import StaticTransforms
from vepd_ros.streams import NS

TWO_D_INDICES = (2, 3, 4, 8, 9, 10, 14)
_TWO_D_LIST = list(TWO_D_INDICES)
_EYE3 = np.eye(3)
_ZERO3 = np.zeros(3)
_EYE3.setflags(write=False)
_ZERO3.setflags(write=False)
TWO_D_VARIANCE = 1e-6
MASK_EPS = 1e-6
QUAT_RENORMALISE = 0.01
"""An orientation whose norm is off 1 by more than this is normalised first (tf2 ``normalize``:
q·(1/‖q‖)), as robot_localization does; an all-zero pose orientation is identity, an all-zero
quaternion read for gravity removal becomes NaN (upstream normalises it, 0·(1/0)). A quaternion
that is not finite gives a NaN rotation: its entries are ignored by the core (counted), as
upstream's are. Finite values and covariances of any size go through, as in robot_localization
(docs/judge.md, "Deliberate differences")."""
MAX_ABS_VALUE = 1e9
"""A flagged finite value beyond this (m, rad, m/s, rad/s, m/s²; UTM northings are ~1e7) is
counted, and kept: robot_localization fuses any finite value, or its gate rejects it
(``kernel.OVERFLOW_RISK``), and the judge does the same with it (issue 23)."""
MAX_ABS_COVARIANCE = 1e30
"""A finite covariance entry beyond this is counted, and kept (upstream fuses it). Only a
non-finite covariance entry (on finite values) drops a sample: upstream's state would turn NaN."""
_IDENTITY_Q = np.array([0.0, 0.0, 0.0, 1.0])
_NAN_Q = np.full(4, math.nan)
_IDENTITY_Q.setflags(write=False)
_NAN_Q.setflags(write=False)


@dataclass
class StateTerms:
    """Terms that depend on the filter state at delivery (None: not needed)."""

    twist_lever: np.ndarray | None = None  # t: z[6:9] += t × ω_state
    accel_lever: np.ndarray | None = None  # t: z[12:15] -= (t × ω_state) × ω_state
    gravity_rot: np.ndarray | None = None  # Rot: z[12:15] -= (R_state·Rot)ᵀ (0,0,g)
    gravity: float = 0.0
    two_d: bool = False  # two_d_mode: its entries are 0 after the terms (forceTwoD comes last)

    def apply(self, z: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Z (..., 15) adjusted with the state x (K, 15) (K broadcast against z's leading axes)."""
        z = np.array(z, dtype=float)
        if z.ndim < x.ndim:  # z without the run axis (one run): give it x's (K, 15) shape
            z = np.array(np.broadcast_to(z, np.broadcast_shapes(z.shape, x.shape)))
        w = x[..., 9:12]
        if self.twist_lever is not None:
            z[..., 6:9] += np.cross(self.twist_lever, w)
        if self.accel_lever is not None:
            z[..., 12:15] -= np.cross(np.cross(self.accel_lever, w), w)
        if self.gravity_rot is not None:
            # Mᵀ·(0,0,g) = g·(row 2 of M), M = R_state·Rot; row 2 of R(r, p, y) = (−sp, cp·sr,
            # cp·cr)
            if x.shape == (
                1,
                STATE_SIZE,
            ):  # one run: numpy's sin/cos of (r, p) in one call, the products
                sr, sp = np.sin(
                    x[0, 3:5]
                ).tolist()  # in scalar Python (the same single multiplications)
                cr, cp = np.cos(x[0, 3:5]).tolist()
                row2 = np.array([[-sp, cp * sr, cp * cr]])
            else:
                r, p = x[..., 3], x[..., 4]
                cp = np.cos(p)
                row2 = np.stack([-np.sin(p), cp * np.sin(r), cp * np.cos(r)], axis=-1)
            z[..., 12:15] -= self.gravity * (row2 @ self.gravity_rot)
        if self.two_d:  # upstream's prepareTwist/prepareAcceleration end with forceTwoD
            z[..., _TWO_D_LIST] = 0.0
        return z


@dataclass
class MeasurementSeries:
    """Prepared measurements of one sub-topic: N' samples sharing one update vector."""

    topic: str
    stamps: np.ndarray  # (N',) int64 ns
    update_vector: tuple  # 15 bools (after mask rotation / two_d_mode)
    z: np.ndarray  # (..., N', 15)
    Rsub: np.ndarray  # (..., N', m, m) covariance on the flagged entries
    threshold: float = math.inf
    arrivals: np.ndarray | None = None  # (N',) int64 ns arrival times (array path), else None
    state_terms: StateTerms | None = None

    def __len__(self):
        return int(self.stamps.size)

    @property
    def idx(self) -> np.ndarray:
        return np.flatnonzero(self.update_vector)

    def at(self, i: int, x: np.ndarray | None = None):
        """
        Return (z (..., 15), Rsub (..., m, m)) of sample i.

        With state terms applied when x is given.
        """
        z = self.z[..., i, :]
        if self.state_terms is not None and x is not None:
            z = self.state_terms.apply(z, x)
        return z, self.Rsub[..., i, :, :]

    def full_covariance(self, i: int) -> np.ndarray:
        idx = self.idx
        R = np.zeros(self.Rsub.shape[:-3] + (STATE_SIZE, STATE_SIZE))
        R[..., idx[:, None], idx] = self.Rsub[..., i, :, :]
        return R


@dataclass(frozen=True)
class _FinishPlan:
    """
    What ``_finish`` needs of an update vector.

    What ``_finish`` needs of an update vector: final flags (two_d_mode added), their count m,
    positions ``pos`` in the flagged sub-block of the covariance block entries ``loc``, whether
    both run contiguously (slices instead of fancy indexing), and the two_d_mode positions ``td``.
    """

    flags: tuple
    m: int
    pos: np.ndarray
    loc: np.ndarray
    contiguous: bool
    td: np.ndarray | None
    idx: np.ndarray  # the flagged entries of z (15-vector)


@dataclass(frozen=True)
class _PosePlan:
    """
    Frame-dependent part of ``_pose_core``.

    Frame-dependent part of ``_pose_core``: target transform (Rt, tt), source-frame transform,
    masked flags, the mask rotation and its 6×6 covariance rotator; for an IMU the mounting RPY
    offset and Rz(yaw offset)ᵀ.
    """

    Rt: np.ndarray
    tt: np.ndarray
    Rsrc: np.ndarray | None
    tsrc: np.ndarray | None
    r6src: np.ndarray | None
    flags: tuple
    r6: np.ndarray
    off: np.ndarray | None
    rz_off_t: np.ndarray | None


@dataclass(frozen=True)
class _FramePlan:
    """
    Frame-dependent part of ``_twist_core`` / ``_accel_core``.

    Frame-dependent part of ``_twist_core`` / ``_accel_core``: transform, masked flags, 6×6
    rotator.
    """

    Rt: np.ndarray
    tt: np.ndarray
    lever: bool
    flags: tuple
    r6: np.ndarray | None


@dataclass
class _SubState:
    last_stamp: int | None = None  # per-sub-topic guard (last_message_times_)
    initial: tuple | None = None  # relative: first pose (R, p)
    prev: tuple | None = None  # differential: previous pose (R, p) and its covariance


def _mask(M: np.ndarray, flags) -> list:
    """Upstream's flag rotation: rows of M·diag(flags) with norm ≥ 1e-6."""
    return (np.linalg.norm(M * np.asarray(flags, float)[None, :], axis=1) >= MASK_EPS).tolist()


def _rot6(R):
    out = np.zeros(R.shape[:-2] + (6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    return out


def _rpy(R):
    """(..., 3) roll, pitch, yaw of rotation matrices (..., 3, 3)."""
    r, p, y = rpy_from_rotation_matrix(R)
    out = np.empty(np.shape(r) + (3,))
    out[..., 0], out[..., 1], out[..., 2] = r, p, y
    return out


def _nonfinite_counted(method):
    """
    Make an array entry point run with numpy's overflow/invalid warnings off.

    Array entry points run with numpy's overflow/invalid warnings off: a non-finite or huge
    input value becomes non-finite after the frame rotations, and ``_finish`` counts and drops or
    ignores every such sample (``_bad_samples``) -- the condition is handled there, not reported
    as a warning. An entry point that calls another (odometry: pose, twist) calls its
    ``__wrapped__``, the method without the second errstate.
    """

    def wrapped(self, *args, **kwargs):
        with np.errstate(over='ignore', invalid='ignore'):
            return method(self, *args, **kwargs)

    wrapped.__name__, wrapped.__doc__ = method.__name__, method.__doc__
    wrapped.__wrapped__ = method
    return wrapped


def tf2_quaternion(q, zero_is_identity: bool = True):
    """
    Return quaternions (..., 4) x y z w as robot_localization reads a message's orientation.

    preparePose: an all-zero quaternion is identity (``zero_is_identity``); otherwise it is
    normalised, q·(1/‖q‖), when ‖q‖ is off 1 by more than ``QUAT_RENORMALISE`` -- a tiny but
    non-zero one included; one with a non-finite entry, or an all-zero one read for gravity removal
    (``zero_is_identity=False``: prepareAcceleration normalises it, 0·(1/0)), comes out NaN, and so
    does the rotation and every entry made from it (the core ignores them, as upstream's does).
    A quaternion within the 0.01 is returned unchanged (tf2's matrix scales by 2/‖q‖² anyway).
    """
    q = np.asarray(q, float)
    if q.size == 4:  # one message: the same operations on Python floats
        x, y, z, w = q.ravel().tolist()
        if x == 0.0 and y == 0.0 and z == 0.0 and w == 0.0:
            out = _IDENTITY_Q if zero_is_identity else _NAN_Q
        else:
            n = math.sqrt(x * x + y * y + z * z + w * w)  # NaN, inf or 0 pass through
            if abs(n - 1.0) <= QUAT_RENORMALISE:
                return q
            if not 0.0 < n < math.inf:  # NaN, or 0·(1/0) / x·(1/inf) = 0 (a NaN matrix)
                out = _NAN_Q
            else:
                inv = 1.0 / n
                out = np.array([x * inv, y * inv, z * inv, w * inv])
        return out.reshape(q.shape)
    with np.errstate(over='ignore', invalid='ignore', divide='ignore'):
        zero = (q == 0.0).all(axis=-1)
        n = np.sqrt(np.sum(q * q, axis=-1))
        off = ~(np.abs(n - 1.0) <= QUAT_RENORMALISE)  # NaN norms too
        if off.any():
            q = np.where(off[..., None], q * (1.0 / n)[..., None], q)
            bad = off & ~((n > 0.0) & (n < math.inf))
            q = np.where(bad[..., None], math.nan, q)
    if zero_is_identity and zero.any():
        q = np.where(zero[..., None], _IDENTITY_Q, q)
    return q


class MeasurementBuilder:
    """Per-sensor preparation state (guards, relative/differential memory) for one filter."""

    def __init__(self, params: EkfParams, transforms: StaticTransforms | None = None):
        self.params = params
        self.tf = transforms or StaticTransforms()
        self.sensors = {s.name: s for s in params.sensors}
        self.by_topic = {s.topic: s for s in params.sensors}
        self.dropped: dict[str, int] = {}
        # Frame-dependent preparation (tf lookups, flag-mask rotation, covariance rotators,
        # two_d_mode cut) depends only on (sub-topic, frames, static tree version): computed once,
        # reused per message.
        self._tf_cache: dict = {}
        self._plans: dict = {}
        self.reset()

    def reset(self, reset_time_ns: int = 0) -> None:
        """
        Forget guards and relative/differential memory (RosFilter::reset).

        Messages stamped at or before ``reset_time_ns`` are ignored afterwards
        (last_set_pose_time_).
        """
        self.reset_time_ns = int(reset_time_ns)
        self._subs: dict[str, _SubState] = {}

    def _drop(self, reason: str, n: int = 1):
        if n:
            self.dropped[reason] = self.dropped.get(reason, 0) + int(n)

    def _count_zero_orientation(self, st: SubTopic, q_raw: np.ndarray, keep: np.ndarray) -> None:
        """
        Count the kept messages whose orientation is the all-zero quaternion.

        preparePose reads it as identity and, when roll, pitch or yaw is fused, says so in a
        diagnostic ("contains an invalid orientation quaternion ... Correcting"): it is kept, as
        upstream keeps it, and counted, so a zero orientation never passes as a measured one.
        """
        if not np.asarray(st.update_vector)[3:6].any():
            return
        zero = (np.asarray(q_raw) == 0.0).all(axis=-1)
        if zero.ndim > 1:
            zero = zero.reshape(-1, keep.size).any(axis=0)
        self._drop(
            f'{st.name}: all-zero orientation quaternion read as identity (kept: '
            'robot_localization corrects it so)',
            int((zero & keep).sum()),
        )

    def _state(self, topic: str) -> _SubState:
        return self._subs.setdefault(topic, _SubState())

    # ------------------------------------------------------------------ guards
    def _guard(self, topic: str, stamps: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """
        Return the keep mask of the per-sub-topic stamp guard, in arrival order.

        Keep mask in arrival order: stamp > reset time and stamp ≥ last accepted stamp of the
        sub-topic. The guard advances on every accepted message, even when preparation fails later.
        """
        st = self._state(topic)
        keep = np.zeros(stamps.size, bool)
        last = st.last_stamp
        for i, (s, v) in enumerate(zip(stamps.tolist(), valid.tolist())):
            if not v:
                continue
            if s <= self.reset_time_ns:
                self._drop(f'{topic}: stamp at or before the last reset')
                continue
            if last is not None and s < last:
                self._drop(f'{topic}: stamp older than the previous message')
                continue
            keep[i] = True
            last = s
        st.last_stamp = last
        return keep

    # ------------------------------------------------------------------ public: messages
    def from_message(self, sensor: str | SensorConfig, msg, x: np.ndarray | None = None) -> list:
        """
        Prepare one ROS message of ``sensor`` as measurement tuples.

        One ROS message of ``sensor`` (name like 'imu0' or its topic) → list of (topic, stamp_ns,
        z, R15, update_vector, threshold) measurement tuples, in upstream queue order. ``x`` is the
        filter state (K, 15) for state-dependent terms.
        """
        s = self._sensor(sensor)
        stamp = np.array(
            [int(msg.header.stamp.sec) * NS + int(msg.header.stamp.nanosec)], np.int64
        )
        frame = msg.header.frame_id
        if s.kind == 'imu':
            series = self.imu_arrays(
                s,
                stamp,
                _vec(msg.orientation, 'xyzw'),
                _vec(msg.angular_velocity, 'xyz'),
                _vec(msg.linear_acceleration, 'xyz'),
                np.asarray(msg.orientation_covariance, float)[None],
                np.asarray(msg.angular_velocity_covariance, float)[None],
                np.asarray(msg.linear_acceleration_covariance, float)[None],
                frame_id=frame,
            )
        elif s.kind == 'odom':
            series = self.odometry_arrays(
                s,
                stamp,
                _vec(msg.pose.pose.position, 'xyz'),
                _vec(msg.pose.pose.orientation, 'xyzw'),
                np.asarray(msg.pose.covariance, float)[None],
                _vec(msg.twist.twist.linear, 'xyz'),
                _vec(msg.twist.twist.angular, 'xyz'),
                np.asarray(msg.twist.covariance, float)[None],
                frame_id=frame,
                child_frame_id=msg.child_frame_id,
            )
        elif s.kind == 'pose':
            series = self.pose_arrays(
                s,
                stamp,
                _vec(msg.pose.pose.position, 'xyz'),
                _vec(msg.pose.pose.orientation, 'xyzw'),
                np.asarray(msg.pose.covariance, float)[None],
                frame_id=frame,
            )
        else:
            series = self.twist_arrays(
                s,
                stamp,
                _vec(msg.twist.twist.linear, 'xyz'),
                _vec(msg.twist.twist.angular, 'xyz'),
                np.asarray(msg.twist.covariance, float)[None],
                frame_id=frame,
            )
        out = []
        for ser in series:
            if len(ser):
                z, Rsub = ser.at(0, x)
                out.append(
                    Measurement(
                        ser.topic,
                        int(ser.stamps[0]),
                        z,
                        ser.full_covariance(0),
                        ser.update_vector,
                        ser.threshold,
                    )
                )
        return out

    def _sensor(self, sensor) -> SensorConfig:
        if isinstance(sensor, SensorConfig):
            return sensor
        if sensor in self.sensors:
            return self.sensors[sensor]
        if sensor in self.by_topic:
            return self.by_topic[sensor]
        raise KeyError(f'unknown sensor {sensor!r}; configured: {", ".join(self.sensors)}')

    @staticmethod
    def _sub(s: SensorConfig, part: str) -> SubTopic | None:
        for st in s.subtopics:
            if st.part == part:
                return st
        return None

    # ------------------------------------------------------------------ public: arrays
    @_nonfinite_counted
    def imu_arrays(
        self, sensor, stamps, q, w, a, ocov, wcov, acov, frame_id: str = '', arrivals=None
    ) -> list:
        """
        Prepare sensor_msgs/Imu fields given as arrays.

        sensor_msgs/Imu fields as arrays (leading batch axes allowed, then N): q (..., N, 4) xyzw,
        w, a (..., N, 3), covariances (..., N, 9) row-major. Returns the pose, twist and
        acceleration series (only the configured parts).
        """
        s = self._sensor(sensor)
        p = self.params
        stamps = np.asarray(stamps, np.int64)
        q, w, a = (np.asarray(v, float) for v in (q, w, a))
        ocov, wcov, acov = (
            np.asarray(v, float).reshape(v.shape[:-1] + (3, 3))
            for v in (np.asarray(ocov, float), np.asarray(wcov, float), np.asarray(acov, float))
        )
        frame = frame_id or p.base_link_frame
        out = []
        has_orientation = ~_cov_unset(ocov)
        q_raw, q = q, tf2_quaternion(q)
        Rq = quat_matrix(q)  # shared by the orientation and the gravity removal
        st = self._sub(s, 'pose')
        if st is not None:
            keep = self._guard(st.name, stamps, has_orientation)
            if keep.any():
                self._count_zero_orientation(st, q_raw, keep)
                cov6 = np.zeros(ocov.shape[:-2] + (6, 6))
                cov6[..., 3:, 3:] = ocov
                pos = np.zeros(q.shape[:-1] + (3,))
                ser = self._pose_core(
                    s,
                    st,
                    stamps,
                    keep,
                    pos,
                    Rq,
                    cov6,
                    frame,
                    p.base_link_frame,
                    imu=True,
                    arrivals=arrivals,
                )
                if ser is not None:
                    out.append(ser)
        st = self._sub(s, 'twist')
        if st is not None:
            keep = self._guard(st.name, stamps, ~_cov_unset(wcov))
            if keep.any():
                cov6 = np.zeros(wcov.shape[:-2] + (6, 6))
                cov6[..., 3:, 3:] = wcov
                ser = self._twist_core(
                    st, stamps, keep, np.zeros_like(w), w, cov6, frame, arrivals
                )
                if ser is not None:
                    out.append(ser)
        st = self._sub(s, 'acceleration')
        if st is not None:
            keep = self._guard(st.name, stamps, ~_cov_unset(acov))
            if keep.any():
                Rg = Rq
                if s.remove_gravitational_acceleration and (q_raw == 0.0).all(axis=-1).any():
                    # prepareAcceleration normalises the message's quaternion itself: all-zero
                    # gives NaN (its entries are then ignored), not preparePose's identity
                    Rg = quat_matrix(tf2_quaternion(q_raw, zero_is_identity=False))
                ser = self._accel_core(
                    s, st, stamps, keep, a, acov, Rg, has_orientation, frame, arrivals
                )
                if ser is not None:
                    out.append(ser)
        return out

    @_nonfinite_counted
    def odometry_arrays(
        self,
        sensor,
        stamps,
        pos,
        q,
        pcov,
        v,
        w,
        tcov,
        frame_id: str = '',
        child_frame_id: str = '',
        arrivals=None,
    ) -> list:
        """
        Prepare nav_msgs/Odometry given as arrays.

        nav_msgs/Odometry as arrays: pose part then twist part (upstream order); the pose's source
        frame is the child frame when ``pose_use_child_frame``, the twist is in the child frame.
        """
        s = self._sensor(sensor)
        source = child_frame_id if s.pose_use_child_frame else self.params.base_link_frame
        builder = MeasurementBuilder  # this entry point's errstate holds for both parts
        return builder.pose_arrays.__wrapped__(
            self, s, stamps, pos, q, pcov, frame_id, arrivals, source_frame=source
        ) + builder.twist_arrays.__wrapped__(self, s, stamps, v, w, tcov, child_frame_id, arrivals)

    @_nonfinite_counted
    def pose_arrays(
        self,
        sensor,
        stamps,
        pos,
        q,
        pcov,
        frame_id: str = '',
        arrivals=None,
        source_frame: str | None = None,
    ) -> list:
        """
        Prepare geometry_msgs/PoseWithCovarianceStamped given as arrays.

        ``source_frame``: base_link by default.
        """
        s = self._sensor(sensor)
        stamps = np.asarray(stamps, np.int64)
        st = self._sub(s, 'pose')
        if st is None:
            return []
        q_raw, q = q, tf2_quaternion(q)
        keep = self._guard(st.name, stamps, np.ones(stamps.size, bool))
        if not keep.any():
            return []
        self._count_zero_orientation(st, q_raw, keep)
        ser = self._pose_core(
            s,
            st,
            stamps,
            keep,
            np.asarray(pos, float),
            quat_matrix(q),
            _cov6(pcov),
            frame_id,
            self.params.base_link_frame if source_frame is None else source_frame,
            imu=False,
            arrivals=arrivals,
        )
        return [] if ser is None else [ser]

    @_nonfinite_counted
    def twist_arrays(self, sensor, stamps, v, w, tcov, frame_id: str = '', arrivals=None) -> list:
        """
        Prepare geometry_msgs/TwistWithCovarianceStamped given as arrays.

        The twist is in ``frame_id``, base_link when empty.
        """
        s = self._sensor(sensor)
        stamps = np.asarray(stamps, np.int64)
        st = self._sub(s, 'twist')
        if st is None:
            return []
        keep = self._guard(st.name, stamps, np.ones(stamps.size, bool))
        if not keep.any():
            return []
        ser = self._twist_core(
            st,
            stamps,
            keep,
            np.asarray(v, float),
            np.asarray(w, float),
            _cov6(tcov),
            frame_id or self.params.base_link_frame,
            arrivals,
        )
        return [] if ser is None else [ser]

    # ------------------------------------------------------------------ cores
    def _lookup(self, topic, target, source):
        """
        Look up a static transform, counting a drop for ``topic`` when it is missing.

        tf2 lookupTransform(target, source) of the static tree (cached per tree version); a missing
        transform counts a drop for ``topic`` every time and returns None.
        """
        key = (target, source, self.tf.version)
        T = self._tf_cache.get(key)
        if T is None:
            try:
                T = self.tf.lookup(target, source)
            except LookupError as exc:
                T = exc
            if not isinstance(T, LookupError):
                for a in T:
                    a.setflags(write=False)  # shared by every later message
            self._tf_cache[key] = T
        if isinstance(T, LookupError):
            self._drop(f'{topic}: {T}')
            return None
        return T

    def _finish_plan(self, flags: tuple, off: int, b: int) -> _FinishPlan:
        key = ('finish', flags, off, b)
        plan = self._plans.get(key)
        if plan is None:
            flags = list(flags)
            if self.params.two_d_mode:
                for j in TWO_D_INDICES:
                    flags[j] = True
            idx = np.flatnonzero(flags)
            inb = (idx >= off) & (idx < off + b)
            pos, loc = np.flatnonzero(inb), idx[inb] - off
            contiguous = bool(pos.size) and bool(
                np.all(np.diff(pos) == 1) and np.all(np.diff(loc) == 1)
            )
            td = np.flatnonzero(np.isin(idx, TWO_D_INDICES)) if self.params.two_d_mode else None
            plan = _FinishPlan(
                tuple(bool(f) for f in flags), idx.size, pos, loc, contiguous, td, idx
            )
            self._plans[key] = plan
        return plan

    def _finish(
        self, st: SubTopic, stamps, keep, z, cov, off, flags, arrivals, terms=None, topic=None
    ):
        """
        two_d_mode, then cut to the kept samples and the flagged sub-block.

        ``cov`` (..., N, b, b) is the only nonzero block of the 15×15 measurement covariance, at
        rows/columns off..off+b: Rsub is cut from it directly (never forming (..., N, 15, 15));
        two_d_mode entries get variance 1e-6 on the diagonal, their other entries stay what the
        block gives (0 outside it), as ``_force_two_d`` does.
        """
        plan = self._finish_plan(tuple(flags), off, cov.shape[-1])
        if self.params.two_d_mode:
            z[..., _TWO_D_LIST] = 0.0
            if terms is not None:  # terms added at delivery must not undo it (issue 23)
                terms.two_d = True
        m = plan.m
        sel = keep.nonzero()[0]  # keep: (N,) bool
        lead = (
            z.shape[:-2]
            if z.shape[:-2] == cov.shape[:-3]
            else np.broadcast_shapes(z.shape[:-2], cov.shape[:-3])
        )
        Rsub = np.zeros(lead + (sel.size, m, m))
        pos, loc = plan.pos, plan.loc
        if pos.size:
            if sel.size == keep.size and plan.contiguous:
                # every sample kept, contiguous block entries: plain slices (no fancy-index copies)
                p0, l0, nb = int(pos[0]), int(loc[0]), pos.size
                Rsub[..., p0: p0 + nb, p0: p0 + nb] = cov[..., l0: l0 + nb, l0: l0 + nb]
            else:
                Rsub[..., pos[:, None], pos] = cov[..., sel[:, None, None], loc[:, None], loc]
        if plan.td is not None:
            Rsub[..., plan.td, plan.td] = TWO_D_VARIANCE
        bad = self._bad_samples(z, Rsub, sel, plan.idx, topic or st.name)
        if bad is not None:
            sel, Rsub = sel[~bad], Rsub[..., ~bad, :, :]
        if sel.size != keep.size:
            z = z[..., sel, :]  # z is this builder's own array: no copy when every sample is kept
        arr = None if arrivals is None else np.asarray(arrivals, np.int64)[sel]
        return MeasurementSeries(
            topic or st.name, stamps[sel], plan.flags, z, Rsub, st.rejection_threshold, arr, terms
        )

    def _bad_samples(self, z, Rsub, sel, idx, topic) -> np.ndarray | None:
        """
        Return the mask of the samples to drop, counting them.

        Mask over ``sel`` of the samples to drop (counted; None when there are none): a
        covariance entry not finite on the row and column of finite values (in any run of a
        batch), on which robot_localization's state turns NaN. Non-finite flagged values are
        upstream's "ignore this entry" (their row and column of R go with them): kept (the core
        skips them) but counted, so no NaN passes unseen. Finite values beyond ``MAX_ABS_VALUE``
        and covariance entries beyond ``MAX_ABS_COVARIANCE`` are counted and kept: they are
        robot_localization's to fuse or gate (issue 23).
        """
        zf = z[..., idx] if sel.size == z.shape[-2] else z[..., sel, :][..., idx]
        # the common case in four reductions (NaN fails every comparison: the full check below)
        if (
            not Rsub.size
            or (Rsub.max() <= MAX_ABS_COVARIANCE and Rsub.min() >= -MAX_ABS_COVARIANCE)
        ) and (not zf.size or (zf.max() <= MAX_ABS_VALUE and zf.min() >= -MAX_ABS_VALUE)):
            return None
        finite = np.isfinite(zf)
        used = finite[..., :, None] & finite[..., None, :]
        fin_r = np.isfinite(Rsub)
        bad_r = ~(fin_r | ~used).all(axis=(-2, -1))
        big_r = (fin_r & ~(np.abs(Rsub) <= MAX_ABS_COVARIANCE)).any(axis=(-2, -1))
        big_z = (finite & ~(np.abs(zf) <= MAX_ABS_VALUE)).any(axis=-1)
        nonfinite = ~finite.all(axis=-1)
        masks = [bad_r, big_r, big_z, nonfinite]
        for n, mk in enumerate(masks):
            if mk.ndim > 1:
                masks[n] = mk.reshape(-1, sel.size).any(axis=0)
        bad_r, big_r, big_z, nonfinite = masks
        kept = ~bad_r
        self._drop(f'{topic}: non-finite values (entries ignored)', int((nonfinite & kept).sum()))
        self._drop(
            f'{topic}: value beyond {MAX_ABS_VALUE:g} (kept: robot_localization takes it)',
            int((big_z & kept).sum()),
        )
        self._drop(
            f'{topic}: covariance beyond {MAX_ABS_COVARIANCE:g} (kept: robot_localization '
            'takes it)',
            int((big_r & kept).sum()),
        )
        if not bad_r.any():
            return None
        self._drop(f'{topic}: covariance not finite', int(bad_r.sum()))
        return bad_r

    def _pose_plan(
        self, st: SubTopic, target, pose_frame, source_frame, imu: bool
    ) -> _PosePlan | None:
        """
        Return the frame-dependent part of ``_pose_core``.

        The frame-dependent part of ``_pose_core``, cached unless a lookup failed (each message
        then counts its drop again).
        """
        p = self.params
        version = self.tf.version
        key = ('pose', st.name, st.update_vector, imu, target, pose_frame, source_frame, version)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        T = self._lookup(st.name, target, pose_frame)
        if T is None:
            return None
        Rt, tt = T
        Rsrc = tsrc = r6src = None
        complete = True
        if not imu and source_frame != p.base_link_frame:
            S = self._lookup(st.name, source_frame, p.base_link_frame)
            if S is not None:
                Rsrc, tsrc = S
                r6src = _rot6(Rsrc)
            else:
                complete = False
        flags = list(st.update_vector)
        off = rz_off_t = None
        if imu:
            off = _rpy(Rt)
            Rmask = rotation_matrix_from_rpy(0.0, 0.0, float(off[2]))
            rz_off_t = rotation_matrix_from_rpy(0.0, 0.0, off[2]).T
        else:
            Rmask = Rt
        flags[0:3] = _mask(Rmask, flags[0:3])
        flags[3:6] = _mask(Rmask, flags[3:6])
        plan = _PosePlan(Rt, tt, Rsrc, tsrc, r6src, tuple(flags), _rot6(Rmask), off, rz_off_t)
        if complete:
            self._plans[key] = plan
        return plan

    def _pose_core(
        self,
        s: SensorConfig,
        st: SubTopic,
        stamps,
        keep,
        pos,
        Rm,
        cov6,
        frame_id,
        source_frame,
        imu: bool,
        arrivals,
    ):
        """
        Prepare pose messages.

        Pose messages: positions pos (..., N, 3), orientations as matrices Rm (..., N, 3, 3)
        (``frames.quat_matrix``).
        """
        p = self.params
        differential = s.differential
        if imu:
            target = p.base_link_frame
            pose_frame = frame_id or p.base_link_frame
        else:
            target = p.world_frame
            pose_frame = target if differential else (frame_id or target)
        plan = self._pose_plan(st, target, pose_frame, source_frame, imu)
        if plan is None:
            return None
        Rt, tt, Rsrc, tsrc, r6 = plan.Rt, plan.tt, plan.Rsrc, plan.tsrc, plan.r6
        flags = list(plan.flags)
        cov = cov6
        if plan.r6src is not None:
            cov = plan.r6src.T @ cov @ plan.r6src
        cov_rot = r6 @ cov @ r6.T
        if imu:
            rpy = wrap(_rpy(Rm) - plan.off)
            rpy = rpy @ plan.rz_off_t  # Rz(y0)·rpy
            Rm = rotation_matrix_from_rpy(rpy[..., 0], rpy[..., 1], rpy[..., 2])
            Rt, tt = _EYE3, _ZERO3
        sub = self._state(st.name)
        z = np.zeros(pos.shape[:-1] + (STATE_SIZE,))
        if differential:
            return self._differential(
                s, st, stamps, keep, pos, Rm, cov, cov_rot, r6, Rt, flags, arrivals, sub,
                source_frame,
            )
        if Rsrc is not None:  # pose · T_src
            pos = pos + np.einsum('...ij,j->...i', Rm, tsrc)
            Rm = Rm @ Rsrc
        if s.relative:
            first = int(keep.nonzero()[0][0])
            if sub.initial is None:
                sub.initial = (Rm[..., first, :, :].copy(), pos[..., first, :].copy())
            R0, p0 = sub.initial
            R0t = np.swapaxes(R0, -1, -2)[..., None, :, :]
            pos = np.einsum('...ij,...j->...i', R0t, pos - p0[..., None, :])
            Rm = R0t @ Rm
        pos = pos @ Rt.T + tt
        Rm = Rt @ Rm
        z[..., 0:3] = pos
        z[..., 3:6] = _rpy(Rm)
        return self._finish(st, stamps, keep, z, cov_rot, 0, flags, arrivals)

    def _differential(
        self, s, st, stamps, keep, pos, Rm, cov, cov_rot, r6, Rt, flags, arrivals, sub,
        source_frame,
    ):
        """
        Turn consecutive poses into a twist (differential mode).

        Consecutive poses → twist (reference §6.7): Δ = prev⁻¹·cur rotated by the target rotation,
        divided by the header dt; covariance (R_cur + R_prev)·dt (upstream multiplies).
        """
        sel = keep.nonzero()[0]
        out_keep = np.zeros_like(keep)
        n_extra = pos.shape[:-2]
        vel = np.zeros(n_extra + (stamps.size, 6))
        tcov = np.zeros(n_extra + (stamps.size, 6, 6))
        for i in sel.tolist():
            t = int(stamps[i])
            if sub.prev is not None:
                Rp, pp, cp, tp = sub.prev
                # upstream's dt: toSec(header stamp) − toSec(last message time), the first as
                # sec + nanosec·1e-9, the second as ns·1e-9 (both doubles: at epoch stamps this
                # differs from (t − tp)·1e-9 by up to ~1e-7 s); a zero dt divides by zero there
                # too, giving inf/NaN rates whose entries the core ignores
                dt = (float(t // NS) + float(t % NS) * 1e-9) - float(tp) * 1e-9
                Rpt = np.swapaxes(Rp, -1, -2)
                dR = Rt @ (Rpt @ Rm[..., i, :, :])
                dp = (Rpt @ (pos[..., i, :] - pp)[..., None])[..., 0] @ Rt.T
                with np.errstate(divide='ignore', invalid='ignore'):
                    vel[..., i, 0:3] = dp / dt
                    vel[..., i, 3:6] = _rpy(dR) / dt
                tcov[..., i, :, :] = (cov_rot[..., i, :, :] + r6 @ cp @ r6.T) * dt
                out_keep[i] = True
            sub.prev = (
                Rm[..., i, :, :].copy(),
                pos[..., i, :].copy(),
                cov[..., i, :, :].copy(),
                t,
            )
        twist_flags = [False] * STATE_SIZE
        twist_flags[6:12] = flags[0:6]
        if not out_keep.any():
            return None
        # the twist goes through prepareTwist with frame = the pose's source frame (base_link, or
        # the child frame with pose_use_child_frame; an IMU's is base_link)
        tw_st = SubTopic(st.name, 'twist', tuple(twist_flags), st.rejection_threshold)
        return self._twist_core(
            tw_st,
            stamps,
            out_keep,
            vel[..., 0:3],
            vel[..., 3:6],
            tcov,
            source_frame or self.params.base_link_frame,
            arrivals,
            topic=st.name,
        )

    def _frame_plan(self, st: SubTopic, part: str, frame) -> _FramePlan | None:
        """
        Return the frame-dependent part of a twist or acceleration.

        base_link ← ``frame`` transform and the update-vector entries ``part`` ('twist': 6..11,
        'accel': 12..14) masked by its rotation (cached per static tree version).
        """
        version = self.tf.version
        key = (part, st.name, st.update_vector, frame, version)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        T = self._lookup(st.name, self.params.base_link_frame, frame)
        if T is None:
            return None
        Rt, tt = T
        flags = list(st.update_vector)
        if part == 'twist':
            flags[6:9] = _mask(Rt, flags[6:9])
            flags[9:12] = _mask(Rt, flags[9:12])
        else:
            flags[12:15] = _mask(Rt, flags[12:15])
        plan = _FramePlan(
            Rt, tt, bool(np.any(tt != 0)), tuple(flags), _rot6(Rt) if part == 'twist' else None
        )
        self._plans[key] = plan
        return plan

    def _twist_core(self, st: SubTopic, stamps, keep, v, w, cov6, frame, arrivals, topic=None):
        plan = self._frame_plan(st, 'twist', frame)
        if plan is None:
            return None
        Rt, r6 = plan.Rt, plan.r6
        z = np.zeros(v.shape[:-1] + (STATE_SIZE,))
        z[..., 6:9] = v @ Rt.T
        z[..., 9:12] = w @ Rt.T
        terms = StateTerms(twist_lever=plan.tt.copy()) if plan.lever else None
        return self._finish(
            st, stamps, keep, z, r6 @ cov6 @ r6.T, 6, plan.flags, arrivals, terms, topic
        )

    def _accel_core(
        self,
        s: SensorConfig,
        st: SubTopic,
        stamps,
        keep,
        a,
        acov,
        Rq,
        has_orientation,
        frame,
        arrivals,
    ):
        p = self.params
        plan = self._frame_plan(st, 'accel', frame)
        if plan is None:
            return None
        Rt, tt = plan.Rt, plan.tt
        acc = a @ Rt.T
        terms = StateTerms()
        if plan.lever:
            terms.accel_lever = tt.copy()
        if s.remove_gravitational_acceleration:
            g = p.gravitational_acceleration
            if s.relative:  # ros2: Rotᵀ·R_msgᵀ·(0,0,g)
                rot_norm = g * np.einsum('ij,...j->...i', Rt.T, Rq[..., 2, :])
            else:  # R_msgᵀ·(0,0,g) = g·(row 2 of R_msg)
                rot_norm = g * Rq[..., 2, :]
            with_o = has_orientation[..., None]
            acc = acc - np.where(with_o, rot_norm, 0.0)
            if not np.all(has_orientation):
                if np.any(has_orientation):
                    raise ValueError(
                        f'{st.name}: orientation covariance[0] == -1 on some messages only; '
                        'feed such messages one at a time'
                    )
                terms.gravity_rot, terms.gravity = Rt.copy(), g
        z = np.zeros(a.shape[:-1] + (STATE_SIZE,))
        z[..., 12:15] = acc
        has_terms = terms.accel_lever is not None or terms.gravity_rot is not None
        return self._finish(
            st,
            stamps,
            keep,
            z,
            Rt @ acov @ Rt.T,
            12,
            plan.flags,
            arrivals,
            terms if has_terms else None,
        )


@dataclass
class Measurement:
    """One prepared measurement (per-message path): z (..., 15), R (..., 15, 15)."""

    topic: str
    stamp_ns: int
    z: np.ndarray
    R: np.ndarray
    update_vector: tuple
    threshold: float = math.inf
    extra: dict = field(default_factory=dict)


def _cov_unset(cov3) -> np.ndarray:
    """
    Tell which IMU blocks are marked absent.

    IMU block absent: covariance[0] == −1 (|c0 + 1| < 1e-9), over the N axis (batch axes must
    agree).
    """
    c0 = np.asarray(cov3)[..., 0, 0]
    unset = np.abs(c0 + 1.0) < 1e-9
    if unset.ndim > 1:
        flat = unset.reshape(-1, unset.shape[-1])
        if not (flat == flat[0]).all():
            raise ValueError('IMU covariance[0] == -1 must agree across the runs of a batch')
        unset = flat[0]
    return unset


def _cov6(c):
    c = np.asarray(c, float)
    return c.reshape(c.shape[:-1] + (6, 6))


def _vec(obj, fields: str) -> np.ndarray:
    return np.array([[float(getattr(obj, f)) for f in fields]])
