# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark ``vepd tune``: trials per minute, the share of time in the study path, workers.

Issue 15's goals: 100 trials of a 4-parameter model against 3 scenarios × 10 runs × 30 s in under
2 minutes on the 2-core box; < 10 % of the time outside the study path (simulate, judge,
metrics); near-linear speed-up with workers on one study. Printed, never asserted.

* in-process  ``pipelines.tune.tune`` with Optuna's in-memory storage: trials / min and the share
  of wall time spent in ``Objective.evaluate`` (the rest: sampler, storage, parameter handling);
* workers     ``vepd tune`` as 1 and as W subprocesses sharing one SQLite study (``--storage``),
  --trials in total: wall time of each and the speed-up.

    .venv/bin/python benchmarks/bench_tune.py [--trials 20] [--runs 10] [--duration 30]
                                              [--workers 2] [--in-process-only]
"""

from __future__ import annotations

import argparse
from pathlib import Path
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the working tree, not an installed copy

from vepd_ros.pipelines import tune as core  # noqa: E402

MODEL = 'ch_rw+airsim'
PARAMS = 'rw_sigma,rw_max_velocity,hdop_final=0.1:3:log,hdop_tau_s=1:30:log'
SCENARIOS = ['straight', 'circle', 'sine']


def in_process(args) -> None:
    import optuna

    t0 = time.perf_counter()
    ob = core.Objective(MODEL, 'rtk', SCENARIOS, args.runs, args.duration, seed=1)
    t_ref = time.perf_counter() - t0
    axes = core.parse_param_specs(PARAMS, MODEL)
    ob.sim_seconds = 0.0
    t0 = time.perf_counter()
    core.tune(ob, MODEL, axes, args.trials, optuna.storages.InMemoryStorage(), 'bench', seed=1)
    wall = time.perf_counter() - t0
    print(f'in-process: reference {t_ref:.1f} s; {args.trials} trials in {wall:.1f} s = '
          f'{args.trials / wall * 60:.1f} trials/min; study path {ob.sim_seconds / wall:.1%} '
          f'of the time (outside it {1 - ob.sim_seconds / wall:.1%})')
    print(f'  → 100 trials ≈ {100 * wall / args.trials / 60:.1f} min (goal < 2 min)')


def workers(args) -> None:
    def run(n_workers: int, tmp: Path) -> float:
        url = f'sqlite:///{tmp}/w{n_workers}.db'
        core.make_storage(url)  # the schema, before the workers race for it
        cmd = [sys.executable, '-m', 'vepd_ros.cli', 'tune', '--model', MODEL, '--params',
               PARAMS, '--reference', 'rtk', '--runs', str(args.runs), '--duration',
               str(args.duration), '--trials', str(args.trials), '--storage', url,
               '--study-name', 'bench', '--quiet']
        t0 = time.perf_counter()
        procs = [
            subprocess.Popen([*cmd, '--sampler-seed', str(i), '--out',
                              str(tmp / f'o{n_workers}_{i}')],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for i in range(n_workers)
        ]
        for p in procs:
            _, err = p.communicate()
            if p.returncode:
                raise SystemExit(err.decode()[-2000:])
        return time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as d:
        one = run(1, Path(d))
        many = run(args.workers, Path(d))
    print(f'workers: {args.trials} trials, 1 worker {one:.1f} s, {args.workers} workers '
          f'{many:.1f} s: speed-up {one / many:.2f}x (each process also simulates the '
          f'reference and re-checks the best on fresh seeds)')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--trials', type=int, default=20)
    ap.add_argument('--runs', type=int, default=10)
    ap.add_argument('--duration', type=float, default=30.0)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--in-process-only', action='store_true')
    args = ap.parse_args()
    print(f'{MODEL} ({PARAMS}) vs rtk: {len(SCENARIOS)} scenarios x {args.runs} runs x '
          f'{args.duration:g} s per trial')
    in_process(args)
    if not args.in_process_only:
        workers(args)


if __name__ == '__main__':
    main()
