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

import bisect
from dataclasses import dataclass
import heapq
import math

import numpy as np
from vepd_ros.judge.config import EkfParams
from vepd_ros.judge.ekf import (
    clamp_variances,
    Ekf,
    gate_bound_variances,
    index_set,
    STATUS_INITIALISED,
)
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
) -> ScheduleResult:
    """
    Run prepared measurement series through the node loop at the given tick times.

    Run prepared ``MeasurementSeries`` (array path; z with a leading K axis or none) through the
    node loop at the given tick times. Each series needs ``arrivals`` (None = arrival at its
    stamp). Deliveries are ordered by (arrival, series order, sample index): build the series list
    in the order upstream callbacks would enqueue same-arrival parts (e.g. IMU pose, twist,
    acceleration).
    """
    if k is None:
        k = 1
        for s in series:
            if s.z.ndim == 3:
                k = s.z.shape[0]
                break
    ekf = make_ekf(params, k)
    ticks = np.asarray(ticks, np.int64)
    out = NodeOutputs(params, ticks.size, k, full_covariance)
    loop = _loop_k1 if k == 1 else _loop_batch
    loop(ekf, series, ticks.tolist(), delivery_order(series), out, on_update)
    return ScheduleResult(
        out.tick[: out.rows],
        out.stamp[: out.rows],
        out.published[: out.rows],
        out.timeout[: out.rows],
        *out.arrays(),
    )


def delivery_order(series: list) -> tuple:
    """
    Return the static deliveries of ``series`` in delivery order.

    The static deliveries of ``series`` as three lists (arrival, series index, sample index),
    sorted by arrival, then series order, then sample.
    """
    if not series:
        return [], [], []
    arr = np.concatenate([s.stamps if s.arrivals is None else s.arrivals for s in series]).astype(
        np.int64
    )
    sid = np.concatenate([np.full(len(s), j) for j, s in enumerate(series)])
    sidx = np.concatenate([np.arange(len(s)) for s in series])
    order = np.lexsort((sidx, sid, arr))
    return arr[order].tolist(), sid[order].tolist(), sidx[order].tolist()


def series_tables(series: list) -> tuple:
    """
    Return the per-series facts the loops need.

    Per-series facts the loops need: index sets, clamped Rsub (the clamp is idempotent: once per
    series) and squared rejection thresholds (inf: no gate).
    """
    return (
        [index_set(s.update_vector) for s in series],
        [clamp_variances(s.Rsub) for s in series],
        [s.threshold**2 if math.isfinite(s.threshold) else math.inf for s in series],
    )


class NodeOutputs:
    """
    Hold the output rows of ekf_node's timer callback, and end that callback.

    The output rows of ekf_node's timer callback, and the end of that callback (one place for every
    loop: ``_loop_batch``, ``_loop_k1`` and the graph's batch loop).

    ``end_tick``: with a timeout (the queue was empty for sensor_timeout) or
    ``predict_to_current_time``, predict to ``now``; then, once initialised, an output row stamped
    with the filter's last time, published only when that stamp moved forward (or
    ``permit_corrected_publication``). Rows that are not published are kept only with
    ``keep_unpublished`` (``run_schedule`` keeps them, flagged).
    """

    def __init__(
        self,
        params: EkfParams,
        n_ticks: int,
        k: int,
        full_covariance: bool = False,
        keep_unpublished: bool = True,
    ):
        self.x = np.empty((n_ticks, k, 15))
        self.P = np.empty((n_ticks, k, 15, 15) if full_covariance else (n_ticks, k, 15))
        self.tick, self.stamp = np.empty(n_ticks, np.int64), np.empty(n_ticks, np.int64)
        self.published, self.timeout = np.zeros(n_ticks, bool), np.zeros(n_ticks, bool)
        self.rows = 0
        self.last_published_ns = 0
        self.full = full_covariance
        self.keep_unpublished = keep_unpublished
        self.permit = params.permit_corrected_publication
        self.predict_always = params.predict_to_current_time
        self.sensor_timeout_ns = params.sensor_timeout_ns
        self._k1 = k == 1
        self._diag = np.arange(15)

    def end_tick(self, ekf: Ekf, now: int, timeout: bool):
        """
        End a timer callback: timeout prediction, then the output row.

        Returns None when the filter is not initialised or the row is not kept, else whether it was
        published.
        """
        if not ekf.initialized:
            return None
        if timeout or self.predict_always:
            ekf.predict_to(now)
        stamp = ekf.last_time_ns
        pub = self.permit or stamp > self.last_published_ns
        if not pub and not self.keep_unpublished:
            return None
        if pub:
            self.last_published_ns = stamp
        r = self.rows
        self.tick[r], self.stamp[r], self.published[r], self.timeout[r] = now, stamp, pub, timeout
        self.x[r] = ekf.x
        if self._k1:
            P = ekf.P[0]
            self.P[r, 0] = P if self.full else P.diagonal()
        else:
            self.P[r] = ekf.P if self.full else ekf.P[:, self._diag, self._diag]
        self.rows = r + 1
        return pub

    def arrays(self) -> tuple:
        """(x (K, T, 15), P (K, T, 15[, 15])) of the rows so far."""
        return np.moveaxis(self.x[: self.rows], 0, 1), np.moveaxis(self.P[: self.rows], 0, 1)


