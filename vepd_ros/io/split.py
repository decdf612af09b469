# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Split a long recording into runs, each with a scenario label.

Three ways (``vepd bag --split ...``):

* ``whole``  one run per bag (the ART IROS bags: one manoeuvre per bag);
* ``ranges`` a time-ranges file, YAML or CSV, one row per run::

      # runs.yaml                                 # runs.csv
      time_base: bag        # or absolute           start,end,scenario
      runs:                                       0,20,straight
        - {start: 0.0, end: 20.0, scenario: straight}      35.5,55.5,circle
        - {start: 35.5, end: 55.5, scenario: circle}

  times in seconds from the bag's first message (``time_base: bag``, default) or epoch seconds
  (``absolute``; CSV files take it from the caller); ``scenario`` optional (default: the caller's);
* ``stationary`` runs are the stretches between standstills: a standstill is truth speed below
  ``threshold`` m/s for at least ``min_gap_s``; runs shorter than ``min_run_s`` are dropped; each
  run is widened by up to ``pad_s`` into the standstills around it (so it starts and ends at rest,
  as the paper's runs do). Labels: one scenario for all, or a list in run order.

A segment is [start_ns, end_ns] on the bag's receive clock (absolute ns).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from vepd_ros.streams import NS


@dataclass(frozen=True)
class Segment:
    start_ns: int
    end_ns: int
    scenario: str

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / NS


def whole(start_ns: int, end_ns: int, scenario: str) -> list[Segment]:
    return [Segment(int(start_ns), int(end_ns), scenario)]


MAX_TIME_S = 1e11
"""Largest |time| in a ranges file (s): epoch seconds are ~2e9; 1e300 s would overflow ns."""


def _num(v, where):
    from vepd_ros.yamlio import quote

    # float() reads '3_5' as 35 (PEP 515): refused, as runs.format does
    if isinstance(v, bool) or (isinstance(v, str) and '_' in v):
        raise ValueError(f'{where}: expected a number of seconds, got {quote(v)}')
    try:
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f'{where}: expected a number of seconds, got {quote(v)}') from None
    if not (np.isfinite(x) and abs(x) <= MAX_TIME_S):
        raise ValueError(
            f'{where}: expected a finite number of seconds of magnitude <= '
            f'{MAX_TIME_S:g}, got {quote(v)}'
        )
    return x


def read_ranges(
    path, *, bag_start_ns: int, default_scenario: str = 'run', time_base: str | None = None
) -> list[Segment]:
    """Segments from a YAML or CSV time-ranges file (see the module doc)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f'{path}: no such time-ranges file')
    rows, base = [], time_base
    if path.suffix.lower() in ('.yaml', '.yml'):
        from vepd_ros.yamlio import load_yaml

        doc = load_yaml(path, what='time-ranges', expect=(dict, list))
        if isinstance(doc, dict):
            base = base or doc.get('time_base')
            doc = doc.get('runs')
        if not isinstance(doc, list):
            raise ValueError(
                f"{path}: expected a list of {{start, end, scenario}} (optionally under 'runs:')"
            )
        rows = doc
    else:
        try:
            with open(path, newline='', encoding='utf-8') as fh:
                reader = csv.DictReader(line for line in fh if not line.lstrip().startswith('#'))
                names = {str(f).strip() for f in reader.fieldnames or ()}
                if not {'start', 'end'} <= names:
                    raise ValueError(f'{path}: CSV needs a header with start,end[,scenario]')
                rows = [
                    {
                        str(k).strip(): (v.strip() if isinstance(v, str) else v)
                        for k, v in r.items()
                    }
                    for r in reader
                ]
        except UnicodeDecodeError:
            raise ValueError(f'{path}: not UTF-8 text; expected a time-ranges CSV') from None
        except csv.Error as exc:
            raise ValueError(f'{path}: not a time-ranges CSV ({str(exc)[:80]})') from None
    base = base or 'bag'
    if base not in ('bag', 'absolute'):
        raise ValueError(f"{path}: time_base must be 'bag' or 'absolute', got {base!r}")
    off = bag_start_ns if base == 'bag' else 0
    out = []
    for i, r in enumerate(rows, 1):
        if not isinstance(r, dict):
            raise ValueError(f'{path}: run {i}: expected a mapping with start and end')
        a, b = (
            _num(r.get('start'), f'{path}: run {i} start'),
            _num(r.get('end'), f'{path}: run {i} end'),
        )
        if b <= a:
            raise ValueError(f'{path}: run {i}: end {b} must be after start {a}')
        sc = str(r.get('scenario') or default_scenario)
        out.append(Segment(off + int(round(a * NS)), off + int(round(b * NS)), sc))
    if not out:
        raise ValueError(f'{path}: no runs listed')
    return out


def stationary_gaps(
    t_ns, speed, threshold: float = 0.05, min_gap_s: float = 2.0
) -> list[tuple[int, int]]:
    """
    Find the standstills in a speed series.

    [(start_ns, end_ns)] of standstills: speed < threshold continuously for at least min_gap_s.
    """
    t = np.asarray(t_ns, np.int64)
    v = np.asarray(speed, float)
    still = v < threshold
    gaps, i, n = [], 0, len(t)
    while i < n:
        if not still[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and still[j + 1]:
            j += 1
        if (t[j] - t[i]) >= min_gap_s * NS:
            gaps.append((int(t[i]), int(t[j])))
        i = j + 1
    return gaps


def split_stationary(
    t_ns,
    speed,
    *,
    threshold: float = 0.05,
    min_gap_s: float = 2.0,
    min_run_s: float = 3.0,
    pad_s: float = 1.0,
    scenarios='run',
) -> list[Segment]:
    """
    Split a recording into the runs between standstills (see the module doc).

    ``scenarios`` is a label or a list in run order.
    """
    t = np.asarray(t_ns, np.int64)
    if t.size == 0:
        return []
    gaps = stationary_gaps(t, speed, threshold, min_gap_s)
    edges, cur = [], int(t[0])
    for g0, g1 in gaps:
        if g0 > cur:
            edges.append((cur, g0, max(g0 - cur, 0)))
        cur = g1
    if cur < int(t[-1]):
        edges.append((cur, int(t[-1]), 0))
    pad = int(round(pad_s * NS))
    moving = []
    for a, b, _ in edges:
        # a motion stretch [a, b]: must contain a sample above threshold and last long enough
        m = (t >= a) & (t <= b)
        if not np.any(np.asarray(speed, float)[m] >= threshold) or (b - a) < min_run_s * NS:
            continue
        moving.append((a, b))
    segs = []
    for k, (a, b) in enumerate(moving):
        lo = int(t[0]) if k == 0 else moving[k - 1][1]
        hi = int(t[-1]) if k == len(moving) - 1 else moving[k + 1][0]
        a2, b2 = max(lo, a - pad), min(hi, b + pad)
        if isinstance(scenarios, str):
            sc = scenarios
        else:
            if k >= len(scenarios):
                raise ValueError(
                    f'{len(moving)} runs found between standstills but only {len(scenarios)} '
                    f'scenario labels given'
                )
            sc = scenarios[k]
        segs.append(Segment(a2, b2, sc))
    if not isinstance(scenarios, str) and len(scenarios) != len(segs):
        raise ValueError(
            f'{len(segs)} runs found between standstills but {len(scenarios)} scenario labels '
            f'given'
        )
    return segs
