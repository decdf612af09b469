# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark the throughput of the GPS/IMU noise models, vectorised and streaming.

Throughput of the GPS/IMU noise models: samples per second, vectorised (one call per run) and
streaming (one call per sample, as the nodes do). A 10 Hz GPS and a 100 Hz IMU need ≥ 10 and ≥ 100
samples/s streaming; the offline study (5 models × 30 runs × 30 s) needs the vectorised rates to be
≫ 1e4.
"""

from pathlib import Path
import sys
import time

import numpy as np

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1])
)  # the working tree, not an installed copy

from vepd_ros.models.gps import GPS_MODELS, make_gps_model  # noqa: E402
from vepd_ros.models.imu import IMU_MODELS, make_imu_model, static_truth  # noqa: E402


def rate(fn, n):
    t0 = time.perf_counter()
    fn()
    return n / (time.perf_counter() - t0)


def main():
    n = 6000  # 10 min at 10 Hz
    t = np.arange(n) / 10.0
    x = np.zeros((n, 3))
    print(f'GPS models ({n} samples at 10 Hz)              vectorised     streaming (samples/s)')
    for name in GPS_MODELS:
        v = rate(lambda: make_gps_model(name, 0).sample(t, x), n)
        m = make_gps_model(name, 0)
        k = 300
        s = rate(lambda: [m.sample(t[i: i + 1], x[i: i + 1]) for i in range(k)], k)
        print(f'  {name:38s} {v:12.0f}  {s:12.0f}')
    n = 60000  # 10 min at 100 Hz
    t = np.arange(n) / 100.0
    w, f, q = static_truth(n)
    print(f'IMU models ({n} samples at 100 Hz)')
    for name in IMU_MODELS:
        v = rate(lambda: make_imu_model(name, 0).sample_arrays(t, w, f, q), n)
        m = make_imu_model(name, 0)
        k = 1000
        s = rate(
            lambda: [
                m.sample_arrays(t[i: i + 1], w[i: i + 1], f[i: i + 1], q[i: i + 1])
                for i in range(k)
            ],
            k,
        )
        print(f'  {name:38s} {v:12.0f}  {s:12.0f}')


if __name__ == '__main__':
    main()
