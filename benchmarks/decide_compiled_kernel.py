# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Measure issue 14's compiled-kernel option against the numpy kernel, bits and speed.

The joint update (m > 3 entries: LAPACK's inverse, BLAS products; the K = 1 judge's hottest
call) compiled by numba (benchmarks/_compiled_correct.py, a prototype, not a kernel of the
package) just in time (JIT) and ahead of time (AOT, numba.pycc). Prints, in one run:

1. bits: the prototype's x⁺ and P⁺ against ``kernel.correct_one`` on every m > 3 update of the
   K = 1 judge graph (one 30 s circle run, config/ekf.yaml + navsat.yaml), and against
   ``Ekf.correct_subset`` for batches of K = 30 and 90 runs (a 9-entry IMU-style update);
2. CPU µs per update and run, numpy kernel against the compiled loop, K = 1, 30, 90, and against
   the same algebra in plain loops (no BLAS or LAPACK, so no scipy at run time, other rounding: the
   kernel a re-baseline of the golden bits would allow), with its deviation from numpy's result;
3. the warm K = 1 judge (the graph and ``run_schedule``, bench_judge.py's cases) with the
   prototype routed in for K = 1's m > 3 updates (AOT), and the ratio;
4. fresh ``vepd bag`` processes (a generated ART bag, and test1.bag where ../shared is beside
   the clone) with the numpy kernel, JIT and AOT: CPU medians, ratios, and whether each output
   directory equals the numpy kernel's byte for byte.

Needs numba (``pip install numba``; not a dependency of vepd_ros) and a C compiler. CPU medians of
--repeat rounds, the variants alternating in every round; ratios numpy / compiled (> 1: the
compiled variant is faster).

    .venv/bin/python benchmarks/decide_compiled_kernel.py [--repeat 5] [--duration 120]

Not a ``bench_*`` target of ``make bench``: it measures an option for a decision (docs/judge.md,
"A compiled kernel?"), and needs a package vepd_ros does not depend on.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import math
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

from _trees import children_cpu, ROOT

BENCH = Path(__file__).resolve().parent
TEST1 = ROOT.parent / 'shared' / 'data' / 'robot_localization_tests' / 'test1.bag'
TEST1_ARGS = [  # test/test_upstream_bags.py's husky setup of test1.bag
    '--profile', 'custom', '--topic', 'gps=/fix', '--topic', 'imu=/imu/data',
    '--topic', 'truth=/husky_velocity_controller/odom', '--scenario', 'husky',
    '--static-tf', 'base_link imu_link 0 -0.3 0.52 1.570796327 0 -1.570796327',
]
AOT_NAME = 'compiled_correct'


def route(correct_runs):
    """Send K = 1's m > 3 updates through ``correct_runs``; return the kernel's own function."""
    import numpy as np
    from vepd_ros.judge import kernel

    from _compiled_correct import NOT_FINITE, REJECTED, SINGULAR  # plain ints: no numba

    original = kernel.correct_one
    verdict = {REJECTED: None, SINGULAR: kernel.REFUSED_SINGULAR,
               NOT_FINITE: kernel.REFUSED_NOT_FINITE}
    sets: dict = {}

    def correct_one(x, P, s, zs, Rs, thr2=math.inf, rdiag=None, hints=None):
        # the exact gate only: the early gate (rdiag) gives the same verdict by construction
        if len(s.idx_list) <= 3:
            return original(x, P, s, zs, Rs, thr2, rdiag, hints)
        idx = sets.get(id(s))
        if idx is None:
            idx = sets[id(s)] = (np.array(s.idx_list, np.int64), np.array(s.ang_list, np.int64))
        xn, Pn = x.copy(), P[None].copy()
        st = correct_runs(xn, Pn, idx[0], idx[1], np.array([zs], float), Rs, thr2)[0]
        return (xn, Pn[0]) if st == 0 else verdict[st]

    kernel.correct_one = correct_one
    return original


def _load_aot(aot_dir: str):
    """Import the AOT module from ``aot_dir`` (no numba import)."""
    sys.path.insert(0, aot_dir)
    import compiled_correct

    return compiled_correct


def _child(variant: str, aot_dir: str, argv: list) -> int:
    """Run ``vepd`` with the numpy kernel, or with JIT's or AOT's update routed in."""
    sys.path[:0] = [str(ROOT), str(BENCH)]
    if variant == 'jit':
        import _compiled_correct

        route(_compiled_correct.jit())
    elif variant == 'aot':
        route(_load_aot(aot_dir).correct_runs)
    from vepd_ros.cli import main

    status = main(argv)
    if variant == 'aot' and 'numba' in sys.modules:  # the AOT figure must not include numba
        raise SystemExit('decide_compiled_kernel: the AOT child imported numba')
    return status


def _capture():
    """Return every m > 3 update (x, P, idx, ang, zs, Rs, thr2) of the K = 1 judge graph."""
    import numpy as np
    from vepd_ros.judge import kernel

    import bench_judge

    cases = []
    original = kernel.correct_one

    def recording(x, P, s, zs, Rs, thr2=math.inf, rdiag=None, hints=None):
        if len(s.idx_list) > 3:
            cases.append((x.copy(), P.copy(), np.array(s.idx_list, np.int64),
                          np.array(s.ang_list, np.int64), list(zs), np.array(Rs), thr2))
        return original(x, P, s, zs, Rs, thr2, rdiag, hints)

    kernel.correct_one = recording
    try:
        bench_judge._graph_case()()
    finally:
        kernel.correct_one = original
    return cases


def _bits_k1(cases, correct_runs) -> tuple[int, int]:
    """Return (differing statuses, differing x⁺/P⁺) of the prototype against correct_one."""
    import numpy as np
    from vepd_ros.judge import kernel
    from vepd_ros.judge.ekf import IndexSet

    from _compiled_correct import NOT_FINITE, REJECTED, SINGULAR

    code = {None: REJECTED, kernel.REFUSED_SINGULAR: SINGULAR,
            kernel.REFUSED_NOT_FINITE: NOT_FINITE}
    statuses = values = 0
    for x, P, idx, ang, zs, Rs, thr2 in cases:
        ref = kernel.correct_one(x, P, IndexSet.of(idx), zs, Rs, thr2)
        xn, Pn = x.copy(), P[None].copy()
        st = correct_runs(xn, Pn, idx, ang, np.array([zs]), Rs, thr2)[0]
        if type(ref) is tuple:
            if st != 0:
                statuses += 1
            elif not (np.array_equal(ref[0], xn) and np.array_equal(ref[1], Pn[0])):
                values += 1
        elif st != code[ref]:
            statuses += 1
    return statuses, values


def _batches(aot, repeat: int) -> None:
    """
    Print bits and CPU µs per update and run of the batch update: numpy, compiled, loops.

    ``aot``: the AOT module. Its ``correct_runs`` keeps numpy's BLAS/LAPACK calls (bits compared);
    ``correct_runs_loops`` is the same algebra in plain loops (other rounding: its largest
    deviation from numpy's result is printed, x absolute and P relative).
    """
    import numpy as np
    from vepd_ros.judge.ekf import Ekf

    from bench_kernel import _per_run_us, IMU9, state_case, update_case

    for k in (1, 30, 90):
        x0, P0 = state_case(k)
        s, zs, Rs = update_case(x0, IMU9)
        ia, aa = s.idx.astype(np.int64), s.ang.astype(np.int64)
        e = Ekf(k=k)

        def numpy_step():
            e.x, e.P = x0.copy(), P0.copy()
            if k == 1:
                e.correct_k1_checked(s, zs[0].tolist(), Rs)
            else:
                e.correct_subset(s, zs, Rs, clamped=True)

        def step(correct):
            x, P = x0.copy(), P0.copy()
            correct(x, P, ia, aa, zs, Rs, math.inf)
            return x, P

        numpy_step()
        x, P = step(aot.correct_runs)
        same = np.array_equal(x, e.x) and np.array_equal(P, e.P)
        xl, Pl = step(aot.correct_runs_loops)
        dev = max(np.abs(xl - e.x).max(), (np.abs(Pl - e.P) / np.abs(e.P)).max())
        us = _per_run_us({
            f'K={k} numpy': numpy_step,
            f'K={k} compiled': lambda: step(aot.correct_runs),
            f'K={k} loops': lambda: step(aot.correct_runs_loops),
        }, [k], max(30, 3000 // k), repeat)
        a, b, c = (us[f'K={k} {v}'] for v in ('numpy', 'compiled', 'loops'))
        print(f'  K={k:<3d} 9-entry update: numpy {a:6.2f} µs, compiled {b:6.2f} µs per run '
              f'(numpy / compiled {a / b:4.2f}x; bits equal: {same}); plain loops {c:6.2f} µs '
              f'({a / c:4.2f}x; deviation {dev:.0e})', flush=True)


def _warm_k1(correct_runs, repeat: int) -> None:
    """Print the warm K = 1 judge's CPU seconds, numpy kernel against the AOT update routed in."""
    from vepd_ros.judge import kernel
    from vepd_ros.judge.filter import run_schedule

    import bench_judge

    p, series, ticks = bench_judge.build(1)
    cases = {'ekf+navsat graph': bench_judge._graph_case(),
             'run_schedule': lambda: run_schedule(p, series, ticks)}
    original = kernel.correct_one
    route(correct_runs)
    routed = kernel.correct_one
    cpu: dict = {}
    try:
        for _ in range(repeat):
            for variant, fn_one in (('numpy', original), ('aot', routed)):
                kernel.correct_one = fn_one
                for name, case in cases.items():
                    case()
                    cpu.setdefault((name, variant), []).append(
                        min(_timed_cpu(case) for _ in range(3)))
    finally:
        kernel.correct_one = original
    for name in cases:
        a, b = (statistics.median(cpu[(name, v)]) for v in ('numpy', 'aot'))
        print(f'  K=1 {name:17s} numpy {a:6.3f} s, aot {b:6.3f} s CPU: ratio {a / b:4.2f}x')


def _timed_cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def _art_bag(d: Path, duration: float) -> Path:
    """Write bench_bag.py's ART-layout bag of a simulated circle run; return its path."""
    from vepd_ros.io.write_bag import streams_from_sensor_run, write_bag
    from vepd_ros.pipelines import study

    sim = study.simulate_run('ref', 'ch_gauss', 'ch_drift_paper', 'circle', j=1,
                             duration_s=duration, seed=0)
    return write_bag(d / 'art', streams_from_sensor_run(sim.sensors), storage='sqlite3')


def _same_tree(a: Path, b: Path) -> bool:
    """Return whether two output directories hold the same files byte for byte."""
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(
        _same_tree(a / s, b / s) for s in cmp.common_dirs)


def _fresh(bags: dict, aot_dir: str, d: Path, repeat: int) -> None:
    """Print fresh ``vepd bag`` CPU medians per variant and whether outputs equal numpy's."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(d / 'numba_cache'), MPLBACKEND='Agg')
    variants = ('numpy', 'jit', 'aot')

    def run(variant, bag, args, out):
        cmd = [sys.executable, __file__, '--child', variant, '--aot-dir', aot_dir, '--',
               'bag', str(bag), *args, '--out', str(out), '--quiet']
        subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=ROOT)

    for name, (bag, args) in bags.items():
        run('jit', bag, args, d / f'{name}_jit_warmup')  # JIT's first compile fills its cache
        cpu: dict = {v: [] for v in variants}
        for r in range(repeat):
            for v in variants:
                c = children_cpu()
                run(v, bag, args, d / f'{name}_{v}_{r}')
                cpu[v].append(children_cpu() - c)
        base = statistics.median(cpu['numpy'])
        line = f'  {name:6s} numpy {base:5.2f} s'
        for v in variants[1:]:
            m = statistics.median(cpu[v])
            same = _same_tree(d / f'{name}_numpy_0', d / f'{name}_{v}_0')
            line += f'; {v} {m:5.2f} s ({base / m:4.2f}x, outputs equal: {same})'
        print(line, flush=True)


def main(argv=None) -> int:
    """Print the measurements (see the module's docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--duration', type=float, default=120.0, help='the ART bag, seconds')
    ap.add_argument('--child', choices=('numpy', 'jit', 'aot'), help=argparse.SUPPRESS)
    ap.add_argument('--aot-dir', help=argparse.SUPPRESS)
    ap.add_argument('rest', nargs='*', help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        return _child(a.child, a.aot_dir, a.rest)
    if importlib.util.find_spec('numba') is None:
        print('decide_compiled_kernel: needs numba (pip install numba), which vepd_ros does not '
              'depend on', file=sys.stderr)
        return 2
    sys.path[:0] = [str(ROOT), str(BENCH)]
    import _compiled_correct

    print(f'decide_compiled_kernel: tree {ROOT}; load average {os.getloadavg()[0]:.2f}; CPU, '
          f'medians of {a.repeat} rounds', flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        t = time.perf_counter()
        _compiled_correct.build_aot(str(d), AOT_NAME)
        print(f'AOT build (numba.pycc): {time.perf_counter() - t:.1f} s wall', flush=True)
        module = _load_aot(str(d))
        aot = module.correct_runs
        cases = _capture()
        statuses, values = _bits_k1(cases, aot)
        print(f'1. bits, K=1 graph run: {len(cases)} joint updates, {statuses} verdicts and '
              f'{values} results differ from kernel.correct_one', flush=True)
        print('2. update cost per run, the numpy kernel against the compiled loop over runs (AOT)'
              ' and the same algebra in plain loops (no BLAS/LAPACK, other rounding):')
        _batches(module, a.repeat)
        print('3. the warm K=1 judge, AOT update routed in:', flush=True)
        _warm_k1(aot, a.repeat)
        print('4. fresh `vepd bag` processes, CPU (JIT: numba imported, its cache warm):',
              flush=True)
        bags = {'art': (_art_bag(d, a.duration), ['--profile', 'art'])}
        if TEST1.exists():
            bags['test1'] = (TEST1, TEST1_ARGS)
        else:
            print(f'  (test1.bag skipped: {TEST1} is absent)')
        _fresh(bags, str(d), d, a.repeat)
    return 0


if __name__ == '__main__':
    sys.exit(main())
