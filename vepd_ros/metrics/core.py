# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Per-run statistics of VEPD (arXiv 2403.11000 §II-E), exactly as design.md §6 states them.

Paper-compatible preprocessing (the default, named ``'paper'``) — what the authors'
``computeEPD.py`` does:

1. grid = ``np.arange(0, min(gt_t[-1], se_t[-1]), 1/15)`` (15 Hz, from 0, end excluded; the last
   stamps are the raw ones, taken before smoothing);
2. truth: linear interpolation onto the grid (``np.interp``, ends held constant);
3. estimate: 2-sample moving average of the values *and* of the stamps (``np.convolve(...,
   'valid')``), then linear interpolation onto the grid;
4. ``E = sqrt(mean((se - gt)**2))`` on the grid;
5. ``S = |SF(se) - SF(gt)|`` with the spectral flatness (Wiener entropy) ``SF(x) = exp(mean(ln(|X|
   + 1e-10))) / mean(|X|)`` of the full FFT ``X`` of the resampled signal.

Other named preprocessings (``PREPROCESSING``): ``'unsmoothed'`` — the same 15 Hz grid without the
moving average. A custom one is ``Preprocessing(name, rate_hz, smooth)``.

One deliberate difference from the script: ``SF`` of an all-zero signal (``mean|X| = 0``, e.g. a
simulated truth speed at rest) is defined as 1.0 (an empty spectrum is flat) where the script
divides by zero. Moving scenarios never hit this.

Two implementations, tested equal: ``run_metrics`` (one run, plain numpy — the reference) and
``batch_metrics`` (K runs of any lengths at once, vectorised; what the evaluator uses).

Non-finite input (NaN/inf stamps or values) is refused with a ``RunDataError`` (a ``ValueError``)
naming the run; so is a result that is not finite (values so large that E or S overflows): a metric
is a finite number or an error, never NaN or inf.

