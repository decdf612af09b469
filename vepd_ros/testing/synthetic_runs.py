# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Synthetic run batches for tests, benchmarks and demos.

Synthetic run batches for tests, benchmarks and demos — not a physical model, just runs with the
properties of real ones: two streams at different rates and jittered stamps, an estimate that lags
and wanders around the truth, parked starts (true zero speeds), and the authors' file conventions.

``synthetic_run(rng, scenario, ...)`` -> RunRecord; ``write_synthetic_root(root,
layout='authors'|'ours')`` writes a whole Real/ + Sim/ tree.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from vepd_ros.metrics.records import RunRecord
from vepd_ros.runs.format import PAPER_COLUMNS
from vepd_ros.runs.layout import BatchWriter, run_file_name

AUTHORS_SCENARIOS = ('rest', 'path', 'circle', 'sine')
AUTHORS_FOLDERS = (
    'chNormal_results',
    'chWalk_results',
    'AirSim_results',
    'chNormal_AirSim_results',
    'chWalk_AirSim_results',
)
OUR_LABELS = ('ch_gauss', 'ch_rw', 'airsim', 'ch_gauss+airsim', 'ch_rw+airsim')


def _truth_profile(scenario: str, t: np.ndarray, speed: float, start_s: float):
    """
    Return the body-frame (vx, vy) truth of a synthetic run.

    Body-frame (vx, vy) truth: parked until start_s (exact zeros), then a ramp to speed, with a
    scenario-dependent modulation; vy = 0 (no side slip).
    """
    ramp = np.clip((t - start_s) / 1.5, 0.0, 1.0)
    if scenario == 'rest':
        vx = np.zeros_like(t)
    elif scenario in ('circle',):
        vx = speed * ramp
    elif scenario in ('sine', 'half_sine'):
        vx = speed * ramp * (1.0 - 0.15 * np.sin(2 * np.pi * t / 8.0) ** 2)
    else:
        vx = speed * ramp * (1.0 + 0.03 * np.sin(2 * np.pi * t / 11.0))
    vx[t < start_s] = 0.0
    return vx, np.zeros_like(t)


def synthetic_run(
    rng: np.random.Generator,
    scenario: str = 'circle',
    duration_s: float = 20.0,
    *,
    se_rate_hz: float = 35.0,
    gt_rate_hz: float = 25.0,
    noise: float = 0.05,
    lag_s: float = 0.2,
    wander: float = 0.05,
    speed: float = 1.5,
) -> RunRecord:
    d = duration_s * (1.0 + 0.02 * rng.standard_normal())
    gt_t = np.arange(0.0, d, 1.0 / gt_rate_hz)
    gt_t[1:] += rng.uniform(0, 0.2 / gt_rate_hz, gt_t.size - 1)
    se_t = np.arange(0.0, d + 0.5, 1.0 / se_rate_hz) + rng.uniform(0, 0.5 / se_rate_hz)
    start = 1.0 + 0.3 * rng.random()
    sp = speed * (1.0 + 0.05 * rng.standard_normal())
    gvx, gvy = _truth_profile(scenario, gt_t, sp, start)
    evx, _ = _truth_profile(scenario, se_t - lag_s, sp, start)
    walk = np.cumsum(rng.standard_normal(se_t.size)) * wander / np.sqrt(se_t.size)
    evx = evx + walk + noise * rng.standard_normal(se_t.size)
    evy = noise * rng.standard_normal(se_t.size)
    return RunRecord.from_components(se_t, evx, evy, gt_t, gvx, gvy)


def write_authors_csv(path, rec: RunRecord, index_column: bool = False) -> Path:
    """
    Write a run in the authors' style.

    A run in the authors' style: four columns, the shorter pair padded with 0.0, optional pandas
    index.
    """
    path = Path(path)
    n = max(len(rec.se_t), len(rec.gt_t))
    cols = []
    for a in (rec.se_t, rec.gt_t, rec.se_v, rec.gt_v):
        c = np.zeros(n)
        c[: len(a)] = a
        cols.append(c)
    head = ('' if not index_column else ',') + ','.join(PAPER_COLUMNS)
    rows = [
        (f'{i},' if index_column else '') + ','.join(repr(x) for x in r)
        for i, r in enumerate(np.column_stack(cols).tolist())
    ]
    path.write_text(head + '\n' + '\n'.join(rows) + '\n')
    return path


# model label -> (noise, lag, wander) of its estimate: distinct error signatures per model
_MODEL_ERRORS = {
    'real': (0.04, 0.20, 0.10),
    'chNormal': (0.12, 0.15, 0.05),
    'chWalk': (0.04, 0.20, 0.12),
    'AirSim': (0.03, 0.20, 0.06),
    'chNormal_AirSim': (0.07, 0.18, 0.06),
    'chWalk_AirSim': (0.05, 0.22, 0.12),
}


def _errors(label: str):
    base = label[: -len('_results')] if label.endswith('_results') else label
    ours = dict(
        zip(OUR_LABELS, ('chNormal', 'chWalk', 'AirSim', 'chNormal_AirSim', 'chWalk_AirSim'))
    )
    return _MODEL_ERRORS.get(ours.get(base, base), (0.05, 0.2, 0.08))


def _batch(rng: np.random.Generator, label: str, scenarios, k: int, duration_s: float):
    """Yield (scenario, j, run) for runs 1..k of each scenario of one side, in file order."""
    noise, lag, wander = _errors(label)
    for sc in scenarios:
        for j in range(1, k + 1):
            yield sc, j, synthetic_run(rng, sc, duration_s, noise=noise, lag_s=lag, wander=wander)


def write_synthetic_root(
    root,
    layout: str = 'authors',
    *,
    k: int = 10,
    seed: int = 0,
    duration_s: float = 20.0,
    scenarios=None,
    models=None,
    index_column: bool = False,
) -> Path:
    """
    Real/ and Sim/ batches of k runs per scenario.

    'authors': their folder and file names, no sidecars, gt padded with zeros; 'ours': BatchWriter
    files (sidecars, extra columns, index).
    """
    root = Path(root)
    rng = np.random.default_rng(seed)
    if layout == 'authors':
        scenarios = scenarios or AUTHORS_SCENARIOS
        models = models or AUTHORS_FOLDERS
        sides = [('real', root / 'Real')] + [(m, root / 'Sim' / m) for m in models]
        for label, folder in sides:
            folder.mkdir(parents=True, exist_ok=True)
            for sc, j, rec in _batch(rng, label, scenarios, k, duration_s):
                write_authors_csv(folder / run_file_name(sc, j), rec, index_column)
    elif layout == 'ours':
        scenarios = scenarios or ('rest', 'straight', 'circle', 'sine')
        models = models or OUR_LABELS
        for label in ['real'] + list(models):
            w = BatchWriter(
                root,
                'real' if label == 'real' else 'sim',
                None if label == 'real' else label,
                fsync=False,
            )
            for sc, j, rec in _batch(rng, label, scenarios, k, duration_s):
                w.write(rec, sc, {'model': label, 'seed': seed}, j=j)
    else:
        raise ValueError(f"layout must be 'authors' or 'ours', got {layout!r}")
    return root
