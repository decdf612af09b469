# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A compiled prototype of the judge's joint update, the measuring instrument of issue 14's decision.

Not a kernel of vepd_ros (nothing in the package imports it; numba is not a dependency): it is
``vepd_ros.judge.kernel.correct_one``'s m > 3 path (LAPACK's inverse, BLAS products, the
Joseph form, reference §3) written for numba, so that decide_compiled_kernel.py can measure what a
compiled kernel would give, bit for bit and per process, before anyone builds one. Compiled two
ways: just in time (``jit``, numba imported in every process, its cache on disk) and ahead of time
(``build_aot``, numba.pycc: a plain extension module that needs no numba at run time).

The arithmetic is correct_one's, operation for operation: ν = z − x[idx] (angles wrapped),
S = P[idx, idx] + R, S⁻¹ by LAPACK's gesv on the identity, the gate νᵀS⁻¹ν ≥ thr², [G | Gν] =
P Hᵀ [S⁻¹ | S⁻¹ν], x⁺ = x + Gν (angles wrapped), M = P − G·HP, P⁺ = M − (M Hᵀ − G R)·Gᵀ, refused
when not finite. numba's np.dot and np.linalg.solve call the BLAS and LAPACK routines (gemm, gemv,
dot, gesv) numpy's products and inverse call, through scipy's copy of them: that this gives the
same bits is checked, not assumed (decide_compiled_kernel.py, part 1). numba is imported only to
compile (``jit``, ``build_aot``), so a process that loads the AOT module and these status codes
never imports it.
"""

import math

import numpy as np

_TWO_PI = 2.0 * math.pi
ACCEPTED, REJECTED, SINGULAR, NOT_FINITE = 0, 1, 2, 3
SIGNATURE = 'i8[:](f8[:, :], f8[:, :, :], i8[:], i8[:], f8[:, :], f8[:, :], f8)'


def _wrap(a):
    """Wrap an angle to (−π, π] as ``kernel.wrap`` does."""
    r = np.fmod(a + math.pi, _TWO_PI)
    return r + math.pi if r <= 0.0 else r - math.pi


def _innovation(x, P, idx, ang, zs, Rs, nu, S):
    """Write ν = z − x[idx] (angles wrapped) into ``nu`` and S = P[idx, idx] + R into ``S``."""
    m = idx.size
    for k in range(m):
        nu[k] = zs[k] - x[idx[k]]
    for k in ang:
        nu[k] = _wrap(nu[k])
    for a in range(m):
        for b in range(m):
            S[a, b] = P[idx[a], idx[b]] + Rs[a, b]


def _update(x, P, idx, ang, zs, Rs, thr2, eye, nu, S, Pc, HP, Siw, GX, G, M, Ms, U, xn, GR):
    """Update one run's x (15,) and P (15, 15) in place; return its status."""
    m = idx.size
    _innovation(x, P, idx, ang, zs, Rs, nu, S)
    for a in range(m):
        for b in range(m):
            if not math.isfinite(S[a, b]):  # numba's solve refuses what LAPACK would take
                return NOT_FINITE
    try:
        Si = np.ascontiguousarray(np.linalg.solve(S, eye))
    except Exception:  # numba raises for an exactly singular S, as numpy's inverse does
        return SINGULAR
    if thr2 != math.inf and np.dot(np.dot(nu, Si), nu) >= thr2:
        return REJECTED
    Siw[:, :m] = Si
    Siw[:, m] = np.dot(Si, nu)
    for k in range(m):
        for i in range(15):
            Pc[i, k] = P[i, idx[k]]
            HP[k, i] = P[idx[k], i]
    np.dot(Pc, Siw, GX)
    for i in range(15):
        for k in range(m):
            G[i, k] = GX[i, k]
        xn[i] = x[i] + GX[i, m]
    for i in range(3, 6):
        xn[i] = _wrap(xn[i])
    np.dot(G, HP, U)
    for i in range(15):
        for j in range(15):
            M[i, j] = P[i, j] - U[i, j]
    np.dot(G, Rs, GR)
    for i in range(15):
        for k in range(m):
            Ms[i, k] = M[i, idx[k]] - GR[i, k]
    np.dot(Ms, G.T, U)
    total = 0.0
    for i in range(15):
        for j in range(15):
            M[i, j] -= U[i, j]
            total += M[i, j]
    for i in range(15):
        total += xn[i]
    if not math.isfinite(total):
        return NOT_FINITE
    for i in range(15):
        x[i] = xn[i]
        for j in range(15):
            P[i, j] = M[i, j]
    return ACCEPTED


def correct_runs(x, P, idx, ang, zs, Rs, thr2):
    """
    Update every run of x (K, 15), P (K, 15, 15) in place on the entries ``idx``.

    zs (K, m), Rs (m, m) clamped, ``ang``: positions in idx of the angles; returns each run's
    status (ACCEPTED, REJECTED, SINGULAR, NOT_FINITE); runs not accepted keep x and P.
    """
    m = idx.size
    eye = np.eye(m)
    nu, S, Pc, HP = np.empty(m), np.empty((m, m)), np.empty((15, m)), np.empty((m, 15))
    Siw, GX, G = np.empty((m, m + 1)), np.empty((15, m + 1)), np.empty((15, m))
    M, Ms, U, xn, GR = (
        np.empty((15, 15)), np.empty((15, m)), np.empty((15, 15)), np.empty(15),
        np.empty((15, m)),
    )
    status = np.empty(x.shape[0], np.int64)
    for r in range(x.shape[0]):
        status[r] = _update(
            x[r], P[r], idx, ang, zs[r], Rs, thr2, eye, nu, S, Pc, HP, Siw, GX, G, M, Ms, U,
            xn, GR,
        )
    return status


