"""``vepd bag`` throughput on an ART-layout ROS 2 bag of 100 Hz IMU + 10 Hz GPS (+ 25 Hz truth Odometry
and SbgGpsVel), built from a simulated circle run. Target: ≥ 200× real time for the whole command
(read + judge + write). Prints bag seconds per wall second for each storage, and the split between
reading the bag (io) and the judge. Minimum and median of --repeat runs.

    .venv/bin/python benchmarks/bench_bag.py [--duration 120] [--repeat 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the working tree, not an installed copy

from vepd_ros import pipeline  # noqa: E402
from vepd_ros.cli import main as vepd  # noqa: E402
from vepd_ros.io.bagrun import read_bag_streams  # noqa: E402
from vepd_ros.io.profiles import get_profile  # noqa: E402
from vepd_ros.io.write_bag import streams_from_sensor_run, write_bag  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--duration', type=float, default=120.0)
    ap.add_argument('--repeat', type=int, default=3)
    a = ap.parse_args()
    sim = pipeline.simulate_run('ref', 'ch_gauss', 'ch_drift_paper', 'circle', 1, a.duration, 0)
    s = streams_from_sensor_run(sim.sensors)
    n_msgs = sum(len(v['t_ns']) for v in s.values())
    print(f'bench_bag: {a.duration:g} s circle, {len(s["imu"]["t_ns"])} IMU + {len(s["fix"]["t_ns"])} GPS + '
          f'{2 * len(s["odom"]["t_ns"])} truth messages ({n_msgs} in all)')
    ok = True
    with tempfile.TemporaryDirectory() as d:
        for storage in ('sqlite3', 'mcap'):
            bag = write_bag(Path(d) / storage, s, storage=storage)
            reads, totals = [], []
            for k in range(a.repeat):
                t = time.perf_counter()
                read_bag_streams(bag, get_profile('art'))
                reads.append(time.perf_counter() - t)
                t = time.perf_counter()
                rc = vepd(['bag', str(bag), '--profile', 'art', '--out', str(Path(d) / f'out_{storage}_{k}'),
                           '--quiet'])
                totals.append(time.perf_counter() - t)
                assert rc == 0
            best, med = min(totals), statistics.median(totals)
            ratio = a.duration / best
            ok &= ratio >= 200
            print(f'  {storage:7s}: vepd bag {best:.3f} s (median {med:.3f}) = {ratio:.0f}x real time '
                  f'(median {a.duration / med:.0f}x); reading alone {min(reads):.3f} s = '
                  f'{n_msgs / min(reads):.0f} msg/s, judge + write the rest   [target >= 200x: '
                  f'{"met" if ratio >= 200 else "NOT met"}]')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
