# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
CPU cost of the EKF's predict and correct per call (K = 1) and per run (K = 30, 45).

Only ``Ekf``'s public calls (``predict``, ``correct_k1_checked``, ``correct_subset``; the judge
graph's controlled predict, config/ekf.yaml's yaw-only control), so the same script measures an
older tree: ``--tree OTHER`` (e.g. ``git worktree add /tmp/base f6fbbe6``) times both trees side
by side, in fresh interpreters alternating round by round, and prints the ratios other / this
(> 1: this tree is faster). Updates: a 3-entry velocity update without gate, an orientation
update (angles), a gated position update, a 9-entry IMU-style joint update. CPU time
(``time.process_time``), the minimum over --repeat rounds of the mean over --calls calls.

    .venv/bin/python benchmarks/bench_kernel.py [--repeat 5] [--calls 1000] [--k 1 30 45]
                                                [--tree OTHER]
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
import sys
import time

from _trees import alternate, last_json, per_case, ROOT


IMU9 = (3, 4, 5, 9, 10, 11, 12, 13, 14)
"""The 9-entry IMU-style joint update's state indices (orientation, rates, accelerations)."""


def state_case(k: int):
    """Return the cases' prior (x0 (K, 15), P0 (K, 15, 15)), seeded: the same for every K."""
    import numpy as np

    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(k, 15)) * 0.1
    a = rng.normal(size=(k, 15, 15))
    return x0, 0.01 * np.matmul(a, a.transpose(0, 2, 1))


def update_case(x0, idx):
    """Return (index set, zs (K, m), clamped Rs (m, m)) of an update of the entries ``idx``."""
    import numpy as np
    from vepd_ros.judge.ekf import clamp_variances, index_set

    s = index_set(tuple(i in idx for i in range(15)))
    return s, x0[:, list(idx)] + 0.05, clamp_variances(np.eye(len(idx)) * 0.1)


def _cases(ks):
    """Return {name: call} of every case, built from the ``vepd_ros`` on sys.path."""
    from vepd_ros.judge.ekf import Ekf
    try:  # the module's name since issue 14, then before
        from vepd_ros.judge.rl_graph import _ControlledEkf, ControlParams
    except ImportError:
        from vepd_ros.judge.graph import _ControlledEkf, ControlParams

    yaw = ControlParams(  # config/ekf.yaml as the judge reads it: vx off, vyaw on
        (False,) * 5 + (True,), (0.0,) * 5 + (3.4,), (0.0,) * 5 + (0.9,),
        (0.0,) * 5 + (4.5,), (0.0,) * 5 + (1.0,),
    )
    cases = {}
    for k in ks:
        x0, P0 = state_case(k)
        for name, e in (('predict', Ekf(k=k)), ('predict control', _ControlledEkf(yaw, k=k))):
            def step(e=e, x0=x0, P0=P0):
                e.x, e.P = x0, P0
                e.predict(0.01)
            cases[f'K={k} {name}'] = step
        e = Ekf(k=k)
        for name, idx, gate in (
            ('correct vel3', (6, 7, 8), math.inf), ('correct rpy3', (3, 4, 5), math.inf),
            ('correct pos3 gate', (0, 1, 2), 1e6),
            ('correct imu9', IMU9, math.inf),
        ):
            s, zs, Rs = update_case(x0, idx)
            if k == 1:
                def step(e=e, x0=x0, P0=P0, s=s, zl=zs[0].tolist(), Rs=Rs, gate=gate):
                    e.x, e.P = x0, P0
                    e.correct_k1_checked(s, zl, Rs, gate)
            else:
                def step(e=e, x0=x0, P0=P0, s=s, zs=zs, Rs=Rs, gate=gate):
                    e.x, e.P = x0, P0
                    e.correct_subset(s, zs, Rs, gate, clamped=True)
            cases[f'K={k} {name}'] = step
    return cases


def _per_run_us(cases, ks, calls, repeat):
    """Return {name: CPU µs per call (K = 1) or per run (K > 1)}, minimum over ``repeat``."""
    out = {}
    for name, fn in cases.items():
        k = int(name.split()[0][2:])
        best = math.inf
        fn()  # a first call's one-time work (imports, caches) is not the case's cost
        for _ in range(repeat):
            t = time.process_time()
            for _ in range(calls):
                fn()
            best = min(best, (time.process_time() - t) / calls * 1e6 / k)
        out[name] = best
    return out


def main(argv=None):
    """Print per-call (K = 1) and per-run (K > 1) CPU costs in µs, or two trees' and ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--calls', type=int, default=1000)
    ap.add_argument('--k', type=int, nargs='+', default=[1, 30, 45])
    ap.add_argument('--tree', help='another checkout to time side by side with this one')
    ap.add_argument('--worker', help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:  # one round in the tree given
        sys.path.insert(0, str(Path(args.worker).resolve()))
        print(json.dumps(_per_run_us(_cases(args.k), args.k, args.calls, 1)))
        return 0
    if not args.tree:
        sys.path.insert(0, str(ROOT))
        print(f'bench_kernel: tree {ROOT}; load average {os.getloadavg()[0]:.2f}; CPU µs per '
              f'call (K = 1) / per run (K > 1), min of {args.repeat}')
        for name, us in _per_run_us(_cases(args.k), args.k, args.calls, args.repeat).items():
            print(f'  {name:26s} {us:8.2f}')
        return 0
    trees = {'this': str(ROOT), 'other': str(Path(args.tree).resolve())}
    rounds = alternate(trees, args.repeat, lambda _, path, __: last_json(
        [sys.executable, __file__, '--worker', path, '--calls', str(args.calls),
         '--k', *map(str, args.k)]))
    res = {t: {name: min(v) for name, v in per_case(rs).items()} for t, rs in rounds.items()}
    print(f'bench_kernel: this tree {trees["this"]}, other {trees["other"]}; CPU µs per call '
          f'(K = 1) / per run (K > 1), min of {args.repeat} rounds (ratio other / this: > 1 = '
          f'this tree faster)')
    for name in res['this']:
        a, b = res['this'][name], res['other'][name]
        print(f'  {name:26s} this {a:8.2f}  other {b:8.2f}  ratio {b / a:5.2f}x')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
