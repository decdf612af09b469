# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The EKF's one predict and one correct (issue 14), pure functions for every K.

State arrays in, state arrays out: ``x`` (K, 15), ``P`` (K, 15, 15). The arithmetic is written once
as K = 1's: each expression takes floats (K = 1, plain Python, no numpy overhead) or (K,) columns
(a batch of K runs with identical timing). Element-wise IEEE arithmetic gives the same bits on
floats and on arrays, and a stacked ``np.matmul`` gives each run the bits of its own 2-D product,
so every run of a batch equals the same run filtered alone, bit for bit (test/test_kernel.py).
Reference: ``shared/reference/robot_localization.md`` §2–§3.
"""

from __future__ import annotations

import math

import numpy as np

STATE_SIZE = 15
REFUSED_SINGULAR = 'singular innovation covariance'
REFUSED_NOT_FINITE = 'the state would not be finite'
REFUSED_OVERFLOW = "Mahalanobis distance overflows (rejected, as by upstream's default gate)"
OVERFLOW_RISK = 1e100
"""Magnitude beyond which the filter's products may overflow. (1) Without a rejection threshold
upstream still gates, at DBL_MAX² = inf: d² = νᵀS⁻¹ν ≥ inf rejects when d² overflows. The judge
skips the distance without a threshold, except when an innovation entry exceeds this (d² can
overflow only then, short of an S⁻¹ beyond 1e100): that update is rejected as upstream rejects
it, and counted under ``REFUSED_OVERFLOW``. (2) A filter given a value or covariance beyond it
(``overflow_risk``) runs with numpy's overflow warnings off and refuses non-finite results
(``Ekf.wild``)."""


def overflow_risk(z, R) -> bool:
    """Whether a measurement has a value or covariance entry beyond ``OVERFLOW_RISK``."""
    with np.errstate(invalid='ignore'):
        return bool((np.abs(z) > OVERFLOW_RISK).any() or (np.abs(R) > OVERFLOW_RISK).any())


STATE_RISK = 1e30
"""State magnitude beyond which the next step's products may overflow. With every x entry and
P's trace below it (and inputs below ``OVERFLOW_RISK``), one prediction (J ≤ 1e30·dt) or one
update (G ≤ P·R⁻¹, R ≥ the clamp) stays far below DBL_MAX; beyond it the filter turns ``wild``."""


def state_risk(x, P) -> bool:
    """
    Whether some run's state has |x_i| or trace P beyond ``STATE_RISK`` (or is not finite).

    One pass: xᵀx + 1ᵀP1 + tr P per run. For symmetric positive semi-definite P, 1ᵀP1 ≥ 0, so
    the sum bounds tr P ≥ max |P_ij| from above; NaN and Inf propagate.
    """
    k = x.shape[0]
    if k == 1:  # two dot products (~1 µs; einsum cost ~25 µs at every step)
        xr = x.ravel()
        return not _dot(xr, xr) + _dot(P.ravel(), _ONES_EYE225) <= _STATE_RISK2
    tot = (x * x).sum(axis=1) + P.reshape(k, -1) @ _ONES_EYE225
    return not bool((tot <= _STATE_RISK2).all())


_STATE_RISK2 = STATE_RISK * STATE_RISK


FLOAT_RUNS_MAX = 16
"""Batches up to this many runs evaluate ``transition`` (and control) run by run on floats,
larger ones on columns (same bits). Measured crossover of the CPU cost per predict on the 2-core
box: 16–18 runs, with or without the yaw control of config/ekf.yaml (K = 16: 67 vs 75 µs, K = 20:
82 vs 77 µs)."""

_TWO_PI = 2.0 * math.pi
_GATE_MARGIN = 1.0 + 1e-9
_ONES225 = np.ones(STATE_SIZE * STATE_SIZE)
_ONES15 = np.ones(STATE_SIZE)
_ONES_EYE225 = _ONES225 + np.eye(STATE_SIZE).ravel()  # 1ᵀP1 + tr P as one dot
_dot = np.dot
_EYE_FLAT = np.eye(STATE_SIZE).ravel()
# flat positions (row·15 + col) of the Jacobian entries ``transition`` returns, in its order
J_FLAT = np.array(
    [r * 15 + c for r in range(3) for c in (6, 7, 8, 12, 13, 14)]
    + [3 * 15 + 9, 3 * 15 + 10, 3 * 15 + 11, 4 * 15 + 10, 4 * 15 + 11, 5 * 15 + 10, 5 * 15 + 11]
    + [6 * 15 + 12, 7 * 15 + 13, 8 * 15 + 14]
    + [0 * 15 + 3, 0 * 15 + 4, 0 * 15 + 5, 1 * 15 + 3, 1 * 15 + 4, 1 * 15 + 5, 2 * 15 + 3]
    + [2 * 15 + 4, 3 * 15 + 3, 3 * 15 + 4, 4 * 15 + 3, 5 * 15 + 3, 5 * 15 + 4],
    dtype=np.intp,
)


def wrap(a):
    """
    Wrap angles to (−π, π] as robot_localization does (``angles::normalize_angle``).

    r = fmod(a + π, 2π); r ≤ 0 → r + π, else r − π. A float gives a float, anything else an array
    (fmod is exact and the additions are single IEEE operations: the same bits either way).
    """
    if isinstance(a, float):
        return _wrap_float(a)
    r = np.fmod(np.add(a, math.pi, dtype=float), _TWO_PI)
    r += np.where(r <= 0.0, math.pi, -math.pi)  # r − π is r + (−π): the same single addition
    return r


def _wrap_float(a: float) -> float:
    """Return ``wrap`` of one float (the hot K = 1 paths call it directly: no type test)."""
    r = math.fmod(a + math.pi, _TWO_PI)
    return r + math.pi if r <= 0.0 else r - math.pi


def _tan(p):
    """Return tan(p) by ``math.tan`` for a float or each entry of an array (np.tan differs)."""
    if isinstance(p, float):
        return math.tan(p)
    return np.array([math.tan(v) for v in p.tolist()])


def transition(xc, dt, sin=math.sin, cos=math.cos, wrap_angle=_wrap_float):
    """
    Return (x⁺ as 15 columns, the 41 Jacobian entries at ``J_FLAT``, the prior's trig) of A(x).

    The omnidirectional model x⁺ = A(x)·x (trig of the prior; position rows act on
    w = v dt + a h, h = dt²/2) and its Jacobian. ``xc``: the 15 state entries, each a float
    (K = 1) or a (K,) array (one column per entry); ``dt``: a float, or a (K,) column of it with
    columns (an array·array operation costs half an array·float one; the same bits);
    ``sin``/``cos``: math's for floats, numpy's for arrays (equal on every input tested; tan is
    math's for both, np.tan differs); ``wrap_angle``: applied to x⁺'s angles (columns may defer
    it to one call on the three). The trig, (sr, cr, sp, cp, sy, cy, 1/cp, h, then R's nine
    entries row-major), is what ``_apply_control`` computes A δ with.
    """
    x0, x1, x2, r, p, y, vx, vy, vz, vr, vp, vyaw, ax, ay, az = xc
    sr, cr, sp, cp, sy, cy = sin(r), cos(r), sin(p), cos(p), sin(y), cos(y)
    tp = _tan(p)
    cpi = 1.0 / cp
    h = 0.5 * dt * dt
    # shared sub-expressions are the same operations on the same operands (same bits), computed
    # once: the expression tree of every entry is unchanged
    cysp, sysp, nysp = cy * sp, sy * sp, -sy * sp
    sycr, sysr, cycr, cysr = sy * cr, sy * sr, cy * cr, cy * sr
    r00, r01, r02 = cy * cp, cysp * sr - sycr, cysp * cr + sysr
    r10, r11, r12 = sy * cp, sysp * sr + cycr, sysp * cr - cysr
    r20, r21, r22 = -sp, cp * sr, cp * cr
    w0, w1, w2 = vx * dt + ax * h, vy * dt + ay * h, vz * dt + az * h
    srtp, crtp, srcpi, crcpi = sr * tp, cr * tp, sr * cpi, cr * cpi
    srtpdt, crtpdt, crdt, srcpidt, crcpidt = srtp * dt, crtp * dt, cr * dt, srcpi * dt, crcpi * dt
    u00, u01, u02 = r00 * w0, r01 * w1, r02 * w2
    ncysp, nysp_sr_cycr, cpi2 = -cy * sp, nysp * sr - cycr, cpi * cpi
    xr = wrap_angle(r + vr * dt + srtpdt * vp + crtpdt * vyaw)
    xp = wrap_angle(p + crdt * vp - sr * dt * vyaw)
    xy = wrap_angle(y + srcpidt * vp + crcpidt * vyaw)
    xn = [
        x0 + u00 + u01 + u02, x1 + r10 * w0 + r11 * w1 + r12 * w2,
        x2 + r20 * w0 + r21 * w1 + r22 * w2, xr, xp, xy,
        vx + ax * dt, vy + ay * dt, vz + az * dt, vr, vp, vyaw, ax, ay, az,
    ]
    jac = (
        r00 * dt, r01 * dt, r02 * dt, r00 * h, r01 * h, r02 * h,
        r10 * dt, r11 * dt, r12 * dt, r10 * h, r11 * h, r12 * h,
        r20 * dt, r21 * dt, r22 * dt, r20 * h, r21 * h, r22 * h,
        dt, srtpdt, crtpdt, crdt, -sr * dt, srcpidt, crcpidt, dt, dt, dt,
        r02 * w1 + (ncysp * sr + sycr) * w2,
        ncysp * w0 + r00 * sr * w1 + r00 * cr * w2,
        -sy * cp * w0 + nysp_sr_cycr * w1 + (nysp * cr + cysr) * w2,
        r12 * w1 + nysp_sr_cycr * w2,
        nysp * w0 + r10 * sr * w1 + r10 * cr * w2,
        u00 + u01 + u02,
        r22 * w1 - r21 * w2,
        -cp * w0 - sp * sr * w1 - sp * cr * w2,
        1.0 + (crtp * vp - srtp * vyaw) * dt,
        (cpi2 * sr * vp + cpi2 * cr * vyaw) * dt,
        (-sr * vp - cr * vyaw) * dt,
        (crcpi * vp - srcpi * vyaw) * dt,
        (srtp * cpi * vp + crtp * cpi * vyaw) * dt,
    )
    trig = (sr, cr, sp, cp, sy, cy, cpi, h, r00, r01, r02, r10, r11, r12, r20, r21, r22)
    return xn, jac, trig


def _np_max(a: float, b: float) -> float:
    """np.maximum on two floats: NaN propagates."""
    if a != a or b != b:
        return a if a != a else b
    return a if a >= b else b


def _np_min(a: float, b: float) -> float:
    """np.minimum on two floats: NaN propagates."""
    if a != a or b != b:
        return a if a != a else b
    return a if a <= b else b


def control_change(xc, dt: float, axes) -> list:
    """
    Return δ, robot_localization's control change for a timed-out (zero) command, as 15 columns.

    ``axes``: per controlled axis i (0–5) the tuple (i, deceleration limit, deceleration gain,
    acceleration limit, acceleration gain). Command 0: error −v; the deceleration pair applies
    when |v| > 0 (|set point| < |state|); acceleration = clamp(gain·error, ±limit); angular axes
    change the rate by acceleration·dt, linear axes set the acceleration (δ = a − x[12 + i]).
    ``xc``: floats (K = 1) or (K,) columns; absent entries of δ are 0.0.
    """
    d = [0.0] * STATE_SIZE
    scalar = isinstance(xc[0], float)
    for i, dlim, dgain, alim, again in axes:
        v = xc[6 + i]
        if scalar:
            lim, gain = (dlim, dgain) if abs(v) > 0.0 else (alim, again)
            a = _np_min(_np_max(gain * -v, -lim), lim)
        else:
            dec = np.abs(v) > 0.0
            lim = np.where(dec, dlim, alim)
            a = np.minimum(np.maximum(np.where(dec, dgain, again) * -v, -lim), lim)
        if i >= 3:
            d[6 + i] = a * dt
        else:
            d[12 + i] = a - xc[12 + i]
    return d


def _apply_control(out, d: list, dt, trig, tp) -> list:
    """
    Return A(x)·(x + δ) = (A x) + A δ as 15 entries, given ``out`` = A x (angles wrapped).

    The transfer matrix uses the prior angles (``trig``, from ``transition``), which control does
    not change: rate columns 9–11 into roll/pitch/yaw, acceleration columns 12–14 into position
    (R h) and velocity (dt); ``tp``: numpy's tan of the prior pitch (this term always had it).
    The position term R δ[12:15] h sums each row as numpy's einsum did on the box it was written
    on, ((p0 + p2) + p1) + 0. ``out``: 15 floats (K = 1) or a (15, K) array, δ's entries floats
    or (K,) columns; a δ without acceleration change skips the position term when it cannot
    change a bit (+0 added, R and h finite; with columns: in every run). The caller handles
    δ = 0 (x⁺ = A x, also where adding 0.0 would turn a −0.0 into +0.0) and wraps the angles.
    """
    sr, cr, sp, cp, sy, cy, cpi, h, r00, r01, r02, r10, r11, r12, r20, r21, r22 = trig
    scalar = isinstance(sr, float)
    if scalar:
        out = [a + b for a, b in zip(out, d)]
    else:  # the same 15 additions as one on the (15, K) block ``out`` (a float entry: a row)
        D = np.zeros(out.shape)
        for i, v in enumerate(d):
            if type(v) is not float or v != 0.0:
                D[i] = v
        out = list(out + D)
    d9, d10, d11, d12, d13, d14 = d[9:15]
    # without an acceleration change (float zeros) the position term is h·(+0): it changes nothing
    # when R and h are finite (x + 0.0 above left no −0.0 among the positions); K = 1 also asks
    # for non-zero positions, which costs nothing there
    skip = type(d12) is float and type(d13) is float and type(d14) is float and not (
        d12 or d13 or d14
    )
    if not scalar:  # δ's rows as columns: array·array operations (the same values and bits)
        d9, d10, d11, d12, d13, d14 = D[9:15]
    out[3] = out[3] + (d9 * dt + d10 * sr * tp * dt + d11 * cr * tp * dt)
    out[4] = out[4] + (d10 * cr * dt - d11 * sr * dt)
    out[5] = out[5] + (d10 * sr * cpi * dt + d11 * cr * cpi * dt)
    if skip:
        finite = sr * cr * sp * cp * sy * cy
        if scalar:
            skip = math.isfinite(finite) and out[0] and out[1] and out[2]
        else:
            skip = np.isfinite(finite * h).all()  # an overflow only computes the term
    if not skip:
        out[0] = out[0] + h * (((r00 * d12 + r02 * d14) + r01 * d13) + 0.0)
        out[1] = out[1] + h * (((r10 * d12 + r12 * d14) + r11 * d13) + 0.0)
        out[2] = out[2] + h * (((r20 * d12 + r22 * d14) + r21 * d13) + 0.0)
    out[6], out[7], out[8] = out[6] + dt * d12, out[7] + dt * d13, out[8] + dt * d14
    return out


def _identity(a):
    """Return ``a`` (``transition``'s angle wrap deferred by the column form)."""
    return a


class Workspace:
    """Work buffers of ``predict``/``correct`` for K runs, made once per filter."""

    def __init__(self, k: int):
        self.k = int(k)
        if self.k == 1:  # the Jacobian (flat) and its 15×15 view; dt·Q
            self.j_flat1 = _EYE_FLAT.copy()
            self.j2d = self.j_flat1.reshape(STATE_SIZE, STATE_SIZE)
            self.qbuf = np.empty((STATE_SIZE, STATE_SIZE))
        else:  # identity but for the entries ``transition`` writes
            self.j = np.tile(np.eye(STATE_SIZE), (self.k, 1, 1))
            self.j_flat = self.j.reshape(self.k, STATE_SIZE * STATE_SIZE)
            self.j_t = self.j.transpose(0, 2, 1)
            self.dt_col = np.empty(self.k)
        # the early gate's hint: id(index set) -> entry to test first (decides nothing)
        self.gate_first: dict = {}


def _transition_floats(xl: list, dt: float, control) -> tuple:
    """Return (x⁺ (15 floats), the Jacobian entries) of one run: K = 1's predict of the state."""
    xn, jac, trig = transition(xl, dt)
    if control is not None:
        d = control_change(xl, dt, control)
        if d.count(0.0) != STATE_SIZE:  # δ = 0 keeps A x (NaN is not == 0, as in .any())
            xn = _apply_control(xn, d, dt, trig, float(np.tan(xl[4])))
            xn[3], xn[4], xn[5] = _wrap_float(xn[3]), _wrap_float(xn[4]), _wrap_float(xn[5])
    return xn, jac


def predict(x, P, dt: float, Q, ws: Workspace, dynamic: bool = False, control=None):
    """
    Return (x⁺, P⁺): x⁺ = A(x)·(x + δ), P⁺ = J P Jᵀ + dt·Q (reference §2).

    J and Q come from the prior x. ``dynamic``: dynamic process noise, Q's pose block scaled by
    ‖x[6:12]‖². ``control``: the axes of ``control_change`` (None: δ = 0). K = 1 runs the
    expressions on floats with the 2-D product; K > 1 on (K,) columns with stacked products —
    each run bit for bit its K = 1 result. ``transition`` runs on each run's floats up to
    ``FLOAT_RUNS_MAX`` runs (its ~200 operations cost less as Python floats than as numpy calls
    on short columns), on columns beyond; the same expressions either way. Cost of the column
    form (2-core box, K = 30): ~45 µs for transition's 183 element-wise numpy calls and ~20 µs
    for the two dense stacked products (J P Jᵀ: the bits of K = 1's 2-D products; the (K, 9, 15)
    products of f6fbbe6's batch predict give other bits) — a quarter more than that predict.
    """
    k = x.shape[0]
    if k == 1:
        xl = x[0].tolist()
        xn, jac = _transition_floats(xl, dt, control)
        ws.j_flat1[J_FLAT] = jac
        J = ws.j2d
        if dynamic:
            vx, vy, vz, vr, vp, vyaw = xl[6:12]
            Q = Q.copy()
            Q[:6, :6] *= vx * vx + vy * vy + vz * vz + vr * vr + vp * vp + vyaw * vyaw
        Pn = J @ P[0] @ J.T
        Pn += np.multiply(Q, dt, out=ws.qbuf)
        return np.array([xn]), Pn[None]
    xc = list(x.T)
    if k <= FLOAT_RUNS_MAX:  # run by run on floats: fewer numpy calls than columns
        rows = [_transition_floats(r, dt, control) for r in x.tolist()]
        ws.j_flat[:, J_FLAT] = [r[1] for r in rows]
        xt = np.array([r[0] for r in rows]).T  # (15, K)
    else:  # columns; dt as a column, the three angle wraps as one call
        dtc = ws.dt_col
        dtc.fill(dt)
        xn, jac, trig = transition(xc, dtc, np.sin, np.cos, _identity)
        ws.j_flat[:, J_FLAT] = np.array(jac).T
        xt = np.array(xn)  # (15, K)
        xt[3:6] = wrap(xt[3:6])
        if control is not None:
            d = control_change(xc, dtc, control)
            # the runs whose δ is not all zero (NaN != 0: moved, as at K = 1); a float entry is
            # the same for every run
            moved = [v != 0.0 for v in d if not isinstance(v, float)]
            if any(v != 0.0 for v in d if isinstance(v, float)):
                moved = True
            elif moved:
                moved = moved[0] if len(moved) == 1 else np.logical_or.reduce(moved)
                moved = True if moved.all() else (moved if moved.any() else False)
            else:
                moved = False
            if moved is not False:
                xu = np.array(_apply_control(xt, d, dtc, trig, np.tan(xc[4])))
                xu[3:6] = wrap(xu[3:6])
                xt = xu if moved is True else np.where(moved, xu, xt)
    xn = xt.T.copy()
    Pn = np.matmul(np.matmul(ws.j, P), ws.j_t)
    if dynamic:
        vx, vy, vz, vr, vp, vyaw = xc[6:12]
        Qk = np.tile(Q, (k, 1, 1))
        Qk[:, :6, :6] *= (vx * vx + vy * vy + vz * vz + vr * vr + vp * vp + vyaw * vyaw)[
            :, None, None
        ]
        Qk *= dt
        Pn += Qk
    else:
        Pn += np.multiply(Q, dt)
    return xn, Pn


# _inverse_small's gathers: cofactor c = S[l1]·S[l2] − S[r1]·S[r2] of S⁻¹'s entry (row-major),
# rows l1, l2, r1, r2 of S's flat entries (m = 3: e i − f h, c h − b i, ... as K = 1 writes them)
_ADJ3 = np.array([
    (4, 2, 1, 5, 0, 2, 3, 1, 0),
    (8, 7, 5, 6, 8, 3, 7, 6, 4),
    (5, 1, 2, 3, 2, 0, 4, 0, 1),
    (7, 8, 4, 8, 6, 5, 6, 7, 3),
], dtype=np.intp)
_ADJ2 = np.array((3, 1, 2, 0), dtype=np.intp)  # m = 2: d, −b, −c, a
_ADJ2_SIGN = np.array((1.0, -1.0, -1.0, 1.0))  # exact: −b·inv is (−b)·inv


def _inverse_small(S):
    """
    Return (S⁻¹ transposed to (m², K), det (K,)) for m ≤ 3 by adjugate / determinant.

    S (K, m, m); the expressions of K = 1's scalar inverse, operand for operand (same bits),
    evaluated for all entries at once over contiguous (K,) rows: one gather of the operands,
    then each operation once over (m², K); det = (a A + b B) + c C. A zero determinant gives
    inf/NaN entries (the caller refuses those runs, and runs this under
    ``np.errstate(all='ignore')``).
    """
    k, m = S.shape[0], S.shape[-1]
    F = S.reshape(k, m * m).T  # (m², K): row e is entry e of every run's S
    if m == 1:
        return 1.0 / F, F[0]
    if m == 2:
        det = F[0] * F[3] - F[1] * F[2]
        cof = F.take(_ADJ2, axis=0) * _ADJ2_SIGN[:, None]
    else:
        o = F.take(_ADJ3, axis=0)  # (4, 9, K)
        cof = o[0] * o[1] - o[2] * o[3]
        det = F[0] * cof[0] + F[1] * cof[3] + F[2] * cof[6]
    return cof * (1.0 / det), det


def correct(x, P, s, zs, Rs, thr2: float = math.inf, ws: Workspace | None = None, rdiag=None):
    """
    Return (x⁺, P⁺, accepted (K,), refused {reason: count}) of the update on ``s``'s entries.

    H selects the entries of ``s`` (an ``ekf.IndexSet``); zs (K, m) finite; Rs (K, m, m) or
    (m, m), already clamped; thr2 = thr² (inf: no gate). ν = z − x[idx] (angles wrapped),
    S = P[idx, idx] + R, S⁻¹ by adjugate (m ≤ 3) or LAPACK (m > 3), w = S⁻¹ν; the Mahalanobis
    gate νᵀw ≥ thr² rejects the measurement (without a threshold: an overflowing νᵀw, see
    ``OVERFLOW_RISK``); [G | x⁺ − x] = P Hᵀ [S⁻¹ | w], angles wrapped,
    Joseph form P⁺ = M − (M Hᵀ − G R) Gᵀ with M = P − G·H P. A singular S or a non-finite x⁺/P⁺
    is refused (counted under its reason); rejected and refused runs keep x and P bit for bit.
    K = 1 runs the float form (``rdiag``: its early gate, see ``correct_one``).
    """
    k = x.shape[0]
    if k == 1:
        if type(Rs) is not np.ndarray or Rs.ndim != 2:
            m = len(s.idx_list)
            Rs = np.asarray(Rs, dtype=float).reshape(m, m)
        zl = zs if type(zs) is list else np.asarray(zs, dtype=float).ravel().tolist()
        hints = ws.gate_first if ws is not None else {}
        res = correct_one(x, P[0], s, zl, Rs, thr2, rdiag, hints)
        if isinstance(res, str):
            return x, P, np.zeros(1, bool), {res: 1}
        if res is None:
            return x, P, np.zeros(1, bool), {}
        return res[0], res[1][None], np.ones(1, bool), {}
    return _correct_columns(x, P, s, zs, Rs, thr2)


def correct_one(x, P, s, zs, Rs, thr2: float = math.inf, rdiag=None, hints=None):
    """
    Return K = 1's update: (x⁺ (1, 15), P⁺ (15, 15)), None (gate rejected) or a refusal reason.

    zs: m finite floats (list), Rs (m, m) clamped, P (15, 15). The innovation, the Mahalanobis
    distance and (m ≤ 3) the inverse of S in scalar Python (adjugate / determinant); gain and
    Joseph form on 2-D arrays, contiguous index sets as slices (views).

    ``rdiag``: Rs's diagonal (list) when Rs is positive definite (``ekf.gate_bound_variances``),
    which allows the early gate: for positive-definite S, Cauchy–Schwarz in S's inner product
    gives νᵀS⁻¹ν ≥ ν_k²/S_kk for every entry k, so one entry with ν_k² ≥ thr²·S_kk (a relative
    margin of 1e-9 above the rounding of ν_k and S_kk) rejects the measurement with no inverse —
    the verdict of the exact distance. Undecided measurements take the full computation.
    ``hints``: id(s) -> the entry that rejected last time (tested first).
    """
    idx = s.idx_list
    m = len(idx)
    early = rdiag is not None and thr2 != math.inf
    if early:  # the entry that rejected last time first, alone (most rejections end here)
        t = thr2 * _GATE_MARGIN
        if hints is None:
            hints = {}
        k = hints.get(id(s), 0)
        i = idx[k]
        n = zs[k] - x.item(i)
        if k in s.ang_list:
            n = _wrap_float(n)
        q = n * n
        if q >= t * (P.item(i, i) + rdiag[k]) and q != math.inf:  # infinite ν: full way
            return None
    xl = x[0].tolist()
    if m == 3:  # ν, angles wrapped
        i0, i1, i2 = idx
        nu = [zs[0] - xl[i0], zs[1] - xl[i1], zs[2] - xl[i2]]
    else:
        nu = [zs[k] - xl[i] for k, i in enumerate(idx)]
    for k in s.ang_list:
        nu[k] = _wrap_float(nu[k])
    # |ν| beyond OVERFLOW_RISK: d² may overflow (upstream's default gate then rejects); the
    # arithmetic from here runs with numpy's overflow warnings off, the result checked as always
    big = max(nu) > OVERFLOW_RISK or min(nu) < -OVERFLOW_RISK
    huge = big and thr2 == math.inf
    if early:  # then every entry
        for k, i in enumerate(idx):
            q = nu[k] * nu[k]
            if q >= t * (P.item(i, i) + rdiag[k]) and q != math.inf:
                hints[id(s)] = k
                return None
    if big:
        with np.errstate(over='ignore', invalid='ignore', divide='ignore'):
            return _update_one(x, P, s, zs, Rs, thr2, nu, huge)
    return _update_one(x, P, s, zs, Rs, thr2, nu, huge)


def _update_one(x, P, s, zs, Rs, thr2, nu, huge):
    """``correct_one`` from the innovation ν (list) on: S, its inverse, gate, gain, Joseph form."""
    idx = s.idx_list
    m = len(idx)
    sel = s.sel
    if isinstance(sel, slice):
        HP = P[sel]  # H P  (m, 15), a view
        S = HP[:, sel] + Rs
    else:  # S from one gather; H P only once the gate has passed
        HP = None
        S = P.take(s.block) + Rs
    if m == 3:
        n0, n1, n2 = nu
        (a, b, c), (d, e, f), (g, h, i) = S.tolist()
        A, B, C = e * i - f * h, f * g - d * i, d * h - e * g
        det = a * A + b * B + c * C
        if det == 0.0:
            return REFUSED_SINGULAR
        inv = 1.0 / det
        a, b, c, d, e, f, g, h, i = (
            A * inv, (c * h - b * i) * inv, (b * f - c * e) * inv,
            B * inv, (a * i - c * g) * inv, (c * d - a * f) * inv,
            C * inv, (b * g - a * h) * inv, (a * e - b * d) * inv,
        )
        w0, w1, w2 = a * n0 + b * n1 + c * n2, d * n0 + e * n1 + f * n2, g * n0 + h * n1 + i * n2
        if (thr2 != math.inf or huge) and n0 * w0 + n1 * w1 + n2 * w2 >= thr2:
            return REFUSED_OVERFLOW if huge else None
        Siw = ((a, b, c, w0), (d, e, f, w1), (g, h, i, w2))  # [S⁻¹ | S⁻¹ν]
    else:
        if m == 1:
            if S.item() == 0.0:
                return REFUSED_SINGULAR
            Si = ((1.0 / S.item(),),)
        elif m == 2:
            (a, b), (c, d) = S.tolist()
            det = a * d - b * c
            if det == 0.0:
                return REFUSED_SINGULAR
            inv = 1.0 / det
            Si = ((d * inv, -b * inv), (-c * inv, a * inv))
        else:  # m > 3: LAPACK's inverse (dgesv on the identity) and numpy products
            nu = np.array(nu)
            try:
                Si = np.linalg.inv(S)
            except np.linalg.LinAlgError:
                return REFUSED_SINGULAR
            if (thr2 != math.inf or huge) and float(np.dot(np.dot(nu, Si), nu)) >= thr2:
                return REFUSED_OVERFLOW if huge else None
            Siw = np.concatenate((Si, (Si @ nu)[:, None]), axis=1)
        if m < 3:
            w = [sum(row[j] * nu[j] for j in range(m)) for row in Si]
            if (thr2 != math.inf or huge) and sum(nu[k] * w[k] for k in range(m)) >= thr2:
                return REFUSED_OVERFLOW if huge else None
            Siw = [tuple(row) + (wk,) for row, wk in zip(Si, w)]
    if HP is None:
        HP = P[sel]
    GX = P[:, sel] @ np.asarray(Siw)  # [G | G ν]: Kalman gain (15, m) and the state step
    G = GX[:, :m]
    xn = x + GX[:, m]
    row = xn[0]
    r, p, y = row[3:6].tolist()
    row[3:6] = (_wrap_float(r), _wrap_float(p), _wrap_float(y))
    # Joseph form: M = (I−GH)P = P − G·HP;  M(I−GH)ᵀ + G R Gᵀ = M − (M[:, idx] − G R)·Gᵀ
    M = P - G @ HP
    M -= (M[:, sel] - G @ Rs) @ G.T
    # two dot products with ones: NaN and Inf propagate
    if not math.isfinite(_dot(M.ravel(), _ONES225) + _dot(row, _ONES15)):
        return REFUSED_NOT_FINITE
    return xn, M


def _correct_columns(x, P, s, zs, Rs, thr2):
    """
    Return ``correct``'s result for K > 1: ``correct_one``'s arithmetic over (K,) columns.

    Stacked products give each run its 2-D product's bits; the scalar inverse and the sums are
    element-wise. Every run is computed, then the rejected and refused ones are restored.
    """
    k = x.shape[0]
    sel, m = s.sel, len(s.idx_list)  # sel: a slice (views) when the entries are contiguous
    refused: dict = {}
    HP = P[:, sel, :]
    S = HP[:, :, sel] + Rs
    nu = zs - x[:, sel]
    if s.ang_list:  # the angle entries are consecutive in idx (sorted): one wrap for all
        a = slice(s.ang_list[0], s.ang_list[-1] + 1)
        nu[:, a] = wrap(nu[:, a])
    accepted = None  # all runs, until the gate or a singular S says otherwise
    # upstream's default gate (thr² = inf) rejects an overflowing d²: computed only then
    gate = thr2 != math.inf or bool((np.abs(nu) > OVERFLOW_RISK).any())
    with np.errstate(all='ignore'):
        if m > 3:  # LAPACK's inverse; νᵀS⁻¹ν as (νᵀS⁻¹)ν, the products K = 1 makes
            try:
                Si = np.linalg.inv(S)
                singular = None
            except np.linalg.LinAlgError:  # run by run: refuse the singular ones
                Si = np.full_like(S, math.nan)
                singular = np.zeros(k, bool)
                for r in range(k):
                    try:
                        Si[r] = np.linalg.inv(S[r])
                    except np.linalg.LinAlgError:
                        singular[r] = True
            w = np.matmul(Si, nu[:, :, None])[:, :, 0]
            if gate:
                d2 = np.matmul(np.matmul(nu[:, None, :], Si), nu[:, :, None])[:, 0, 0]
                accepted = ~(d2 >= thr2)
        else:
            SiT, det = _inverse_small(S)  # (m², K)
            singular = None if det.all() else det == 0.0  # NaN is truthy: not singular
            nuT = nu.T
            t = SiT.reshape(m, m, k) * nuT  # w = S⁻¹ν as K = 1 sums it: (t0 + t1) + t2
            wT = t[:, 0]
            for j in range(1, m):
                wT = wT + t[:, j]
            if gate:
                t = nuT * wT
                d2 = t[0]
                for j in range(1, m):
                    d2 = d2 + t[j]
                accepted = ~(d2 >= thr2)
        if gate and thr2 == math.inf and not accepted.all():
            refused[REFUSED_OVERFLOW] = int((~accepted).sum())
        if singular is not None and singular.any():
            refused[REFUSED_SINGULAR] = int(singular.sum())
            accepted = ~singular if accepted is None else accepted & ~singular
        if accepted is not None and not accepted.any():
            return x, P, accepted, refused
        if m > 3:
            Siw = np.concatenate((Si, w[:, :, None]), axis=2)
        else:  # [S⁻¹ | w] (K, m, m + 1), C order as the product's operand always was
            Siw = np.empty((k, m, m + 1))
            Siw[:, :, :m] = SiT.T.reshape(k, m, m)
            Siw[:, :, m] = wT.T
        GX = np.matmul(P[:, :, sel], Siw)
        G = GX[:, :, :m]
        xn = x + GX[:, :, m]
        xn[:, 3:6] = wrap(xn[:, 3:6])
        M = P - np.matmul(G, HP)
        M -= np.matmul(M[:, :, sel] - np.matmul(G, Rs), G.transpose(0, 2, 1))
        finite = np.isfinite(np.matmul(M.reshape(k, -1), _ONES225) + np.matmul(xn, _ONES15))
    if accepted is None:
        if finite.all():  # the common case: every run updated
            return xn, M, np.ones(k, bool), refused
        accepted = np.ones(k, bool)
    bad = accepted & ~finite
    if bad.any():
        refused[REFUSED_NOT_FINITE] = int(bad.sum())
        accepted &= finite
    keep = ~accepted
    if keep.any():
        xn[keep], M[keep] = x[keep], P[keep]
    return xn, M, accepted, refused
