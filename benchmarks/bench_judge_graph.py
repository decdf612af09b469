# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark the judge graph (ekf_node + navsat_transform) and the bicycle judge.

Judge graph speed (ekf_node + navsat_transform co-simulation, judge.rl_graph): a 30 s run of
100 Hz IMU + 10 Hz GPS (all-zero NavSatFix covariance, as Chrono) through the ART config/ekf.yaml
and config/navsat.yaml (35 Hz, two_d_mode, differential GPS, IMU gates, control block), single run
and batches of K runs in one vectorised pass; also the bicycle judge. Prints throughput as
multiples of real time (run-seconds judged per wall second, on one core).

Targets (issue #4): ≥ 200× real time on one core; the VEPD study (180 runs × 30 s) in < 5 s on 2
cores.

    .venv/bin/python benchmarks/bench_judge_graph.py [--k 1 30 90 180] [--repeat 2]
                                                     [--tree OTHER_CHECKOUT]

``--tree OTHER_CHECKOUT`` (e.g. a ``git worktree`` of an older commit): this tree and the other
side by side instead, each in its own interpreter (``python -c`` with the tree on ``sys.path``)
on the same inputs (generated here, handed over as an .npz), the trees alternating in every
repeat; prints the CPU-second medians per K, other / this (> 1: this tree is faster) and whether
the two trees' estimates are equal bit for bit.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import statistics
import sys
import tempfile
import time

from _trees import alternate, last_json, ROOT

sys.path.insert(0, str(ROOT))  # the working tree, not an installed copy

import numpy as np  # noqa: E402
from vepd_ros.judge.registry import get_judge  # noqa: E402
from vepd_ros.judge.rl_graph import run_judge_batch  # noqa: E402
from vepd_ros.testing.judge_inputs import circle_inputs  # noqa: E402

DURATION = 30.0
EKF = ROOT / 'config' / 'ekf.yaml'
NAVSAT = ROOT / 'config' / 'navsat.yaml'


def timed(fn, repeat):
    best = float('inf')
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    ap.add_argument('--k', type=int, nargs='+', default=[1, 30, 90, 180])
    ap.add_argument('--repeat', type=int, default=2)
    ap.add_argument('--tree', type=Path, default=None, help='compare with this other checkout')
    a = ap.parse_args(argv)
    if a.tree is not None:
        return side_by_side(a.tree.resolve(), a.k, a.repeat)
    print(
        f'threads: OMP/OPENBLAS={os.environ.get("OPENBLAS_NUM_THREADS", "default")}; '
        f'{DURATION:g} s of 100 Hz IMU + 10 Hz GPS per run, ART ekf.yaml + navsat.yaml'
    )
    rows = []
    for k in a.k:
        imu, gps, _ = circle_inputs(k=k, duration_s=DURATION, gps_sigma=0.03, seed=k)
        dt, r = timed(lambda: run_judge_batch(EKF, NAVSAT, imu, gps), a.repeat)
        rate = k * DURATION / dt
        rows.append((k, dt, rate))
        print(
            f'robot_localization  K={k:4d}: {dt:7.3f} s  -> {rate:8.0f}x real time '
            f'({r["stamp_ns"].size} outputs/run, {r["gps_odom_stamp_ns"].size} odometry/gps)'
        )
    for k in a.k:
        imu, gps, _ = circle_inputs(k=k, duration_s=DURATION, gps_sigma=0.03, seed=k)
        dt, r = timed(lambda: get_judge('bicycle').batch(EKF, None, imu, gps), a.repeat)
        print(f'bicycle             K={k:4d}: {dt:7.3f} s  -> {k * DURATION / dt:8.0f}x real time')
    single = next((r for r in rows if r[0] == 1), None)
    if single:
        print(f'single run: {single[2]:.0f}x real time (target >= 200x)')
    best = max(rows, key=lambda r: r[2])
    study = 180 * DURATION / best[2]
    print(
        f'paper-sized study (180 runs x 30 s) at the best batch rate (K={best[0]}): {study:.1f} s '
        f'on one core, '
        f'~{study / 2:.1f} s on 2 cores (target < 5 s)'
    )
    return 0


# One judge call timed in a fresh interpreter of TREE: the inputs from an .npz, a warm-up call,
# then the CPU seconds of one call and a digest of the estimates, as JSON on stdout.
_CHILD = """
import hashlib, json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
try:
    from vepd_ros.judge.rl_graph import run_judge_batch
except ImportError:  # a tree from before the rename
    from vepd_ros.judge.graph import run_judge_batch
d = np.load(sys.argv[2])
imu = {k[4:]: d[k][()] if d[k].ndim == 0 else d[k] for k in d.files if k.startswith('imu_')}
gps = {k[4:]: d[k][()] if d[k].ndim == 0 else d[k] for k in d.files if k.startswith('gps_')}
ekf, navsat = sys.argv[1] + '/config/ekf.yaml', sys.argv[1] + '/config/navsat.yaml'
run_judge_batch(ekf, navsat, imu, gps)
c = time.process_time()
r = run_judge_batch(ekf, navsat, imu, gps)
cpu = time.process_time() - c
digest = hashlib.sha256(r['state'].tobytes() + r['p_diag'].tobytes()).hexdigest()
print(json.dumps({'cpu': cpu, 'digest': digest}))
"""


def side_by_side(other: Path, ks: list, repeat: int) -> int:
    """
    Time this tree's judge graph and OTHER's on the same inputs, alternating; print the ratios.

    CPU seconds of one ``run_judge_batch`` call (imports and a warm-up call excluded) per K,
    median of ``repeat``; other / this > 1 means this tree is faster.
    """
    trees = {'this': ROOT, 'other': other}
    print(f'this tree {ROOT}; other tree {other}; CPU medians of {repeat}, trees alternating')
    with tempfile.TemporaryDirectory() as d:
        for k in ks:
            imu, gps, _ = circle_inputs(k=k, duration_s=DURATION, gps_sigma=0.03, seed=k)
            path = Path(d) / f'k{k}.npz'
            np.savez(
                path,
                **{'imu_' + n: v for n, v in imu.items()},
                **{'gps_' + n: v for n, v in gps.items()},
            )
            rounds = alternate(
                trees,
                repeat,
                lambda _, tree, __, path=path: last_json(
                    [sys.executable, '-c', _CHILD, str(tree), str(path)], cwd=tree
                ),
            )
            cpus = {name: [r['cpu'] for r in rs] for name, rs in rounds.items()}
            digests = {r['digest'] for rs in rounds.values() for r in rs}
            this, oth = statistics.median(cpus['this']), statistics.median(cpus['other'])
            print(
                f'robot_localization  K={k:4d}: this {this:7.3f} s cpu, other {oth:7.3f} s cpu '
                f'(medians of {repeat}): other / this = {oth / this:.2f}x; '
                f'{this / k * 1e3:.1f} ms per run; '
                f'estimates {"equal bit for bit" if len(digests) == 1 else "DIFFER"}',
                flush=True,
            )
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