Velocity signals: real arrays (scalar velocity) or complex arrays ``vx + 1j*vy`` (the vector form
of eq. 1: ``E = sqrt(mean(|v_e - v_g|^2))``, the FFT of the planar vector signal for ``S``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

SF_EPS = 1e-10
MAX_RUN_SPAN_S = 1e5
"""Longest run the metric resamples, s (27.8 h; the run files' stamp bound): a longer span (epoch
stamps, a corrupt time) is a ``RunDataError`` before any grid is allocated."""


class RunDataError(ValueError):
    """
    A run cannot be evaluated; the message names it.

    A run cannot be evaluated (too short, NaN, stamps going backwards, ...); the message names it.
    """


@dataclass(frozen=True)
class Preprocessing:
    name: str = 'paper'
    rate_hz: float = 15.0  # resampling grid
    smooth: int = 2  # moving-average window applied to the estimate (values and stamps); 1 = none

    def __post_init__(self):
        if not (self.rate_hz > 0 and np.isfinite(self.rate_hz)):
            raise ValueError(f'preprocessing rate_hz must be > 0, got {self.rate_hz}')
        if int(self.smooth) != self.smooth or self.smooth < 1:
            raise ValueError(f'preprocessing smooth must be an integer >= 1, got {self.smooth}')

    def describe(self) -> str:
        ma = (
            f'{self.smooth}-sample moving average of the estimate'
            if self.smooth > 1
            else 'no smoothing'
        )
        return f'{self.name}: {self.rate_hz:g} Hz grid from 0, linear interpolation, {ma}'


PREPROCESSING = {
    'paper': Preprocessing('paper', 15.0, 2),
    'unsmoothed': Preprocessing('unsmoothed', 15.0, 1),
}


def get_preprocessing(p: 'str | Preprocessing') -> Preprocessing:
    if isinstance(p, Preprocessing):
        return p
    try:
        return PREPROCESSING[p]
    except KeyError:
        raise ValueError(
            f"unknown preprocessing '{p}': expected one of {', '.join(PREPROCESSING)}"
        ) from None


def moving_average(x, n: int) -> np.ndarray:
    """
    Return the ``n``-sample moving average of ``x`` (the 'valid' part).

    ``n``-sample moving average, 'valid' part only (len(x) - n + 1 values), as np.convolve computes
    it.
    """
    x = np.asarray(x)
    _require_finite('moving_average input', x)
    if n == 1:
        return x
    return np.convolve(x, np.ones(int(n)) / float(n), 'valid')


def spectral_flatness(x, axis: int = -1) -> np.ndarray:
    """
    Wiener entropy of the full FFT magnitude along ``axis``: exp(mean ln(|X|+1e-10)) / mean|X|.

    An all-zero signal gives 1.0 (see the module note). NaN/inf in ``x`` is a ``RunDataError``.
    """
    _require_finite('spectral_flatness input', x)
    mag = np.abs(np.fft.fft(x, axis=axis))
    am = np.mean(mag, axis=axis)
    gm = np.exp(np.mean(np.log(mag + SF_EPS), axis=axis))
    return _sf_ratio(gm, am)


def _require_finite(what: str, x) -> None:
    x = np.asarray(x)
    if x.dtype.kind in 'fc' and not np.all(np.isfinite(x)):
        raise RunDataError(f'{what} holds NaN or inf (expected finite numbers)')


def _check_span(name, t_end: float) -> None:
    if t_end > MAX_RUN_SPAN_S:
        raise RunDataError(
            f'{name or "run"}: the grid would span 0..{t_end!r} s, more than the '
            f'{MAX_RUN_SPAN_S:g} s a run may last (stamps must be seconds from the '
            f'run start)'
        )


def _check_result(names, E, S) -> None:
    """Raise an error naming a run whose E or S is not finite (its values overflowed)."""
    bad = np.flatnonzero(~(np.isfinite(E) & np.isfinite(S)))
    if bad.size:
        i = int(bad[0])
        more = f'; {bad.size} such runs' if bad.size > 1 else ''
        raise RunDataError(
            f'{names(i)}: E = {float(E[i])!r}, S = {float(S[i])!r} are not finite '
            f'(values too large for the metric){more}'
        )


def _sf_ratio(gm, am):
    with np.errstate(divide='ignore', invalid='ignore'):
        sf = gm / am
    return np.where(am > 0, sf, 1.0)


def _spectral_flatness_rows(x: np.ndarray) -> np.ndarray:
    """
    Return the spectral flatness of each row of a 2-D array.

    spectral_flatness along axis 1 of a 2-D array; for real rows from the half spectrum (rfft),
    whose mirror image is the other half: the same means over all n bins, at half the cost.
    """
    if np.iscomplexobj(x):
        return spectral_flatness(x, axis=1)
    n = x.shape[1]
    mag = np.abs(np.fft.rfft(x, axis=1))
    w = np.full(mag.shape[1], 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    w /= n
    am = mag @ w
    gm = np.exp(np.log(mag + SF_EPS) @ w)
    return _sf_ratio(gm, am)


def _check_stream(
    what: str, t, v, min_len: int, name: str | None
) -> tuple[np.ndarray, np.ndarray]:
    where = f'{name}: ' if name else ''
    t = np.asarray(t, dtype=float)
    v = np.asarray(v)
    if not np.iscomplexobj(v):
        v = v.astype(float, copy=False)
    if t.ndim != 1 or v.shape != t.shape:
        raise RunDataError(
            f'{where}{what} stamps and values must be 1-D of equal length, '
            f'got {t.shape} and {v.shape}'
        )
    if len(t) < min_len:
        raise RunDataError(
            f'{where}{what} has {len(t)} samples; at least {min_len} are needed (short or empty '
            f'run)'
        )
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(v))):
        bad = int(np.flatnonzero(~(np.isfinite(t) & np.isfinite(v)))[0])
        raise RunDataError(f'{where}{what} sample {bad} is not finite (NaN/inf row)')
    if np.any(np.diff(t) < 0):
        bad = int(np.flatnonzero(np.diff(t) < 0)[0]) + 1
        raise RunDataError(
            f'{where}{what} stamps go backwards at sample {bad} ({float(t[bad - 1])!r} -> '
            f'{float(t[bad])!r})'
        )
    return t, v


