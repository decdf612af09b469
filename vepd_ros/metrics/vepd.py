# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Batch statistics of VEPD: W1, W2, VEPD = (W1 + W2)/2, ranks and a bootstrap interval.

Batch statistics of VEPD: W1 (RMSE sets), W2 (flatness-difference sets), VEPD = (W1 + W2)/2,
ranks, and a seeded bootstrap interval.

``vepd`` uses ``scipy.stats.wasserstein_distance`` (the authors' function). The bootstrap
re-weights the same points many times, so it uses ``wasserstein_weighted_batch``: the identical
1-D formula (integral of |F_u - F_v| over the merged sorted support) for B weight vectors at once;
a test checks it against scipy with weights.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from scipy.stats import wasserstein_distance


def finite_values(what: str, x) -> np.ndarray:
    """
    Return ``x`` as a 1-D float array of finite numbers, or raise naming ``what``.

    ``x`` as a non-empty 1-D float array of finite numbers, else a ``ValueError`` naming
    ``what``.
    """
    a = np.asarray(x, float).ravel()
    if a.size == 0:
        raise ValueError(f'{what} is empty (at least one run is needed)')
    if not np.all(np.isfinite(a)):
        i = int(np.flatnonzero(~np.isfinite(a))[0])
        raise ValueError(
            f'{what} holds NaN or inf at position {i} (expected finite per-run values)'
        )
    return a


def _finite_result(what: str, d: dict) -> dict:
    for k, v in d.items():
        if not np.isfinite(v):
            raise ValueError(
                f'{what}: {k} = {v!r} is not finite (the per-run values are too large)'
            )
    return d


def vepd(real_E, real_S, sim_E, sim_S) -> dict:
    """
    {'W1', 'W2', 'VEPD'} between the real and simulated sets of per-run E and S.

    Empty or non-finite input, or a non-finite result, is a ``ValueError``.
    """
    rE, rS, sE, sS = (
        finite_values(w, a)
        for w, a in (('real E', real_E), ('real S', real_S), ('sim E', sim_E), ('sim S', sim_S))
    )
    with np.errstate(over='ignore', invalid='ignore'):
        w1 = float(wasserstein_distance(sE, rE))
        w2 = float(wasserstein_distance(sS, rS))
        return _finite_result('vepd', {'W1': w1, 'W2': w2, 'VEPD': 0.5 * (w1 + w2)})


def rank(values: Mapping[str, float]) -> dict[str, float]:
    """
    Rank the values, 1 = lowest.

    Rank 1 = lowest; ties share the average rank (pandas ``rank()``, what the authors' Table II
    used). Returned as int when whole.
    """
    keys = list(values)
    v = np.array([values[k] for k in keys], float)
    if not np.all(np.isfinite(v)):
        raise ValueError(
            'rank: every value must be finite, got '
            + ', '.join(f'{k}={values[k]!r}' for k in keys[:5] if not np.isfinite(values[k]))
        )
    order = np.argsort(v, kind='stable')
    ranks = np.empty(len(v))
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        ranks[order[i: j + 1]] = 0.5 * (i + j) + 1.0
        i = j + 1
    return {k: (int(r) if float(r).is_integer() else float(r)) for k, r in zip(keys, ranks)}


def wasserstein_weighted_batch(
    u_values, v_values, u_weights, v_weights, chunk_elems: int = 4_000_000
) -> np.ndarray:
    """
    Return W1 of weighted samples for B weight vectors at once.

    W1 between (u_values, u_weights[b]) and (v_values, v_weights[b]) for every row b; weights (B,
    n).
    """
    u = np.asarray(u_values, float)
    v = np.asarray(v_values, float)
    Wu = np.atleast_2d(np.asarray(u_weights, float))
    Wv = np.atleast_2d(np.asarray(v_weights, float))
    vals = np.concatenate([u, v])
    order = np.argsort(vals, kind='stable')
    deltas = np.diff(vals[order])
    B = Wu.shape[0]
    out = np.empty(B)
    step = max(1, chunk_elems // max(1, vals.size))
    for b0 in range(0, B, step):
        wu = Wu[b0: b0 + step]
        wv = Wv[b0: b0 + step]
        M = np.concatenate(
            [wu / wu.sum(axis=1, keepdims=True), -wv / wv.sum(axis=1, keepdims=True)], axis=1
        )
        C = np.cumsum(M[:, order], axis=1)[:, :-1]
        np.abs(C, out=C)
        out[b0: b0 + step] = C @ deltas
    return out


MAX_N_BOOT = 100_000
"""Most bootstrap resamples an interval may take: 100x the paper's 1000, a few seconds. The
resample counts are an (n_boot, runs) int32 array (``_resample_counts``): 1e12 resamples would
ask for terabytes, so a larger n_boot is refused rather than attempted."""


def _resample_counts(rng: np.random.Generator, groups: np.ndarray, n_boot: int) -> np.ndarray:
    """
    Draw stratified bootstrap resample counts.

    (n_boot, n) int32 counts: each stratum (group) resampled with replacement to its own size.
    """
    n = groups.size
    counts = np.zeros((n_boot, n), dtype=np.int32)
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        m = idx.size
        draws = rng.integers(0, m, size=(n_boot, m), dtype=np.int64)
        draws += (np.arange(n_boot, dtype=np.int64) * m)[:, None]
        c = np.bincount(draws.ravel(), minlength=n_boot * m).reshape(n_boot, m)
        if idx[-1] - idx[0] + 1 == m:  # a contiguous block (how the evaluator pools scenarios)
            counts[:, idx[0]: idx[-1] + 1] = c
        else:
            counts[:, idx] = c
    return counts


def _scaled_counts(cu: np.ndarray, cv: np.ndarray) -> tuple[np.ndarray, int]:
    """
    Return the integer CDF steps of resample counts, scaled once, and nu·nv.

    (B, nu+nv) integer ``[cu·nv, −cv·nu]`` — the CDF steps of ``_w1_counts``, built once for W1 and
    W2 (int32 while nu·nv < 2^31, else int64) — and nu·nv.
    """
    nu, nv = int(cu[0].sum()), int(cv[0].sum())
    dt = np.int32 if nu * nv < 2**31 else np.int64
    M = np.empty((cu.shape[0], cu.shape[1] + cv.shape[1]), dtype=dt)
    np.multiply(cu, dt(nv), out=M[:, : cu.shape[1]], dtype=dt)
    np.multiply(cv, dt(-nu), out=M[:, cu.shape[1]:], dtype=dt)
    return M, nu * nv


def _support(u, v) -> tuple[np.ndarray, np.ndarray]:
    """
    Return the sort order and gaps of the pooled values [u, v].

    (order, deltas) of the pooled values [u, v]: the stable sort order and the gaps x_{k+1} − x_k.
    """
    vals = np.concatenate([u, v])
    order = np.argsort(vals, kind='stable')
    return order, np.diff(vals[order])


def _w1_counts(support, M: np.ndarray, nunv: int, chunk_elems: int = 1_000_000) -> np.ndarray:
    """
    Return W1 for every row of integer resample counts.

    W1 for every row of integer resample counts, given as ``_scaled_counts`` (rows of cu sum to nu,
    of cv to nv) over the pooled values' ``_support``: the same integral as
    ``wasserstein_weighted_batch``, in exact integer CDF differences scaled once,.

        W1_b = Σ_k |C_bk| (x_{k+1} − x_k) / (nu·nv),
        C_bk = Σ_{i ≤ k} M_b,order(i)   (x sorted pooled values).

    Rows are taken ``chunk_elems // (nu+nv)`` at a time: one gather, an in-place integer cumsum and
    abs, one matrix-vector product per block.
    """
    order, deltas = support
    head = order[:-1]
    B = M.shape[0]
    out = np.empty(B)
    step = max(1, chunk_elems // max(1, order.size))
    for b0 in range(0, B, step):
        C = M[b0: b0 + step].take(head, axis=1)
        np.cumsum(C, axis=1, out=C)
        np.abs(C, out=C)
        out[b0: b0 + step] = C @ deltas
    return out / nunv


def bootstrap_vepd(
    real_E,
    real_S,
    real_groups: Sequence,
    sim_E,
    *,
    sim_S,
    sim_groups: Sequence,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """
    Return the seeded bootstrap percentile interval of VEPD.

    Percentile interval of VEPD over runs resampled with replacement within each scenario
    (stratum), on both sides, E and S of a run staying together. Seeded: the real side's resamples
    are drawn first, so every model is compared against the same resampled reference sets.
    """
    return bootstrap_vepd_groups(
        real_E, real_S, real_groups, sim_E, sim_S, sim_groups=sim_groups, n_boot=n_boot,
        seed=seed, level=level, per_group=False,
    )[0]


def bootstrap_vepd_groups(
    real_E,
    real_S,
    real_groups: Sequence,
    sim_E,
    sim_S,
    *,
    sim_groups: Sequence,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    per_group: bool = True,
) -> tuple[tuple[float, float], dict]:
    """
    Return the pooled VEPD interval and each group's interval from the same resamples.

    ``bootstrap_vepd``'s interval of the pooled VEPD and, from the very same resamples, the
    interval of each group's own VEPD: resample b restricted to one stratum is a resample of that
    stratum, so group g's statistic is VEPD_g,b = (W1 + W2)/2 between the real and simulated runs
    of g in resample b. Returns ((lo, hi), {group: (lo, hi)}) — groups present on both sides; the
    pooled interval is bit-identical to ``bootstrap_vepd``'s (same draws, same arithmetic).
    """
    if not 0 <= n_boot <= MAX_N_BOOT:
        raise ValueError(
            f'n_boot must be an integer from 0 (no interval) to {MAX_N_BOOT}, got {n_boot!r}'
        )
    if n_boot == 0:
        return (float('nan'), float('nan')), {}
    if not 0.0 < level < 1.0:
        raise ValueError(f'bootstrap level must be in (0, 1), got {level!r}')
    for w, a in (('real E', real_E), ('real S', real_S), ('sim E', sim_E), ('sim S', sim_S)):
        finite_values(f'bootstrap_vepd: {w}', a)
    if not (
        np.size(real_groups) == np.size(real_E) == np.size(real_S)
        and np.size(sim_groups) == np.size(sim_E) == np.size(sim_S)
    ):
        raise ValueError(
            'bootstrap_vepd: each side needs one group label per run (E, S and '
            'groups of equal length)'
        )
    rng = np.random.default_rng(seed)
    real_groups, sim_groups = np.asarray(real_groups), np.asarray(sim_groups)
    rg = np.unique(real_groups, return_inverse=True)[1]
    sg = np.unique(sim_groups, return_inverse=True)[1]
    rE, rS, sE, sS = (np.asarray(a, float) for a in (real_E, real_S, sim_E, sim_S))
    w1 = np.empty(n_boot)
    w2 = np.empty(n_boot)
    sup1, sup2 = _support(rE, sE), _support(rS, sS)
    groups = {}
    if per_group:
        for g in np.unique(real_groups):
            ri, si = np.flatnonzero(real_groups == g), np.flatnonzero(sim_groups == g)
            if ri.size and si.size:
                groups[g.item() if isinstance(g, np.generic) else g] = (
                    ri,
                    si,
                    _support(rE[ri], sE[si]),
                    _support(rS[ri], sS[si]),
                    np.empty(n_boot),
                )
    step = max(1, 2_000_000 // (rg.size + sg.size))  # resamples per block: bounded memory
    for b0 in range(0, n_boot, step):
        b = min(step, n_boot - b0)
        cr, cs = _resample_counts(rng, rg, b), _resample_counts(rng, sg, b)
        M, nunv = _scaled_counts(cr, cs)
        w1[b0: b0 + b] = _w1_counts(sup1, M, nunv)
        w2[b0: b0 + b] = _w1_counts(sup2, M, nunv)
        for ri, si, g1, g2, vg in groups.values():
            Mg, ng = _scaled_counts(cr[:, ri], cs[:, si])
            vg[b0: b0 + b] = 0.5 * (_w1_counts(g1, Mg, ng) + _w1_counts(g2, Mg, ng))
    q = 100.0 * (1.0 - level) / 2.0
    if not (np.all(np.isfinite(w1)) and np.all(np.isfinite(w2))):
        raise ValueError(
            'bootstrap_vepd: a resampled distance is not finite (the per-run values are too large)'
        )
    lo, hi = np.percentile(0.5 * (w1 + w2), [q, 100.0 - q])
    per = {}
    for g, (_, _, _, _, vg) in groups.items():
        glo, ghi = np.percentile(vg, [q, 100.0 - q])
        per[g] = (float(glo), float(ghi))
    return (float(lo), float(hi)), per
