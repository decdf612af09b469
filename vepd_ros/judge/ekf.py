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
  ``νᵀS⁻¹ν ≥ thr²`` rejects the whole measurement, Joseph-form covariance (expanded, see
  ``_joseph``), angles wrapped after an accepted update;
* ``process``: first measurement initialises (x[i] = z[i], P[i,j] = R[i,j] for flagged i, j — no
  clamp, NaN copied as upstream does), δ > 0 predict + correct, δ = 0 correct, δ < 0 correct at the
  current state without moving last_time.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

try:  # LAPACK's inverse as np.linalg.inv calls it (private numpy module)
    from numpy.linalg import _umath_linalg
except ImportError:  # pragma: no cover - another numpy layout: the public function
    _umath_linalg = None
try:  # np.errstate(all='ignore') prepared once (numpy 2's own machinery)
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE_FPE = _make_extobj(all='ignore')
except Exception:  # pragma: no cover - numpy 1.x or a changed private API: np.errstate
    _extobj_contextvar = None

STATE_SIZE = 15
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

_TWO_PI = 2.0 * math.pi


def wrap(a):
    """
    Wrap angles to (−π, π] as robot_localization does.

    robot_localization's angle wrap (``angles::normalize_angle``): r = fmod(a + π, 2π);
    r ≤ 0 → r + π, else r − π. Works on floats and arrays.
    """
    if isinstance(a, float):
        r = math.fmod(a + math.pi, _TWO_PI)
        return r + math.pi if r <= 0.0 else r - math.pi
    r = np.fmod(np.asarray(a, dtype=float) + math.pi, _TWO_PI)
    return np.where(r <= 0.0, r + math.pi, r - math.pi)


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
    diag: tuple  # (arange(m), arange(m)) for diagonal access
    sel: object = None  # K = 1 path: slice(a, b) when idx is contiguous, else idx (fancy)
    idx_list: tuple = ()  # idx as Python ints
    ang_list: tuple = ()  # ang as Python ints
    ang_cols: object = (
        None  # ang as a slice when contiguous, else ang (batch path column selection)
    )
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
        ang_cols = (
            slice(al[0], al[-1] + 1) if al and al == tuple(range(al[0], al[-1] + 1)) else ang
        )
        block = idx[:, None] * STATE_SIZE + idx[None, :]
        return IndexSet(idx, ang, (np.arange(m), np.arange(m)), sel, il, al, ang_cols, block)


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
        self._pbuf = None  # _predict_batch work buffers (J rows 0..8, R|u, W)
        # _correct_k1's early gate: id(index set) -> entry to test first (a hint only)
        self._gate_first: dict = {}
        self._qbuf = np.empty((STATE_SIZE, STATE_SIZE))  # _predict_k1's dt·Q
        self._jbuf = _EYE_FLAT.copy()  # _predict_k1's Jacobian (flat) and its 15×15 view
        self._j2d = self._jbuf.reshape(STATE_SIZE, STATE_SIZE)
        # reason -> count of refused updates (RosFilter shares its builder's)
        self.drops: dict = {}
        self.reset()

    def reset(self) -> None:
        """Back to the uninitialised state with the configured initial state and covariance."""
        self.x = np.tile(self.x0, (self.K, 1))
        self.P = np.tile(self.P0, (self.K, 1, 1))
        self.initialized = False
        self.last_time_ns: int | None = None

    # ------------------------------------------------------------------ prediction
    def predict(self, dt: float) -> None:
        """Advance every run by ``dt`` seconds (reference §2)."""
        if self.K == 1:
            self._predict_k1(dt)
        else:
            self._predict_batch(dt)

    def _predict_k1(self, dt: float) -> None:
        """
        Predict one run (K = 1) by dt.

        K = 1 prediction: x⁺ = A(x)·x in scalar Python, the Jacobian scattered into an identity in
        one call, then ``J P Jᵀ + dt·Q`` on 2-D arrays. Equal to ``_predict_batch`` up to rounding
        (tested).
        """
        self.x = np.array([self._predict_k1_list(dt)])

    def _predict_k1_list(self, dt: float, xl: list | None = None) -> list:
        """
        Predict one run (K = 1) by dt and return x⁺ as a list.

        ``_predict_k1``: sets P, returns x⁺ as a list (for a caller that adjusts it further);
        ``xl``: x as a list when the caller has it.
        """
        x0, x1, x2, r, p, y, vx, vy, vz, vr, vp, vyaw, ax, ay, az = (
            self.x[0].tolist() if xl is None else xl
        )
        sr, cr, sp, cp, sy, cy = (
            math.sin(r),
            math.cos(r),
            math.sin(p),
            math.cos(p),
            math.sin(y),
            math.cos(y),
        )
        tp = math.tan(p)
        cpi = 1.0 / cp
        h = 0.5 * dt * dt
        r00, r01, r02 = cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr
        r10, r11, r12 = sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr
        r20, r21, r22 = -sp, cp * sr, cp * cr
        w0, w1, w2 = vx * dt + ax * h, vy * dt + ay * h, vz * dt + az * h
        srtp, crtp, srcpi, crcpi = sr * tp, cr * tp, sr * cpi, cr * cpi
        # x⁺ = A x (the rows of A written out; A's position rows act on w = v dt + a h)
        xr = r + vr * dt + srtp * dt * vp + crtp * dt * vyaw
        xp = p + cr * dt * vp - sr * dt * vyaw
        xy = y + srcpi * dt * vp + crcpi * dt * vyaw
        xr = math.fmod(xr + math.pi, _TWO_PI)
        xp = math.fmod(xp + math.pi, _TWO_PI)
        xy = math.fmod(xy + math.pi, _TWO_PI)
        xr = xr + math.pi if xr <= 0.0 else xr - math.pi
        xp = xp + math.pi if xp <= 0.0 else xp - math.pi
        xy = xy + math.pi if xy <= 0.0 else xy - math.pi
        xn = [
            x0 + r00 * w0 + r01 * w1 + r02 * w2,
            x1 + r10 * w0 + r11 * w1 + r12 * w2,
            x2 + r20 * w0 + r21 * w1 + r22 * w2,
            xr,
            xp,
            xy,
            vx + ax * dt,
            vy + ay * dt,
            vz + az * dt,
            vr,
            vp,
            vyaw,
            ax,
            ay,
            az,
        ]
        J = self._jbuf  # identity but for the entries written here, every time
        J[_J1_FLAT] = (
            r00 * dt,
            r01 * dt,
            r02 * dt,
            r00 * h,
            r01 * h,
            r02 * h,
            r10 * dt,
            r11 * dt,
            r12 * dt,
            r10 * h,
            r11 * h,
            r12 * h,
            r20 * dt,
            r21 * dt,
            r22 * dt,
            r20 * h,
            r21 * h,
            r22 * h,
            dt,
            srtp * dt,
            crtp * dt,
            cr * dt,
            -sr * dt,
            srcpi * dt,
            crcpi * dt,
            dt,
            dt,
            dt,
            (cy * sp * cr + sy * sr) * w1 + (-cy * sp * sr + sy * cr) * w2,
            -cy * sp * w0 + cy * cp * sr * w1 + cy * cp * cr * w2,
            -sy * cp * w0 + (-sy * sp * sr - cy * cr) * w1 + (-sy * sp * cr + cy * sr) * w2,
            (sy * sp * cr - cy * sr) * w1 + (-sy * sp * sr - cy * cr) * w2,
            -sy * sp * w0 + sy * cp * sr * w1 + sy * cp * cr * w2,
            cy * cp * w0 + (cy * sp * sr - sy * cr) * w1 + (cy * sp * cr + sy * sr) * w2,
            cp * cr * w1 - cp * sr * w2,
            -cp * w0 - sp * sr * w1 - sp * cr * w2,
            1.0 + (crtp * vp - srtp * vyaw) * dt,
            (cpi * cpi * sr * vp + cpi * cpi * cr * vyaw) * dt,
            (-sr * vp - cr * vyaw) * dt,
            (crcpi * vp - srcpi * vyaw) * dt,
            (srtp * cpi * vp + crtp * cpi * vyaw) * dt,
        )
        J = self._j2d
        if self.dynamic_process_noise:
            Q = self.Q.copy()
            Q[:6, :6] *= vx * vx + vy * vy + vz * vz + vr * vr + vp * vp + vyaw * vyaw
        else:
            Q = self.Q
        P = J @ self.P[0] @ J.T
        P += np.multiply(Q, dt, out=self._qbuf)
        self.P = P[None]
        return xn

    def _predict_batch(self, dt: float, dx=None) -> None:
        """
        Prediction vectorised over K runs (any K, including 1).

        ``dx`` (K, 15), optional: a change applied to the state before the transition
        (robot_localization's control accelerations): x⁺ = A(x)·(x + dx), while A, the Jacobian and
        Q come from the prior x.

        Structure used (equal to the dense ``J P Jᵀ`` up to rounding, tested): J is the identity
        outside rows 0–8, so ``J P`` changes rows 0–8 only and ``(J P) Jᵀ`` columns 0–8 only — two
        (K, 9, 15) products instead of two dense 15×15 ones. With u = R·w (w = v dt + a h) and the
        Euler-rate rows T(r, p): ∂(R w)/∂yaw = e_z × u, ∂(R w)/∂roll = R (e_x × w), ∂(R w)/∂pitch =
        (cy·u_z, sy·u_z, −(cp w0 + sp (sr w1 + cr w2))), and with a = sr vp + cr vyaw, b = cr vp −
        sr vyaw the angle rows are ∂/∂roll = (tp b, −a, cpi b) dt (+1 on the diagonal), ∂/∂pitch =
        (cpi² a, 0, tp cpi a) dt.
        """
        x, K = self.x, self.K
        buf = self._pbuf
        if buf is None or buf[0].shape[0] != K:
            J9 = np.zeros((K, 9, STATE_SIZE))
            J9[:, _DIAG[:9], _DIAG[:9]] = 1.0
            buf = self._pbuf = (J9, np.empty((_NJ, K)))
        J9, E = buf
        # scalar work on contiguous (K,) rows of xt = xᵀ; Jacobian entries gathered in E (_NJ, K)
        xt = x.T.copy()
        sa = np.sin(xt[3:6])
        ca = np.cos(xt[3:6])
        sr, sp, sy = sa
        cr, cp, cy = ca
        tp = np.tan(xt[4])
        cpi = 1.0 / cp
        h = 0.5 * dt * dt
        R = E[_E_R].reshape(3, 3, K)  # body → world rotation, R[i, j] (K,)
        cysp, sysp = cy * sp, sy * sp
        np.multiply(cy, cp, out=R[0, 0])
        np.subtract(cysp * sr, sy * cr, out=R[0, 1])
        np.add(cysp * cr, sy * sr, out=R[0, 2])
        np.multiply(sy, cp, out=R[1, 0])
        np.add(sysp * sr, cy * cr, out=R[1, 1])
        np.subtract(sysp * cr, cy * sr, out=R[1, 2])
        np.negative(sp, out=R[2, 0])
        np.multiply(cp, sr, out=R[2, 1])
        np.multiply(cp, cr, out=R[2, 2])
        np.multiply(E[_E_R], dt, out=E[_E_RDT])
        np.multiply(E[_E_R], h, out=E[_E_RH])
        w = xt[6:9] * dt  # w = v dt + a h  (3, K)
        w += xt[12:15] * h
        u = (R * w).sum(axis=1)  # R w  (3, K)
        w0, w1, w2 = w
        # ∂(R w)/∂roll = R (e_x × w), ∂/∂pitch, ∂/∂yaw = e_z × (R w)
        roll_col = E[_E_ROLL]
        np.multiply(R[:, 2], w1, out=roll_col)
        roll_col -= R[:, 1] * w2
        np.multiply(cy, u[2], out=E[_E_P0])
        np.multiply(sy, u[2], out=E[_E_P1])
        np.negative(cp * w0 + sp * (sr * w1 + cr * w2), out=E[_E_P2])
        np.negative(u[1], out=E[_E_Y0])
        E[_E_Y1] = u[0]
        # Euler-rate block T·dt (rows 3..5, columns 9..11) and its derivatives
        vp, vyaw = xt[10], xt[11]
        a = sr * vp
        a += cr * vyaw
        b = cr * vp
        b -= sr * vyaw
        adt, bdt = a * dt, b * dt
        srtp, crtp, srcpi, crcpi = sr * tp, cr * tp, sr * cpi, cr * cpi
        E[_E_DT] = dt
        np.multiply(srtp, dt, out=E[_E_T310])
        np.multiply(crtp, dt, out=E[_E_T311])
        np.multiply(cr, dt, out=E[_E_T410])
        np.multiply(sr, -dt, out=E[_E_T411])
        np.multiply(srcpi, dt, out=E[_E_T510])
        np.multiply(crcpi, dt, out=E[_E_T511])
        np.multiply(tp, bdt, out=E[_E_J33])
        E[_E_J33] += 1.0
        np.multiply(cpi * cpi, adt, out=E[_E_J34])
        np.negative(adt, out=E[_E_J43])
        np.multiply(cpi, bdt, out=E[_E_J53])
        np.multiply(tp * cpi, adt, out=E[_E_J54])
        J9.reshape(K, 9 * STATE_SIZE)[:, _J9_FLAT] = E[9:].T  # E[0:9] is R itself

        # state transition x⁺ = A(x)·(x + dx)
        if dx is not None:
            xt = xt + dx.T
            w = xt[6:9] * dt
            w += xt[12:15] * h
            u = (R * w).sum(axis=1)
            vp, vyaw = xt[10], xt[11]
            adt = (sr * vp + cr * vyaw) * dt
            bdt = (cr * vp - sr * vyaw) * dt
        xn = xt.copy()
        xn[0:3] += u
        xn[3] += xt[9] * dt + tp * adt
        xn[4] += bdt
        xn[5] += cpi * adt
        xn[6:9] += xt[12:15] * dt
        _wrap_inplace(xn[3:6])
        xn = xn.T.copy()

        if self.dynamic_process_noise:
            vel2 = np.einsum('ki,ki->k', x[:, 6:12], x[:, 6:12])
            Q = np.broadcast_to(self.Q, (K, 15, 15)).copy()
            Q[:, :6, :6] = vel2[:, None, None] * self.Q[:6, :6]
            Qdt = dt * Q
        else:
            Qdt = dt * self.Q
        P = self.P
        JP = P.copy()
        np.matmul(J9, P, out=JP[:, :9, :])  # rows 0..8 of J P
        Pn = JP
        Pn[:, :, :9] = np.matmul(JP, J9.transpose(0, 2, 1))  # columns 0..8 of (J P) Jᵀ
        Pn += Qdt
        self.x = xn
        self.P = Pn

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

    def correct_subset(
        self, s: IndexSet, zs, Rs, thr2: float = math.inf, rows=None, clamped: bool = False
    ):
        """
        Correct the selected runs with the measured entries (the core update).

        Core update on the selected entries: zs (K', m), Rs (K', m, m) or (m, m), thr2 = thr² (inf:
        no gate). ``rows`` limits the update to those runs. ``clamped``: Rs already went through
        ``clamp_variances`` (it is idempotent; the array path clamps whole series at once). Returns
        accepted (K',).
        """
        if self.K == 1 and rows is None:
            Rs = np.asarray(Rs, dtype=float)
            m = len(s.idx_list)
            Rs = Rs.reshape(m, m) if clamped else clamp_variances(Rs.reshape(m, m))
            zl = np.asarray(zs, dtype=float).ravel().tolist()
            return np.array([self.correct_k1_checked(s, zl, Rs, thr2)])
        try:
            return self._correct_subset_batch(s, zs, Rs, thr2, rows, clamped)
        except np.linalg.LinAlgError:  # a singular S in some run: those runs one by one
            rows_l = range(self.K) if rows is None else list(rows)
            out = np.zeros(len(rows_l), bool)
            Rs = np.asarray(Rs, float)
            for n, r in enumerate(rows_l):
                R1 = Rs[n: n + 1] if Rs.ndim == 3 else Rs
                try:
                    out[n] = self._correct_subset_batch(
                        s, np.asarray(zs)[n: n + 1], R1, thr2, [r], clamped
                    )[0]
                except np.linalg.LinAlgError:
                    self._refuse('singular innovation covariance')
            return out

    def _refuse(self, reason: str, n: int = 1) -> None:
        """Count updates refused because they would leave x or P not finite (or S was singular)."""
        key = 'update refused: ' + reason
        self.drops[key] = self.drops.get(key, 0) + int(n)

    def correct_k1_checked(
        self, s: IndexSet, zs, Rs: np.ndarray, thr2: float = math.inf, rdiag=None
    ) -> bool:
        """
        Correct one run, refusing and counting a singular innovation covariance.

        ``_correct_k1`` with a singular innovation covariance refused and counted instead of
        raised.
        """
        try:
            return self._correct_k1(s, zs, Rs, thr2, rdiag)
        except np.linalg.LinAlgError:
            self._refuse('singular innovation covariance')
            return False

    def _correct_k1(
        self, s: IndexSet, zs, Rs: np.ndarray, thr2: float = math.inf, rdiag=None
    ) -> bool:
        """
        K = 1 update: zs m finite floats (list), Rs (m, m) already clamped.

        The innovation, the Mahalanobis distance and (m ≤ 3) the inverse of S in scalar Python
        (adjugate / determinant); gain and Joseph form on 2-D arrays, contiguous index sets as
        slices (views). Equal to ``_correct_subset_batch`` up to rounding (tested). Returns
        accepted.

        ``rdiag``: Rs's diagonal (list) when Rs is positive definite (``gate_bound_variances``),
        which allows the early gate: for positive-definite S, Cauchy–Schwarz in S's inner product
        gives νᵀS⁻¹ν ≥ ν_k²/S_kk for every entry k, so one entry with ν_k² ≥ thr²·S_kk (a relative
        margin of 1e-9 above the rounding of ν_k and S_kk) rejects the measurement with no inverse
        — the verdict of the exact distance. Undecided measurements take the full computation.
        """
        idx = s.idx_list
        m = len(idx)
        if m == 0:
            return True
        P = self.P[0]
        if rdiag is not None and thr2 != math.inf:
            x, t, ang = self.x, thr2 * _GATE_MARGIN, s.ang_list
            first = self._gate_first.get(id(s), 0)  # the entry that rejected last time goes first
            for k in (first, *range(m)):
                i = idx[k]
                n = zs[k] - x.item(i)
                if ang and k in ang:
                    r = math.fmod(n + math.pi, _TWO_PI)
                    n = r + math.pi if r <= 0.0 else r - math.pi
                q = n * n
                if (
                    q >= t * (P.item(i, i) + rdiag[k]) and q != math.inf
                ):  # an infinite ν: the full way
                    self._gate_first[id(s)] = k
                    return False
        sel = s.sel
        if isinstance(sel, slice):
            HP = P[sel]  # H P  (m, 15), a view
            S = HP[:, sel] + Rs
        else:  # S from one gather; H P only once the gate has passed
            HP = None
            S = P.take(s.block) + Rs
        xl = self.x[0].tolist()
        if m == 3:
            i0, i1, i2 = idx
            n0, n1, n2 = zs[0] - xl[i0], zs[1] - xl[i1], zs[2] - xl[i2]
            if s.ang_list:
                nu = [n0, n1, n2]
                for k in s.ang_list:
                    r = math.fmod(nu[k] + math.pi, _TWO_PI)
                    nu[k] = r + math.pi if r <= 0.0 else r - math.pi
                n0, n1, n2 = nu
            (a, b, c), (d, e, f), (g, h, i) = S.tolist()
            A, B, C = e * i - f * h, f * g - d * i, d * h - e * g
            det = a * A + b * B + c * C
            if det == 0.0:
                raise np.linalg.LinAlgError('Singular matrix')
            inv = 1.0 / det
            a, b, c, d, e, f, g, h, i = (
                A * inv,
                (c * h - b * i) * inv,
                (b * f - c * e) * inv,
                B * inv,
                (a * i - c * g) * inv,
                (c * d - a * f) * inv,
                C * inv,
                (b * g - a * h) * inv,
                (a * e - b * d) * inv,
            )
            w0, w1, w2 = (
                a * n0 + b * n1 + c * n2,
                d * n0 + e * n1 + f * n2,
                g * n0 + h * n1 + i * n2,
            )
            if thr2 != math.inf and n0 * w0 + n1 * w1 + n2 * w2 >= thr2:
                return False
            Siw = ((a, b, c, w0), (d, e, f, w1), (g, h, i, w2))  # [S⁻¹ | S⁻¹ν]
        else:
            nu = [zs[k] - xl[i] for k, i in enumerate(idx)]
            for k in s.ang_list:
                r = math.fmod(nu[k] + math.pi, _TWO_PI)
                nu[k] = r + math.pi if r <= 0.0 else r - math.pi
            if m == 1:
                if S.item() == 0.0:
                    raise np.linalg.LinAlgError('Singular matrix')
                Si = ((1.0 / S.item(),),)
            elif m == 2:
                (a, b), (c, d) = S.tolist()
                det = a * d - b * c
                if det == 0.0:
                    raise np.linalg.LinAlgError('Singular matrix')
                inv = 1.0 / det
                Si = ((d * inv, -b * inv), (-c * inv, a * inv))
            else:  # m > 3: LAPACK's inverse and numpy products
                nu = np.array(nu)
                if thr2 != math.inf:
                    Si = _inv(S, checked=False)
                    d2 = float(
                        np.dot(np.dot(nu, Si), nu)
                    )  # nu @ Si @ nu (the same gemv and dot, less overhead)
                    if not math.isfinite(
                        d2
                    ):  # not finite iff S⁻¹ is not (ν finite): np.linalg.inv's verdict
                        Si = np.linalg.inv(S)
                        d2 = float(np.dot(np.dot(nu, Si), nu))
                    if d2 >= thr2:
                        return False
                else:
                    Si = _inv(S)
                Siw = np.concatenate((Si, (Si @ nu)[:, None]), axis=1)
            if m < 3:
                w = [sum(row[j] * nu[j] for j in range(m)) for row in Si]
                if thr2 != math.inf and sum(nu[k] * w[k] for k in range(m)) >= thr2:
                    return False
                Siw = [tuple(row) + (wk,) for row, wk in zip(Si, w)]
        if HP is None:
            HP = P[sel]
        GX = P[:, sel] @ np.array(Siw)  # [G | G ν]: Kalman gain (15, m) and the state step
        G = GX[:, :m]
        xn = self.x + GX[:, m]
        row = xn[0]
        r, p, y = row[3:6].tolist()
        r, p, y = (
            math.fmod(r + math.pi, _TWO_PI),
            math.fmod(p + math.pi, _TWO_PI),
            math.fmod(y + math.pi, _TWO_PI),
        )
        row[3:6] = (
            r + math.pi if r <= 0.0 else r - math.pi,
            p + math.pi if p <= 0.0 else p - math.pi,
            y + math.pi if y <= 0.0 else y - math.pi,
        )
        # Joseph form: M = (I−GH)P = P − G·HP;  M(I−GH)ᵀ + G R Gᵀ = M − (M[:, idx] − G R)·Gᵀ
        M = P - G @ HP
        M -= (M[:, sel] - G @ Rs) @ G.T
        # x or P would not be finite: keep them, count it (two dot products with ones: NaN and Inf
        # propagate)
        if not math.isfinite(_dot(M.ravel(), _ONES225) + _dot(row, _ONES15)):
            self._refuse('the state would not be finite')
            return False
        self.x = xn
        self.P = M[None]
        return True

    def _correct_subset_batch(
        self, s: IndexSet, zs, Rs, thr2: float = math.inf, rows=None, clamped: bool = False
    ):
        """
        ``correct_subset`` vectorised over the runs (any K, including 1).

        The gate is decided first (S, S⁻¹, ν, d² only); the gain and the Joseph form are computed
        for the accepted runs alone — none accepted: nothing else to do; rejected runs keep x and P
        bit for bit. Same products as ``_correct_k1``: x⁺ = x + P Hᵀ·(S⁻¹ν), G = P Hᵀ S⁻¹, P⁺ = M −
        (M Hᵀ − G R) Gᵀ with M = P − G·HP.
        """
        idx = s.idx
        x = self.x if rows is None else self.x[rows]
        P = self.P if rows is None else self.P[rows]
        if not clamped:
            Rs = clamp_variances(Rs)
        HP = P.take(idx, axis=1)  # H P    (K, m, 15)
        S = HP.take(idx, axis=2)
        S += Rs
        nu = zs - x.take(idx, axis=1)
        if s.ang.size:
            _wrap_inplace(nu, s.ang_cols)
        sub = None
        if thr2 != math.inf:
            # gate first: S⁻¹ν by a solve (half the price of the inverse), the inverse only for the
            # runs that pass — with the ART gates most parts are rejected in every run
            w = np.linalg.solve(S, nu[:, :, None])  # S⁻¹ν  (K, m, 1)
            d2 = np.matmul(nu[:, None, :], w)[:, 0, 0]
            accepted = ~(d2 >= thr2)
            if not accepted.all():
                sub = np.flatnonzero(accepted)
                if sub.size == 0:
                    return accepted
                x, P, HP, S, w = x[sub], P[sub], HP[sub], S[sub], w[sub]
                if Rs.ndim == 3:
                    Rs = Rs[sub]
            Sinv = np.linalg.inv(S)
        else:
            accepted = None
            Sinv = np.linalg.inv(S)
            w = np.matmul(Sinv, nu[:, :, None])  # S⁻¹ν  (K, m, 1)
        PHt = P.take(idx, axis=2)  # P Hᵀ   (K, 15, m)
        xn = np.matmul(PHt, w)[:, :, 0]
        xn += x
        _wrap_inplace(xn, _ANGLE_SLICE)
        G = np.matmul(PHt, Sinv)  # Kalman gain (K, 15, m)
        M = P - np.matmul(G, HP)  # (I − GH) P
        C = M.take(idx, axis=2)
        C -= np.matmul(G, Rs)
        M -= np.matmul(C, G.transpose(0, 2, 1))
        finite = np.isfinite(xn.sum(axis=1) + M.sum(axis=(1, 2)))
        # runs whose x or P would not be finite keep theirs (counted)
        if not finite.all():
            self._refuse('the state would not be finite', int((~finite).sum()))
            ok = np.flatnonzero(finite)
            if rows is None:
                r = np.arange(x.shape[0]) if sub is None else sub
            else:
                r = np.asarray(rows) if sub is None else np.asarray(rows)[sub]
            self.x[r[ok]], self.P[r[ok]] = xn[ok], M[ok]
            acc = np.ones(x.shape[0], bool) if accepted is None else accepted.copy()
            pos = np.arange(acc.size) if sub is None else sub
            acc[pos[~finite]] = False
            return acc
        if rows is None and sub is None:
            self.x, self.P = xn, M
        else:
            r = rows if sub is None else (sub if rows is None else np.asarray(rows)[sub])
            self.x[r], self.P[r] = xn, M
        return np.ones(x.shape[0], bool) if accepted is None else accepted

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


