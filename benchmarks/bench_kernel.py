# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Cost of the EKF's predict and correct per call (K = 1) and per run (K = 30), medians of --repeat.

Only ``Ekf``'s public calls (``predict``, ``correct_subset``; the judge graph's controlled
predict), so the same script runs in an older tree for a side-by-side figure:
``cd /tmp/base && .venv/bin/python /path/to/bench_kernel.py --tree .``. Updates: a 3-entry
velocity update without gate, a yaw update, a 9-entry IMU-style update with gate (most pass).

    .venv/bin/python benchmarks/bench_kernel.py [--repeat 5] [--calls 2000] [--tree DIR]
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
import statistics
import sys
import time


def _per_call_us(fn, calls, repeat):
    """Return the median over ``repeat`` of the mean cost of one ``fn()`` call, in µs."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(out)


def main(argv=None):
    """Print per-call costs (K = 1) and per-run costs (K = 30), in µs."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--calls', type=int, default=2000)
    ap.add_argument(
        '--tree', default=str(Path(__file__).resolve().parents[1]),
        help='the source tree to measure (default: this one)',
    )
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(args.tree).resolve()))
    import numpy as np
    from vepd_ros.judge.ekf import clamp_variances, Ekf, index_set
    from vepd_ros.judge.rl_graph import _ControlledEkf, ControlParams

    ctl = ControlParams(
        (True, False, False, False, False, True), (1.3, 0, 0, 0, 0, 3.4),
        (0.8, 0, 0, 0, 0, 0.9), (1.3, 0, 0, 0, 0, 4.5), (1.0, 0, 0, 0, 0, 1.0),
    )
    print(f'bench_kernel: tree {args.tree}; load average {os.getloadavg()[0]:.2f}')
    dt = 0.01
    for k in (1, 30):
        rng = np.random.default_rng(0)
        x0 = rng.normal(size=(k, 15)) * 0.1
        a = rng.normal(size=(k, 15, 15))
        P0 = 0.01 * np.matmul(a, a.transpose(0, 2, 1))
        rows = {}
        for name, e in (('predict', Ekf(k=k)), ('predict control', _ControlledEkf(ctl, k=k))):
            def step(e=e):
                e.x, e.P = x0, P0
                e.predict(dt)
            rows[name] = _per_call_us(step, args.calls, args.repeat)
        e = Ekf(k=k)
        for name, idx, gate in (('correct vel3', (6, 7, 8), math.inf), ('correct yaw1', (5,), 4.0),
                                ('correct imu9 gate', (3, 4, 5, 9, 10, 11, 12, 13, 14), 30.0)):
            s = index_set(tuple(i in idx for i in range(15)))
            m = len(idx)
            zs = x0[:, list(idx)] + 0.05
            Rs = clamp_variances(np.eye(m) * 0.1)
            if k == 1:
                zl = zs[0].tolist()

                def step(s=s, zl=zl, Rs=Rs, gate=gate):
                    e.x, e.P = x0, P0
                    e.correct_k1_checked(s, zl, Rs, gate)
            else:
                def step(s=s, zs=zs, Rs=Rs, gate=gate):
                    e.x, e.P = x0.copy(), P0.copy()
                    e.correct_subset(s, zs, Rs, gate, clamped=True)
            rows[name] = _per_call_us(step, args.calls, args.repeat)
        unit = 'µs per call' if k == 1 else 'µs per run (call / K)'
        print(f'K = {k} ({unit}):')
        for name, us in rows.items():
            print(f'  {name:20s} {us / k:8.2f}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
