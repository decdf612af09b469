"""Batch statistics of VEPD: W1 (RMSE sets), W2 (flatness-difference sets), VEPD = (W1 + W2)/2, ranks,
and a seeded bootstrap interval.

``vepd`` uses ``scipy.stats.wasserstein_distance`` (the authors' function). The bootstrap re-weights the
same points many times, so it uses ``wasserstein_weighted_batch``: the identical 1-D formula
(integral of |F_u - F_v| over the merged sorted support) for B weight vectors at once; a test checks it
against scipy with weights.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from scipy.stats import wasserstein_distance


def vepd(real_E, real_S, sim_E, sim_S) -> dict:
    """{'W1', 'W2', 'VEPD'} between the real and simulated sets of per-run E and S."""
    w1 = float(wasserstein_distance(np.asarray(sim_E, float), np.asarray(real_E, float)))
    w2 = float(wasserstein_distance(np.asarray(sim_S, float), np.asarray(real_S, float)))
    return {'W1': w1, 'W2': w2, 'VEPD': 0.5 * (w1 + w2)}


def rank(values: Mapping[str, float]) -> dict[str, float]:
    """Rank 1 = lowest; ties share the average rank (pandas ``rank()``, what the authors' Table II used).
    Returned as int when whole."""
    keys = list(values)
    v = np.array([values[k] for k in keys], float)
    order = np.argsort(v, kind='stable')
    ranks = np.empty(len(v))
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        ranks[order[i:j + 1]] = 0.5 * (i + j) + 1.0
        i = j + 1
    return {k: (int(r) if float(r).is_integer() else float(r)) for k, r in zip(keys, ranks)}


def wasserstein_weighted_batch(u_values, v_values, u_weights, v_weights, chunk_elems: int = 4_000_000) -> np.ndarray:
    """W1 between (u_values, u_weights[b]) and (v_values, v_weights[b]) for every row b; weights (B, n)."""
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
        wu = Wu[b0:b0 + step]
        wv = Wv[b0:b0 + step]
        M = np.concatenate([wu / wu.sum(axis=1, keepdims=True), -wv / wv.sum(axis=1, keepdims=True)], axis=1)
        C = np.cumsum(M[:, order], axis=1)[:, :-1]
        np.abs(C, out=C)
        out[b0:b0 + step] = C @ deltas
    return out


def _resample_counts(rng: np.random.Generator, groups: np.ndarray, n_boot: int) -> np.ndarray:
    """(n_boot, n) int32 counts: each stratum (group) resampled with replacement to its own size."""
    n = groups.size
    counts = np.zeros((n_boot, n), dtype=np.int32)
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        m = idx.size
        draws = rng.integers(0, m, size=(n_boot, m), dtype=np.int64)
        draws += (np.arange(n_boot, dtype=np.int64) * m)[:, None]
        c = np.bincount(draws.ravel(), minlength=n_boot * m).reshape(n_boot, m)
        if idx[-1] - idx[0] + 1 == m:            # a contiguous block (how the evaluator pools scenarios)
            counts[:, idx[0]:idx[-1] + 1] = c
        else:
            counts[:, idx] = c
    return counts


def _w1_counts(u, v, cu, cv, chunk_elems: int = 1_000_000) -> np.ndarray:
    """W1 for every row of integer resample counts (rows of cu sum to nu, of cv to nv): the same
    integral as ``wasserstein_weighted_batch``, in exact integer CDF differences scaled once."""
    nu, nv = int(cu[0].sum()), int(cv[0].sum())
    vals = np.concatenate([u, v])
    order = np.argsort(vals, kind='stable')
    deltas = np.diff(vals[order])
    dt = np.int32 if nu * nv < 2 ** 31 else np.int64
    B = cu.shape[0]
    out = np.empty(B)
    step = max(1, chunk_elems // max(1, vals.size))
    for b0 in range(0, B, step):
        M = np.concatenate([cu[b0:b0 + step].astype(dt) * dt(nv), cv[b0:b0 + step].astype(dt) * dt(-nu)], axis=1)
        C = np.cumsum(M[:, order[:-1]], axis=1, dtype=dt)
        np.abs(C, out=C)
        out[b0:b0 + step] = C @ deltas
    return out / (nu * nv)


def bootstrap_vepd(real_E, real_S, real_groups: Sequence, sim_E, sim_S, sim_groups: Sequence,
                   n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of VEPD over runs resampled with replacement within each scenario (stratum),
    on both sides, E and S of a run staying together. Seeded: the real side's resamples are drawn first,
    so every model is compared against the same resampled reference sets."""
    if n_boot <= 0:
        return (float('nan'), float('nan'))
    rng = np.random.default_rng(seed)
    rg = np.unique(np.asarray(real_groups), return_inverse=True)[1]
    sg = np.unique(np.asarray(sim_groups), return_inverse=True)[1]
    rE, rS, sE, sS = (np.asarray(a, float) for a in (real_E, real_S, sim_E, sim_S))
    w1 = np.empty(n_boot)
    w2 = np.empty(n_boot)
    step = max(1, 2_000_000 // (rg.size + sg.size))          # resamples per block: bounded memory
    for b0 in range(0, n_boot, step):
        b = min(step, n_boot - b0)
        cr = _resample_counts(rng, rg, b)
        cs = _resample_counts(rng, sg, b)
        w1[b0:b0 + b] = _w1_counts(rE, sE, cr, cs)
        w2[b0:b0 + b] = _w1_counts(rS, sS, cr, cs)
    q = 100.0 * (1.0 - level) / 2.0
    lo, hi = np.percentile(0.5 * (w1 + w2), [q, 100.0 - q])
    return float(lo), float(hi)