_DIAG = np.arange(STATE_SIZE)
_ONES225 = np.ones(STATE_SIZE * STATE_SIZE)
_ONES15 = np.ones(STATE_SIZE)
_dot = np.dot
_ANGLE_COLS = np.array(ANGLES)
_ANGLE_SLICE = slice(ROLL, YAW + 1)
# _predict_batch: rows of its entry buffer E; E[9:] fill these flat positions (row·15 + col) of J's
# rows 0..8
_E_R, _E_RDT, _E_RH = slice(0, 9), slice(9, 18), slice(18, 27)
_E_ROLL, _E_P0, _E_P1, _E_P2, _E_Y0, _E_Y1 = slice(27, 30), 30, 31, 32, 33, 34
_E_DT, _E_T310, _E_T311, _E_T410, _E_T411, _E_T510, _E_T511 = slice(35, 39), 39, 40, 41, 42, 43, 44
_E_J33, _E_J34, _E_J43, _E_J53, _E_J54 = 45, 46, 47, 48, 49
_NJ = 50
_J9_FLAT = np.array(
    [r * 15 + c for r in range(3) for c in (6, 7, 8)]
    + [r * 15 + c for r in range(3) for c in (12, 13, 14)]
    + [
        0 * 15 + 3,
        1 * 15 + 3,
        2 * 15 + 3,
        0 * 15 + 4,
        1 * 15 + 4,
        2 * 15 + 4,
        0 * 15 + 5,
        1 * 15 + 5,
    ]
    + [3 * 15 + 9, 6 * 15 + 12, 7 * 15 + 13, 8 * 15 + 14]
    + [3 * 15 + 10, 3 * 15 + 11, 4 * 15 + 10, 4 * 15 + 11, 5 * 15 + 10, 5 * 15 + 11]
    + [3 * 15 + 3, 3 * 15 + 4, 4 * 15 + 3, 5 * 15 + 3, 5 * 15 + 4],
    dtype=np.intp,
)
_EYE_FLAT = np.eye(STATE_SIZE).ravel()
# flat positions (row·15 + col) of the entries _predict_k1 writes into J, in its order
_J1_FLAT = np.array(
    [r * 15 + c for r in range(3) for c in (6, 7, 8, 12, 13, 14)]
    + [
        3 * 15 + 9,
        3 * 15 + 10,
        3 * 15 + 11,
        4 * 15 + 10,
        4 * 15 + 11,
        5 * 15 + 10,
        5 * 15 + 11,
        6 * 15 + 12,
        7 * 15 + 13,
        8 * 15 + 14,
    ]
    + [
        0 * 15 + 3,
        0 * 15 + 4,
        0 * 15 + 5,
        1 * 15 + 3,
        1 * 15 + 4,
        1 * 15 + 5,
        2 * 15 + 3,
        2 * 15 + 4,
    ]
    + [3 * 15 + 3, 3 * 15 + 4, 4 * 15 + 3, 5 * 15 + 3, 5 * 15 + 4],
    dtype=np.intp,
)


