# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The evaluator core: per-run E and S as runs arrive, the VEPD result once batches are full.

The evaluator core: per-run E and S as runs arrive, and the whole VEPD result (Tables I and II,
intervals) as soon as every batch holds K runs. It takes runs as arrays (``metrics.records``) and
knows no file: ``runs.batch.evaluate_root`` reads a directory of runs into it, re-runnably.

Sides: ``'real'`` is the reference batch; every other side is a model label (one batch under test).
Result (``EvaluatorCore.result()`` / ``evaluate_root``), JSON-ready:

    {"velocity": "speed", "preprocessing": {...}, "reference": "real",
     "combined_scenarios": [...], "excluded_from_combined": ["rest"],
     # runs per side and scenario:
     "k": {"real": {"<scenario>": n, ...}, "<label>": {"<scenario>": n, ...}},
     "models": {"<label>": {"display_name": "Ch:RW", "W1": x, "W2": x, "VEPD": x,
                            "ci95": [lo, hi], "rank": r,
                            "per_scenario": {"<scenario>": {"W1": x, "W2": x, "VEPD": x,
                                                             "rank": r, "k_real": n, "k_sim": n,
                                                             "ci95": [lo, hi]}}}},
     "bootstrap": {"n_boot": 1000, "seed": 0, "level": 0.95, "scheme": "..."},
     "warnings": ["..."]}

Per-scenario keys are the reference side's folder names (``path`` in the authors' data,
``straight`` in ours); a model's scenario is matched to the reference by canonical name (path =
straight, half_sine = sine). Ranks: 1 = lowest VEPD, ties share the average rank (as the authors'
pandas ``rank()``). Intervals (``n_boot`` > 0, else None): ``ci95`` of the combined VEPD by the
stratified bootstrap (``bootstrap_vepd``); ``per_scenario.<s>.ci95`` from the same resamples
restricted to scenario s (``bootstrap_vepd_groups``), or, for a scenario outside the combined set
(rest), from its own draws seeded by ``derive_seed(seed, 'bootstrap', canonical_scenario(s))``.
Errors: no reference runs, no model, a batch (side × scenario) with fewer than 2 runs, bad run
data, a result that is not finite. Warnings (in ``warnings``): different K on the two sides, a
scenario missing on one side, fewer than the requested K, an empty combined set.

Completeness (contract C2), also in the result:

    "complete": bool,                       false when either list below is non-empty
    "excluded_runs": [{"path", "label", "scenario", "reason"}, ...],
    "incomplete_batches": [{"label", "scenario", "have", "k"}, ...],
    "min_coverage": 0.9

A run is EXCLUDED (never scored) when its sidecar's ``coverage`` block (contract C1, written by the
recorder) shows, for the estimates or the truth, received/expected < ``min_coverage`` (expected >
0), or a longest gap ``max_gap_s`` > max(``GAP_PERIODS`` / rate_hz, ``GAP_FLOOR_S``) — five nominal
periods, at least 0.5 s — or, where the block gives it (a run started by an announced event, at
which the judge restarts), a first sample ``first_s`` > ``START_PERIODS`` / rate_hz after the run
start: the judge's start transient lies in its first estimates (losing them moved E by 10 % on a
5 s run), so a run whose first estimate is late is not the run its seed describes. A run without a
``coverage`` block (the authors' files, the offline study's) is complete. A batch (side ×
scenario) is INCOMPLETE when it holds fewer usable runs than K: the ``k`` asked for, else the plan
a ``vepd study`` output records (its runs per batch, and every model × scenario it was to write),
else the largest count of any side for that scenario.
Incomplete batches are still scored over the runs they have, and flagged; ``vepd evaluate`` exits 4
on an incomplete result unless ``--allow-incomplete``.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
from vepd_ros.metrics.core import batch_metrics, get_preprocessing, run_metrics, RunDataError
from vepd_ros.metrics.records import RunRecord, VELOCITY_KINDS
from vepd_ros.metrics.vepd import bootstrap_vepd, bootstrap_vepd_groups, MAX_N_BOOT, rank, vepd
from vepd_ros.naming import (
    canonical_scenario,
    is_reference_label,
    REST_SCENARIOS,
    scenario_sort_key,
)

REFERENCE = 'real'
DEFAULT_MIN_COVERAGE = 0.9
GAP_PERIODS = 5
GAP_FLOOR_S = 0.5
START_PERIODS = 2
"""
A run's first sample comes at most this many nominal periods after its announced start.

On sim time the judge's first estimate is that of its first tick after the run's first IMU sample:
at most one period after the start; the second period is slack for a sensor's latency.
"""


