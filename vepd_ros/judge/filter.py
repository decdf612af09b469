"""Emulation of robot_localization's ekf_node loop (``RosFilter``), reference §5 and the rl_golden
README "Exact semantics".

* Messages are prepared by the message layer when they are *delivered* (upstream's callback), using
  the filter state at that moment; delivery of a message with an arrival time happens at the first tick
  with tick ≥ arrival, in (arrival, feed order). Without an arrival time (live node) it is immediate.
* Prepared measurements wait in a queue ordered by (stamp, delivery order). Each ``tick(now)``
  processes every queued measurement with stamp ≤ now; if the queue was empty and
  now − last_time ≥ sensor_timeout it makes a timeout prediction to now; with
  ``predict_to_current_time`` it always predicts to now.
* Output: stamp = filter last_time (the newest processed measurement or timeout prediction),
  pose x[0:3] + RPY, twist x[6:12] in the body frame, covariance blocks of P; ``published`` only when
  the stamp moved forward since the last publication (unless ``permit_corrected_publication``).
* Clock jumping backwards (now < previous tick): the filter is **reset** as robot_localization's
  ``reset()`` does (queue, per-topic guards, relative/differential memory and the last published stamp
  cleared, filter uninitialised; messages stamped ≤ 0 still ignored). This is ROS 1's
  ``reset_on_time_jump`` behaviour; in the ROS 2 snapshot that branch is commented out and the
  filter instead stalls (every older message is dropped by the per-topic guard until stamps pass the
  old ones), which makes a looping bag or a restarted simulator unusable — so the built-in judge resets.

``RosFilter`` is the per-message object (live node, tests); ``run_schedule`` runs a whole pre-built
measurement schedule (array path, vectorised over K runs) and returns the output stream as arrays.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from vepd_ros.judge.config import EkfParams
from vepd_ros.judge.ekf import STATUS_INITIALISED, Ekf, clamp_variances, index_set
from vepd_ros.judge.measurements import MeasurementBuilder, MeasurementSeries
from vepd_ros.judge.transforms import StaticTransforms


@dataclass
class FilterOutput:
    tick_ns: int
    stamp_ns: int
    x: np.ndarray                 # (K, 15): twist x[6:12] in the body frame
    P: np.ndarray                 # (K, 15, 15)
    published: bool               # stamp moved forward (or permit_corrected_publication)
    timeout_predict: bool


def make_ekf(params: EkfParams, k: int = 1) -> Ekf:
    return Ekf(params.process_noise_covariance, params.initial_estimate_covariance, params.initial_state, k=k,
               dynamic_process_noise=params.dynamic_process_noise_covariance)


class RosFilter:
    """The ekf_node loop for K runs at once (K = 1 for a live node)."""

    def __init__(self, params: EkfParams, transforms: StaticTransforms | None = None, k: int = 1,
                 on_update=None):
        self.params = params
        self.ekf = make_ekf(params, k)
        self.builder = MeasurementBuilder(params, transforms)
        self.on_update = on_update          # callback(topic, stamp_ns, status (K,), tick_ns)
        self._pending: list = []            # heap of (arrival_ns, seq, sensor, msg)
        self._seq = 0
        self.resets = 0
        self._reset_loop()

    def _reset_loop(self):
        self._queue: list = []              # heap of (stamp_ns, seq, Measurement)
        self.last_published_ns = 0
        self.last_tick_ns: int | None = None

    def reset(self) -> None:
        """robot_localization's reset(): forget everything but the parameters."""
        self.ekf.reset()
        self.builder.reset(0)
        self._reset_loop()
        self.resets += 1

    # ------------------------------------------------------------------ input
    def feed(self, sensor: str, msg, arrival_ns: int | None = None) -> None:
        """A message of ``sensor`` (name 'odom0' or its topic). With ``arrival_ns`` it is delivered at the
        first tick ≥ arrival; without, it is delivered (prepared and queued) now."""
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
        return self.builder.dropped

    @property
    def queued(self) -> int:
        return len(self._queue)

    # ------------------------------------------------------------------ timer
    def tick(self, now_ns: int) -> FilterOutput | None:
        """One timer callback at ``now_ns``. Returns the output when the filter is initialised
        (check ``published``), else None."""
        now_ns = int(now_ns)
        if self.last_tick_ns is not None and now_ns < self.last_tick_ns:
            self.reset()
        self.last_tick_ns = now_ns
        while self._pending and self._pending[0][0] <= now_ns:
            _, _, sensor, msg = heapq.heappop(self._pending)
            self._deliver(sensor, msg)
        ekf = self.ekf
        predict_now = self.params.predict_to_current_time
        timeout = False
        if self._queue:
            while self._queue and self._queue[0][0] <= now_ns:
                _, _, m = heapq.heappop(self._queue)
                status = ekf.process(m.stamp_ns, m.z, m.R, m.update_vector, m.threshold)
                if self.on_update is not None:
                    self.on_update(m.topic, m.stamp_ns, status, now_ns)
        elif ekf.initialized and now_ns - ekf.last_time_ns >= self.params.sensor_timeout_ns:
            predict_now = timeout = True
        if ekf.initialized and predict_now:
            ekf.predict_to(now_ns)
        if not ekf.initialized:
            return None
        stamp = ekf.last_time_ns
        published = self.params.permit_corrected_publication or stamp > self.last_published_ns
        if published:
            self.last_published_ns = stamp
        return FilterOutput(now_ns, stamp, ekf.x, ekf.P, published, timeout)


