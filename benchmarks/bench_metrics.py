"""Evaluator speed: K = 10 000 runs per side (20 s runs, estimate 35 Hz, truth 25 Hz) in under 1 s.

Prints rates and ratios (never asserted in unit tests). Timed: per-run E and S of both sides
(vectorised), W1/W2/VEPD per scenario and combined, the bootstrap 95 % interval (B = 1000), ranks —
i.e. EvaluatorCore.add_records + result() on in-memory runs. Also: the plain per-run loop for the ratio,
and reading/writing run files for scale.

    .venv/bin/python benchmarks/bench_metrics.py [--k 10000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vepd_ros.metrics import EvaluatorCore, run_metrics  # noqa: E402
from vepd_ros.runs import BatchWriter, read_run  # noqa: E402
from vepd_ros.runs.synthetic import synthetic_run  # noqa: E402

SCEN = ('straight', 'circle', 'sine')


def make(k, seed):
    rng = np.random.default_rng(seed)
    return {sc: [synthetic_run(rng, sc, 20.0) for _ in range(k // len(SCEN) + (i < k % len(SCEN)))]
            for i, sc in enumerate(SCEN)}


def evaluate(real, sim, n_boot=1000):
    core = EvaluatorCore(n_boot=n_boot)
    core.add_model('ch_rw')
    for side, data in (('real', real), ('ch_rw', sim)):
        for sc, recs in data.items():
            core.add_records(side, sc, recs)
    return core.result()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--k', type=int, default=10_000)
    ap.add_argument('--repeat', type=int, default=3)
    a = ap.parse_args()
    t = time.perf_counter()
    real, sim = make(a.k, 1), make(a.k, 2)
    n_se = sum(len(r.se_t) for d in (real, sim) for v in d.values() for r in v)
    print(f'built 2 x {a.k} synthetic runs ({n_se / 2 / a.k:.0f} estimate samples per run) in {time.perf_counter() - t:.1f} s')
    times = []
    for i in range(a.repeat):
        t = time.perf_counter()
        res = evaluate(real, sim)
        times.append(time.perf_counter() - t)
    e = res['models']['ch_rw']
    print(f"evaluator, K = {a.k} runs per side, B = 1000 bootstrap: first {times[0]:.3f} s, best {min(times):.3f} s "
          f"-> {2 * a.k / min(times):,.0f} runs/s; target < 1 s: {'OK' if times[0] < 1.0 else 'MISSED'} "
          f"(ratio to target {times[0]:.2f})")
    print(f"  VEPD {e['VEPD']:.4f}  ci95 [{e['ci95'][0]:.4f}, {e['ci95'][1]:.4f}]")
    t = time.perf_counter()
    evaluate(real, sim, n_boot=0)
    t_nb = time.perf_counter() - t
    print(f'  without the bootstrap: {t_nb:.3f} s ({2 * a.k / t_nb:,.0f} runs/s)')
    m = 1000
    recs = real['circle'][:m]
    t = time.perf_counter()
    for r in recs:
        run_metrics(*r.signal())
    t_loop = (time.perf_counter() - t) / m
    print(f'  plain per-run loop: {1 / t_loop:,.0f} runs/s -> vectorised evaluator is {t_loop * 2 * a.k / t_nb:.1f}x faster')
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
    print(f'run files: write {1 / t_w:,.0f} runs/s (no fsync), {1 / t_wf:,.0f} runs/s (fsync, incl. index); '
          f'read {1 / t_r:,.0f} runs/s')


if __name__ == '__main__':
    main()