def resample_run(se_t, se_v, gt_t, gt_v, preprocessing='paper', name: str | None = None):
    """(grid, estimate on grid, truth on grid) for one run, per the module's steps 1–3."""
    p = get_preprocessing(preprocessing)
    se_t, se_v = _check_stream('estimate', se_t, se_v, max(2, p.smooth + 1), name)
    gt_t, gt_v = _check_stream('truth', gt_t, gt_v, 2, name)
    t_end = min(gt_t[-1], se_t[-1])
    _check_span(name, float(t_end))
    grid = np.arange(0.0, t_end, 1.0 / p.rate_hz)
    if grid.size < 2:
        raise RunDataError(
            f'{name + ": " if name else ""}only {grid.size} grid point(s) at {p.rate_hz:g} Hz '
            f'before min(last truth stamp, last estimate stamp) = {float(t_end)!r} s (short run)'
        )
    gt_g = np.interp(grid, gt_t, gt_v)
    se_g = np.interp(grid, moving_average(se_t, p.smooth), moving_average(se_v, p.smooth))
    return grid, se_g, gt_g


def run_metrics(
    se_t, se_v, gt_t, gt_v, preprocessing='paper', name: str | None = None
) -> tuple[float, float]:
    """
    Return (E, S) of one run.

    (E, S) of one run: RMSE of the estimate against truth, and the spectral-flatness difference.
    """
    _, se_g, gt_g = resample_run(se_t, se_v, gt_t, gt_v, preprocessing, name)
    with np.errstate(over='ignore', invalid='ignore'):
        e = float(np.sqrt(np.mean(np.abs(se_g - gt_g) ** 2)))
        s = float(np.abs(spectral_flatness(se_g) - spectral_flatness(gt_g)))
    _check_result(lambda i: name or 'run', np.array([e]), np.array([s]))
    return e, s


# -----------------------------------------------------------------------------------------------
# batch


class _Ragged:
    """K 1-D arrays of different lengths, concatenated (``flat``) with ``starts`` and ``lens``."""

    def __init__(self, arrays: Sequence[np.ndarray], dtype):
        self.lens = np.fromiter((len(a) for a in arrays), dtype=np.intp, count=len(arrays))
        self.flat = np.concatenate(arrays) if len(arrays) else np.empty(0, dtype or float)
        if dtype is not None or self.flat.dtype.kind not in 'fc':
            self.flat = self.flat.astype(dtype or float, copy=False)
        self.starts = np.zeros(len(arrays), dtype=np.intp)
        if len(arrays) > 1:
            np.cumsum(self.lens[:-1], out=self.starts[1:])

    def run_of_elements(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.lens)), self.lens)


def _interp_ragged(x, n_q, t, v, starts, lens, max_steps: int = 6):
    """
    Interpolate each run of a ragged (t, v) at its own queries, in one vectorised pass.

    np.interp of the queries of each run (``n_q[r]`` consecutive values of ``x`` for run r) on run
    r of the ragged (t, v), in one vectorised pass. Same bracket and formula as numpy's interp:
    ends held constant, exact hits return the sample, otherwise slope * (x - t[j]) + v[j], j the
    last sample with t[j] <= x. The bracket is guessed from each run's mean sample rate and walked
    to the exact one (a few steps for streams of roughly regular rate); queries still unresolved
    fall back to a binary search.
    """
    ends = starts + lens - 1
    first, last = t[starts], t[ends]
    s_q, e_q = np.repeat(starts, n_q), np.repeat(ends, n_q)
    f_q = np.repeat(first, n_q)
    xc = np.minimum(np.maximum(x, f_q), np.repeat(last, n_q))
    span = last - first
    rate = np.divide(lens - 1, span, out=np.zeros(len(lens)), where=span > 0)
    j = s_q + ((xc - f_q) * np.repeat(rate, n_q)).astype(np.intp)
    np.clip(j, s_q, e_q, out=j)
    up = (j < e_q) & (t[np.minimum(j + 1, e_q)] <= xc)  # first step on whole arrays
    down = t[j] > xc
    j += up
    j -= down
    todo = np.flatnonzero(up | down)
    for _ in range(max_steps - 1):
        if not todo.size:
            break
        jj, xx, ee = j[todo], xc[todo], e_q[todo]
        up = (jj < ee) & (t[np.minimum(jj + 1, ee)] <= xx)
        down = t[jj] > xx
        move = up | down
        if not move.any():
            todo = todo[:0]
            break
        j[todo] = jj + up - down
        todo = todo[move]
    if todo.size:  # irregular streams: vectorised binary search within the run
        lo, hi, xx = (
            s_q[todo],
            e_q[todo] + 1,
            xc[todo],
        )  # invariant: t[lo] <= x < t[hi] (or hi past end)
        while True:
            active = hi - lo > 1
            if not active.any():
                break
            mid = (lo + hi) // 2
            go = t[np.minimum(mid, len(t) - 1)] <= xx
            lo = np.where(active & go, mid, lo)
            hi = np.where(active & ~go, mid, hi)
        j[todo] = lo
    jl = np.minimum(j, e_q - 1)  # segment [jl, jl+1] for the slope
    tj, vj = t[jl], v[jl]
    with np.errstate(divide='ignore', invalid='ignore'):
        slope = (v[jl + 1] - vj) / (t[jl + 1] - tj)
        out = slope * (xc - tj) + vj
    exact = xc == t[j]
    out[exact] = v[j[exact]]
    return out


