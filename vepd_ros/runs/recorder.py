# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The recorder core: pair an estimate stream with a truth stream into runs and write them.

The recorder core: pairs an estimate stream with a truth stream into runs and writes each completed
run atomically (no ROS here; ``nodes/recorder_node.py`` wraps it).

Feed samples as they arrive, each stream at its own rate with its own stamps (seconds, any epoch):

    rec = RecorderCore(root, side='sim', label='ch_rw', scenario='circle',
                       segmentation='duration', duration_s=20)
    rec.feed_estimate(stamp, vx, vy)      # e.g. /odometry/filtered twist (body frame)
    rec.feed_truth(stamp, vx, vy)         # e.g. /ground_truth/odometry twist (body frame)

Segmentation:
  ``manual``    ``start(stamp)`` / ``stop(stamp)`` (services); ``stop()`` without a stamp closes
                now.
  ``duration``  back-to-back runs of ``duration_s`` from the first sample (or from ``start``).
  ``motion``    a run starts ``pre_roll_s`` before the truth speed first exceeds
                ``motion_threshold_mps`` and ends once it has stayed below it for
                ``motion_hold_s`` (not usable for 'rest').
A run closes when both streams have passed its end stamp, or one stream is ``close_lag_s`` past it
(the other stalled), so a truth sample that arrives a little after an estimate sample with a later
stamp is still in the right run. Samples stamped after the end wait for the next run (duration,
motion).

At most one run (plus the pre-roll / close-lag tail) is held in memory. Each completed run is
written by ``BatchWriter`` (temp file + fsync + rename); a SIGKILL loses at most the run in
progress. Runs with fewer than ``min_samples`` on a stream are not written; the event says so
(status 'discarded'). Bad samples (non-finite, stamp not after the previous one of that stream) are
dropped and counted.