def _loop_batch(ekf, series, ticks, events, out: NodeOutputs, on_update=None) -> None:
    """Run the node loop of ``run_schedule`` for any K."""
    arr_l, sid_l, sidx_l = events
    sets, clamped, thr2 = series_tables(series)
    queue: list = []
    e, n_ev, counter = 0, len(arr_l), 0
    sensor_timeout = out.sensor_timeout_ns
    for now in ticks:
        while e < n_ev and arr_l[e] <= now:
            j, i = sid_l[e], sidx_l[e]
            s = series[j]
            z, Rsub = s.at(i, ekf.x if s.state_terms is not None else None)
            heapq.heappush(
                queue, (int(s.stamps[i]), counter, j, z, Rsub, clamped[j][..., i, :, :])
            )
            counter += 1
            e += 1
        timeout = False
        if queue:
            while queue and queue[0][0] <= now:
                t, _, j, z, Rsub, Rc = heapq.heappop(queue)
                status = _process(ekf, t, z, Rsub, series[j].update_vector, sets[j], thr2[j], Rc)
                if on_update is not None:
                    on_update(j, t, status, now)
        elif ekf.initialized and now - ekf.last_time_ns >= sensor_timeout:
            timeout = True
        out.end_tick(ekf, now, timeout)


def _loop_k1(
    ekf,
    series,
    ticks,
    events,
    out: NodeOutputs,
    on_update=None,
    fuse_parts: bool = True,
    timer=None,
    on_publish=None,
) -> None:
    """
    Run the node loop for K = 1 (hoisted numpy work; also the judge graph's loop).

    ``_loop_batch`` for K = 1 with the per-message numpy work hoisted out of the loop, and the K =
    1 loop of the judge graph (``graph.run_graph``), which adds:

    * ``timer = (ticks, callback)``: a second node's timer (navsat_transform) merged into the
      timeline — at an equal instant it fires before the EKF's; ``callback(now)`` returns the
      series that node published (each delivered at the next EKF tick, after the static deliveries,
      in the order returned);
    * ``on_publish(now, stamp)``: called after each published output row (the graph's feedback).

    Hoisted: the flagged entries of every state-independent sample are cut and checked for
    finiteness once per series; state terms are applied once per tick to all of a series' samples
    delivered in that tick (the same state for all of them, as upstream); queue entries are plain
    (stamp, seq, series, sample, zs, z) tuples; an initialised filter with finite entries goes
    straight to ``Ekf.correct_k1_checked``. Everything else (initialisation, NaN entries) takes
    ``_process``, so the semantics are those of ``_loop_batch`` (tested equal). ``fuse_parts``:
    joint update of same-stamp ungated parts (``_Fuser``; equal up to rounding, so the graph, which
    must reproduce its earlier outputs bit for bit, does not).
    """
    arr_l, sid_l, sidx_l = events
    series = list(series)
    sets, clamped, thr2 = [], [], []
    stamps_l, idx_of, zfull, zsub, finite, Rc3, fusable, has_terms = [], [], [], [], [], [], [], []
    rdiag = []  # per sample: the early gate's R diagonal (or None)

    def add(s):
        st, cl = index_set(s.update_vector), clamp_variances(s.Rsub)
        t2 = s.threshold**2 if math.isfinite(s.threshold) else math.inf
        sets.append(st)
        clamped.append(cl)
        thr2.append(t2)
        n, idx = len(s), st.idx
        stamps_l.append(s.stamps.tolist())
        idx_of.append(idx)
        Rc3.append(cl.reshape(n, idx.size, idx.size))
        rdiag.append(gate_bound_variances(Rc3[-1]) if t2 != math.inf else [None] * n)
        fusable.append(t2 == math.inf)
        z = s.z.reshape(n, 15)
        zfull.append(z)
        has_terms.append(s.state_terms is not None)
        if s.state_terms is None:
            zj = z[:, idx]
            zsub.append(zj.tolist())
            finite.append(np.isfinite(zj).all(axis=1).tolist())
        else:
            zsub.append(None)
            finite.append(None)

    n_static = len(series)
    for s in series[:n_static]:
        add(s)
    any_terms = any(z is None for z in zsub)
    queue: list = []
    push, pop = heapq.heappush, heapq.heappop
    correct = ekf.correct_k1_checked  # a singular S: refused and counted
    fuse = _Fuser(ekf, sets) if fuse_parts else None
    e, n_ev, counter = 0, len(arr_l), 0
    sensor_timeout = out.sensor_timeout_ns
    end_tick = out.end_tick
    if timer is None:
        timeline = [(t, 1) for t in ticks]
    else:
        other, on_timer = timer
        timeline = sorted([(t, 0) for t in other] + [(t, 1) for t in ticks])
    dyn: list = []
    for now, kind in timeline:
        if kind == 0:  # the other node's timer
            for s in on_timer(now):
                if len(s):
                    series.append(s)
                    add(s)
                    dyn.append(len(series) - 1)
            continue
        # ---- deliveries: static ones with arrival <= now, then what the other node published
        if e < n_ev and arr_l[e] <= now:
            e1 = bisect.bisect_right(arr_l, now, e)
            terms = (
                _state_term_rows(series, zfull, idx_of, has_terms, sid_l, sidx_l, e, e1, ekf.x)
                if any_terms
                else None
            )
            for q in range(e, e1):
                j, i = sid_l[q], sidx_l[q]
                zj = zsub[j]
                if zj is not None:
                    push(
                        queue,
                        (stamps_l[j][i], counter, j, i, zj[i] if finite[j][i] else None, None),
                    )
                else:  # state terms: z from the state at delivery
                    zl, z, k = terms[j]
                    push(queue, (stamps_l[j][i], counter, j, i, zl[k[0]], z[k[0]]))
                    k[0] += 1
                counter += 1
            e = e1
        if dyn:
            for j in dyn:
                zj = zsub[j]
                if zj is not None:
                    push(
                        queue,
                        (stamps_l[j][0], counter, j, 0, zj[0] if finite[j][0] else None, None),
                    )
                else:
                    zl, z, _ = _state_term_rows(
                        series, zfull, idx_of, has_terms, [j], [0], 0, 1, ekf.x
                    )[j]
                    push(queue, (stamps_l[j][0], counter, j, 0, zl[0], z[0]))
                counter += 1
            dyn.clear()
        # ---- the queue
        timeout = False
        if queue:
            while queue and queue[0][0] <= now:
                t, _, j, i, zs, z = pop(queue)
                if (
                    fuse is not None
                    and fusable[j]
                    and zs is not None
                    and queue
                    and queue[0][0] == t
                    and ekf.initialized
                ):
                    # same-stamp parts popped back to back (e.g. the IMU triple): one joint update
                    group = [(j, i, zs)]
                    used = set(sets[j].idx_list)
                    while (
                        queue
                        and queue[0][0] == t
                        and fusable[queue[0][2]]
                        and queue[0][4] is not None
                        and used.isdisjoint(sets[queue[0][2]].idx_list)
                    ):
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
                    ok = correct(sets[j], zs, Rc3[j][i], thr2[j], rdiag[j][i])
                    if delta >= 0:
                        ekf.last_time_ns = t
                    status = _FUSED if ok else _REJECTED
                else:
                    if z is None:
                        z = zfull[j][i]
                    Rc = Rc3[j][i]
                    status = _process(ekf, t, z, Rc, series[j].update_vector, sets[j], thr2[j], Rc)
                if on_update is not None:
                    on_update(j, t, status.copy(), now)
        elif ekf.initialized and now - ekf.last_time_ns >= sensor_timeout:
            timeout = True
        pub = end_tick(ekf, now, timeout)
        if pub and on_publish is not None:
            on_publish(now, ekf.last_time_ns)