# ---------------------------------------------------------------------------------------------- batch
@dataclass
class ScheduleResult:
    tick_ns: np.ndarray           # (T,) ticks at which the filter was initialised
    stamp_ns: np.ndarray          # (T,) output stamp (filter last_time)
    published: np.ndarray         # (T,) bool
    timeout_predict: np.ndarray   # (T,) bool
    x: np.ndarray                 # (K, T, 15)
    P: np.ndarray                 # (K, T, 15) diagonal, or (K, T, 15, 15) with full_covariance


def ticks_for(params: EkfParams, first_tick_ns: int, n_ticks: int) -> np.ndarray:
    return int(first_tick_ns) + np.arange(int(n_ticks), dtype=np.int64) * params.period_ns


def run_schedule(params: EkfParams, series: list, ticks, k: int | None = None, full_covariance: bool = False,
                 on_update=None) -> ScheduleResult:
    """Run prepared ``MeasurementSeries`` (array path; z with a leading K axis or none) through the node
    loop at the given tick times. Each series needs ``arrivals`` (None = arrival at its stamp).
    Deliveries are ordered by (arrival, series order, sample index): build the series list in the
    order upstream callbacks would enqueue same-arrival parts (e.g. IMU pose, twist, acceleration)."""
    if k is None:
        k = 1
        for s in series:
            if s.z.ndim == 3:
                k = s.z.shape[0]
                break
    ekf = make_ekf(params, k)
    # events sorted by arrival, then by a global sequence: sample-major, then series order
    arr, seq, sid, sidx = [], [], [], []
    nser = len(series)
    for j, s in enumerate(series):
        n = len(s)
        a = s.stamps if s.arrivals is None else s.arrivals
        arr.append(np.asarray(a, np.int64))
        sid.append(np.full(n, j))
        sidx.append(np.arange(n))
        seq.append(np.arange(n) * 0 + j)
    if series:
        arr = np.concatenate(arr)
        sid = np.concatenate(sid)
        sidx = np.concatenate(sidx)
        order = np.lexsort((sid, arr))            # stable: arrival, then series order
        arr, sid, sidx = arr[order], sid[order], sidx[order]
    else:
        arr = sid = sidx = np.zeros(0, np.int64)
    sets = [index_set(s.update_vector) for s in series]
    clamped = [clamp_variances(s.Rsub) for s in series]      # idempotent clamp, once per series
    thr2 = [s.threshold ** 2 if math.isfinite(s.threshold) else math.inf for s in series]
    ticks = np.asarray(ticks, np.int64)
    T = ticks.size
    out_x = np.empty((T, k, 15))
    out_P = np.empty((T, k, 15, 15) if full_covariance else (T, k, 15))
    out_tick, out_stamp = np.empty(T, np.int64), np.empty(T, np.int64)
    out_pub, out_to = np.zeros(T, bool), np.zeros(T, bool)
    arr_l, sid_l, sidx_l = arr.tolist(), sid.tolist(), sidx.tolist()
    loop = _loop_k1 if k == 1 else _loop_batch
    rows = loop(params, series, ticks.tolist(), ekf, arr_l, sid_l, sidx_l, sets, clamped, thr2,
                full_covariance, on_update, out_x, out_P, out_tick, out_stamp, out_pub, out_to)
    return ScheduleResult(out_tick[:rows], out_stamp[:rows], out_pub[:rows], out_to[:rows],
                          np.moveaxis(out_x[:rows], 0, 1), np.moveaxis(out_P[:rows], 0, 1))


