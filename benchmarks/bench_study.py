"""Offline study speed: the paper-sized study (5 GPS models × 3 scenarios × 10 runs × 30 s, plus the 30
reference runs — 180 runs, 5400 simulated seconds, judge included) run in-process with
``pipeline.run_study`` exactly as ``vepd study`` does (fsync on, to a temporary directory). Target: under
5 s wall on the 2-core box (≥ 1000× real time). Prints the minimum and the median of --repeat runs for

* study       ``run_study`` on every core (chunks of ``CHUNK_RUNS`` runs filtered together, fork pool);
* sequential  the same with ``workers=1`` (one core, same chunks) — the baseline the issue asks for;
* sim+judge   ``simulate_and_judge`` alone on every core (no files, no evaluator);
* evaluator   ``EvaluatorCore`` on the judged records (add_records + result, n_boot 1000);
* with --unbatched also the study with one run per chunk on one core (every run filtered alone, K = 1).

    .venv/bin/python benchmarks/bench_study.py [--repeat 3] [--workers N] [--chunk K ...] [--unbatched]

``--chunk 15 30 45 60 90`` times the study for several chunk sizes (``pipeline.CHUNK_RUNS``).
Rates: simulated seconds / wall (× real time) and runs / s. Interpreter start and imports (≈ 0.75 s, scipy)
are not in these figures; ``time vepd study ...`` includes them.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the working tree, not an installed copy

from vepd_ros import pipeline  # noqa: E402

MODELS = ['ch_gauss', 'ch_rw', 'airsim', 'ch_gauss+airsim', 'ch_rw+airsim']
SCENARIOS = ['straight', 'circle', 'sine']
RUNS, DURATION, REFERENCE, SEED = 10, 30.0, 'rtk', 1
N_RUNS = (len(MODELS) + 1) * len(SCENARIOS) * RUNS
SIM_SECONDS = N_RUNS * DURATION


def timed(fn, repeat: int) -> tuple[float, float]:
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts), statistics.median(ts)


def study(workers=None, chunk=None):
    old = pipeline.CHUNK_RUNS
    if chunk is not None:
        pipeline.CHUNK_RUNS = chunk
    d = tempfile.mkdtemp(prefix='bench_study_')
    try:
        pipeline.run_study(MODELS, SCENARIOS, RUNS, DURATION, REFERENCE, d, seed=SEED, fsync=True, workers=workers)
    finally:
        pipeline.CHUNK_RUNS = old
        shutil.rmtree(d, ignore_errors=True)


def specs():
    from vepd_ros.metrics.evaluator import REFERENCE as REF
    jobs = [(REF, REFERENCE, s) for s in SCENARIOS] + [(m, m, s) for m in MODELS for s in SCENARIOS]
    return [(side, g, sc, j) for side, g, sc in jobs for j in range(1, RUNS + 1)]


def sim_and_judge(workers=None):
    recs = []
    for r in pipeline.simulate_and_judge(specs(), 'ch_drift_paper', DURATION, SEED, workers=workers):
        recs += r
    return recs


def evaluator(recs):
    from vepd_ros.metrics.evaluator import EvaluatorCore
    core = EvaluatorCore(k=RUNS, seed=SEED)
    by: dict = {}
    for r in recs:
        by.setdefault((r.meta['label'], r.meta['scenario']), []).append(r)
    for (side, sc), rs in by.items():
        core.add_records(side, sc, sorted(rs, key=lambda r: r.meta['j']))
    return core.result()


def line(name: str, mn: float, med: float, extra: str = '') -> None:
    print(f'{name:<34s} {mn:7.2f} s min  {med:7.2f} s median   {SIM_SECONDS / mn:7.0f}x real time  '
          f'{N_RUNS / mn:6.1f} runs/s{extra}')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--workers', type=int, default=None, help='default: all cores')
    ap.add_argument('--chunk', type=int, nargs='*', default=None, help='also time these CHUNK_RUNS values')
    ap.add_argument('--unbatched', action='store_true', help='also time one run per chunk on one core (slow)')
    ap.add_argument('--skip-sequential', action='store_true')
    a = ap.parse_args()
    cores = os.cpu_count()
    print(f'paper-sized study: {N_RUNS} runs x {DURATION:.0f} s = {SIM_SECONDS:.0f} simulated s; '
          f'{cores} cores, CHUNK_RUNS={pipeline.CHUNK_RUNS}, repeat {a.repeat}')
    study(a.workers)                                      # warm-up (imports, page cache)
    mn, med = timed(lambda: study(a.workers), a.repeat)
    line(f'study (workers={a.workers or cores})', mn, med)
    if not a.skip_sequential:
        smn, smed = timed(lambda: study(1), a.repeat)
        line('sequential (workers=1)', smn, smed, f'   parallel speed-up {smn / mn:.2f}x')
    jm, jmed = timed(lambda: sim_and_judge(a.workers), a.repeat)
    line('  sim+judge only (all cores)', jm, jmed)
    recs = sim_and_judge(a.workers)
    em, emed = timed(lambda: evaluator(recs), a.repeat)
    print(f'{"  evaluator only (1 core)":<34s} {em:7.2f} s min  {emed:7.2f} s median')
    for c in a.chunk or []:
        cm, cmed = timed(lambda: study(a.workers, c), a.repeat)
        line(f'study, CHUNK_RUNS={c}', cm, cmed)
    if a.unbatched:
        um, umed = timed(lambda: study(1, 1), 1)
        line('unbatched (K=1, workers=1)', um, umed, f'   vs study {um / mn:.1f}x')
    return 0


if __name__ == '__main__':
    sys.exit(main())