def _state_term_rows(series, zfull, idx_of, has_terms, sid_l, sidx_l, e0, e1, x) -> dict:
    """
    Apply the state terms to the deliveries e0..e1, per series.

    For the deliveries e0..e1 of series with state terms, per series: (zs list, z (n, 15), [0]) in
    delivery order — z with the terms applied at state x (once for all of a series' samples: the
    same elementwise operations as sample by sample), zs the flagged entries as floats or None when
    not all finite (a finite sum: all finite; an overflowing sum only sends the sample the general
    way), [0] a cursor for the caller.
    """
    rows: dict = {}
    for q in range(e0, e1):
        j = sid_l[q]
        if has_terms[j]:
            r = rows.get(j)
            if r is None:
                rows[j] = [sidx_l[q]]
            else:
                r.append(sidx_l[q])
    out = {}
    isfinite = math.isfinite
    for j, ii in rows.items():
        zz = zfull[j]
        i0 = ii[0]
        z = series[j].state_terms.apply(
            zz[i0: i0 + len(ii)] if ii == list(range(i0, i0 + len(ii))) else zz[ii], x
        )
        zl = z[:, idx_of[j]].tolist()
        out[j] = ([r if isfinite(sum(r)) else None for r in zl], z, [0])
    return out


class _Fuser:
    """
    Joint update of same-stamp measurements processed back to back (``_loop_k1``).

    Sequential Kalman updates by measurements with disjoint selection index sets and independent
    noise (block-diagonal R) equal one update by the stacked measurement: same x and P up to
    rounding. Used only when (a) the filter is initialised, (b) every part has finite flagged
    entries and (c) **no part has a finite rejection threshold** — the Mahalanobis gate is per part
    upstream, so a gated part is never fused and keeps its own accept/reject decision; ungated
    parts are always accepted, so every part reports FUSED exactly as it would sequentially. The
    first part's δ (prediction, last_time) applies to the group, the later parts have δ = 0. Only
    difference from sequential: an angle innovation is wrapped against the prior instead of the
    state after the earlier parts (they agree unless it sits at ±π).
    """

    def __init__(self, ekf: Ekf, sets):
        self.ekf, self.sets = ekf, sets
        self.cache: dict = {}

    def _plan(self, key):
        idx = sorted(i for j in key for i in self.sets[j].idx_list)
        s = index_set(tuple(i in idx for i in range(15)))
        pos = {i: p for p, i in enumerate(idx)}
        order = [
            pos[i] for j in key for i in self.sets[j].idx_list
        ]  # concat position -> union position
        perm = [0] * len(order)
        for c, p in enumerate(order):
            perm[p] = c
        blocks = []
        for j in key:
            ps = [pos[i] for i in self.sets[j].idx_list]
            blocks.append(
                slice(ps[0], ps[-1] + 1)
                if ps == list(range(ps[0], ps[-1] + 1))
                else np.ix_(ps, ps)
            )
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
        ekf.correct_k1_checked(s, [cat[c] for c in perm], R, math.inf)
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
        acc = ekf.correct_subset(
            s, zs, Rsub if Rclamped is None else Rclamped, thr2, clamped=Rclamped is not None
        )
    else:
        R = np.zeros(np.shape(Rsub)[:-2] + (15, 15))
        R[..., s.idx[:, None], s.idx] = Rsub
        acc = ekf.correct(z, R, update_vector, math.sqrt(thr2) if thr2 != math.inf else math.inf)
    if delta >= 0:
        ekf.last_time_ns = t_ns
    return acc.astype(np.int8)


__all__ = [
    'FilterOutput',
    'RosFilter',
    'ScheduleResult',
    'MeasurementSeries',
    'run_schedule',
    'ticks_for',
    'make_ekf',
]
