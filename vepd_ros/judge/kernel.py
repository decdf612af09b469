# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Prototype (issue 14): one predict and one correct for K = 1 and K = N, as pure functions.

State arrays in, state arrays out, no object: ``x`` (K, 15), ``P`` (K, 15, 15). The arithmetic is
``Ekf._predict_batch`` / ``Ekf._correct_subset_batch``'s, operation for operation, so the outputs
are bit for bit theirs at every K (test/test_kernel.py); the work buffers live in a ``Workspace``
made once per K instead of per call. Reference: ``shared/reference/robot_localization.md`` §2–§3.
"""

from __future__ import annotations

import math

import numpy as np
from vepd_ros.judge.ekf import _ANGLE_SLICE, _J1_FLAT, _J9_FLAT, _wrap_inplace, STATE_SIZE

_TWO_PI = 2.0 * math.pi


class Workspace:
    """Work buffers of ``predict`` for K runs (the Jacobian rows 0–8 and its entries)."""

    def __init__(self, k: int):
        self.k = int(k)
        self.j9 = np.zeros((self.k, 9, STATE_SIZE))
        self.j9[:, np.arange(9), np.arange(9)] = 1.0
        self.j9_flat = self.j9.reshape(self.k, 9 * STATE_SIZE)
        self.j9_t = self.j9.transpose(0, 2, 1)
        self.e = np.empty((50, self.k))


def predict(x: np.ndarray, P: np.ndarray, dt: float, q_dt: np.ndarray, ws: Workspace):
    """
    Return (x⁺, P⁺) of the omnidirectional model: x⁺ = A(x)·x, P⁺ = J P Jᵀ + dt·Q.

    ``q_dt``: dt·Q, (15, 15) or (K, 15, 15). J is the identity outside rows 0–8, so J P changes
    rows 0–8 and (J P) Jᵀ columns 0–8 only (``Ekf._predict_batch``'s docstring derives the
    entries).
    """
    E, J9 = ws.e, ws.j9
    xt = x.T.copy()
    sa = np.sin(xt[3:6])
    ca = np.cos(xt[3:6])
    sr, sp, sy = sa
    cr, cp, cy = ca
    tp = np.tan(xt[4])
    cpi = 1.0 / cp
    h = 0.5 * dt * dt
    R = E[0:9].reshape(3, 3, ws.k)
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
    np.multiply(E[0:9], dt, out=E[9:18])
    np.multiply(E[0:9], h, out=E[18:27])
    w = xt[6:9] * dt
    w += xt[12:15] * h
    u = (R * w).sum(axis=1)
    w0, w1, w2 = w
    roll_col = E[27:30]
    np.multiply(R[:, 2], w1, out=roll_col)
    roll_col -= R[:, 1] * w2
    np.multiply(cy, u[2], out=E[30])
    np.multiply(sy, u[2], out=E[31])
    np.negative(cp * w0 + sp * (sr * w1 + cr * w2), out=E[32])
    np.negative(u[1], out=E[33])
    E[34] = u[0]
    vp, vyaw = xt[10], xt[11]
    a = sr * vp
    a += cr * vyaw
    b = cr * vp
    b -= sr * vyaw
    adt, bdt = a * dt, b * dt
    E[35:39] = dt
    np.multiply(sr * tp, dt, out=E[39])
    np.multiply(cr * tp, dt, out=E[40])
    np.multiply(cr, dt, out=E[41])
    np.multiply(sr, -dt, out=E[42])
    np.multiply(sr * cpi, dt, out=E[43])
    np.multiply(cr * cpi, dt, out=E[44])
    np.multiply(tp, bdt, out=E[45])
    E[45] += 1.0
    np.multiply(cpi * cpi, adt, out=E[46])
    np.negative(adt, out=E[47])
    np.multiply(cpi, bdt, out=E[48])
    np.multiply(tp * cpi, adt, out=E[49])
    ws.j9_flat[:, _J9_FLAT] = E[9:].T
    xn = xt.copy()
    xn[0:3] += u
    xn[3] += xt[9] * dt + tp * adt
    xn[4] += bdt
    xn[5] += cpi * adt
    xn[6:9] += xt[12:15] * dt
    _wrap_inplace(xn[3:6])
    Pn = P.copy()
    np.matmul(J9, P, out=Pn[:, :9, :])
    Pn[:, :, :9] = np.matmul(Pn, ws.j9_t)
    Pn += q_dt
    return xn.T.copy(), Pn


def correct(x: np.ndarray, P: np.ndarray, idx: np.ndarray, ang, zs, Rs, thr2: float = math.inf):
    """
    Return (x⁺, P⁺, accepted) of the update on state entries ``idx`` (H a selection matrix).

    zs (K, m); Rs (K, m, m) or (m, m), already clamped; ``ang``: positions in idx that are angles
    (a slice or an index array, empty for none); thr2 = thr² (inf: no gate). S = H P Hᵀ + R; the
    Mahalanobis gate νᵀS⁻¹ν ≥ thr² rejects a run's measurement (its x and P returned unchanged);
    G = P Hᵀ S⁻¹, x⁺ = x + P Hᵀ (S⁻¹ν), Joseph form P⁺ = M − (M Hᵀ − G R) Gᵀ with M = P − G·H P.
    Non-finite results are left to the caller (x⁺, P⁺ as computed).
    """
    HP = P.take(idx, axis=1)
    S = HP.take(idx, axis=2)
    S += Rs
    nu = zs - x.take(idx, axis=1)
    if isinstance(ang, slice) or len(ang):
        _wrap_inplace(nu, ang)
    accepted = np.ones(x.shape[0], bool)
    sub = None
    if thr2 != math.inf:
        w = np.linalg.solve(S, nu[:, :, None])
        d2 = np.matmul(nu[:, None, :], w)[:, 0, 0]
        accepted = ~(d2 >= thr2)
        if not accepted.all():
            sub = np.flatnonzero(accepted)
            if sub.size == 0:
                return x, P, accepted
            xs, Ps, HP, S, w = x[sub], P[sub], HP[sub], S[sub], w[sub]
            if Rs.ndim == 3:
                Rs = Rs[sub]
        else:
            xs, Ps = x, P
        Sinv = np.linalg.inv(S)
    else:
        xs, Ps = x, P
        Sinv = np.linalg.inv(S)
        w = np.matmul(Sinv, nu[:, :, None])
    PHt = Ps.take(idx, axis=2)
    xn = np.matmul(PHt, w)[:, :, 0]
    xn += xs
    _wrap_inplace(xn, _ANGLE_SLICE)
    G = np.matmul(PHt, Sinv)
    M = Ps - np.matmul(G, HP)
    C = M.take(idx, axis=2)
    C -= np.matmul(G, Rs)
    M -= np.matmul(C, G.transpose(0, 2, 1))
    if sub is None:
        return xn, M, accepted
    x2, P2 = x.copy(), P.copy()
    x2[sub], P2[sub] = xn, M
    return x2, P2, accepted


def _tan(p):
    """Return tan(p) by ``math.tan`` for a float or each entry of an array (np.tan differs)."""
    if isinstance(p, float):
        return math.tan(p)
    return np.array([math.tan(v) for v in p.tolist()])


def _wrap_scalar_form(a):
    """Return robot_localization's angle wrap of a float or an array (fmod is exact: same bits)."""
    if isinstance(a, float):
        r = math.fmod(a + math.pi, _TWO_PI)
        return r + math.pi if r <= 0.0 else r - math.pi
    r = np.fmod(a + math.pi, _TWO_PI)
    return np.where(r <= 0.0, r + math.pi, r - math.pi)


