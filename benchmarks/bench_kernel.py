# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Prototype kernel (judge/kernel.py) against today's Ekf paths: cost per call, medians of --repeat.

K = 1: per step, against ``_predict_k1_list`` / ``_predict_batch`` and ``_correct_k1`` /
``_correct_subset_batch``; K = 30: per run (call time / K), against the batch paths. A 3-entry
velocity update (odometry/gps style) without gate, and a 9-entry IMU-style update with gate.

    .venv/bin/python benchmarks/bench_kernel.py [--repeat 5] [--calls 2000]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
import statistics
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the working tree

import numpy as np  # noqa: E402
from vepd_ros.judge import kernel  # noqa: E402
from vepd_ros.judge.ekf import clamp_variances, Ekf, index_set  # noqa: E402


def _per_call_us(fn, calls, repeat):
    """Return the median over ``repeat`` of the mean cost of one ``fn()`` call, in µs."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(out)


def _case(k, seed=0):
    rng = np.random.default_rng(seed)
    e = Ekf(k=k)
    e.x = rng.normal(size=(k, 15)) * 0.1
    a = rng.normal(size=(k, 15, 15))
    e.P = 0.01 * np.matmul(a, a.transpose(0, 2, 1))
    return rng, e


def main(argv=None):
    """Print per-call costs and ratios (today / kernel)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--calls', type=int, default=2000)
    args = ap.parse_args(argv)
    dt = 0.01
    for k in (1, 30):
        rng, e = _case(k)
        x0, p0 = e.x.copy(), e.P.copy()
        ws = kernel.Workspace(k)
        qdt = dt * e.Q

        def reset():
            e.x, e.P = x0.copy(), p0.copy()

        rows = {}
        if k == 1:
            xl = x0[0].tolist()
            rows['predict  _predict_k1_list'] = _per_call_us(
                lambda: (reset(), e._predict_k1_list(dt, xl)), args.calls, args.repeat)
        rows['predict  _predict_batch'] = _per_call_us(
            lambda: (reset(), e._predict_batch(dt)), args.calls, args.repeat)
        rows['predict  kernel.predict'] = _per_call_us(
            lambda: kernel.predict(x0, p0, dt, qdt, ws), args.calls, args.repeat)
        wsd = kernel.DenseWorkspace(k)
        rows['predict  kernel.predict_dense'] = _per_call_us(
            lambda: kernel.predict_dense(x0, p0, dt, qdt, wsd), args.calls, args.repeat)
        rows['reset (subtract)'] = _per_call_us(reset, args.calls, args.repeat)
        for name, idx, gate in (('vel3', [6, 7, 8], math.inf), ('imu9', [3, 4, 5, 9, 10, 11,
                                                                         12, 13, 14], 10.0)):
            s = index_set(tuple(i in idx for i in range(15)))
            m = len(idx)
            zs = x0[:, idx] + 0.01 * rng.normal(size=(k, m))
            Rs = clamp_variances(0.01 * np.eye(m))
            thr2 = gate * gate
            if k == 1:
                zl = zs[0].tolist()
                rows[f'correct  {name} _correct_k1'] = _per_call_us(
                    lambda: (reset(), e._correct_k1(s, zl, Rs, thr2)), args.calls, args.repeat)
            rows[f'correct  {name} _correct_subset_batch'] = _per_call_us(
                lambda: (reset(), e._correct_subset_batch(s, zs, Rs[None], thr2, None, True)),
                args.calls, args.repeat)
            rows[f'correct  {name} kernel.correct'] = _per_call_us(
                lambda: kernel.correct(x0, p0, s.idx, s.ang_cols, zs, Rs[None], thr2),
                args.calls, args.repeat)
        for name, idx in (('vel3', [6, 7, 8]), ('yaw1', [5])):
            s = index_set(tuple(i in idx for i in range(15)))
            zs = x0[:, idx] + 0.01 * rng.normal(size=(k, len(idx)))
            Rs = clamp_variances(0.01 * np.eye(len(idx)))
            if k == 1:
                zl = zs[0].tolist()
                rows[f'correct  {name} _correct_k1 (again)'] = _per_call_us(
                    lambda: (reset(), e._correct_k1(s, zl, Rs)), args.calls, args.repeat)
            else:
                rows[f'correct  {name} _correct_subset_batch (again)'] = _per_call_us(
                    lambda: (reset(), e._correct_subset_batch(s, zs, Rs[None], math.inf,
                                                              None, True)),
                    args.calls, args.repeat)
            rows[f'correct  {name} kernel.correct_dense'] = _per_call_us(
                lambda: kernel.correct_dense(x0, p0, s.idx, s.ang_list, zs, Rs),
                args.calls, args.repeat)
        print(f'K = {k}: µs per call (per run: / {k}), median of {args.repeat}')
        for label, us in rows.items():
            print(f'  {label:40s} {us:8.2f} µs  ({us / k:7.2f} µs per run)')


if __name__ == '__main__':
    main()
