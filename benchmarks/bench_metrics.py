# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark the evaluator on K = 10 000 runs per side, in a fresh process.

Evaluator speed: K = 10 000 runs per side (20 s runs, estimate 35 Hz, truth 25 Hz) in under 1 s,
the first call in a fresh process included.

Prints rates and ratios (never asserted in unit tests). Timed: per-run E and S of both sides
(vectorised), W1/W2/VEPD per scenario and combined, the bootstrap 95 % interval (B = 1000), ranks —
i.e. EvaluatorCore.add_records + result() on in-memory runs.

* fresh process: ``--fresh N`` child interpreters each build the runs (not timed), then time
  ``import vepd_ros.metrics`` (everything the evaluator imports beyond numpy and the run records)
  and the first ``evaluate`` call, then ``--repeat`` more calls; min and median over the children;
* the parts of one call (per-run E/S, bootstrap), without the bootstrap, the plain per-run loop for
  the ratio, and reading/writing run files for scale.

    .venv/bin/python benchmarks/bench_metrics.py [--k 10000] [--repeat 3] [--fresh 3]

The box is shared and noisy: compare minima and medians, and CPU seconds beside wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from vepd_ros.runs import BatchWriter, read_run  # noqa: E402
from vepd_ros.testing.synthetic_runs import synthetic_run  # noqa: E402

SCEN = ('straight', 'circle', 'sine')