def batch_metrics(
    se_t: Sequence,
    se_v: Sequence,
    gt_t: Sequence,
    gt_v: Sequence,
    preprocessing='paper',
    names: Sequence[str] | None = None,
    chunk_samples: int = 250_000,
) -> tuple[np.ndarray, np.ndarray]:
    """
    Return the (E, S) arrays of K runs, vectorised across runs.

    (E, S) arrays for K runs given as lists of per-run arrays of any lengths; equals
    ``run_metrics`` applied to each run (to rounding of the last bits), vectorised across runs.

    Runs are processed in chunks of about ``chunk_samples`` estimate samples, so temporaries stay
    small and cache-resident whatever K is.
    """
    p = get_preprocessing(preprocessing)
    k = len(se_t)
    if not (len(se_v) == len(gt_t) == len(gt_v) == k):
        raise ValueError('batch_metrics: the four lists must have one entry per run')
    if k == 0:
        return np.empty(0), np.empty(0)
    parts = []
    i0 = 0
    while i0 < k:
        n, i1 = 0, i0
        while i1 < k and (n == 0 or n + len(se_t[i1]) <= chunk_samples):
            n += len(se_t[i1])
            i1 += 1
        sub = None if names is None else list(names[i0:i1])
        parts.append(_grid_chunk(se_t[i0:i1], se_v[i0:i1], gt_t[i0:i1], gt_v[i0:i1], p, sub))
        i0 = i1
    se_g = np.concatenate([q[0] for q in parts])
    gt_g = np.concatenate([q[1] for q in parts])
    n_grid = np.concatenate([q[2] for q in parts])
    g_starts = np.zeros(k, dtype=np.intp)
    np.cumsum(n_grid[:-1], out=g_starts[1:])
    E = np.empty(k)
    S = np.empty(k)
    for n in np.unique(n_grid):  # one batched FFT per grid length
        rows = np.flatnonzero(n_grid == n)
        idx = g_starts[rows][:, None] + np.arange(n)
        se, gt = se_g[idx], gt_g[idx]
        with np.errstate(over='ignore', invalid='ignore'):
            E[rows] = np.sqrt(np.mean(np.abs(se - gt) ** 2, axis=1))
            S[rows] = np.abs(_spectral_flatness_rows(se) - _spectral_flatness_rows(gt))
    _check_result(lambda i: _name(names, i), E, S)
    return E, S


