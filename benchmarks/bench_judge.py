# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark the built-in judge: cost per step and throughput, K = 1 and batches.

Built-in judge speed: sequential cost per step and throughput on a 30 s run of 100 Hz IMU + 10 Hz
GPS (odometry/gps with zero covariance), ticks at 35 Hz; single run (K = 1) and a batch of K runs
in one vectorised pass (``filter.run_schedule``). Target: ≥ 200× real time per run on one core
(K = 1 filter ≤ 0.15 s). Prints the minimum and the median of --repeat runs.

``--tree OTHER`` (a checkout of another commit, e.g. ``git worktree add /tmp/base f6fbbe6``)
times both trees side by side instead, in fresh interpreters alternating round by round (each
imports its own ``vepd_ros``, both are fed the inputs built here): CPU seconds of
``run_schedule`` at K = 1 and K = --k, and of the ekf+navsat graph ``vepd bag`` runs (one 30 s
circle run, config/ekf.yaml + navsat.yaml); per round the least of 3 runs, medians of --repeat
rounds and the ratios OTHER / this (> 1: this tree is faster).

    .venv/bin/python benchmarks/bench_judge.py [--k 30] [--repeat 5] [--tree OTHER]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import statistics
import sys
import time

from _trees import alternate, last_json, per_case, ROOT

NS = 1_000_000_000
T0 = 1_700_000_000 * NS
DURATION = 30.0

PARAMS = {
    'frequency': 35.0,
    'two_d_mode': False,
    'imu0': 'imu/data',
    'imu0_config': [False] * 3 + [True] * 3 + [False] * 3 + [True] * 6,
    'imu0_remove_gravitational_acceleration': True,
    'odom0': 'odometry/gps',
    'odom0_config': [True] * 3 + [False] * 12,
}