def coverage_exclusion(
    meta: dict,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    where: str = 'run',
    rows: dict | None = None,
) -> str | None:
    """
    Why a run is excluded by its sidecar's ``coverage`` block (module doc), or None (kept).

    A block of the wrong shape or inconsistent in itself is a ``RunDataError`` naming ``where`` and
    the field: counts must be integers >= 0, ``rate_hz`` a finite number > 0 (a written run has
    samples, so a nominal rate), and ``received`` -- the samples recorded, all of them in the run
    file -- at most the run's rows of that stream (``rows``: {'estimates': n, 'truth': n}, when
    given). An infinite ``max_gap_s`` (a stream that never arrived) excludes the run.
    """
    cov = meta.get('coverage') if isinstance(meta, dict) else None
    if cov is None:
        return None
    if not isinstance(cov, dict):
        raise RunDataError(f"{where}: sidecar field 'coverage' must be an object (contract C1)")
    reasons = []
    for stream in ('estimates', 'truth'):
        b = cov.get(stream)
        if b is None:
            continue
        f = f'coverage.{stream}'
        if not isinstance(b, dict):
            raise RunDataError(f"{where}: sidecar field '{f}' must be an object")
        exp, rec = b.get('expected'), b.get('received')
        for k, v in (('expected', exp), ('received', rec)):
            if type(v) is not int or v < 0:
                raise RunDataError(
                    f"{where}: sidecar field '{f}.{k}' must be an integer >= 0, got {v!r:.40}"
                )
        n = (rows or {}).get(stream)
        if n is not None and rec > n:
            raise RunDataError(
                f"{where}: sidecar field '{f}.received' is {rec!r:.40}, more "
                f'samples than the run holds ({n}); the coverage block does not '
                f'describe this run'
            )
        if exp > 0 and rec / exp < min_coverage:
            reasons.append(
                f'{stream}: {rec} of {exp} expected samples '
                f'({100.0 * rec / exp:.1f}% < {100.0 * min_coverage:g}%)'
            )
        gap, rate = b.get('max_gap_s'), b.get('rate_hz')
        if gap is None or rate is None:
            continue
        for k, v in (('max_gap_s', gap), ('rate_hz', rate)):
            number = isinstance(v, (int, float)) and not isinstance(v, bool)
            if not number or np.isnan(v) or v < 0 or (k == 'rate_hz' and np.isinf(v)):
                raise RunDataError(
                    f"{where}: sidecar field '{f}.{k}' must be a number >= 0, got {v!r:.40}"
                )
        if not rate > 0:
            raise RunDataError(
                f"{where}: sidecar field '{f}.rate_hz' must be > 0 (the "
                f'nominal rate of a stream that has samples), got {rate!r:.40}'
            )
        limit = max(GAP_PERIODS / rate, GAP_FLOOR_S)
        if gap > limit:
            reasons.append(
                f'{stream}: a gap of {gap:g} s > {limit:g} s ({GAP_PERIODS} '
                f'periods at {rate:g} Hz, at least {GAP_FLOOR_S:g} s)'
            )
        first = b.get('first_s')
        if first is None:
            continue
        if not isinstance(first, (int, float)) or isinstance(first, bool) or not first >= 0:
            raise RunDataError(
                f"{where}: sidecar field '{f}.first_s' must be a number >= 0, got {first!r:.40}"
            )
        if first > START_PERIODS / rate + 1e-9:
            reasons.append(
                f'{stream}: the first sample {first:g} s after the run start > '
                f'{START_PERIODS / rate:g} s ({START_PERIODS} periods at {rate:g} Hz: the start '
                'transient is missing)'
            )
    return '; '.join(reasons) or None


NON_FINITE_SENSORS = 'non_finite_sensor_values'
"""Sidecar field: {sensor: count} of non-finite values a run's simulated sensors produced (set only
when there are some, ``pipelines.study.run_records``)."""


