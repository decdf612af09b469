# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark ``vepd bag`` throughput on an ART-layout ROS 2 bag.

``vepd bag`` throughput on an ART-layout ROS 2 bag of 100 Hz IMU + 10 Hz GPS (+ 25 Hz truth
Odometry and SbgGpsVel), built from a simulated circle run. Target: ≥ 200× real time for the whole
command (read + judge + write) in this process, imports done. Prints bag seconds per wall second
for each storage (minimum and median of --repeat runs), the CPU seconds of the command (which other
load on the shared box disturbs less than wall time), and the split: reading the bag alone, the
judge alone (``pipelines.bag.judge_segment`` on the read arrays), the rest (segments, run records,
writing). Then, for information, a fresh ``python -m vepd_ros.cli bag`` process on the same bag:
what a user's shell sees, interpreter start-up and imports included (``--no-fresh`` skips it).

    .venv/bin/python benchmarks/bench_bag.py [--duration 120] [--repeat 3] [--no-fresh]
                                             [--tree OTHER_CHECKOUT]

``--tree OTHER_CHECKOUT`` (e.g. a ``git worktree`` of an older commit) times ``vepd bag`` of this
tree and of the other side by side on the same bag (each storage), the trees alternating in every
repeat: the command in a warm interpreter of each tree (imports and one warm-up run excluded) and
as a fresh process (start-up included); prints CPU-second medians and other / this (> 1: this
tree is faster).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import statistics
import sys
import tempfile
import time

from _trees import alternate, cli_cpu, last_json, per_case, ROOT, run_cli

sys.path.insert(0, str(ROOT))  # the working tree, not an installed copy

from vepd_ros.cli import main as vepd  # noqa: E402
from vepd_ros.io.bagrun import read_bag_streams  # noqa: E402
from vepd_ros.io.ins import TruthOptions  # noqa: E402
from vepd_ros.io.profiles import get_profile  # noqa: E402
from vepd_ros.io.write_bag import streams_from_sensor_run, write_bag  # noqa: E402
from vepd_ros.params_file import config_file  # noqa: E402
from vepd_ros.pipelines import study as pipeline  # noqa: E402
from vepd_ros.pipelines.bag import judge_segment  # noqa: E402


def timed(fn):
    """(wall s, cpu s, result) of one call."""
    c, t = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t, time.process_time() - c, out