def _update_loops(x, P, idx, ang, zs, Rs, thr2, A, nu, w, G, dx, M, Ms):
    """
    Update one run as ``_update`` does, in plain loops: no BLAS or LAPACK, other rounding.

    The same algebra (S⁻¹ by Gauss–Jordan elimination with partial pivoting on [S | I], then
    w = S⁻¹ν, [G | Gν] = P Hᵀ [S⁻¹ | w] and the Joseph form), each sum accumulated left to right:
    what a compiled kernel free of scipy at run time would compute, after a re-baseline of the
    golden bits.
    """
    m = idx.size
    _innovation(x, P, idx, ang, zs, Rs, nu, A[:, :m])
    for a in range(m):
        for b in range(m):
            A[a, m + b] = 1.0 if a == b else 0.0
    for c in range(m):
        p, best = c, abs(A[c, c])
        for r in range(c + 1, m):
            if abs(A[r, c]) > best:
                p, best = r, abs(A[r, c])
        if best == 0.0 or not math.isfinite(best):
            return SINGULAR if best == 0.0 else NOT_FINITE
        for j in range(2 * m):
            A[c, j], A[p, j] = A[p, j], A[c, j]
        inv = 1.0 / A[c, c]
        for j in range(2 * m):
            A[c, j] *= inv
        for r in range(m):
            if r != c:
                f = A[r, c]
                for j in range(2 * m):
                    A[r, j] -= f * A[c, j]
    d2 = 0.0
    for a in range(m):
        acc = 0.0
        for b in range(m):
            acc += A[a, m + b] * nu[b]
        w[a] = acc
        d2 += nu[a] * acc
    if thr2 != math.inf and d2 >= thr2:
        return REJECTED
    for i in range(15):
        acc = 0.0
        for k in range(m):
            acc += P[i, idx[k]] * w[k]
        dx[i] = acc
        for b in range(m):
            g = 0.0
            for k in range(m):
                g += P[i, idx[k]] * A[k, m + b]
            G[i, b] = g
    for i in range(15):
        for j in range(15):
            acc = 0.0
            for k in range(m):
                acc += G[i, k] * P[idx[k], j]
            M[i, j] = P[i, j] - acc
    for i in range(15):
        for b in range(m):
            acc = 0.0
            for k in range(m):
                acc += G[i, k] * Rs[k, b]
            Ms[i, b] = M[i, idx[b]] - acc
    total = 0.0
    for i in range(15):
        for j in range(15):
            acc = 0.0
            for k in range(m):
                acc += Ms[i, k] * G[j, k]
            M[i, j] -= acc
            total += M[i, j]
        total += x[i] + dx[i]
    if not math.isfinite(total):
        return NOT_FINITE
    for i in range(15):
        v = x[i] + dx[i]
        x[i] = _wrap(v) if 3 <= i <= 5 else v
        for j in range(15):
            P[i, j] = M[i, j]
    return ACCEPTED


def correct_runs_loops(x, P, idx, ang, zs, Rs, thr2):
    """Return ``correct_runs``' statuses, every run updated by ``_update_loops``."""
    m = idx.size
    A, nu, w = np.empty((m, 2 * m)), np.empty(m), np.empty(m)
    G, dx, M, Ms = np.empty((15, m)), np.empty(15), np.empty((15, 15)), np.empty((15, m))
    status = np.empty(x.shape[0], np.int64)
    for r in range(x.shape[0]):
        status[r] = _update_loops(x[r], P[r], idx, ang, zs[r], Rs, thr2, A, nu, w, G, dx, M, Ms)
    return status


def _compile_helpers(njit) -> None:
    """Make the helpers numba functions, which ``correct_runs`` must call when compiled."""
    g = globals()
    for name in ('_wrap', '_innovation', '_update', '_update_loops'):
        if not hasattr(g[name], 'py_func'):
            g[name] = njit(cache=True)(g[name])


def jit():
    """Return ``correct_runs`` compiled just in time (cached on disk: NUMBA_CACHE_DIR)."""
    from numba import njit

    _compile_helpers(njit)
    return njit(cache=True)(correct_runs)


def build_aot(out_dir: str, name: str = 'compiled_correct') -> None:
    """Compile ``correct_runs`` and ``correct_runs_loops`` ahead of time into ``out_dir/name``."""
    from numba import njit
    from numba.pycc import CC

    _compile_helpers(njit)
    cc = CC(name)
    cc.output_dir = out_dir
    cc.export('correct_runs', SIGNATURE)(correct_runs)
    cc.export('correct_runs_loops', SIGNATURE)(correct_runs_loops)
    cc.compile()