def _grid_chunk(se_t, se_v, gt_t, gt_v, p: Preprocessing, names):
    """Estimate and truth on the grid, flat, and the grid length of each run of one chunk."""
    k = len(se_t)
    SE_T, SE_V, GT_T, GT_V = (
        _Ragged(se_t, float),
        _Ragged(se_v, None),
        _Ragged(gt_t, float),
        _Ragged(gt_v, None),
    )
    vdt = complex if (np.iscomplexobj(SE_V.flat) or np.iscomplexobj(GT_V.flat)) else float
    SE_V.flat, GT_V.flat = SE_V.flat.astype(vdt, copy=False), GT_V.flat.astype(vdt, copy=False)
    _check_ragged(SE_T, SE_V, GT_T, GT_V, p, names)

    h = 1.0 / p.rate_hz
    t_end = np.minimum(
        GT_T.flat[GT_T.starts + GT_T.lens - 1], SE_T.flat[SE_T.starts + SE_T.lens - 1]
    )
    if np.any(t_end > MAX_RUN_SPAN_S):
        i = int(np.flatnonzero(t_end > MAX_RUN_SPAN_S)[0])
        _check_span(_name(names, i), float(t_end[i]))
    n_grid = np.where(t_end > 0, np.ceil(t_end / h), 0).astype(
        np.intp
    )  # len(np.arange(0, t_end, h))
    short = np.flatnonzero(n_grid < 2)
    if short.size:
        i = int(short[0])
        raise RunDataError(
            f'{_name(names, i)}: only {n_grid[i]} grid point(s) at {p.rate_hz:g} Hz before '
            f'min(last truth stamp, last estimate stamp) = {float(t_end[i])!r} s (short run)'
            + (f'; {short.size} such runs' if short.size > 1 else '')
        )
    g_starts = np.zeros(k, dtype=np.intp)
    np.cumsum(n_grid[:-1], out=g_starts[1:])
    x = (
        np.arange(int(n_grid.sum())) - np.repeat(g_starts, n_grid)
    ) * h  # == np.arange(0, t_end, h) per run

    gt_g = _interp_ragged(x, n_grid, GT_T.flat, GT_V.flat, GT_T.starts, GT_T.lens)
    if p.smooth > 1:
        se_ts, se_vs, s_starts, s_lens = _smooth_ragged(SE_T, SE_V, p.smooth)
    else:
        se_ts, se_vs, s_starts, s_lens = SE_T.flat, SE_V.flat, SE_T.starts, SE_T.lens
    se_g = _interp_ragged(x, n_grid, se_ts, se_vs, s_starts, s_lens)
    return se_g, gt_g, n_grid


def _smooth_ragged(T: _Ragged, V: _Ragged, n: int):
    """
    Smooth stamps and values within each run with an n-sample moving average.

    n-sample moving average of stamps and values within each run (np.convolve 'valid' per run).
    """
    N = T.flat.size
    m = N - n + 1
    w = 1.0 / n
    ts = T.flat[:m] * w
    vs = V.flat[:m] * w
    for k in range(1, n):
        ts = ts + T.flat[k: k + m] * w
        vs = vs + V.flat[k: k + m] * w
    keep = np.ones(
        m, dtype=bool
    )  # drop windows that straddle two runs: the last n-1 starts of each run
    ends = T.starts + T.lens
    for d in range(1, n):
        idx = ends - d
        keep[idx[idx < m]] = False
    lens = T.lens - n + 1
    starts = np.zeros_like(T.starts)
    np.cumsum(lens[:-1], out=starts[1:])
    return ts[keep], vs[keep], starts, lens


def _name(names, i) -> str:
    return str(names[i]) if names is not None else f'run #{i}'


def _check_ragged(SE_T, SE_V, GT_T, GT_V, p: Preprocessing, names):
    for what, T, V, min_len in (
        ('estimate', SE_T, SE_V, max(2, p.smooth + 1)),
        ('truth', GT_T, GT_V, 2),
    ):
        if np.any(T.lens != V.lens):
            i = int(np.flatnonzero(T.lens != V.lens)[0])
            raise RunDataError(f'{_name(names, i)}: {what} stamps and values differ in length')
        if np.any(T.lens < min_len):
            i = int(np.flatnonzero(T.lens < min_len)[0])
            raise RunDataError(
                f'{_name(names, i)}: {what} has {T.lens[i]} samples; at least {min_len} are '
                f'needed '
                f'(short or empty run)'
            )
        bad = ~(np.isfinite(T.flat) & np.isfinite(V.flat))
        if bad.any():
            e = int(np.flatnonzero(bad)[0])
            i = int(np.searchsorted(T.starts, e, side='right') - 1)
            raise RunDataError(
                f'{_name(names, i)}: {what} sample {e - T.starts[i]} is not finite (NaN/inf row)'
            )
        d = np.diff(T.flat)
        back = d < 0
        back[(T.starts[1:] - 1)] = False  # run boundaries
        if back.any():
            e = int(np.flatnonzero(back)[0]) + 1
            i = int(np.searchsorted(T.starts, e, side='right') - 1)
            raise RunDataError(
                f'{_name(names, i)}: {what} stamps go backwards at sample {e - T.starts[i]}'
            )