def make(k, seed):
    rng = np.random.default_rng(seed)
    return {
        sc: [synthetic_run(rng, sc, 20.0) for _ in range(k // len(SCEN) + (i < k % len(SCEN)))]
        for i, sc in enumerate(SCEN)
    }


def evaluate(real, sim, n_boot=1000):
    from vepd_ros.metrics import EvaluatorCore

    core = EvaluatorCore(n_boot=n_boot)
    core.add_model('ch_rw')
    for side, data in (('real', real), ('ch_rw', sim)):
        for sc, recs in data.items():
            core.add_records(side, sc, recs)
    return core.result()


def child(k: int, repeat: int) -> None:
    """
    Time the import and the calls in one fresh interpreter.

    One fresh interpreter: build, then time the import and the calls; one JSON line on stdout.
    """
    real, sim = make(k, 1), make(k, 2)
    c, t = time.process_time(), time.perf_counter()
    import vepd_ros.metrics  # noqa: F401

    imp, imp_cpu = time.perf_counter() - t, time.process_time() - c
    calls = []
    for _ in range(1 + repeat):
        c, t = time.process_time(), time.perf_counter()
        res = evaluate(real, sim)
        calls.append((time.perf_counter() - t, time.process_time() - c))
    e = res['models']['ch_rw']
    print(
        json.dumps(
            {
                'import': imp,
                'import_cpu': imp_cpu,
                'calls': calls,
                'VEPD': e['VEPD'],
                'ci95': e['ci95'],
            }
        )
    )


def fresh(k: int, n: int, repeat: int) -> None:
    out = []
    for _ in range(n):
        r = subprocess.run(
            [sys.executable, __file__, '--child', '--k', str(k), '--repeat', str(repeat)],
            capture_output=True,
            text=True,
            check=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        out.append(json.loads(r.stdout.strip().splitlines()[-1]))
    first = [o['import'] + o['calls'][0][0] for o in out]
    first_cpu = [o['import_cpu'] + o['calls'][0][1] for o in out]
    call1 = [o['calls'][0][0] for o in out]
    later = [c[0] for o in out for c in o['calls'][1:]]
    imp = [o['import'] for o in out]
    print(f'fresh process ({n} interpreters), K = {k} runs per side, B = 1000 bootstrap:')
    print(
        f'  import vepd_ros.metrics   {min(imp):.3f} s min {statistics.median(imp):.3f} s median'
    )
    print(
        f'  first call                {min(call1):.3f} s min {statistics.median(call1):.3f} s '
        f'median '
        f'-> {2 * k / statistics.median(call1):,.0f} runs/s; '
        f'target (evaluate K = {k} per side) < 1 s: '
        f'{"OK" if statistics.median(call1) < 1.0 else "MISSED"} '
        f'(median / target {statistics.median(call1):.2f})'
    )
    print(
        f'  import + first call       {min(first):.3f} s min {statistics.median(first):.3f} s '
        f'median  '
        f'(cpu {statistics.median(first_cpu):.3f} s; the import is numpy/scipy.stats loading, not '
        f'evaluation)'
    )
    if later:
        print(
            f'  later calls               {min(later):.3f} s min {statistics.median(later):.3f} s '
            f'median '
            f'-> {2 * k / min(later):,.0f} runs/s'
        )
    imports = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, '-c', 'import vepd_ros.metrics'],
            check=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        imports.append(time.perf_counter() - t)
    print(
        f"  python -c 'import vepd_ros.metrics' (interpreter start, numpy included): "
        f'{min(imports):.3f} s min '
        f'{statistics.median(imports):.3f} s median'
    )
    vals = {(o['VEPD'], tuple(o['ci95'])) for o in out}
    print(
        f'  VEPD {out[0]["VEPD"]:.6f}  ci95 [{out[0]["ci95"][0]:.6f}, {out[0]["ci95"][1]:.6f}]  '
        f'{"identical in every interpreter" if len(vals) == 1 else "DIFFERS between interpreters"}'
    )


def parts(k: int, repeat: int) -> None:
    import importlib

    ev = importlib.import_module('vepd_ros.metrics.evaluator')
    from vepd_ros.metrics import run_metrics

    real, sim = make(k, 1), make(k, 2)
    took: dict[str, float] = {}

    def timed(name, fn):
        def wrapper(*a, **kw):
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                took[name] = took.get(name, 0.0) + time.perf_counter() - t

        return wrapper

    orig = ev.batch_metrics, ev.bootstrap_vepd, ev.bootstrap_vepd_groups
    ev.batch_metrics, ev.bootstrap_vepd, ev.bootstrap_vepd_groups = (
        timed('E/S', orig[0]),
        timed('bootstrap', orig[1]),
        timed('bootstrap', orig[2]),
    )
    rows = []
    try:
        for _ in range(repeat):
            took.clear()
            t = time.perf_counter()
            evaluate(real, sim)
            rows.append(
                (time.perf_counter() - t, took.get('E/S', 0.0), took.get('bootstrap', 0.0))
            )
    finally:
        ev.batch_metrics, ev.bootstrap_vepd, ev.bootstrap_vepd_groups = orig
    best = min(rows)
    print(
        f'in-process call (best of {repeat}): {best[0]:.3f} s = per-run E/S {best[1]:.3f} s + '
        f'bootstrap '
        f'{best[2]:.3f} s + W1/W2, ranks {best[0] - best[1] - best[2]:.3f} s'
    )
    t = time.perf_counter()
    evaluate(real, sim, n_boot=0)
    t_nb = time.perf_counter() - t
    print(f'  without the bootstrap: {t_nb:.3f} s ({2 * k / t_nb:,.0f} runs/s)')
    m = 1000
    recs = real['circle'][:m]
    t = time.perf_counter()
    for r in recs:
        run_metrics(*r.signal())
    t_loop = (time.perf_counter() - t) / m
    print(
        f'  plain per-run loop: {1 / t_loop:,.0f} runs/s -> vectorised evaluator is '
        f'{t_loop * 2 * k / t_nb:.1f}x faster'
    )
    with tempfile.TemporaryDirectory() as d:
        w = BatchWriter(d, 'sim', 'x', fsync=False)
        t = time.perf_counter()
        paths = [w.write(r, 'circle', j=j + 1) for j, r in enumerate(recs[:300])]
        t_w = (time.perf_counter() - t) / len(paths)
        t = time.perf_counter()
        for p in paths:
            read_run(p)
        t_r = (time.perf_counter() - t) / len(paths)
        w2 = BatchWriter(Path(d) / 'f', 'sim', 'x', fsync=True)
        t = time.perf_counter()
        for j, r in enumerate(recs[:30]):
            w2.write(r, 'circle', j=j + 1)
        t_wf = (time.perf_counter() - t) / 30
    print(
        f'run files: write {1 / t_w:,.0f} runs/s (no fsync), {1 / t_wf:,.0f} runs/s (fsync, incl. '
        f'index); '
        f'read {1 / t_r:,.0f} runs/s'
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--k', type=int, default=10_000)
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument(
        '--fresh', type=int, default=3, help='fresh interpreters timing import + first call'
    )
    ap.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.k, a.repeat)
        return
    print(f'load average {os.getloadavg()[0]:.2f}', flush=True)
    if a.fresh:
        fresh(a.k, a.fresh, a.repeat)
    parts(a.k, a.repeat)


if __name__ == '__main__':
    main()