def non_finite_exclusion(rec: RunRecord) -> str | None:
    """
    Why a run is excluded for non-finite values, or None (kept).

    A NaN or infinite estimate or truth value (stamps included) would make E and S NaN or, worse,
    finite and wrong after resampling; a run whose sensors produced non-finite values (sidecar
    ``NON_FINITE_SENSORS``) was judged on inputs the judge partly dropped. Either is excluded
    with its reason, as a short run is (``coverage_exclusion``).
    """
    reasons = []
    for stream, arrays in (('estimates', (rec.se_t, rec.se_v, rec.se_vx, rec.se_vy)),
                           ('truth', (rec.gt_t, rec.gt_v, rec.gt_vx, rec.gt_vy))):
        bad = sum(int(np.count_nonzero(~np.isfinite(np.asarray(a, float))))
                  for a in arrays if a is not None)
        if bad:
            reasons.append(f'{stream}: {bad} non-finite values')
    sensors = rec.meta.get(NON_FINITE_SENSORS) if isinstance(rec.meta, dict) else None
    if sensors:
        counts = sensors if isinstance(sensors, dict) else {'sensors': sensors}
        reasons.append('sensor output not finite (' + ', '.join(
            f'{k}: {v!r:.20} values' for k, v in counts.items()) + ')')
    return '; '.join(reasons) or None


DEFAULT_BOOTSTRAP_SEED = 0
"""The bootstrap seed when neither the caller nor the runs name one (``evaluate_root``)."""


