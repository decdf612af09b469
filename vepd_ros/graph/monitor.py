# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Watching a running graph: progress, the stall and wall limits, strangers, a complete result.

``_Monitor`` shows progress and raises ``RunError`` naming what stalled or who else publishes on
the graph's topics; ``result_problems`` lists why the evaluator's result is not a real, complete
one (exit 1).
"""

from __future__ import annotations

import math
import time


STALL_S = 60.0
"""Default stall limit (wall seconds): the run stops when neither sim time nor the count of
finished runs has advanced for this long. The lockstep graph only slows down on a busy machine, so
no wall budget applies."""


class RunError(RuntimeError):
    """
    Tell that the graph could not produce a real result (exit 1).

    The graph could not produce a real result (stall, foreign publisher, incomplete result):
    exit 1.
    """


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def result_problems(result: dict) -> list[str]:
    """
    List why ``result`` is not a real, complete result (empty when it is).

    Why ``result`` is not a real, complete result (empty when it is): contract C2's ``complete``
    flag, excluded runs and short batches, models without a score, NaN metrics, runs without
    estimates.
    """
    problems = [f'the evaluator could not score: {result["error"]}'] if result.get('error') else []
    for ex in result.get('excluded_runs') or []:
        problems.append(f'run {ex.get("path")} excluded ({ex.get("reason")})')
    for b in result.get('incomplete_batches') or []:
        problems.append(
            f'batch {b.get("label")}/{b.get("scenario")} has {b.get("have")} of k={b.get("k")} '
            'runs'
        )
    if result.get('complete') is False and not problems:
        problems.append('the evaluator marked the result incomplete')
    for name, m in (result.get('models') or {}).items():
        per = [v.get('VEPD') for v in (m.get('per_scenario') or {}).values()]
        scored = [v for v in per if v is not None and not _nan(v)]
        if _nan(m.get('VEPD')) or (m.get('VEPD') is None and not scored):
            # (a combined VEPD of None with per-scenario scores is a rest-only study: not an error)
            problems.append(
                f'model {m.get("display_name", name)}: no VEPD (no scenario scored on both sides)'
            )
        elif any(_nan(m.get(k)) for k in ('W1', 'W2')) or len(scored) < len(per):
            problems.append(f'model {m.get("display_name", name)}: a W1, W2 or VEPD is NaN')
    if 'models' in result and not result['models']:
        problems.append('no model was scored')
    for r in result.get('runs', []) if isinstance(result.get('runs'), list) else []:
        if not r.get('se_len'):
            problems.append(
                f'{r["path"]}: no estimate from the judge (did the GPS/IMU topics arrive, and is '
                'the '
                "IMU's transform known?)"
            )
        elif _nan(r.get('E')) or _nan(r.get('S')):
            problems.append(f'{r["path"]}: E or S is NaN')
    return problems


NAME_GRACE_S = 2.0
"""How long a stranger found on a topic may stay unnamed before the run stops without its name."""


class _Monitor:
    """
    Progress, stall limit, wall limit and the foreign-publisher check of a running graph.

    ``sim_ns()``: the graph's sim time (None without one); ``total_runs``: runs the graph will
    finish (None when open-ended); ``advance()``: what counts as progress besides finished runs
    (default ``sim_ns``: sim time that runs on after the last run is no progress, so the truth node
    gives its published samples). ``check()`` raises ``RunError`` naming what stalled or who else
    publishes.
    """

    def __init__(
        self, box: dict, opts: dict, sim_ns, total_runs, guard, watch_stall: bool, advance=None
    ):
        from vepd_ros.progress import progress_bar

        self.box, self.sim_ns, self.guard, self.watch_stall = box, sim_ns, guard, watch_stall
        self.advance = advance or sim_ns  # what counts as progress (sim time that carries data)
        self.stall_s, self.timeout = opts['stall_s'], opts['timeout']
        self.t0 = self.last_advance = self.next_check = time.monotonic()
        self.mark = None
        self.sim0 = None  # (wall, sim ns) at the first advance of sim time
        self.total = total_runs
        self.bar = progress_bar(
            total=total_runs, desc='runs', unit='run', quiet=opts['progress_quiet']
        )
        self.shown = 0

    def runs_done(self) -> int:
        return len(self.box.get('runs', []))

    def check(self) -> None:
        now = time.monotonic()
        if now < self.next_check:
            return
        self.next_check = now + 0.5
        sim = self.sim_ns()
        done = self.runs_done()
        mark = (self.advance(), done)
        if mark != self.mark:
            self.mark, self.last_advance = mark, now
        if sim is not None and sim > 0 and self.sim0 is None:
            self.sim0 = (now, sim)
        if done > self.shown:
            self.bar.update(done - self.shown)
            self.shown = done
        if sim is not None and self.sim0 is not None and now > self.sim0[0]:
            rate = (sim - self.sim0[1]) * 1e-9 / (now - self.sim0[0])
            left = ''
            end = getattr(self, 'sim_end_ns', None)
            if end is not None and rate > 0:
                left = f', ~{max(0.0, (end() - sim) * 1e-9 / rate):.0f} s left'
            self.bar.set_postfix_str(
                f'sim t {sim * 1e-9:.0f} s, x{rate:.2f} real time{left}', refresh=False
            )
            self.bar.refresh()
        problems = self.guard()
        if problems:
            # DDS announces a publisher before its node's name: the name gets NAME_GRACE_S
            self.foreign_since = getattr(self, 'foreign_since', None) or now
            unnamed = any('unnamed participant' in p for p in problems)
            if not unnamed or now - self.foreign_since >= NAME_GRACE_S:
                raise RunError('; '.join(problems))
        if self.watch_stall and now - self.last_advance > self.stall_s:
            raise RunError(self.stall_text(sim, done))
        if self.timeout and now - self.t0 > self.timeout:
            raise RunError(f'no result within --timeout {self.timeout:g} s ({done} runs finished)')

    def stall_text(self, sim, done) -> str:
        where = f'sim time stuck at {sim * 1e-9:.1f} s' if sim else 'sim time never started'
        total = f' of {self.total}' if self.total else ''
        return (
            f'stalled: {where} and {done}{total} runs finished, no advance for {self.stall_s:g} s '
            '(--stall-timeout); ' + self.waiting()
        )

    def waiting(self) -> str:
        return getattr(self, 'waiting_for', lambda: '')()

    def close(self) -> None:
        self.bar.close()


def _truth_progress(truth) -> tuple:
    """
    Return what counts as progress of a graph with truth_node (``_Monitor``'s ``advance``).

    The samples it has published, and its sim time while a run is still to come: on a loaded
    machine the gap between two runs (``gap_s`` of sim time, nothing published but /clock) may take
    longer than the stall limit, and it is progress; sim time after the last run is not.
    """
    more = getattr(truth, 'drive_clock', False) and (
        truth.samples is not None or truth.run + 1 < len(truth.plan)
    )
    return truth.published, truth.sim_ns if more else None


def _total_runs(nodes) -> int | None:
    truth = next((n for n in nodes if n.role == 'truth'), None)
    if truth is None:
        return None
    p = truth.parameters[0]
    n_scen = len([s for s in str(p['scenario']).split(',') if s.strip()])
    return p['runs'] * n_scen * sum(1 for n in nodes if n.role == 'recorder')