Coverage (contract C1): every written run's sidecar says, per stream, what was expected and what
arrived: ``coverage = {'estimates': {...}, 'truth': {...}}``, each ``{'expected', 'received',
'max_gap_s', 'rate_hz'}`` with ``expected = round(duration_s * rate_hz)`` (the samples of the
half-open run interval [start, end); a source that samples both ends, as truth_node does, delivers
one more), ``received`` the samples recorded and ``max_gap_s`` the longest interval between the run
start, consecutive stamps and the run end (so a stream that starts late or stops early shows a gap
too). ``rate_hz`` is the stream's nominal rate (``rates_hz``); where it is not given, the median
stamp interval of the run stands for it, which catches gaps but not a uniformly thinned stream.
Where the run starts at an instant announced before its samples (``start(stamp)``: truth_node's
run events, at which the judge restarts), each entry also has ``first_s``: how long after the start
the stream's first sample came (the judge's start transient is in its first estimates).
The evaluator excludes runs whose coverage is short or whose start is late
(``metrics.evaluator.coverage_exclusion``).
"""

from __future__ import annotations

from collections import Counter, deque
import math
from typing import Callable

import numpy as np
from vepd_ros.metrics.records import RunRecord
from vepd_ros.runs.layout import BatchWriter
from vepd_ros.runs.safety import safe_component

SEGMENTATIONS = ('manual', 'duration', 'motion')


class _Stream:
    __slots__ = ('t', 'vx', 'vy')

    def __init__(self):
        self.t: list[float] = []
        self.vx: list[float] = []
        self.vy: list[float] = []

    def add(self, t, vx, vy):
        self.t.append(t)
        self.vx.append(vx)
        self.vy.append(vy)

    def __len__(self):
        return len(self.t)


class RecorderCore:

    def __init__(
        self,
        root=None,
        *,
        side: str = 'sim',
        label: str | None = None,
        scenario: str = 'run',
        segmentation: str = 'manual',
        duration_s: float | None = None,
        motion_threshold_mps: float = 0.1,
        motion_hold_s: float = 1.0,
        pre_roll_s: float = 1.0,
        close_lag_s: float = 0.5,
        max_runs: int | None = None,
        min_samples: int = 3,
        meta: dict | None = None,
        on_event: Callable[[dict], None] | None = None,
        writer: BatchWriter | None = None,
        fsync: bool = True,
        rates_hz: dict | None = None,
    ):
        if segmentation not in SEGMENTATIONS:
            raise ValueError(
                f'segmentation must be one of {", ".join(SEGMENTATIONS)}, got {segmentation!r}'
            )
        if segmentation == 'duration' and not (duration_s and duration_s > 0):
            raise ValueError(f'segmentation duration needs duration_s > 0, got {duration_s}')
        if segmentation == 'motion' and scenario == 'rest':
            raise ValueError(
                "segmentation 'motion' cannot find runs of scenario 'rest'; use duration or manual"
            )
        safe_component('scenario', scenario)  # becomes the run files' names
        if writer is None:
            if root is None:
                raise ValueError('RecorderCore needs a root directory or a BatchWriter')
            writer = BatchWriter(root, side, label, fsync=fsync)
        self.writer = writer
        self.scenario = scenario
        self.segmentation = segmentation
        self.duration_s = duration_s
        self.threshold = motion_threshold_mps
        self.hold_s = motion_hold_s
        self.pre_roll_s = pre_roll_s
        self.close_lag_s = close_lag_s
        self.max_runs = max_runs
        self.min_samples = min_samples
        self.meta = dict(meta or {})
        # nominal rates ('se', 'gt') for the coverage block; None or 0: estimated from the run's
        # stamps
        self.rates_hz = {k: float(v) for k, v in (rates_hz or {}).items() if v}
        self.on_event = on_event
        self.events: list[dict] = []
        self.totals: Counter = Counter()  # over the recorder's life
        self._run_counts: Counter = Counter()  # of the run in progress
        self._last = {'se': -math.inf, 'gt': -math.inf}
        self._recording = False
        self._announced = False  # the run's start was given, not its first sample (first_s)
        self._t0: float | None = None
        self._end: float | None = None
        self._cur = {'se': _Stream(), 'gt': _Stream()}
        self._next: deque = deque()  # (kind, t, vx, vy) stamped after the end of the current run
        self._pre: deque = deque()  # motion pre-roll
        self._below_since: float | None = None
        self._runs_done = 0
        self.run_j: int | None = None  # run number of the next file (None: one past the highest)

    # -------------------------------------------------------------------------------------------
    # control
    @property
    def recording(self) -> bool:
        return self._recording

    @property
    def run_start(self) -> float | None:
        """
        Start stamp of the run in progress.

        None: not recording, or not known until its first sample.
        """
        return self._t0 if self._recording else None

    @property
    def end_known(self) -> bool:
        """Tell whether the run in progress has its end stamp (it closes once both pass it)."""
        return self._recording and self._end is not None

    @property
    def done(self) -> bool:
        return self.max_runs is not None and self._runs_done >= self.max_runs

    def start(self, stamp: float | None = None) -> None:
        """
        Begin a run at ``stamp`` (None: at the next sample).

        Closes a run in progress first.
        """
        if self._recording:
            self.stop()
        self._begin(stamp)

    def stop(self, stamp: float | None = None) -> dict | None:
        """End the run at ``stamp`` (it closes once both streams pass it); None: close now."""
        if not self._recording:
            return None
        if stamp is None:
            return self._close(force=True)
        self._end = float(stamp)
        return self._try_close()

    def close_if_stale(self, now: float) -> dict | None:
        """
        Close a run whose end lies ``close_lag_s`` before ``now``.

        Close a run whose end is known once ``now`` is ``close_lag_s`` past it, even if a stream
        stopped short of the end (the last run of a batch: no later sample will ever arrive to
        close it).
        """
        if self._recording and self._end is not None and now >= self._end + self.close_lag_s:
            return self._close()
        return None

    def flush(self) -> dict | None:
        """Close the run in progress now (end of input)."""
        return self._close(force=True) if self._recording else None

    # -------------------------------------------------------------------------------------------
    # samples
    def feed_estimate(self, stamp: float, vx: float, vy: float = 0.0) -> dict | None:
        return self._feed('se', stamp, vx, vy)

    def feed_truth(self, stamp: float, vx: float, vy: float = 0.0) -> dict | None:
        return self._feed('gt', stamp, vx, vy)

    def _feed(self, kind, stamp, vx, vy):
        self.totals[f'{kind}_received'] += 1
        try:
            stamp, vx, vy = float(stamp), float(vx), float(vy)
        except (TypeError, ValueError):
            return self._drop(kind, 'not_a_number')
        if not (math.isfinite(stamp) and math.isfinite(vx) and math.isfinite(vy)):
            return self._drop(kind, 'nonfinite')
        if stamp <= self._last[kind]:
            return self._drop(kind, 'out_of_order')
        self._last[kind] = stamp
        if self.done:
            self.totals[f'{kind}_after_last_run'] += 1
            return None
        if not self._recording:
            if self.segmentation == 'duration':
                self._begin(stamp, announced=False)
            elif self.segmentation == 'motion':
                return self._idle_motion(kind, stamp, vx, vy)
            else:
                self.totals[f'{kind}_outside_run'] += 1
                return None
        return self._add(kind, stamp, vx, vy)

    def _drop(self, kind, reason):
        self.totals[f'{kind}_dropped_{reason}'] += 1
        self._run_counts[f'{kind}_dropped_{reason}'] += 1
        return None

    def _begin(self, stamp, announced: bool = True):
        """Begin a run at ``stamp`` (None: the first sample); ``announced``: not a sample's own."""
        self._recording = True
        self._t0 = None if stamp is None else float(stamp)
        self._announced = announced and stamp is not None
        self._end = None
        self._below_since = None
        self._cur = {'se': _Stream(), 'gt': _Stream()}
        self._run_counts = Counter()

    def _add(self, kind, stamp, vx, vy):
        if self._t0 is None:
            self._t0 = stamp
        if self._end is not None and stamp > self._end:
            self._next.append((kind, stamp, vx, vy))
            return self._try_close()
        if stamp < self._t0:
            return self._drop(kind, 'before_start')
        self._cur[kind].add(stamp, vx, vy)
        self._run_counts[f'{kind}_count'] += 1
        if self._end is None:
            if self.segmentation == 'duration' and stamp >= self._t0 + self.duration_s:
                self._end = self._t0 + self.duration_s
            elif self.segmentation == 'motion' and kind == 'gt':
                if math.hypot(vx, vy) < self.threshold:
                    if self._below_since is None:
                        self._below_since = stamp
                    elif stamp - self._below_since >= self.hold_s:
                        self._end = stamp
                else:
                    self._below_since = None
        return self._try_close()

    def _idle_motion(self, kind, stamp, vx, vy):
        self._pre.append((kind, stamp, vx, vy))
        while self._pre and self._pre[0][1] < stamp - self.pre_roll_s - self.close_lag_s:
            self._pre.popleft()
        if kind == 'gt' and math.hypot(vx, vy) >= self.threshold:
            t0 = stamp - self.pre_roll_s
            held = [s for s in self._pre if s[1] >= t0]
            self._pre.clear()
            self._begin(t0, announced=False)
            ev = None
            for s in held:
                ev = self._add(*s) or ev
            return ev
        return None

    def _try_close(self):
        if self._end is None:
            return None
        lse, lgt = self._last['se'], self._last['gt']
        if min(lse, lgt) >= self._end or max(lse, lgt) >= self._end + self.close_lag_s:
            return self._close()
        return None

    # -------------------------------------------------------------------------------------------
    # close
    def _coverage(self, kind: str, stamps: list, t0: float, end: float) -> dict:
        """One stream's C1 coverage entry for the run [t0, end] (see the module docstring)."""
        t = np.asarray(stamps, dtype=float)
        edges = np.concatenate(([t0], t, [max(end, t[-1] if len(t) else end)]))
        max_gap = float(np.max(np.diff(edges))) if len(edges) > 1 else 0.0
        rate = self.rates_hz.get(kind)
        if not rate:
            steps = np.diff(t)
            steps = steps[steps > 0]
            rate = float(1.0 / np.median(steps)) if len(steps) else 0.0
        duration = max(end - t0, 0.0)
        out = {
            'expected': int(round(duration * rate)),
            'received': int(len(t)),
            'max_gap_s': round(max_gap, 9),
            'rate_hz': round(rate, 9),
        }
        if self._announced and len(t):
            out['first_s'] = round(float(t[0]) - t0, 9)
        return out

    def _close(self, force: bool = False) -> dict:
        se, gt = self._cur['se'], self._cur['gt']
        t0 = self._t0 if self._t0 is not None else 0.0
        end = self._end
        if end is None:
            end = max([s.t[-1] for s in (se, gt) if len(s)], default=t0)
        counts = dict(self._run_counts)
        ev = {
            'scenario': self.scenario,
            'side': self.writer.side,
            'label': self.writer.label,
            'start_stamp': t0,
            'end_stamp': end,
            'se_len': len(se),
            'gt_len': len(gt),
            'counts': counts,
        }
        if len(se) < self.min_samples or len(gt) < self.min_samples:
            ev.update(
                status='discarded',
                reason=f'short run: {len(se)} estimate and {len(gt)} truth samples '
                f'(at least {self.min_samples} each needed)',
            )
            self.totals['runs_discarded'] += 1
        else:
            rec = RunRecord.from_components(
                np.asarray(se.t) - t0, se.vx, se.vy, np.asarray(gt.t) - t0, gt.vx, gt.vy
            )
            meta = dict(self.meta)
            meta.update(
                {
                    'start_stamp': t0,
                    'end_stamp': end,
                    'message_counts': {'estimate': len(se), 'truth': len(gt)},
                    'dropped': {k: v for k, v in counts.items() if '_dropped_' in k},
                    'segmentation': {
                        'mode': self.segmentation,
                        'duration_s': self.duration_s,
                        'motion_threshold_mps': self.threshold,
                        'motion_hold_s': self.hold_s,
                        'pre_roll_s': self.pre_roll_s,
                        'close_lag_s': self.close_lag_s,
                    },
                    'coverage': {
                        'estimates': self._coverage('se', se.t, t0, end),
                        'truth': self._coverage('gt', gt.t, t0, end),
                    },
                }
            )
            path = self.writer.write(rec, self.scenario, meta, j=self.run_j)
            ev.update(status='written', path=str(path), j=rec.meta.get('j'), duration_s=end - t0)
            self.totals['runs_written'] += 1
        self._runs_done += 1
        self._recording = False
        self._cur = {'se': _Stream(), 'gt': _Stream()}
        pending = list(self._next)
        self._next.clear()
        if not self.done:
            if self.segmentation == 'duration' and not force:
                self._begin(end, announced=False)
            for s in pending:
                if self._recording:
                    self._add(*s)
                elif self.segmentation == 'motion':
                    self._idle_motion(*s)
                else:
                    self.totals[f'{s[0]}_outside_run'] += 1
        self.events.append(ev)
        if self.on_event:
            self.on_event(ev)
        return ev