def _loop_batch(params, series, ticks, ekf, arr_l, sid_l, sidx_l, sets, clamped, thr2, full_covariance,
                on_update, out_x, out_P, out_tick, out_stamp, out_pub, out_to) -> int:
    """The node loop of ``run_schedule`` for any K; fills the output arrays, returns the row count."""
    diag = np.arange(15)
    queue: list = []
    e, n_ev, rows, counter = 0, len(arr_l), 0, 0
    last_pub = 0
    sensor_timeout = params.sensor_timeout_ns
    for now in ticks:
        while e < n_ev and arr_l[e] <= now:
            j, i = sid_l[e], sidx_l[e]
            s = series[j]
            z, Rsub = s.at(i, ekf.x if s.state_terms is not None else None)
            heapq.heappush(queue, (int(s.stamps[i]), counter, j, z, Rsub, clamped[j][..., i, :, :]))
            counter += 1
            e += 1
        predict_now = params.predict_to_current_time
        timeout = False
        if queue:
            while queue and queue[0][0] <= now:
                t, _, j, z, Rsub, Rc = heapq.heappop(queue)
                status = _process(ekf, t, z, Rsub, series[j].update_vector, sets[j], thr2[j], Rc)
                if on_update is not None:
                    on_update(j, t, status, now)
        elif ekf.initialized and now - ekf.last_time_ns >= sensor_timeout:
            predict_now = timeout = True
        if ekf.initialized and predict_now:
            ekf.predict_to(now)
        if not ekf.initialized:
            continue
        stamp = ekf.last_time_ns
        pub = params.permit_corrected_publication or stamp > last_pub
        if pub:
            last_pub = stamp
        out_tick[rows], out_stamp[rows], out_pub[rows], out_to[rows] = now, stamp, pub, timeout
        out_x[rows] = ekf.x
        out_P[rows] = ekf.P if full_covariance else ekf.P[:, diag, diag]
        rows += 1
    return rows