class EvaluatorCore:

    def __init__(
        self,
        k: int | None = None,
        velocity: str = 'speed',
        preprocessing='paper',
        n_boot: int = 1000,
        seed: int = 0,
        level: float = 0.95,
        rest: Iterable[str] = REST_SCENARIOS,
        min_coverage: float = DEFAULT_MIN_COVERAGE,
    ):
        if velocity not in VELOCITY_KINDS:
            raise ValueError(
                f"unknown velocity '{velocity}': expected one of {', '.join(VELOCITY_KINDS)}"
            )
        if k is not None and k < 2:
            raise ValueError(
                f'k must be >= 2 (a Wasserstein distance over fewer runs means nothing), got {k}'
            )
        if not 0.0 <= float(min_coverage) <= 1.0:
            raise ValueError(f'min_coverage must be within 0..1, got {min_coverage!r}')
        if not 0 <= int(n_boot) <= MAX_N_BOOT:
            raise ValueError(
                f'n_boot must be an integer from 0 (no interval) to {MAX_N_BOOT}, got {n_boot!r}'
            )
        if int(seed) < 0:
            raise ValueError(f'the bootstrap seed must be >= 0, got {seed!r}')
        self.min_coverage = float(min_coverage)
        self.excluded: list[dict] = []
        self.expected_batches: list[tuple[str, str]] = []  # (side, scenario) planned (a study)
        self.k = k
        self.velocity = velocity
        self.preprocessing = get_preprocessing(preprocessing)
        self.n_boot = int(n_boot)
        self.seed = int(seed)
        self.level = float(level)
        self.rest = frozenset(canonical_scenario(s) for s in rest)
        self._E: dict[str, dict[str, list[np.ndarray]]] = {}
        self._S: dict[str, dict[str, list[np.ndarray]]] = {}
        self._names: dict[str, dict[str, list[str]]] = {}
        self.display: dict[str, str] = {REFERENCE: 'Real'}
        self.warnings: list[str] = []
        self._study_seeds: set[int] = set()
        self._reference_models: set[str] = set()

    # -------------------------------------------------------------------------------------------
    # input
    def add_model(self, label: str, display_name: str | None = None) -> None:
        if is_reference_label(label):
            raise ValueError(
                f"{label!r} names the reference side ('{REFERENCE}'), not a model label"
            )
        self.display[label] = display_name or self.display.get(label) or label
        self._E.setdefault(label, {})
        self._S.setdefault(label, {})
        self._names.setdefault(label, {})

    def add_values(
        self, side: str, scenario: str, E, S, names: Sequence[str] | None = None
    ) -> None:
        """Per-run E and S already computed (e.g. re-loaded)."""
        E = np.atleast_1d(np.asarray(E, float))
        S = np.atleast_1d(np.asarray(S, float))
        if E.shape != S.shape:
            raise ValueError('add_values: E and S must have one value per run')
        if side != REFERENCE and side not in self.display:
            self.add_model(side)
        self._E.setdefault(side, {}).setdefault(scenario, []).append(E)
        self._S.setdefault(side, {}).setdefault(scenario, []).append(S)
        nm = self._names.setdefault(side, {}).setdefault(scenario, [])
        nm += (
            list(names)
            if names is not None
            else [f'{scenario}#{len(nm) + i + 1}' for i in range(E.size)]
        )

    def add_run(self, side: str, scenario: str, run) -> tuple[float, float] | None:
        """
        Add one run of ``side`` and ``scenario`` and return its (E, S), or None when excluded.

        One run (a RunRecord or (se_t, se_v, gt_t, gt_v)); its E and S are computed now (None:
        the run is excluded by its coverage).
        """
        if isinstance(run, RunRecord):
            if self._exclude(side, scenario, run):
                return None  # listed in excluded_runs, not scored
            sig, name = run.signal(self.velocity), run.name
        else:
            sig, name = tuple(run), None
        e, s = run_metrics(*sig, preprocessing=self.preprocessing, name=name)
        self.add_values(
            side, scenario, [e], [s], [name or f'{scenario}#{self.count(side, scenario) + 1}']
        )
        return e, s

    def add_records(
        self, side: str, scenario: str, records: Sequence[RunRecord]
    ) -> tuple[np.ndarray, np.ndarray]:
        """
        Many runs at once, vectorised.

        Runs excluded by their coverage are listed, not scored.
        """
        records = [r for r in records if not self._exclude(side, scenario, r)]
        if not records:
            return np.empty(0), np.empty(0)
        sigs = [r.signal(self.velocity) for r in records]
        names = [r.name for r in records]
        E, S = batch_metrics(
            [s[0] for s in sigs],
            [s[1] for s in sigs],
            [s[2] for s in sigs],
            [s[3] for s in sigs],
            self.preprocessing,
            names,
        )
        self.add_values(side, scenario, E, S, names)
        return E, S

    def _exclude(self, side: str, scenario: str, rec: RunRecord) -> bool:
        self._note_provenance(side, rec.meta)
        reason = '; '.join(r for r in (
            coverage_exclusion(
                rec.meta,
                self.min_coverage,
                rec.name,
                rows={'estimates': len(rec.se_t), 'truth': len(rec.gt_t)},
            ),
            non_finite_exclusion(rec),
        ) if r)
        if reason:
            self.excluded.append(
                {'path': rec.name, 'label': side, 'scenario': scenario, 'reason': reason}
            )
        return bool(reason)

    def _note_provenance(self, side: str, meta: dict) -> None:
        if side == REFERENCE:
            if isinstance(meta.get('model'), str) and meta['model']:
                self._reference_models.add(meta['model'])
        elif type(meta.get('study_seed')) is int:
            self._study_seeds.add(meta['study_seed'])

    def provenance(self) -> dict:
        """
        Tell what the runs' sidecars say about how they were made.

        What the sidecars of the runs given so far (excluded ones included) say about how they
        were made: ``{'study_seed': int | None, 'reference_model': str | None}``.

        ``study_seed``: the ``study_seed`` every model run's sidecar carries (None when absent or
        when the runs disagree). ``reference_model``: the GPS model(s) named by the reference runs'
        sidecars (``model``, written for simulated reference runs by ``vepd study --reference
        MODEL`` and by the graph's recorders); None for real recordings (no ``model``) and the
        authors' files (no sidecars).
        """
        seeds = self._study_seeds
        return {
            'study_seed': next(iter(seeds)) if len(seeds) == 1 else None,
            'reference_model': ', '.join(sorted(self._reference_models)) or None,
        }

    # -------------------------------------------------------------------------------------------
    # state
    def count(self, side: str, scenario: str) -> int:
        return int(sum(a.size for a in self._E.get(side, {}).get(scenario, [])))

    def counts(self) -> dict[str, dict[str, int]]:
        return {
            side: {s: self.count(side, s) for s in sorted(sc, key=scenario_sort_key)}
            for side, sc in self._E.items()
        }

    def values(self, side: str, scenario: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
        e = self._E.get(side, {}).get(scenario, [])
        s = self._S.get(side, {}).get(scenario, [])
        return (
            np.concatenate(e) if e else np.empty(0),
            np.concatenate(s) if s else np.empty(0),
            list(self._names.get(side, {}).get(scenario, [])),
        )

    def ready(self) -> bool:
        """
        Tell whether every batch holds K runs.

        True once the reference and every model hold at least K (default 2) runs of every reference
        scenario.
        """
        need = self.k or 2
        ref = self._E.get(REFERENCE, {})
        models = [m for m in self._E if m != REFERENCE]
        if not ref or not models:
            return False
        for sc in ref:
            if self.count(REFERENCE, sc) < need:
                return False
            for m in models:
                match = self._match(m, sc)
                if match is None or self.count(m, match) < need:
                    return False
        return True

    def incomplete_batches(self) -> list[dict]:
        """
        List the batches with fewer usable runs than K.

        Batches with fewer usable runs than K (module doc), by side (reference first) and
        scenario.
        """
        ref_sc = list(self._E.get(REFERENCE, {}))
        canon: dict[str, str] = {}  # canonical scenario -> the name shown
        for sc in ref_sc + [s for _, s in self.expected_batches]:
            canon.setdefault(canonical_scenario(sc), sc)
        sides = [REFERENCE] + [m for m in self.display if m != REFERENCE]
        sides += [s for s, _ in self.expected_batches if s not in sides]
        expected = {(s, canonical_scenario(sc)) for s, sc in self.expected_batches}

        def have(side, c):
            return sum(
                self.count(side, s) for s in self._E.get(side, {}) if canonical_scenario(s) == c
            )

        out = []
        for side in dict.fromkeys(sides):
            for c, shown in canon.items():
                if side != REFERENCE and (side, c) not in expected and side not in self._E:
                    continue
                n = have(side, c)
                k = self.k if self.k is not None else max(have(s, c) for s in sides)
                if n < k:
                    own = next(
                        (s for s in self._E.get(side, {}) if canonical_scenario(s) == c), shown
                    )
                    out.append({'label': side, 'scenario': own, 'have': int(n), 'k': int(k)})
        return out

    def _match(self, side: str, ref_scenario: str) -> str | None:
        c = canonical_scenario(ref_scenario)
        for s in self._E.get(side, {}):
            if canonical_scenario(s) == c:
                return s
        return None

    # -------------------------------------------------------------------------------------------
    # result
    def _scenario_interval(self, model: str, scenario: str) -> list[float]:
        """
        Return the interval of one scenario's VEPD, resampled alone.

        Interval of one scenario's VEPD resampled alone (a scenario outside the combined set),
        seeded by ``derive_seed(seed, 'bootstrap', canonical_scenario(scenario))``: the same
        reference resamples for every model.
        """
        from vepd_ros.seeding import derive_seed

        rE, rS, _ = self.values(REFERENCE, scenario)
        sE, sS, _ = self.values(model, self._match(model, scenario))
        lo, hi = bootstrap_vepd(
            rE,
            rS,
            np.zeros(rE.size),
            sE,
            sim_S=sS,
            sim_groups=np.zeros(sE.size),
            n_boot=self.n_boot,
            seed=derive_seed(self.seed, 'bootstrap', canonical_scenario(scenario)),
            level=self.level,
        )
        return [lo, hi]

    def result(self, include_runs: bool = False) -> dict:
        warnings = list(self.warnings)
        ref_sc = sorted(self._E.get(REFERENCE, {}), key=scenario_sort_key)
        if not ref_sc:
            raise ValueError('no reference (real) runs to compare against')
        models = [m for m in self._E if m != REFERENCE]
        if not models:
            raise ValueError('no model (sim) batches to evaluate')
        for side in [REFERENCE] + models:
            for sc in self._E[side]:
                n = self.count(side, sc)
                if n < 2:
                    raise ValueError(
                        f'batch {self.display.get(side, side)} / {sc} has {n} run(s); '
                        f'at least 2 are needed for a distance between distributions'
                    )
                if self.k is not None and n < self.k:
                    warnings.append(
                        f'{self.display.get(side, side)} / {sc}: {n} runs, fewer than K = {self.k}'
                    )
        combined_sc = [s for s in ref_sc if canonical_scenario(s) not in self.rest]
        excluded = [s for s in ref_sc if canonical_scenario(s) in self.rest]
        out_models: dict[str, dict] = {}
        for m in models:
            per: dict[str, dict] = {}
            for sc in ref_sc:
                ms = self._match(m, sc)
                if ms is None:
                    warnings.append(
                        f'{self.display[m]}: no runs of scenario {sc!r}; left out of its '
                        f'per-scenario table'
                        + (' and its combined score' if sc in combined_sc else '')
                    )
                    continue
                rE, rS, _ = self.values(REFERENCE, sc)
                sE, sS, _ = self.values(m, ms)
                if rE.size != sE.size:
                    warnings.append(
                        f'{self.display[m]} / {sc}: K differs between sides ({rE.size} real, '
                        f'{sE.size} sim); the distances compare the two distributions as they are'
                    )
                per[sc] = {**vepd(rE, rS, sE, sS), 'k_real': int(rE.size), 'k_sim': int(sE.size)}
                if ms != sc:
                    per[sc]['sim_scenario'] = ms
            for ms in self._E[m]:
                if not any(canonical_scenario(ms) == canonical_scenario(s) for s in ref_sc):
                    warnings.append(
                        f'{self.display[m]}: scenario {ms!r} has no reference runs; not evaluated'
                    )
            entry: dict = {'display_name': self.display[m]}
            use = [s for s in combined_sc if s in per]
            if use:
                parts = [
                    (self.values(REFERENCE, s), self.values(m, self._match(m, s)), s) for s in use
                ]
                rE = np.concatenate([p[0][0] for p in parts])
                rS = np.concatenate([p[0][1] for p in parts])
                sE = np.concatenate([p[1][0] for p in parts])
                sS = np.concatenate([p[1][1] for p in parts])
                rg = np.concatenate([np.full(p[0][0].size, i) for i, p in enumerate(parts)])
                sg = np.concatenate([np.full(p[1][0].size, i) for i, p in enumerate(parts)])
                entry.update(vepd(rE, rS, sE, sS))
                if self.n_boot > 0:
                    (lo, hi), by_sc = bootstrap_vepd_groups(
                        rE, rS, rg, sE, sS, sim_groups=sg, n_boot=self.n_boot, seed=self.seed,
                        level=self.level,
                    )
                    entry['ci95'] = [lo, hi]
                    for i, s in enumerate(use):
                        per[s]['ci95'] = list(by_sc[i])
                else:
                    entry['ci95'] = None  # no interval asked for (JSON has no NaN)
                entry['combined_scenarios'] = use
            else:
                warnings.append(
                    f'{self.display[m]}: no moving scenario on both sides; no combined score'
                )
                entry.update(
                    {'W1': None, 'W2': None, 'VEPD': None, 'ci95': None, 'combined_scenarios': []}
                )
            for sc in per:  # scenarios outside the combined set (rest): their own draws
                if 'ci95' not in per[sc]:
                    per[sc]['ci95'] = self._scenario_interval(m, sc) if self.n_boot > 0 else None
            entry['per_scenario'] = per
            out_models[m] = entry
        scored = {m: e['VEPD'] for m, e in out_models.items() if e['VEPD'] is not None}
        for m, r in rank(scored).items():
            out_models[m]['rank'] = r
        for m in out_models:
            out_models[m].setdefault('rank', None)
        for sc in ref_sc:
            have = {
                m: e['per_scenario'][sc]['VEPD']
                for m, e in out_models.items()
                if sc in e['per_scenario']
            }
            for m, r in rank(have).items():
                out_models[m]['per_scenario'][sc]['rank'] = r
        p = self.preprocessing
        res = {
            'velocity': self.velocity,
            'preprocessing': {
                'name': p.name,
                'rate_hz': p.rate_hz,
                'smooth': p.smooth,
                'description': p.describe(),
            },
            'reference': REFERENCE,
            'scenarios': ref_sc,
            'combined_scenarios': combined_sc,
            'excluded_from_combined': excluded,
            'k': self.counts(),
            'models': out_models,
            'bootstrap': {
                'n_boot': self.n_boot,
                'seed': self.seed,
                'level': self.level,
                'scheme': 'percentile; runs resampled with replacement within each scenario on '
                          'both '
                'sides (E and S of a run together); the same reference resamples for '
                'every model',
                'per_scenario': 'per_scenario.<s>.ci95: the same resamples restricted to scenario '
                's; a scenario outside the combined set (rest) is resampled alone '
                "with seed derive_seed(seed, 'bootstrap', canonical_scenario(s))",
            },
            'warnings': warnings,
        }
        incomplete = self.incomplete_batches()
        res.update(
            {
                'complete': not (incomplete or self.excluded),
                'excluded_runs': list(self.excluded),
                'incomplete_batches': incomplete,
                'min_coverage': self.min_coverage,
                # the GPS model that simulated the reference (None: real data, as far as known)
                'reference_model': self.provenance()['reference_model'],
            }
        )
        if include_runs:
            res['runs'] = {
                side: {
                    sc: dict(
                        zip(
                            ('E', 'S', 'names'),
                            (lambda v: (v[0].tolist(), v[1].tolist(), v[2]))(
                                self.values(side, sc)
                            ),
                        )
                    )
                    for sc in sorted(self._E[side], key=scenario_sort_key)
                }
                for side in self._E
            }
            res['display_names'] = dict(self.display)
        return res
