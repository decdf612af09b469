# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark the paper-sized offline study through the ``vepd study`` command.

Offline study speed: the paper-sized study (5 GPS models × 3 scenarios × 10 runs × 30 s, plus the
30 reference runs — 180 runs, 5400 simulated seconds, judge included). Target: under 5 s wall on
the 2-core box (≥ 1000× real time) for what a user runs, the ``vepd study`` command. Prints the
minimum and the median of --repeat runs, and the CPU seconds (user + sys of every process) beside
each wall time, for.

* cli         ``python -m vepd_ros.cli study --models ... --seed 1 --out DIR`` as a subprocess: a
  fresh interpreter, imports, fork pool, writing (fsync on) and result.json — the figure a user
  sees;
* study       ``pipelines.study.run_study`` in-process on every core (imports done; otherwise
  what ``vepd study`` does);
* sequential  the same with ``workers=1`` (one core, same chunks) — the baseline the issue asks
  for;
* sim+judge   ``simulate_and_judge`` alone on every core (no files, no evaluator);
* evaluator   ``EvaluatorCore`` on the judged records (add_records + result, n_boot 1000);
* with --unbatched also the study with one run per chunk on one core (every run filtered alone, K =
  1).

    .venv/bin/python benchmarks/bench_study.py [--repeat 3] [--workers N] [--chunk K ...]
                                               [--unbatched] [--cli-only] [--startup]
                                               [--tree OTHER_CHECKOUT | --installed]

``--chunk 30 45 60 90`` times the in-process study for several chunk sizes
(``pipelines.study.CHUNK_RUNS``). ``--tree OTHER_CHECKOUT`` (e.g. a ``git worktree`` of an older
commit) times the CLI of this tree and of the other side by side, alternating in every repeat, and
prints the CPU-second medians and their ratio other / this (> 1: this tree is faster);
``--installed`` times the ``vepd`` console script of the venv (what ``pip install .`` put there)
instead of this tree's CLI. ``--startup`` (with ``--tree``) also times the start-up of short
commands in a fresh interpreter of each tree, alternating: ``vepd --help`` and ``vepd evaluate``
on a small study's output (CPU medians and the ratio). Rates: simulated seconds / wall (× real
time) and runs / s. The box is shared: compare medians and minima of several repeats, and the CPU
seconds, which other load disturbs less than wall time.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _trees import alternate, cli_cpu, own_and_children_cpu, per_case, ROOT, run_cli

sys.path.insert(0, str(ROOT))  # the working tree, not an installed copy

from vepd_ros.pipelines import study as pipeline  # noqa: E402

MODELS = ['ch_gauss', 'ch_rw', 'airsim', 'ch_gauss+airsim', 'ch_rw+airsim']
SCENARIOS = ['straight', 'circle', 'sine']
RUNS, DURATION, REFERENCE, SEED = 10, 30.0, 'rtk', 1
N_RUNS = (len(MODELS) + 1) * len(SCENARIOS) * RUNS
SIM_SECONDS = N_RUNS * DURATION
CLI_ARGS = [
    'study',
    '--models',
    ','.join(MODELS),
    '--scenarios',
    ','.join(SCENARIOS),
    '--runs',
    str(RUNS),
    '--duration',
    f'{DURATION:g}',
    '--reference',
    REFERENCE,
    '--judge',
    'builtin',
    '--seed',
    str(SEED),
]


def timed(fn, repeat: int) -> tuple[float, float, float]:
    """(min wall, median wall, median CPU seconds) of ``repeat`` calls."""
    ts, cs = [], []
    for _ in range(repeat):
        c, t = own_and_children_cpu(), time.perf_counter()  # pool workers, subprocesses
        fn()
        ts.append(time.perf_counter() - t)
        cs.append(own_and_children_cpu() - c)
    return min(ts), statistics.median(ts), statistics.median(cs)