def build(k: int, seed: int = 0):
    """Return (params, measurement series, ticks) of the 30 s run for K runs."""
    import numpy as np
    from vepd_ros.frames import quaternion_from_rpy
    from vepd_ros.judge.config import load_ekf_params
    from vepd_ros.judge.filter import ticks_for
    from vepd_ros.judge.measurements import MeasurementBuilder

    p = load_ekf_params(PARAMS)
    rng = np.random.default_rng(seed)
    n_imu, n_gps = int(DURATION * 100), int(DURATION * 10)
    ti = T0 + 1_000_000 + np.arange(n_imu, dtype=np.int64) * (NS // 100)
    tg = T0 + 7_000_000 + np.arange(n_gps, dtype=np.int64) * (NS // 10)
    t = (ti - T0) * 1e-9
    yaw = 0.2 * t
    q = np.broadcast_to(quaternion_from_rpy(0 * t, 0 * t, yaw), (k, n_imu, 4)) + rng.normal(
        0, 1e-3, (k, n_imu, 4)
    )
    w = np.broadcast_to(np.stack([0 * t, 0 * t, 0 * t + 0.2], -1), (k, n_imu, 3)) + rng.normal(
        0, 0.01, (k, n_imu, 3)
    )
    a = np.broadcast_to(
        np.stack([0 * t, 2 * 0.2 + 0 * t, 9.80665 + 0 * t], -1), (k, n_imu, 3)
    ) + rng.normal(0, 0.05, (k, n_imu, 3))
    cov = np.broadcast_to(np.eye(3).ravel() * 1e-3, (k, n_imu, 9))
    tg_s = (tg - T0) * 1e-9
    pos = np.stack(
        [10 * np.sin(0.2 * tg_s), 10 * (1 - np.cos(0.2 * tg_s)), 0 * tg_s], -1
    ) + rng.normal(0, 0.3, (k, n_gps, 3))
    qg = np.broadcast_to([0.0, 0.0, 0.0, 1.0], (k, n_gps, 4))
    zero = np.zeros((k, n_gps, 36))
    b = MeasurementBuilder(p)
    series = b.imu_arrays('imu0', ti, q, w, a, cov, cov, cov) + b.odometry_arrays(
        'odom0',
        tg,
        pos,
        qg,
        zero,
        np.zeros((k, n_gps, 3)),
        np.zeros((k, n_gps, 3)),
        zero,
        'odom',
        'base_link',
    )
    ticks = ticks_for(p, T0 + p.period_ns, int(DURATION * p.frequency) + 1)
    return p, series, ticks


def timings(fn, repeat, clock=time.perf_counter):
    """Return ``repeat`` durations of ``fn()`` by ``clock``."""
    ts = []
    for _ in range(repeat):
        t = clock()
        fn()
        ts.append(clock() - t)
    return ts


def best(fn, repeat):
    """Return the shortest of ``repeat`` wall durations of ``fn()``."""
    return min(timings(fn, repeat))


def _graph_case():
    """Return a call of the ekf+navsat graph (``vepd bag``'s judge) on one 30 s circle run."""
    try:  # the module's name since issue 14, then before
        from vepd_ros.judge.rl_graph import run_judge_batch
    except ImportError:
        from vepd_ros.judge.graph import run_judge_batch
    try:
        from vepd_ros.testing.judge_inputs import circle_inputs
    except ImportError:
        from vepd_ros.judge.graph import circle_inputs
    imu, gps, _ = circle_inputs(k=1, duration_s=DURATION, gps_sigma=0.03, seed=1)
    ekf, navsat = ROOT / 'config' / 'ekf.yaml', ROOT / 'config' / 'navsat.yaml'
    return lambda: run_judge_batch(ekf, navsat, imu, gps)


def worker(tree: str, k: int) -> None:
    """Print one round's CPU seconds (JSON) of every case, run in ``tree``'s ``vepd_ros``."""
    sys.path.insert(0, str(Path(tree).resolve()))
    from vepd_ros.judge.filter import run_schedule

    cases = {}
    for kk in (1, k):
        p, series, ticks = build(kk)
        cases[f'run_schedule K={kk}'] = (lambda p=p, s=series, t=ticks: run_schedule(p, s, t))
    cases['graph K=1'] = _graph_case()
    out = {}
    for name, fn in cases.items():
        fn()  # warm-up: caches, first-call imports
        out[name] = min(timings(fn, 3, time.process_time))  # a round: the least disturbed of 3
    print(json.dumps(out))


def side_by_side(other: str, k: int, repeat: int) -> None:
    """Time this tree and ``other`` round by round in fresh interpreters; print the ratios."""
    trees = {'this': str(ROOT), 'other': str(Path(other).resolve())}
    rounds = alternate(
        trees,
        repeat,
        lambda _, path, __: last_json([sys.executable, __file__, '--worker', path, '--k', str(k)]),
    )
    cpu = {t: per_case(rs) for t, rs in rounds.items()}
    print(f'bench_judge: this tree {trees["this"]}, other {trees["other"]}; CPU s, median of '
          f'{repeat} rounds (ratio other / this: > 1 = this tree faster)')
    for name in cpu['this']:
        a, b = statistics.median(cpu['this'][name]), statistics.median(cpu['other'][name])
        print(f'  {name:22s} this {a:7.3f}  other {b:7.3f}  ratio {b / a:5.2f}x')


def main(argv=None):
    """Print the judge's speed in this tree, or beside another tree's (``--tree``)."""
    ap = argparse.ArgumentParser()
    ap.add_argument('--k', type=int, default=30)
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--tree', help='another checkout to time side by side with this one')
    ap.add_argument('--worker', help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.k)
    if args.tree:
        return side_by_side(args.tree, args.k, args.repeat)

    sys.path.insert(0, str(ROOT))  # the working tree, not an installed copy
    import numpy as np
    from vepd_ros.judge.ekf import Ekf
    from vepd_ros.judge.filter import run_schedule

    ekf = Ekf()
    ekf.process(T0, np.zeros(15), np.eye(15), [True] * 15)
    n = 2000
    t_pred = best(lambda: [ekf.predict(0.01) for _ in range(n)], args.repeat) / n
    z, R = np.zeros(15), np.eye(15) * 1e-3
    flags = [False] * 3 + [True] * 3 + [False] * 9
    t_corr = best(lambda: [ekf.correct(z, R, flags) for _ in range(n)], args.repeat) / n
    print(
        f'sequential cost per step (K=1): predict {t_pred * 1e6:.1f} µs, correct (3 entries) '
        f'{t_corr * 1e6:.1f} µs'
    )

    for k in (1, args.k):
        p, series, ticks = build(k)
        n_meas = sum(len(s) for s in series)
        ts = timings(lambda: run_schedule(p, series, ticks), args.repeat)
        t, tmed = min(ts), float(np.median(ts))
        tb = best(lambda: build(k), 1)
        print(
            f'K={k:3d}: 30 s run, {n_meas} measurements, {ticks.size} ticks: {t:.3f} s filter '
            f'(median {tmed:.3f} s of {args.repeat}; {DURATION / t:.0f}x real time for the batch, '
            f'{k * DURATION / t:.0f}x real time per run-second; {t / k * 1e3:.1f} ms per run); '
            f'message layer {tb:.3f} s'
        )


if __name__ == '__main__':
    main()