def _inv(S: np.ndarray, checked: bool = True) -> np.ndarray:
    """
    Invert one float64 matrix with the LAPACK call of ``np.linalg.inv``.

    ``np.linalg.inv`` of one float64 matrix without its wrapper: the same LAPACK call, so the same
    bits. ``checked``: a result that is not finite (singular S) is redone by ``np.linalg.inv`` for
    its ``LinAlgError``; unchecked, the caller does that (NaN where LAPACK failed).
    """
    if _umath_linalg is None:  # pragma: no cover
        return np.linalg.inv(S)
    # np.linalg.inv ignores every floating-point error but 'invalid', which it raises (see below)
    if _extobj_contextvar is None:  # pragma: no cover
        with np.errstate(all='ignore'):
            Si = _umath_linalg.inv(S, signature='d->d')
    else:
        token = _extobj_contextvar.set(_IGNORE_FPE)
        try:
            Si = _umath_linalg.inv(S, signature='d->d')
        finally:
            _extobj_contextvar.reset(token)
    if checked and not math.isfinite(Si.sum()):
        return np.linalg.inv(S)
    return Si


_GATE_MARGIN = 1.0 + 1e-9


def gate_bound_variances(Rs) -> list:
    """
    Return each measurement's R diagonal when R is provably positive definite, else None.

    Per measurement of Rs (n, m, m), clamped: its diagonal as a list when Rs is strictly diagonally
    dominant with a positive diagonal (hence positive definite, Gershgorin), else None — the
    ``rdiag`` argument of ``Ekf._correct_k1``'s early gate.
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


def _wrap_cols(a: np.ndarray, cols) -> None:
    """wrap() applied in place to columns ``cols`` of a (K, n); scalar math for K = 1."""
    if a.shape[0] == 1:
        row = a[0]
        for c in cols.tolist() if isinstance(cols, np.ndarray) else cols:
            r = math.fmod(float(row[c]) + math.pi, _TWO_PI)
            row[c] = r + math.pi if r <= 0.0 else r - math.pi
    else:
        a[:, cols] = wrap(a[:, cols])


def _wrap_inplace(a: np.ndarray, cols=None) -> None:
    """
    Wrap angles in place.

    ``wrap`` in place on a (all of it, or its columns ``cols``: a slice or an index array), bit for
    bit the same numbers (r + π and r − π are the same single additions).
    """
    v = a if cols is None else a[:, cols]
    r = np.fmod(v + math.pi, _TWO_PI)
    r += np.where(r <= 0.0, math.pi, -math.pi)
    if cols is None:
        a[...] = r
    else:
        a[:, cols] = r


def _joseph(P, G, HP, Rs, idx):
    """
    Return the Joseph-form covariance update without forming the 15×15 I−GH.

    (I−GH) P (I−GH)ᵀ + G R Gᵀ without forming 15×15 I−GH: with M = P − G·HP = (I−GH)P,
    M (I−GH)ᵀ = M − M[:, idx]·Gᵀ.
    """
    M = P - np.matmul(G, HP)
    Gt = G.transpose(0, 2, 1)
    return M - np.matmul(M[:, :, idx], Gt) + np.matmul(np.matmul(G, Rs), Gt)
