# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
One ``vepd tune`` from its trials to its files, returning a typed result.

``run_tune`` runs the trials (``pipelines.tune.tune``), re-scores the best and the untuned start
(and the reference's own parameters, when the reference is the tuned model simulated) on fresh
seeds with a bootstrap interval, gives the structure verdict, and writes trials.csv,
best_params.yaml and result.json into the output stage. ``TuneResult.to_json()`` is result.json.
``vepd tune`` (commands/tune.py) parses, prints and draws the report page.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import time
from typing import Callable, Sequence

from vepd_ros.pipelines import tune as core

CHOSEN = {False: 'the least VEPD', True: "the Pareto front's point with the least VEPD"}
"""Which trial is the tune's answer (``--pareto`` or not), as result.json and the YAML say it."""


@dataclass(frozen=True)
class Score:
    """A parameter set scored on fresh seeds: VEPD, W1, W2, the 95 % interval, warnings."""

    vepd: float | None
    w1: float | None
    w2: float | None
    ci95: tuple | None
    warnings: list

    def to_json(self) -> dict:
        return {'VEPD': self.vepd, 'W1': self.w1, 'W2': self.w2, 'ci95': self.ci95,
                'warnings': self.warnings}


@dataclass(frozen=True)
class BestTrial:
    """The study's answer: its trial, VEPD on the study's seeds, parameters, W1, W2."""

    number: int
    vepd: float
    params: dict
    w1: float | None
    w2: float | None
    chosen: str
    on_range_edge: list[str]
    warnings: list


@dataclass(frozen=True)
class TuneResult:
    """What one ``vepd tune`` found and did; ``to_json()`` is its result.json."""

    model: str
    gps_model: str
    imu_model: str
    tuned: tuple
    reference: str
    study_name: str
    storage: str  # without a password
    axes: tuple
    workers: int
    trials_complete: int
    trials_this_process: int
    trials_this_run: int  # by every worker of this command
    trials_per_minute: float
    study_path_share: float  # the study path's share of this process's time (its own worker)
    best: BestTrial
    trials_with_warnings: int
    start_params: dict
    confirmation_seed: int
    confirmation: dict  # 'best', 'start' and, for a simulated reference of the model, 'known'
    structure: dict
    pareto: bool
    trials_requested: int
    ekf_config: str | None  # None: config/ekf.yaml
    pareto_front: list | None  # --pareto: the front's trials

    def to_json(self) -> dict:
        b = self.best
        res = {
            'model': self.model,
            'gps_model': self.gps_model,
            'imu_model': self.imu_model,
            'tuned': list(self.tuned),
            'reference': self.reference,
            'study_name': self.study_name,
            'storage': self.storage,
            'axes': [{'name': a.name, 'low': a.low, 'high': a.high, 'log': a.log,
                      'sensor': a.sensor} for a in self.axes],
            'workers': self.workers,
            'trials_complete': self.trials_complete,
            'trials_this_process': self.trials_this_process,
            'trials_this_run': self.trials_this_run,
            'trials_per_minute': self.trials_per_minute,
            'study_path_share': self.study_path_share,
            'best': {'number': b.number, 'VEPD': b.vepd, 'params': b.params, 'W1': b.w1,
                     'W2': b.w2, 'chosen': b.chosen, 'on_range_edge': b.on_range_edge,
                     'warnings': b.warnings},
            'trials_with_warnings': self.trials_with_warnings,
            'start': {'params': self.start_params},
            'confirmation': {'seed': self.confirmation_seed,
                             **{k: s.to_json() for k, s in self.confirmation.items()}},
            'structure': self.structure,
            'pareto': self.pareto,
            'trials_requested': self.trials_requested,
            'ekf_config': self.ekf_config,
        }
        if self.pareto_front is not None:
            res['pareto_front'] = self.pareto_front
        return res


def run_tune(
    objective: core.Objective,
    axes: Sequence[core.TuneAxis],
    storage,
    stage,
    *,
    model: str,
    reference: str,
    trials: int,
    study_name: str,
    storage_shown: str,
    seed: int = 0,
    sampler_seed: int | None = None,
    sampler: str = 'tpe',
    pareto: bool = False,
    workers: int = 1,
    ekf_config: str | None = None,
    on_progress: Callable[[int, float | None, float], None] | None = None,
) -> TuneResult:
    """
    Run the trials of ``model`` until the study holds ``trials``; write the outputs into ``stage``.

    ``on_progress(trials complete, best VEPD or None, trials per minute)`` after each trial of
    this process. Confirmation seed: ``seed`` + 1 (every run seed derives from the study seed by
    name: all new). Raises ValueError when no trial scored a finite VEPD.
    """
    from vepd_ros.fileio import atomic_write_text
    from vepd_ros.models.spec import split_specs
    from vepd_ros.params_file import node_params_yaml, write_params_file

    t0 = time.perf_counter()
    n_here = 0
    sampler_seed = seed if sampler_seed is None else sampler_seed
    study = core.open_study(storage, study_name, model, axes=axes, seed=sampler_seed,
                            sampler=sampler, pareto=pareto,
                            parallel=workers > 1)
    n_before = len(core.completed(study))

    def on_trial(study, trial):
        nonlocal n_here
        n_here += 1
        if on_progress is not None:
            done = core.completed(study)
            best = core.best_finite(study)
            rate = (len(done) - n_before) / max(time.perf_counter() - t0, 1e-9) * 60.0
            on_progress(len(done), core.trial_vepd(best) if best else None, rate)

    core.tune(objective, model, axes, trials=trials, storage=storage, study_name=study_name,
              seed=sampler_seed, sampler=sampler,
              on_trial=on_trial, pareto=pareto, workers=workers, study=study)
    wall = max(time.perf_counter() - t0, 1e-9)
    in_study_path = objective.sim_seconds  # the trials' own, before the confirmation adds to it
    best = core.best_finite(study)
    if best is None:
        raise ValueError(f'study {study_name!r}: no trial scored a finite VEPD')
    best_vepd = core.trial_vepd(best)
    values = core.model_params(model, axes, best.params)
    start_params = core.model_params(model, axes, core.start_values(model, axes))
    fresh = seed + 1
    checks = [('best', values), ('start', start_params)]
    if objective.known_params is not None:  # a simulated reference of the tuned model
        checks.append(('known', {a.param: objective.known_params[a.param] for a in axes}))
    confirm = {}
    for key, prm in checks:
        e = objective.evaluate(prm, n_boot=1000, seed=fresh)
        confirm[key] = Score(e['VEPD'], e['W1'], e['W2'], e['ci95'], e['warnings'])
    structure = core.structure_verdict(confirm['best'].to_json(), objective.reference_floor())
    header, rows = core.trials_rows(study, axes)
    lines = [','.join(header)] + [','.join(str(x) for x in r) for r in rows]
    atomic_write_text(stage / 'trials.csv', '\n'.join(lines) + '\n')
    per_sensor = dict(zip(('gps', 'imu'), split_specs(objective.gps_model,
                                                      objective.imu_model, values)))
    chosen = CHOSEN[pareto]
    write_params_file(
        stage / 'best_params.yaml',
        f'# vepd tune --model {model} --reference {reference}\n'
        f'# {chosen} of study {study_name!r}: trial {best.number}, VEPD {best_vepd:.6g} '
        f'(seed {seed}); on fresh seeds {confirm["best"].vepd:.6g}\n',
        ''.join(node_params_yaml(per_sensor[s].node, per_sensor[s].model, per_sensor[s].params)
                for s in objective.tuned),
    )
    done = core.completed(study)
    front = None
    if pareto:
        front = [{'number': t.number, 'W1': t.values[0], 'W2': t.values[1],
                  'VEPD': core.trial_vepd(t), 'params': core.model_params(model, axes, t.params)}
                 for t in core.pareto_front(study)]
    result = TuneResult(
        model=model, gps_model=objective.gps_model, imu_model=objective.imu_model,
        tuned=tuple(objective.tuned), reference=reference, study_name=study_name,
        storage=storage_shown, axes=tuple(axes), workers=workers,
        trials_complete=len(done), trials_this_process=n_here,
        trials_this_run=len(done) - n_before,
        trials_per_minute=(len(done) - n_before) / wall * 60.0,
        study_path_share=in_study_path / wall,
        best=BestTrial(best.number, best_vepd, values, best.user_attrs.get('W1'),
                       best.user_attrs.get('W2'), chosen, core.on_range_edge(axes, best.params),
                       best.user_attrs.get('warnings', [])),
        trials_with_warnings=sum(bool(t.user_attrs.get('warnings')) for t in done),
        start_params=start_params, confirmation_seed=fresh, confirmation=confirm,
        structure=structure, pareto=pareto, trials_requested=trials, ekf_config=ekf_config,
        pareto_front=front,
    )
    atomic_write_text(stage / 'result.json',
                      json.dumps(result.to_json(), indent=1, allow_nan=False) + '\n')
    return result
