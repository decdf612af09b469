# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Emulate robot_localization's ekf_node loop: queue, timer ticks, output and resets.

Emulation of robot_localization's ekf_node loop (``RosFilter``), reference §5 and the rl_golden
README "Exact semantics".

* Messages are prepared by the message layer when they are *delivered* (upstream's callback), using
  the filter state at that moment; delivery of a message with an arrival time happens at the first
  tick with tick ≥ arrival, in (arrival, feed order). Without an arrival time (live node) it is
  immediate.
* Prepared measurements wait in a queue ordered by (stamp, delivery order). Each ``tick(now)``
  processes every queued measurement with stamp ≤ now; if the queue was empty and
  now − last_time ≥ sensor_timeout it makes a timeout prediction to now; with
  ``predict_to_current_time`` it always predicts to now.
* Output: stamp = filter last_time (the newest processed measurement or timeout prediction), pose
  x[0:3] + RPY, twist x[6:12] in the body frame, covariance blocks of P; ``published`` only when
  the stamp moved forward since the last publication (unless ``permit_corrected_publication``).
* Clock jumping backwards (now < previous tick): the filter is **reset** as robot_localization's
  ``reset()`` does (queue, per-topic guards, relative/differential memory and the last published
  stamp cleared, filter uninitialised; messages stamped ≤ 0 still ignored). This is ROS 1's
  ``reset_on_time_jump`` behaviour; in the ROS 2 snapshot that branch is commented out and the
  filter instead stalls (every older message is dropped by the per-topic guard until stamps pass
  the old ones), which makes a looping bag or a restarted simulator unusable — so the built-in
  judge resets.

``RosFilter`` is the per-message object (live node, tests); ``run_schedule`` runs a whole pre-built
measurement schedule (array path, vectorised over K runs) and returns the output stream as arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
import heapq

import numpy as np
from vepd_ros.judge import engine
from vepd_ros.judge.config import EkfParams
from vepd_ros.judge.ekf import Ekf
from vepd_ros.judge.measurements import MeasurementBuilder, MeasurementSeries
from vepd_ros.judge.transforms import StaticTransforms


@dataclass
class FilterOutput:
    tick_ns: int
    stamp_ns: int
    x: np.ndarray  # (K, 15): twist x[6:12] in the body frame
    P: np.ndarray  # (K, 15, 15)
    published: bool  # stamp moved forward (or permit_corrected_publication)
    timeout_predict: bool


def make_ekf(params: EkfParams, k: int = 1) -> Ekf:
    return Ekf(
        params.process_noise_covariance,
        params.initial_estimate_covariance,
        params.initial_state,
        k=k,
        dynamic_process_noise=params.dynamic_process_noise_covariance,
    )


class RosFilter:
    """The ekf_node loop for K runs at once (K = 1 for a live node)."""

    def __init__(
        self,
        params: EkfParams,
        transforms: StaticTransforms | None = None,
        k: int = 1,
        on_update=None,
    ):
        self.params = params
        self.ekf = make_ekf(params, k)
        self.builder = MeasurementBuilder(params, transforms)
        self.on_update = on_update  # callback(topic, stamp_ns, status (K,), tick_ns)
        self._pending: list = []  # heap of (arrival_ns, seq, sensor, msg)
        self._seq = 0
        self.resets = 0
        self._reset_loop()

    def _reset_loop(self):
        self._queue: list = []  # heap of (stamp_ns, seq, Measurement)
        self.last_published_ns = 0
        self.last_tick_ns: int | None = None

    def reset(self) -> None:
        """Forget everything but the parameters, as robot_localization's reset does."""
        self.ekf.reset()
        self.builder.reset(0)
        self._reset_loop()
        self.resets += 1

    # ------------------------------------------------------------------ input
    def feed(self, sensor: str, msg, arrival_ns: int | None = None) -> None:
        """
        Feed a message of ``sensor`` (name 'odom0' or its topic).

        With ``arrival_ns`` it is delivered at the first tick ≥ arrival; without, it is delivered
        (prepared and queued) now.
        """
        if arrival_ns is None:
            self._deliver(sensor, msg)
        else:
            heapq.heappush(self._pending, (int(arrival_ns), self._seq, sensor, msg))
            self._seq += 1

    def _deliver(self, sensor, msg):
        for m in self.builder.from_message(sensor, msg, self.ekf.x):
            heapq.heappush(self._queue, (m.stamp_ns, self._seq, m))
            self._seq += 1

    @property
    def dropped(self) -> dict:
        """Messages dropped by the message layer and updates refused by the filter, by reason."""
        if not self.ekf.drops:
            return self.builder.dropped
        return {**self.builder.dropped, **self.ekf.drops}

    @property
    def queued(self) -> int:
        return len(self._queue)

    def _process(self, queue: list, now_ns: int, on_update) -> None:
        """Pop the queue's first measurement and apply it (``engine.process_queue``)."""
        _, _, m = heapq.heappop(queue)
        status = self.ekf.process(m.stamp_ns, m.z, m.R, m.update_vector, m.threshold)
        if on_update is not None:
            on_update(m.topic, m.stamp_ns, status, now_ns)

    # ------------------------------------------------------------------ timer
    def tick(self, now_ns: int) -> FilterOutput | None:
        """
        One timer callback at ``now_ns``.

        Returns the output when the filter is initialised (check ``published``), else None.
        """
        now_ns = int(now_ns)
        if self.last_tick_ns is not None and now_ns < self.last_tick_ns:
            self.reset()
        self.last_tick_ns = now_ns
        while self._pending and self._pending[0][0] <= now_ns:
            _, _, sensor, msg = heapq.heappop(self._pending)
            self._deliver(sensor, msg)
        ekf = self.ekf
        timeout = engine.process_queue(
            ekf, self._queue, now_ns, self._process, self.on_update, self.params.sensor_timeout_ns
        )
        end = engine.end_of_callback(ekf, now_ns, timeout, self.params, self.last_published_ns)
        if end is None:
            return None
        stamp, published = end
        if published:
            self.last_published_ns = stamp
        return FilterOutput(now_ns, stamp, ekf.x, ekf.P, published, timeout)


# ----------------------------------------------------------------------------------------------
# batch
@dataclass
class ScheduleResult:
    tick_ns: np.ndarray  # (T,) ticks at which the filter was initialised
    stamp_ns: np.ndarray  # (T,) output stamp (filter last_time)
    published: np.ndarray  # (T,) bool
    timeout_predict: np.ndarray  # (T,) bool
    x: np.ndarray  # (K, T, 15)
    P: np.ndarray  # (K, T, 15) diagonal, or (K, T, 15, 15) with full_covariance


def ticks_for(params: EkfParams, first_tick_ns: int, n_ticks: int) -> np.ndarray:
    return int(first_tick_ns) + np.arange(int(n_ticks), dtype=np.int64) * params.period_ns


def run_schedule(
    params: EkfParams,
    series: list,
    ticks,
    k: int | None = None,
    full_covariance: bool = False,
    on_update=None,
    fuse_same_stamp: bool = True,
) -> ScheduleResult:
    """
    Run prepared measurement series through the node loop at the given tick times.

    Run prepared ``MeasurementSeries`` (array path; z with a leading K axis or none) through the
    node loop at the given tick times. Each series needs ``arrivals`` (None = arrival at its
    stamp). Deliveries are ordered by (arrival, series order, sample index): build the series list
    in the order upstream callbacks would enqueue same-arrival parts (e.g. IMU pose, twist,
    acceleration). The loop is ``engine.run``; ``fuse_same_stamp`` (K = 1): joint update of
    same-stamp ungated parts (``engine._Fuser``).
    """
    if k is None:
        k = 1
        for s in series:
            if s.z.ndim == 3:
                k = s.z.shape[0]
                break
    ekf = make_ekf(params, k)
    ticks = np.asarray(ticks, np.int64)
    out = engine.NodeOutputs(params, ticks.size, k, full_covariance)
    engine.run(ekf, series, ticks, out, on_update=on_update, fuse_same_stamp=fuse_same_stamp)
    return ScheduleResult(
        out.tick[: out.rows],
        out.stamp[: out.rows],
        out.published[: out.rows],
        out.timeout[: out.rows],
        *out.arrays(),
    )


__all__ = [
    'FilterOutput',
    'RosFilter',
    'ScheduleResult',
    'MeasurementSeries',
    'run_schedule',
    'ticks_for',
    'make_ekf',
]