# ``vepd bag`` timed in a warm interpreter of TREE: one warm-up run, then the CPU seconds of one
# run (JSON on stdout).
_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from vepd_ros.cli import main
args = ['bag', sys.argv[2], '--profile', 'art', '--quiet', '--out']
assert main(args + [sys.argv[3] + '_warm']) == 0
c = time.process_time()
assert main(args + [sys.argv[3]]) == 0
print(json.dumps({'cpu': time.process_time() - c}))
"""


def side_by_side(bag, storage: str, other: Path, repeat: int, duration: float, d: Path) -> None:
    """
    Time ``vepd bag`` of this tree and of ``other`` on ``bag``, alternating; print the ratios.

    Per repeat and tree: the command in a warm interpreter (CPU of one run after a warm-up run)
    and as a fresh ``python -m vepd_ros.cli bag`` process (CPU of the process, start-up
    included). Medians of ``repeat``.
    """

    def measure(name, tree, k):
        out = d / f'{name}_{storage}_{k}'
        warm = last_json([sys.executable, '-c', _CHILD, str(tree), str(bag), str(out)], cwd=tree)
        fresh = cli_cpu(
            tree,
            ['bag', str(bag), '--profile', 'art', '--out', str(out) + '_fresh', '--quiet'],
            capture_output=True,
        )
        return {'warm interpreter': warm['cpu'], 'fresh process': fresh}

    rounds = alternate({'this': ROOT, 'other': other}, repeat, measure)
    cpus = {name: per_case(rs) for name, rs in rounds.items()}
    for what in ('warm interpreter', 'fresh process'):
        this = statistics.median(cpus['this'][what])
        oth = statistics.median(cpus['other'][what])
        print(
            f'  {storage:7s}: vepd bag, {what}: this {this:.3f} s cpu '
            f'({duration / this:.0f}x real time), other {oth:.3f} s cpu (medians of {repeat}): '
            f'other / this = {oth / this:.2f}x',
            flush=True,
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--duration', type=float, default=120.0)
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument(
        '--no-fresh', dest='fresh', action='store_false', help='skip the fresh-process runs'
    )
    ap.add_argument('--tree', type=Path, default=None, help='compare with this other checkout')
    a = ap.parse_args()
    sim = pipeline.simulate_run('ref', 'ch_gauss', 'ch_drift_paper', 'circle', j=1,
                                duration_s=a.duration, seed=0)
    s = streams_from_sensor_run(sim.sensors)
    n_msgs = sum(len(v['t_ns']) for v in s.values())
    print(
        f'bench_bag: {a.duration:g} s circle, {len(s["imu"]["t_ns"])} IMU + '
        f'{len(s["fix"]["t_ns"])} GPS + '
        f'{2 * len(s["odom"]["t_ns"])} truth messages ({n_msgs} in all); load average '
        f'{os.getloadavg()[0]:.2f}'
    )
    ekf, navsat = config_file('ekf.yaml'), config_file('navsat.yaml')
    prof = get_profile('art')
    ok = True
    with tempfile.TemporaryDirectory() as d:
        for storage in ('sqlite3', 'mcap'):
            bag = write_bag(Path(d) / storage, s, storage=storage)
            if a.tree is not None:
                side_by_side(bag, storage, a.tree.resolve(), a.repeat, a.duration, Path(d))
                continue
            reads, judges, totals, cpus = [], [], [], []
            for k in range(a.repeat):
                t, _, streams = timed(
                    lambda: read_bag_streams(
                        bag, prof, truth_options=TruthOptions(**prof.truth_options)
                    )
                )
                reads.append(t)
                judges.append(
                    timed(lambda: judge_segment(streams.imu, streams.gps, ekf, navsat))[0]
                )
                t, c, rc = timed(
                    lambda: vepd(
                        [
                            'bag',
                            str(bag),
                            '--profile',
                            'art',
                            '--out',
                            str(Path(d) / f'out_{storage}_{k}'),
                            '--quiet',
                        ]
                    )
                )
                assert rc == 0
                totals.append(t)
                cpus.append(c)
            best, med = min(totals), statistics.median(totals)
            ratio = a.duration / best
            ok &= ratio >= 200
            print(
                f'  {storage:7s}: vepd bag {best:.3f} s (median {med:.3f}) = {ratio:.0f}x real '
                f'time '
                f'(median {a.duration / med:.0f}x), cpu {min(cpus):.3f} s = '
                f'{a.duration / min(cpus):.0f}x   '
                f'[target >= 200x: {"met" if ratio >= 200 else "NOT met"}]'
            )
            print(
                f'           reading alone {min(reads):.3f} s (median '
                f'{statistics.median(reads):.3f}) = '
                f'{n_msgs / min(reads):.0f} msg/s; judge alone {min(judges):.3f} s (median '
                f'{statistics.median(judges):.3f}); the rest '
                f'~{max(0.0, best - min(reads) - min(judges)):.3f} s'
            )
            if a.fresh:
                walls = []
                for k in range(a.repeat):
                    t = time.perf_counter()
                    run_cli(
                        ROOT,
                        ['bag', str(bag), '--profile', 'art', '--out']
                        + [str(Path(d) / f'fresh_{storage}_{k}'), '--quiet'],
                        capture_output=True,
                    )
                    walls.append(time.perf_counter() - t)
                print(
                    f'           fresh process (start-up and imports included, for information): '
                    f'{min(walls):.3f} s (median {statistics.median(walls):.3f}) = '
                    f'{a.duration / min(walls):.0f}x'
                )
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