def study(workers=None, chunk=None):
    old = pipeline.CHUNK_RUNS
    if chunk is not None:
        pipeline.CHUNK_RUNS = chunk
    d = tempfile.mkdtemp(prefix='bench_study_')
    try:
        pipeline.run_study(
            MODELS, SCENARIOS, RUNS, duration_s=DURATION, reference=REFERENCE, out_dir=d,
            seed=SEED, fsync=True, workers=workers
        )
    finally:
        pipeline.CHUNK_RUNS = old
        shutil.rmtree(d, ignore_errors=True)


def cli(tree: Path | None):
    """
    Run ``vepd study`` in a fresh interpreter or as the installed script.

    ``vepd study`` of ``tree`` in a fresh interpreter (``python -m vepd_ros.cli``), or with
    ``tree`` None the installed ``vepd`` console script beside this interpreter (run from a
    temporary directory); output discarded.
    """
    d = tempfile.mkdtemp(prefix='bench_study_cli_')
    try:
        if tree is None:
            subprocess.run(
                [str(Path(sys.executable).with_name('vepd')), *CLI_ARGS, '--out', d],
                cwd=d,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        else:
            run_cli(tree, [*CLI_ARGS, '--out', d], stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def specs():
    from vepd_ros.metrics.evaluator import REFERENCE as REF

    jobs = [(REF, REFERENCE, s) for s in SCENARIOS] + [
        (m, m, s) for m in MODELS for s in SCENARIOS
    ]
    return [(side, g, sc, j) for side, g, sc in jobs for j in range(1, RUNS + 1)]


def sim_and_judge(workers=None):
    recs = []
    for r in pipeline.simulate_and_judge(
        specs(), 'ch_drift_paper', DURATION, SEED, workers=workers
    ):
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


def line(name: str, mn: float, med: float, cpu: float, extra: str = '') -> None:
    print(
        f'{name:<30s} {mn:6.2f} s min {med:6.2f} s median  cpu {cpu:5.2f} s  '
        f'{SIM_SECONDS / mn:5.0f}x real time '
        f'{N_RUNS / mn:5.1f} runs/s{extra}',
        flush=True,
    )


def side_by_side(mine: Path | None, other: Path, repeat: int) -> None:
    """
    Time ``vepd study`` of this tree and of ``other``, alternating; print both and the ratio.

    Every repeat runs this tree's CLI, then the other's (a fresh interpreter each), so both see
    the same load; CPU seconds (user + sys of the command's processes) are the compared figure.
    """
    cli(other)  # warm-up (page cache)
    rounds = alternate(
        {'this': mine, 'other': other}, repeat, lambda _, tree, __: timed(lambda: cli(tree), 1)
    )
    walls = {name: [mn for mn, _, _ in rs] for name, rs in rounds.items()}
    cpus = {name: [cpu for _, _, cpu in rs] for name, rs in rounds.items()}
    for name, label in (('this', 'cli this tree'), ('other', f'cli other tree {other.name}')):
        w = walls[name]
        line(label, min(w), statistics.median(w), statistics.median(cpus[name]))
    this, oth = statistics.median(cpus['this']), statistics.median(cpus['other'])
    print(
        f'other / this (CPU medians of {repeat}) = {oth / this:.2f}x; wall medians '
        f'{statistics.median(walls["other"]) / statistics.median(walls["this"]):.2f}x',
        flush=True,
    )


def startup(other: Path, repeat: int) -> None:
    """
    Time ``vepd --help`` and ``vepd evaluate`` of this tree and of ``other``, alternating.

    Fresh interpreters (``python -m vepd_ros.cli`` from each tree); ``evaluate`` reads a small
    study written first by this tree. CPU seconds (user + sys) of each command, medians.
    """
    d = tempfile.mkdtemp(prefix='bench_study_startup_')
    try:
        small = ['study', '--models', 'ch_gauss', '--scenarios', 'circle', '--runs', '2']
        small += ['--reference', 'rtk', '--seed', '1']
        run_cli(ROOT, [*small, '--duration', '5', '--out', d], capture_output=True)
        commands = {'vepd --help': ['--help'], 'vepd evaluate': ['evaluate', d, '--json']}
        rounds = alternate(
            {'this': ROOT, 'other': other},
            repeat,
            lambda _, tree, __: {
                c: cli_cpu(tree, args, capture_output=True) for c, args in commands.items()
            },
        )
        cpus = {name: per_case(rs) for name, rs in rounds.items()}
        for c in commands:
            this = statistics.median(cpus['this'][c])
            oth = statistics.median(cpus['other'][c])
            print(
                f'start-up {c:14s}: this {this:.3f} s cpu, other {oth:.3f} s cpu (medians of '
                f'{repeat}): other / this = {oth / this:.2f}x',
                flush=True,
            )
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--workers', type=int, default=None, help='default: all cores')
    ap.add_argument(
        '--chunk', type=int, nargs='*', default=None, help='also time these CHUNK_RUNS values'
    )
    ap.add_argument(
        '--unbatched', action='store_true', help='also time one run per chunk on one core (slow)'
    )
    ap.add_argument('--skip-sequential', action='store_true')
    ap.add_argument('--cli-only', action='store_true', help='time only the CLI command')
    ap.add_argument(
        '--startup',
        action='store_true',
        help='with --tree: also time vepd --help and vepd evaluate start-up of both trees',
    )
    ap.add_argument(
        '--tree',
        type=Path,
        default=None,
        help='another checkout whose CLI is timed beside this one, alternating (ratio printed)',
    )
    ap.add_argument(
        '--installed',
        action='store_true',
        help='time the installed vepd console script instead of python -m vepd_ros.cli of --tree',
    )
    a = ap.parse_args()
    mine = None if a.installed else ROOT
    cores = os.cpu_count()
    print(
        f'paper-sized study: {N_RUNS} runs x {DURATION:.0f} s = {SIM_SECONDS:.0f} simulated s; '
        f'{cores} cores, CHUNK_RUNS={pipeline.CHUNK_RUNS}, repeat {a.repeat}; load average '
        f'{os.getloadavg()[0]:.2f}',
        flush=True,
    )
    print(
        f'cli: {"vepd" if mine is None else "python -m vepd_ros.cli"} {" ".join(CLI_ARGS)} '
        f'--out DIR   '
        f'({"installed copy" if mine is None else f"tree {mine}"})',
        flush=True,
    )
    cli(mine)  # warm-up (page cache)
    if a.tree is not None:
        if a.startup:
            startup(a.tree.resolve(), a.repeat)
        side_by_side(mine, a.tree.resolve(), a.repeat)
    else:
        cm, cmed, ccpu = timed(lambda: cli(mine), a.repeat)
        line('cli (fresh interpreter)', cm, cmed, ccpu)
    if a.cli_only:
        return 0
    study(a.workers)  # warm-up (imports)
    mn, med, cpu = timed(lambda: study(a.workers), a.repeat)
    line(f'study in-process (workers={a.workers or cores})', mn, med, cpu)
    if not a.skip_sequential:
        smn, smed, scpu = timed(lambda: study(1), a.repeat)
        line('sequential (workers=1)', smn, smed, scpu, f'   parallel speed-up {smn / mn:.2f}x')
    jm, jmed, jcpu = timed(lambda: sim_and_judge(a.workers), a.repeat)
    line('  sim+judge only (all cores)', jm, jmed, jcpu)
    recs = sim_and_judge(a.workers)
    em, emed, ecpu = timed(lambda: evaluator(recs), a.repeat)
    print(
        f'{"  evaluator only (1 core)":<30s} {em:6.2f} s min {emed:6.2f} s median  cpu '
        f'{ecpu:5.2f} s'
    )
    for c in a.chunk or []:
        km, kmed, kcpu = timed(lambda: study(a.workers, c), a.repeat)
        line(f'study, CHUNK_RUNS={c}', km, kmed, kcpu)
    if a.unbatched:
        um, umed, ucpu = timed(lambda: study(1, 1), 1)
        line('unbatched (K=1, workers=1)', um, umed, ucpu, f'   vs study {um / mn:.1f}x')
    print(f'load average after: {os.getloadavg()[0]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
