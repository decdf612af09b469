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
* workers     ``vepd tune --workers 1`` and ``--workers W`` (W processes on one SQLite study),
  --trials in total: wall time of each and the speed-up;
* profile     (``--profile``) one trial under cProfile: where its time goes, the judge's share
  and what lies outside the judge.

    .venv/bin/python benchmarks/bench_tune.py [--trials 20] [--runs 10] [--duration 30]
                                              [--workers 2] [--in-process-only] [--profile]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

from _trees import children_cpu, ROOT

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
    t0, c0 = time.perf_counter(), time.process_time()
    core.tune(ob, MODEL, axes, trials=args.trials, storage=optuna.storages.InMemoryStorage(),
              study_name='bench', seed=1)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f'in-process: reference {t_ref:.1f} s; {args.trials} trials in {wall:.1f} s = '
          f'{args.trials / wall * 60:.1f} trials/min; study path {ob.sim_seconds / wall:.1%} '
          f'of the time (outside it {1 - ob.sim_seconds / wall:.1%})')
    print(f'  CPU {cpu / args.trials:.2f} s per trial ({args.trials / cpu * 60:.1f} trials per '
          f'CPU-minute; wall/CPU {wall / cpu:.2f}: above 1 the box is shared, '
          f'load {os.getloadavg()[0]:.1f})')
    print(f'  → 100 trials ≈ {100 * wall / args.trials / 60:.1f} min wall, '
          f'{100 * cpu / args.trials / 60:.1f} min of one core (goal < 2 min on 2 cores)')


def workers(args) -> None:
    def run(n_workers: int, tmp: Path) -> float:
        cmd = [sys.executable, '-m', 'vepd_ros.cli', 'tune', '--model', MODEL, '--params',
               PARAMS, '--reference', 'rtk', '--runs', str(args.runs), '--duration',
               str(args.duration), '--trials', str(args.trials), '--seed', '1', '--workers',
               str(n_workers), '--quiet', '--no-landscape', '--out', str(tmp / f'o{n_workers}')]
        t0, c0 = time.perf_counter(), children_cpu()
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode:
            raise SystemExit(p.stderr.decode()[-2000:])
        return time.perf_counter() - t0, children_cpu() - c0

    with tempfile.TemporaryDirectory() as d:
        load = os.getloadavg()[0]
        (one, cpu1), (many, cpu_w) = run(1, Path(d)), run(args.workers, Path(d))
    print(f'workers: vepd tune --trials {args.trials}: --workers 1 {one:.1f} s wall ({cpu1:.1f} '
          f's CPU), --workers {args.workers} {many:.1f} s wall ({cpu_w:.1f} s CPU): speed-up '
          f'{one / many:.2f}x (each command also simulates the reference once and re-checks the '
          f'best and the start on fresh seeds; load {load:.1f} before, '
          f'{os.getloadavg()[0]:.1f} after: a speed-up needs idle cores)')


def profile(args) -> None:
    import cProfile
    import pstats

    ob = core.Objective(MODEL, 'rtk', SCENARIOS, args.runs, args.duration, seed=1)
    axes = core.parse_param_specs(PARAMS, MODEL)
    prm = core.model_params(MODEL, axes, core.start_values(MODEL, axes))
    ob(prm)  # imports and first-call caches out of the way
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    ob(prm)
    pr.disable()
    wall = time.perf_counter() - t0
    st = pstats.Stats(pr)
    cum = {f'{k[0].rsplit("/", 2)[-1]}:{k[2]}': v[3] for k, v in st.stats.items()}
    judge = cum.get('judge_step.py:judge', 0.0)
    print(f'profile: one trial {wall:.2f} s (under cProfile); judge {judge:.2f} s '
          f'({judge / wall:.0%}), outside the judge {wall - judge:.2f} s:')
    for name in ('study.py:truth_samples', 'sensors.py:simulate_sensors',
                 'evaluator.py:result', 'evaluator.py:add_records'):
        if name in cum:
            print(f'  {name} {cum[name]:.3f} s ({cum[name] / wall:.1%})')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--trials', type=int, default=20)
    ap.add_argument('--runs', type=int, default=10)
    ap.add_argument('--duration', type=float, default=30.0)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--in-process-only', action='store_true')
    ap.add_argument('--profile', action='store_true', help='profile one trial (cProfile) first')
    args = ap.parse_args()
    print(f'{MODEL} ({PARAMS}) vs rtk: {len(SCENARIOS)} scenarios x {args.runs} runs x '
          f'{args.duration:g} s per trial')
    if args.profile:
        profile(args)
    in_process(args)
    if not args.in_process_only:
        workers(args)


if __name__ == '__main__':
    main()