def _loop_k1(params, series, ticks, ekf, arr_l, sid_l, sidx_l, sets, clamped, thr2, full_covariance,
             on_update, out_x, out_P, out_tick, out_stamp, out_pub, out_to, fuse_parts: bool = True) -> int:
    """``_loop_batch`` for K = 1 with per-message numpy work hoisted out of the loop: the flagged
    entries of every state-independent sample are cut and checked for finiteness once per series, queue
    entries are plain (stamp, seq, series, sample, zs) tuples, and an initialised filter with finite
    entries goes straight to ``Ekf._correct_k1``. Everything else (initialisation, NaN entries) takes
    ``_process``, so the semantics are those of ``_loop_batch`` (tested equal)."""
    n_ser = len(series)
    stamps_l = [s.stamps.tolist() for s in series]
    idx_of = [sets[j].idx for j in range(n_ser)]
    zsub, finite, Rc3 = [], [], []
    for j, s in enumerate(series):
        n, m = len(s), idx_of[j].size
        Rc3.append(clamped[j].reshape(n, m, m))
        if s.state_terms is None:
            zj = s.z.reshape(n, 15)[:, idx_of[j]]
            zsub.append(zj.tolist())
            finite.append(np.isfinite(zj).all(axis=1).tolist())
        else:
            zsub.append(None)
            finite.append(None)
    queue: list = []
    push, pop = heapq.heappush, heapq.heappop
    correct = ekf._correct_k1
    fusable = [t2 == math.inf for t2 in thr2]
    fuse = _Fuser(ekf, sets) if fuse_parts else None
    e, n_ev, rows, counter = 0, len(arr_l), 0, 0
    last_pub = 0
    sensor_timeout = params.sensor_timeout_ns
    permit = params.permit_corrected_publication
    predict_always = params.predict_to_current_time
    P_out = out_P if full_covariance else None
    for now in ticks:
        while e < n_ev and arr_l[e] <= now:
            j, i = sid_l[e], sidx_l[e]
            zj = zsub[j]
            if zj is not None:
                push(queue, (stamps_l[j][i], counter, j, i, zj[i] if finite[j][i] else None, None))
            else:                                     # state terms: z from the state at delivery
                s = series[j]
                z, _ = s.at(i, ekf.x)
                z = np.asarray(z, float).reshape(15)
                zs = z[idx_of[j]]
                push(queue, (stamps_l[j][i], counter, j, i, zs.tolist() if np.isfinite(zs).all() else None, z))
            counter += 1
            e += 1
        predict_now = predict_always
        timeout = False
        if queue:
            while queue and queue[0][0] <= now:
                t, _, j, i, zs, z = pop(queue)
                if (fusable[j] and zs is not None and queue and queue[0][0] == t and ekf.initialized
                        and fuse is not None):
                    # same-stamp parts popped back to back (e.g. the IMU triple): one joint update
                    group = [(j, i, zs)]
                    used = set(sets[j].idx_list)
                    while queue and queue[0][0] == t and fusable[queue[0][2]] and queue[0][4] is not None \
                            and used.isdisjoint(sets[queue[0][2]].idx_list):
                        _, _, j2, i2, zs2, _ = pop(queue)
                        group.append((j2, i2, zs2))
                        used.update(sets[j2].idx_list)
                    if len(group) > 1:
                        fuse(group, t, Rc3)
                        if on_update is not None:
                            for j2, _, _ in group:
                                on_update(j2, t, _FUSED.copy(), now)
                        continue
                if zs is not None and ekf.initialized:
                    delta = t - ekf.last_time_ns
                    if delta > 0:
                        ekf.predict(delta * 1e-9)
                    ok = correct(sets[j], zs, Rc3[j][i], thr2[j])
                    if delta >= 0:
                        ekf.last_time_ns = t
                    status = _FUSED if ok else _REJECTED
                else:
                    if z is None:
                        z = series[j].z.reshape(-1, 15)[i]
                    Rc = Rc3[j][i]
                    status = _process(ekf, t, z, Rc, series[j].update_vector, sets[j], thr2[j], Rc)
                if on_update is not None:
                    on_update(j, t, status.copy(), now)
        elif ekf.initialized and now - ekf.last_time_ns >= sensor_timeout:
            predict_now = timeout = True
        if ekf.initialized and predict_now:
            ekf.predict_to(now)
        if not ekf.initialized:
            continue
        stamp = ekf.last_time_ns
        pub = permit or stamp > last_pub
        if pub:
            last_pub = stamp
        out_tick[rows], out_stamp[rows], out_pub[rows], out_to[rows] = now, stamp, pub, timeout
        out_x[rows] = ekf.x
        P = ekf.P[0]
        if P_out is not None:
            P_out[rows, 0] = P
        else:
            out_P[rows, 0] = P.diagonal()
        rows += 1
    return rows