def transition(xc, dt: float, sin=math.sin, cos=math.cos):
    """
    Return (x⁺ as 15 columns, the 41 Jacobian entries at ``_J1_FLAT``) of the motion model.

    ``xc``: the 15 state entries, each a float (K = 1) or a (K,) array (one column per entry);
    the same expressions, operation for operation, as ``Ekf._predict_k1_list`` — element-wise
    IEEE arithmetic gives the same bits on floats and on arrays, so this one definition serves
    K = 1 (floats, no numpy overhead) and batches (arrays).
    """
    x0, x1, x2, r, p, y, vx, vy, vz, vr, vp, vyaw, ax, ay, az = xc
    sr, cr, sp, cp, sy, cy = sin(r), cos(r), sin(p), cos(p), sin(y), cos(y)
    tp = _tan(p)
    cpi = 1.0 / cp
    h = 0.5 * dt * dt
    r00, r01, r02 = cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr
    r10, r11, r12 = sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr
    r20, r21, r22 = -sp, cp * sr, cp * cr
    w0, w1, w2 = vx * dt + ax * h, vy * dt + ay * h, vz * dt + az * h
    srtp, crtp, srcpi, crcpi = sr * tp, cr * tp, sr * cpi, cr * cpi
    xr = _wrap_scalar_form(r + vr * dt + srtp * dt * vp + crtp * dt * vyaw)
    xp = _wrap_scalar_form(p + cr * dt * vp - sr * dt * vyaw)
    xy = _wrap_scalar_form(y + srcpi * dt * vp + crcpi * dt * vyaw)
    xn = (
        x0 + r00 * w0 + r01 * w1 + r02 * w2, x1 + r10 * w0 + r11 * w1 + r12 * w2,
        x2 + r20 * w0 + r21 * w1 + r22 * w2, xr, xp, xy,
        vx + ax * dt, vy + ay * dt, vz + az * dt, vr, vp, vyaw, ax, ay, az,
    )
    jac = (
        r00 * dt, r01 * dt, r02 * dt, r00 * h, r01 * h, r02 * h,
        r10 * dt, r11 * dt, r12 * dt, r10 * h, r11 * h, r12 * h,
        r20 * dt, r21 * dt, r22 * dt, r20 * h, r21 * h, r22 * h,
        dt, srtp * dt, crtp * dt, cr * dt, -sr * dt, srcpi * dt, crcpi * dt, dt, dt, dt,
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
    return xn, jac


class DenseWorkspace:
    """The dense Jacobian (K, 15, 15), identity but for the entries ``transition`` writes."""

    def __init__(self, k: int):
        self.k = int(k)
        self.j = np.tile(np.eye(STATE_SIZE), (self.k, 1, 1))
        self.j_flat = self.j.reshape(self.k, STATE_SIZE * STATE_SIZE)
        self.j_t = self.j.transpose(0, 2, 1)
        self.e = np.empty((41, self.k))


def predict_dense(x: np.ndarray, P: np.ndarray, dt: float, q_dt: np.ndarray, ws: DenseWorkspace):
    """
    Return (x⁺, P⁺) with K = 1's arithmetic at every K: ``transition`` and P⁺ = J P Jᵀ + dt·Q.

    A stacked matmul gives each run the bits of the 2-D product (test/test_kernel.py), so every
    run of a batch equals ``Ekf._predict_k1`` on that run alone, bit for bit.
    """
    if ws.k == 1:
        xn, jac = transition(x[0].tolist(), dt)
        ws.j_flat[0, _J1_FLAT] = jac
        xn = np.array([xn])
    else:
        xn, jac = transition(tuple(x.T), dt, np.sin, np.cos)
        e = ws.e
        for i, v in enumerate(jac):
            e[i] = v
        ws.j_flat[:, _J1_FLAT] = e.T
        xn = np.stack(xn, axis=1)
    Pn = np.matmul(np.matmul(ws.j, P), ws.j_t)
    Pn += q_dt
    return xn, Pn


def _inverse_small(S):
    """
    Return S⁻¹ (K, m, m) for m ≤ 3 by adjugate / determinant, element-wise over the runs.

    The expressions of ``Ekf._correct_k1``'s scalar inverse, operand for operand (same bits);
    a zero determinant gives inf/NaN entries (the caller refuses those runs).
    """
    m = S.shape[-1]
    with np.errstate(all='ignore'):
        if m == 1:
            return 1.0 / S
        if m == 2:
            a, b, c, d = S[:, 0, 0], S[:, 0, 1], S[:, 1, 0], S[:, 1, 1]
            inv = 1.0 / (a * d - b * c)
            return np.stack((d * inv, -b * inv, -c * inv, a * inv), axis=1).reshape(-1, 2, 2)
        a, b, c, d, e, f, g, h, i = (S[:, r, q] for r in range(3) for q in range(3))
        A, B, C = e * i - f * h, f * g - d * i, d * h - e * g
        inv = 1.0 / (a * A + b * B + c * C)
        return np.stack((
            A * inv, (c * h - b * i) * inv, (b * f - c * e) * inv,
            B * inv, (a * i - c * g) * inv, (c * d - a * f) * inv,
            C * inv, (b * g - a * h) * inv, (a * e - b * d) * inv,
        ), axis=1).reshape(-1, 3, 3)


def correct_dense(x, P, idx, ang, zs, Rs, thr2: float = math.inf):
    """
    Return (x⁺, P⁺, accepted) with K = 1's correct arithmetic at every K.

    ``Ekf._correct_k1`` vectorised: ν wrapped at ``ang`` (positions in idx), S = P[idx, idx] + R,
    S⁻¹ by adjugate (m ≤ 3, element-wise) or LAPACK (m > 3), w = S⁻¹ν, gate d² ≥ thr²,
    [G | Gν] = P Hᵀ [S⁻¹ | w], Joseph form P⁺ = M − (M Hᵀ − G R) Gᵀ, M = P − G·H P. Rejected runs
    keep x and P; non-finite results (singular S) are left to the caller to refuse.
    """
    m = len(idx)
    HP = P[:, idx, :]
    S = HP[:, :, idx] + Rs
    nu = zs - x[:, idx]
    for k in ang:
        nu[:, k] = _wrap_scalar_form(nu[:, k])
    accepted = np.ones(x.shape[0], bool)
    if m > 3:  # LAPACK's inverse; νᵀS⁻¹ν as (νᵀS⁻¹)ν, the products _correct_k1 makes
        Si = np.linalg.inv(S)
        w = np.matmul(Si, nu[:, :, None])[:, :, 0]
        if thr2 != math.inf:
            d2 = np.matmul(np.matmul(nu[:, None, :], Si), nu[:, :, None])[:, 0, 0]
            accepted = ~(d2 >= thr2)
    else:
        Si = _inverse_small(S)
        w = Si[:, :, 0] * nu[:, :1]
        for j in range(1, m):
            w = w + Si[:, :, j] * nu[:, j:j + 1]
        if thr2 != math.inf:
            d2 = nu[:, 0] * w[:, 0]
            for j in range(1, m):
                d2 = d2 + nu[:, j] * w[:, j]
            accepted = ~(d2 >= thr2)
    GX = np.matmul(P[:, :, idx], np.concatenate((Si, w[:, :, None]), axis=2))
    G = GX[:, :, :m]
    xn = x + GX[:, :, m]
    xn[:, 3:6] = _wrap_scalar_form(xn[:, 3:6])
    M = P - np.matmul(G, HP)
    M -= np.matmul(M[:, :, idx] - np.matmul(G, Rs), G.transpose(0, 2, 1))
    keep = ~accepted
    xn[keep], M[keep] = x[keep], P[keep]
    return xn, M, accepted
