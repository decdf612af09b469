# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A directory of runs scored: the files read and handed to the evaluator core.

``evaluate_root(root)`` reads a directory in the authors' layout or ours (``runs.layout``), checks
an output of ``vepd study`` against the plan its marker records (``study_plan``), and gives every
run to ``metrics.evaluator.EvaluatorCore`` — which knows arrays, not files; a run file with a
non-finite value inside the run is excluded with its reason, never scored. ``load_records`` reads
a list of run files. The result is the core's (``metrics.evaluator`` module doc), plus ``root``,
``folders`` and ``bootstrap.seed_source``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from vepd_ros.metrics.core import RunDataError
from vepd_ros.metrics.evaluator import (
    DEFAULT_BOOTSTRAP_SEED,
    DEFAULT_MIN_COVERAGE,
    EvaluatorCore,
    REFERENCE,
)
from vepd_ros.metrics.records import RunRecord
from vepd_ros.runs.format import NonFiniteRunError, read_run
from vepd_ros.runs.layout import scan_root


def load_records(paths: Sequence[Path], progress: bool = False, desc: str = '') -> list[RunRecord]:
    it = paths
    if progress:
        from tqdm import tqdm

        it = tqdm(paths, desc=desc or 'runs', unit='run', leave=False)
    return [read_run(p) for p in it]


def study_plan(root) -> dict | None:
    """
    Return the plan a ``vepd study`` output records, or None.

    The plan a ``vepd study`` output records in its marker (``runs``, ``models``,
    ``scenarios``), or None.
    """
    from vepd_ros.runs.safety import read_output_marker

    mark = read_output_marker(root)
    plan = mark.get('plan') if mark and mark['command'] == 'study' else None
    if not (
        isinstance(plan, dict)
        and type(plan.get('runs')) is int
        and plan['runs'] >= 2
        and all(
            isinstance(plan.get(f), list) and all(isinstance(x, str) for x in plan[f])
            for f in ('models', 'scenarios')
        )
    ):
        return None
    return plan


def evaluate_root(
    root,
    velocity: str = 'speed',
    *,
    preprocessing='paper',
    n_boot: int = 1000,
    seed: int | None = 0,
    scenarios=None,
    k: int | None = None,
    include_runs: bool = False,
    progress: bool = False,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> dict:
    """
    Evaluate a directory of runs.

    Evaluate a directory in the authors' layout or ours (see ``vepd_ros.runs.layout``); an
    output of ``vepd study`` is checked against its plan (module doc, completeness).

    ``seed=None``: the bootstrap seed is the study seed the runs' sidecars carry (``vepd study
    --seed`` seeds both its runs and its interval), else ``DEFAULT_BOOTSTRAP_SEED``. The result
    says where the seed came from (``bootstrap.seed_source``: 'given', "the runs' study seed" or
    'default') and the reference's provenance (``reference_model``, ``EvaluatorCore.provenance``),
    both from the sidecars already read for scoring (no second pass over the files).
    """
    layout = scan_root(root, scenarios)
    plan = study_plan(root)
    if k is None and plan:
        k = plan['runs']
    core = EvaluatorCore(
        k=k,
        velocity=velocity,
        preprocessing=preprocessing,
        n_boot=n_boot,
        seed=DEFAULT_BOOTSTRAP_SEED if seed is None else seed,
        min_coverage=min_coverage,
    )
    if plan:
        core.expected_batches = [
            (side, sc) for side in [REFERENCE] + plan['models'] for sc in plan['scenarios']
        ]
    core.warnings += layout.warnings
    batches = [(REFERENCE, layout.real)] + list(layout.models.items())
    total = sum(len(v) for _, b in batches for v in b.runs.values())
    bar = None
    if progress and total > 200:
        from tqdm import tqdm

        bar = tqdm(total=total, desc='evaluate', unit='run')
    try:
        for side, b in batches:
            if side != REFERENCE:
                core.add_model(side, b.display_name)
            for sc, runs in b.runs.items():
                recs = []
                for _, p in runs:
                    try:
                        recs.append(read_run(p))
                    except NonFiniteRunError as exc:  # excluded with its reason, not scored
                        core.excluded.append({'path': str(p), 'label': side, 'scenario': sc,
                                              'reason': str(exc)})
                try:
                    core.add_records(side, sc, recs)
                except RunDataError as exc:
                    raise RunDataError(
                        f'{exc} (velocity {velocity!r}, preprocessing {core.preprocessing.name!r})'
                    ) from None
                if bar is not None:
                    bar.update(len(runs))
    finally:
        if bar is not None:
            bar.close()
    made = core.provenance()
    source = 'given'
    if seed is None:
        source = "the runs' study seed" if made['study_seed'] is not None else 'default'
        core.seed = DEFAULT_BOOTSTRAP_SEED if made['study_seed'] is None else made['study_seed']
    res = core.result(include_runs=include_runs)
    res['bootstrap']['seed_source'] = source
    res['root'] = str(Path(root))
    res['folders'] = {side: str(b.folder) for side, b in batches}
    return res