class _Fuser:
    """Joint update of same-stamp measurements processed back to back (``_loop_k1``).

    Sequential Kalman updates by measurements with disjoint selection index sets and independent noise
    (block-diagonal R) equal one update by the stacked measurement: same x and P up to rounding. Used only
    when (a) the filter is initialised, (b) every part has finite flagged entries and (c) **no part has a
    finite rejection threshold** — the Mahalanobis gate is per part upstream, so a gated part is never
    fused and keeps its own accept/reject decision; ungated parts are always accepted, so every part
    reports FUSED exactly as it would sequentially. The first part's δ (prediction, last_time) applies to
    the group, the later parts have δ = 0. Only difference from sequential: an angle innovation is wrapped
    against the prior instead of the state after the earlier parts (they agree unless it sits at ±π)."""

    def __init__(self, ekf: Ekf, sets):
        self.ekf, self.sets = ekf, sets
        self.cache: dict = {}

    def _plan(self, key):
        idx = sorted(i for j in key for i in self.sets[j].idx_list)
        s = index_set(tuple(i in idx for i in range(15)))
        pos = {i: p for p, i in enumerate(idx)}
        order = [pos[i] for j in key for i in self.sets[j].idx_list]     # concat position -> union position
        perm = [0] * len(order)
        for c, p in enumerate(order):
            perm[p] = c
        blocks = []
        for j in key:
            ps = [pos[i] for i in self.sets[j].idx_list]
            blocks.append(slice(ps[0], ps[-1] + 1) if ps == list(range(ps[0], ps[-1] + 1))
                          else np.ix_(ps, ps))
        plan = self.cache[key] = (s, perm, blocks, len(idx))
        return plan

    def __call__(self, group, t, Rc3):
        key = tuple(j for j, _, _ in group)
        plan = self.cache.get(key)
        s, perm, blocks, m = plan if plan is not None else self._plan(key)
        cat = [v for _, _, zs in group for v in zs]
        R = np.zeros((m, m))
        for (j, i, _), b in zip(group, blocks):
            if isinstance(b, slice):
                R[b, b] = Rc3[j][i]
            else:
                R[b] = Rc3[j][i]
        ekf = self.ekf
        delta = t - ekf.last_time_ns
        if delta > 0:
            ekf.predict(delta * 1e-9)
        ekf._correct_k1(s, [cat[c] for c in perm], R, math.inf)
        if delta >= 0:
            ekf.last_time_ns = t


_FUSED = np.ones(1, np.int8)
_REJECTED = np.zeros(1, np.int8)


def _process(ekf: Ekf, t_ns: int, z, Rsub, update_vector, s, thr2, Rclamped=None):
    """``Ekf.process`` on a flagged sub-block covariance (array path)."""
    if not ekf.initialized:
        idx = s.idx
        R = np.zeros(np.shape(Rsub)[:-2] + (15, 15))
        R[..., idx[:, None], idx] = Rsub
        ekf.initialise(t_ns, z, R, update_vector)
        return np.full(ekf.K, STATUS_INITIALISED, np.int8)
    delta = t_ns - ekf.last_time_ns
    if delta > 0:
        ekf.predict(delta * 1e-9)
    z = np.asarray(z, float)
    if z.ndim == 1:
        z = z[None]
    zs = z[:, s.idx]
    if np.isfinite(zs).all():
        acc = ekf.correct_subset(s, zs, Rsub if Rclamped is None else Rclamped, thr2, clamped=Rclamped is not None)
    else:
        R = np.zeros(np.shape(Rsub)[:-2] + (15, 15))
        R[..., s.idx[:, None], s.idx] = Rsub
        acc = ekf.correct(z, R, update_vector, math.sqrt(thr2) if thr2 != math.inf else math.inf)
    if delta >= 0:
        ekf.last_time_ns = t_ns
    return acc.astype(np.int8)


__all__ = ['FilterOutput', 'RosFilter', 'ScheduleResult', 'MeasurementSeries', 'run_schedule', 'ticks_for',
           'make_ekf']
