# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
robot_localization's 15-state EKF core (``Ekf`` + ``FilterBase``), batched over K independent runs.

Reference: ``shared/reference/robot_localization.md`` §1–§4. Every array carries a leading K axis
(x: (K, 15), P: (K, 15, 15)); K runs with identical message *timing* but different values are
filtered together in one vectorised pass. A single run is K = 1.

Semantics reproduced (each a fact in exactly one place here):
* prediction: omnidirectional model ``x⁺ = A(x)·x`` with trig of the prior; ``P ← J P Jᵀ + dt·Q``;
  dynamic process noise scales the pose block of Q by ‖x[6:12]‖²; angles wrapped by ``wrap``;
* correction: H is a selection matrix (index set = flagged ∧ finite), R diagonal abs() then clamped
  to 1e-9, ``S = P[idx,idx] + R``, explicit inverse, wrapped angle innovations, Mahalanobis gate
  ``νᵀS⁻¹ν ≥ thr²`` rejects the whole measurement, Joseph-form covariance (expanded), angles
  wrapped after an accepted update; the arithmetic of both is ``kernel.predict``/``correct``
  (K = 1's, for every K);
* ``process``: first measurement initialises (x[i] = z[i], P[i,j] = R[i,j] for flagged i, j — no
  clamp, NaN copied as upstream does), δ > 0 predict + correct, δ = 0 correct, δ < 0 correct at the
  current state without moving last_time.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
from vepd_ros.judge import kernel
from vepd_ros.judge.kernel import STATE_SIZE, wrap  # noqa: F401 (wrap: re-exported, one wrap)

STATE_NAMES = (
    'X',
    'Y',
    'Z',
    'ROLL',
    'PITCH',
    'YAW',
    'VX',
    'VY',
    'VZ',
    'VROLL',
    'VPITCH',
    'VYAW',
    'AX',
    'AY',
    'AZ',
)
X, Y, Z, ROLL, PITCH, YAW, VX, VY, VZ, VROLL, VPITCH, VYAW, AX, AY, AZ = range(15)
ANGLES = (ROLL, PITCH, YAW)

DEFAULT_PROCESS_NOISE_DIAG = (
    0.05,
    0.05,
    0.06,
    0.03,
    0.03,
    0.06,
    0.025,
    0.025,
    0.04,
    0.01,
    0.01,
    0.02,
    0.01,
    0.01,
    0.015,
)
DEFAULT_INITIAL_COVARIANCE = 1e-9
COVARIANCE_EPSILON = 1e-9
"""Measurement variances below this are raised to it in ``correct`` (not at initialisation)."""

STATUS_REJECTED, STATUS_FUSED, STATUS_INITIALISED = 0, 1, 2


def covariance_matrix(values, name: str = 'covariance') -> np.ndarray:
    """
    Build a 15×15 matrix from a parameter list.

    15 values → diagonal matrix; 225 values → full matrix read row-major (robot_localization).
    """
    v = np.asarray(values, dtype=float).ravel()
    if v.size == STATE_SIZE:
        return np.diag(v)
    if v.size == STATE_SIZE * STATE_SIZE:
        return v.reshape(STATE_SIZE, STATE_SIZE).copy()
    raise ValueError(
        f'{name}: expected 15 (diagonal) or 225 (full, row-major) values, got {v.size}'
    )


@dataclass(frozen=True)
class IndexSet:
    """Precomputed index facts for one update vector: what ``correct`` selects and wraps."""

    idx: np.ndarray  # state indices, ascending
    ang: np.ndarray  # positions within idx that are roll/pitch/yaw
    sel: object = None  # K = 1 path: slice(a, b) when idx is contiguous, else idx (fancy)
    idx_list: tuple = ()  # idx as Python ints
    ang_list: tuple = ()  # ang as Python ints
    block: object = (
        None  # K = 1 path: flat positions (m, m) of P[idx, idx] in a 15×15 matrix (P.take)
    )

    @staticmethod
    def of(idx) -> 'IndexSet':
        idx = np.asarray(idx, dtype=np.intp)
        ang = np.nonzero((idx >= ROLL) & (idx <= YAW))[0]
        m = idx.size
        il = tuple(idx.tolist())
        contiguous = m > 0 and il == tuple(range(il[0], il[0] + m))
        sel = slice(il[0], il[0] + m) if contiguous else idx
        al = tuple(ang.tolist())
        block = idx[:, None] * STATE_SIZE + idx[None, :]
        return IndexSet(idx, ang, sel, il, al, block)


_INDEX_CACHE: dict = {}


def index_set(update_vector) -> IndexSet:
    """Return the cached ``IndexSet`` of a 15-bool update vector (or a tuple of indices)."""
    if type(update_vector) is tuple:  # the common form (MeasurementSeries.update_vector): no numpy
        s = _UV_CACHE.get(update_vector)
        if s is not None:
            return s
    key = tuple(np.flatnonzero(np.asarray(update_vector, dtype=bool)).tolist())
    s = _INDEX_CACHE.get(key)
    if s is None:
        s = _INDEX_CACHE[key] = IndexSet.of(key)
    if (
        type(update_vector) is tuple
        and len(update_vector) == STATE_SIZE
        and all(type(v) is bool for v in update_vector)
    ):
        _UV_CACHE[update_vector] = s
    return s


_UV_CACHE: dict = {}


class Ekf:
    """
    The EKF core for K runs at once.

    ``x`` (K, 15), ``P`` (K, 15, 15); one ``last_time_ns`` and one ``initialized`` flag for the
    batch (the runs share message timing).
    """

    def __init__(
        self,
        process_noise=None,
        initial_covariance=None,
        initial_state=None,
        k: int = 1,
        dynamic_process_noise: bool = False,
    ):
        self.K = int(k)
        self.Q = (
            np.diag(DEFAULT_PROCESS_NOISE_DIAG)
            if process_noise is None
            else covariance_matrix(process_noise, 'process_noise_covariance')
        )
        self.P0 = (
            DEFAULT_INITIAL_COVARIANCE * np.eye(STATE_SIZE)
            if initial_covariance is None
            else covariance_matrix(initial_covariance, 'initial_estimate_covariance')
        )
        self.x0 = (
            np.zeros(STATE_SIZE)
            if initial_state is None
            else np.asarray(initial_state, float).reshape(15)
        )
        self.dynamic_process_noise = bool(dynamic_process_noise)
        self._ws = kernel.Workspace(self.K)  # predict/correct work buffers, early-gate hints
        # reason -> count of refused updates (RosFilter shares its builder's)
        self.drops: dict = {}
        # given a value or covariance beyond kernel.OVERFLOW_RISK (which robot_localization takes):
        # numpy's overflow warnings off, non-finite predictions refused as updates are
        self.wild = False
        self.reset()

    def reset(self) -> None:
        """Back to the uninitialised state with the configured initial state and covariance."""
        self.x = np.tile(self.x0, (self.K, 1))
        self.P = np.tile(self.P0, (self.K, 1, 1))
        self.initialized = False
        self.last_time_ns: int | None = None

    # ------------------------------------------------------------------ prediction
    def predict(self, dt: float, control=None) -> None:
        """
        Advance every run by ``dt`` seconds (reference §2): ``kernel.predict``.

        ``control``: the controlled axes of ``kernel.control_change`` (None: no control).
        """
        if not self.wild:
            self.x, self.P = kernel.predict(
                self.x, self.P, dt, self.Q, self._ws, self.dynamic_process_noise, control
            )
            self.wild = kernel.state_risk(self.x, self.P)
            return
        x0, P0 = self.x.copy(), self.P.copy()
        with np.errstate(all='ignore'):
            x, P = kernel.predict(
                self.x, self.P, dt, self.Q, self._ws, self.dynamic_process_noise, control
            )
            bad = ~np.isfinite(x.sum(axis=1) + P.sum(axis=(1, 2)))
        if bad.any():  # upstream's state would not be finite: keep x and P, count it
            self._refuse('the prediction would not be finite', int(bad.sum()))
            x, P = x.copy(), P.copy()
            x[bad], P[bad] = x0[bad], P0[bad]
        self.x, self.P = x, P

    # ------------------------------------------------------------------ correction
    def correct(self, z, R, update_vector, threshold: float = math.inf):
        """
        Fuse a full-size measurement z (K, 15) / (15,), covariance R (K, 15, 15) / (15, 15).

        Entries are used where ``update_vector`` is set and z is finite (per run). Returns the
        per-run accepted mask (K,) — False where the Mahalanobis gate rejected the measurement.
        """
        z = np.broadcast_to(np.asarray(z, dtype=float), (self.K, STATE_SIZE))
        R = np.asarray(R, dtype=float)
        flags = np.asarray(update_vector, dtype=bool)
        finite = np.isfinite(z) & flags
        thr2 = float(threshold) ** 2 if math.isfinite(threshold) else math.inf
        if (finite == finite[0]).all():
            s = index_set(finite[0])
            if s.idx.size == 0:
                return np.ones(self.K, bool)
            Rs = R[..., s.idx[:, None], s.idx]
            return self.correct_subset(s, z[:, s.idx], Rs, thr2)
        # runs disagree on which entries are finite: one pass per pattern
        accepted = np.ones(self.K, bool)
        patterns, inverse = np.unique(finite, axis=0, return_inverse=True)
        for k, pat in enumerate(patterns):
            rows = np.flatnonzero(inverse.ravel() == k)
            s = index_set(pat)
            if s.idx.size == 0:
                continue
            Rs = R[..., s.idx[:, None], s.idx]
            if Rs.ndim == 3:
                Rs = Rs[rows]
            accepted[rows] = self.correct_subset(s, z[rows][:, s.idx], Rs, thr2, rows=rows)
        return accepted

    def correct_subset(self, *args, **kwargs):
        """``_correct_subset`` (with numpy's overflow warnings off once ``wild``)."""
        if not self.wild:  # a state grown beyond kernel.STATE_RISK: the next step may overflow
            acc = self._correct_subset(*args, **kwargs)
            self.wild = kernel.state_risk(self.x, self.P)
            return acc
        with np.errstate(all='ignore'):
            return self._correct_subset(*args, **kwargs)

    def _correct_subset(
        self, s: IndexSet, zs, Rs, thr2: float = math.inf, rows=None, clamped: bool = False
    ):
        """
        Correct the selected runs with the measured entries (the core update).

        Core update on the selected entries: zs (K', m), Rs (K', m, m) or (m, m), thr2 = thr² (inf:
        no gate). ``rows`` limits the update to those runs. ``clamped``: Rs already went through
        ``clamp_variances`` (it is idempotent; the array path clamps whole series at once). Returns
        accepted (K',).
        """
        Rs = np.asarray(Rs, dtype=float)
        if not clamped:
            Rs = clamp_variances(Rs)
        zs = np.asarray(zs, dtype=float)
        if rows is None:
            if not s.idx_list:
                return np.ones(self.K, bool)
            self.x, self.P, acc, refused = kernel.correct(
                self.x, self.P, s, zs, Rs, thr2, self._ws
            )
        else:
            rows = np.asarray(rows)
            if not s.idx_list:
                return np.ones(rows.size, bool)
            xn, Pn, acc, refused = kernel.correct(
                self.x[rows], self.P[rows], s, zs, Rs, thr2, self._ws
            )
            self.x[rows], self.P[rows] = xn, Pn
        for reason, n in refused.items():
            self._refuse(reason, n)
        return acc

    def _refuse(self, reason: str, n: int = 1) -> None:
        """Count updates refused because they would leave x or P not finite (or S was singular)."""
        key = 'update refused: ' + reason
        self.drops[key] = self.drops.get(key, 0) + int(n)

    def correct_k1_checked(
        self, s: IndexSet, zs, Rs: np.ndarray, thr2: float = math.inf, rdiag=None
    ) -> bool:
        """
        Correct one run (K = 1) and return whether the update was accepted.

        zs: the m finite entries (list), Rs (m, m) already clamped; ``rdiag``: the early gate's
        R diagonal (``gate_bound_variances``) or None. A singular S or a non-finite result is
        refused and counted.
        """
        if not self.wild:
            res = kernel.correct_one(
                self.x, self.P[0], s, zs, Rs, thr2, rdiag, self._ws.gate_first
            )
        else:
            with np.errstate(all='ignore'):
                res = kernel.correct_one(
                    self.x, self.P[0], s, zs, Rs, thr2, rdiag, self._ws.gate_first
                )
        if type(res) is tuple:
            self.x, self.P = res[0], res[1][None]
            if not self.wild:
                self.wild = kernel.state_risk(self.x, self.P)
            return True
        if res is not None:  # refused: singular S, a non-finite result or an overflowing d²
            self._refuse(res)
        return False

    # ------------------------------------------------------------------ time handling
    def initialise(self, t_ns: int, z, R, update_vector) -> None:
        """First measurement: copy flagged values and covariances (no clamp, reference §4)."""
        flags = np.asarray(update_vector, dtype=bool)
        idx = np.flatnonzero(flags)
        z = np.broadcast_to(np.asarray(z, float), (self.K, STATE_SIZE))
        R = np.broadcast_to(np.asarray(R, float), (self.K, STATE_SIZE, STATE_SIZE))
        zi = z[:, idx]
        finite = np.isfinite(zi)
        # a non-finite entry keeps the initial state's value (counted)
        if not finite.all():
            self._refuse('non-finite initial measurement entries', int((~finite).sum()))
            zi = np.where(finite, zi, self.x[:, idx])
        self.x[:, idx] = zi
        self.P[:, idx[:, None], idx] = R[:, idx[:, None], idx]
        self.initialized = True
        self.last_time_ns = int(t_ns)

    def process(self, t_ns: int, z, R, update_vector, threshold: float = math.inf):
        """
        ``FilterBase::processMeasurement``.

        Returns per-run status (K,) of STATUS_INITIALISED / STATUS_FUSED / STATUS_REJECTED.
        """
        t_ns = int(t_ns)
        if not self.wild:
            self.wild = kernel.overflow_risk(z, R)
        if not self.initialized:
            self.initialise(t_ns, z, R, update_vector)
            return np.full(self.K, STATUS_INITIALISED, np.int8)
        delta = t_ns - self.last_time_ns
        if delta > 0:
            self.predict(delta * 1e-9)
        acc = self.correct(z, R, update_vector, threshold)
        if delta >= 0:
            self.last_time_ns = t_ns
        return acc.astype(np.int8)

    def predict_to(self, t_ns: int) -> None:
        """
        Predict to time t (timeout / predict_to_current_time prediction).

        Predict by (t − last_time), last_time = t.
        """
        delta = int(t_ns) - self.last_time_ns
        self.predict(delta * 1e-9)
        self.last_time_ns = int(t_ns)


def gate_bound_variances(Rs) -> list:
    """
    Return each measurement's R diagonal when R is provably positive definite, else None.

    Per measurement of Rs (n, m, m), clamped: its diagonal as a list when Rs is strictly diagonally
    dominant with a positive diagonal (hence positive definite, Gershgorin), else None — the
    ``rdiag`` argument of the K = 1 early gate (``kernel.correct``).
    """
    Rs = np.asarray(Rs, dtype=float)
    d = np.diagonal(Rs, axis1=-2, axis2=-1)
    off = np.abs(Rs).sum(axis=-1) - np.abs(d)
    ok = ((d > off) & (d > 0.0)).all(axis=-1)
    if ok.all():
        return d.tolist()
    return [dk if o else None for dk, o in zip(d.tolist(), ok.tolist())]


def clamp_variances(Rs) -> np.ndarray:
    """
    Clamp the variances of measurement covariances.

    Copy of Rs (..., m, m) with the diagonal made |·| and raised to 1e-9 (off-diagonals kept).
    """
    Rs = np.array(Rs, dtype=float, order='C')
    m = Rs.shape[-1]
    d = Rs.reshape(Rs.shape[:-2] + (m * m,))[..., :: m + 1]  # the diagonal, as a strided view
    np.abs(d, out=d)
    np.maximum(d, COVARIANCE_EPSILON, out=d)  # NaN stays NaN, as d[d < eps] = eps did
    return Rs
