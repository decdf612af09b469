# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Fit a GPS model's parameters by minimising VEPD against reference runs (``vepd tune``).

The objective of a trial is the VEPD (W1 + W2) / 2 of MODEL with the trial's parameters against
the reference runs, computed by the offline study's own path (``pipelines.study``: truth → model
→ judge → runs → ``EvaluatorCore``), in memory: no run files are written per trial.

Common random numbers: the truth trajectories and the noise seeds depend only on the study seed,
the scenario, the run and the label (``seeding.derive_seed``); every trial uses the one label
``TUNED_LABEL``, so the objective is a deterministic function of the parameters (same parameters,
same bits).

Parameter specs (``parse_param_specs``): ``NAME[=LOW:HIGH[:log]]`` joined by commas. The names,
types and bounds are the model's ``Param`` declarations (``models.gps.gps_model_params``, the one
place); only real-valued parameters (a float or a 3-vector of floats) can be tuned. A 3-vector
given by its name alone is tuned as one value for every axis; ``name[i]`` tunes component i (the
others keep the model's default). Without a range, the default range is ``[d/10, 10·d]``
log-uniform around the model's default d (the component's largest value for a vector), clipped to
the declaration's bounds (an open lower bound of 0 stays open: the low end is then d/10 > 0).

Storage: Optuna's own RDB storage (``sqlite:///FILE`` on one machine, ``postgresql://...`` for
many workers on one or many machines) with a heartbeat, so a trial whose worker was killed is
marked FAIL when any worker next looks, and ``tune`` with the same study name resumes: trials
already COMPLETE count towards the total, none is run twice. Limits: GPS model parameters only
(the IMU model is fixed; the reference side shares it).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import os
import re
import socket
import time
from typing import Callable, Sequence
import warnings

import numpy as np
from vepd_ros.params import ParameterError

TUNED_LABEL = 'tuned'
"""The one model label every trial simulates under: the same noise seeds for every trial."""

HEARTBEAT_INTERVAL_S = 2
"""How often a running trial records that its worker is alive (Optuna's RDB heartbeat); a trial
silent for twice this is FAILed by the next worker that looks (``grace_period``)."""

DEFAULT_RANGE_FACTOR = 10.0
"""Default range of a parameter without LOW:HIGH: [d / factor, d · factor], log-uniform."""

SAMPLERS = ('tpe', 'cmaes')


@dataclass(frozen=True)
class TuneAxis:
    """One tuned value: a model parameter (one component of it, or all its axes) and its range."""

    param: str
    index: int | None  # component of a 3-vector; None: a scalar, or every axis of a vector
    low: float
    high: float
    log: bool

    @property
    def name(self) -> str:
        """Return the Optuna parameter name: the parameter, or the parameter and ``[i]``."""
        return self.param if self.index is None else f'{self.param}[{self.index}]'


def _tunable(specs) -> dict:
    """Return the real-valued parameters of a model: name → Param (floats and float 3-vectors)."""
    out = {}
    for p in specs:
        d = p.default
        if isinstance(d, float) and p.choices is None:
            out[p.name] = p
        elif (
            isinstance(d, (list, tuple))
            and len(d) == 3
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in d)
        ):
            out[p.name] = p
    return out


_SPEC = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[\s*(\d+)\s*\])?\s*(?:=(.*))?$')


def parse_param_specs(text: str, model: str) -> list[TuneAxis]:
    """
    Parse ``NAME[=LOW:HIGH[:log]],...`` for GPS model ``model`` into TuneAxis entries.

    Raises ParameterError (naming the spec and listing the tunable parameters) for an unknown
    name, a component out of range, a malformed or empty range, or a range outside the
    declaration's bounds.
    """
    from vepd_ros.models.gps import gps_model_params

    tunable = _tunable(gps_model_params(model))
    valid = 'one of ' + ', '.join(sorted(tunable)) + f' (the real-valued parameters of {model})'
    axes: list[TuneAxis] = []
    items = [s for s in str(text).split(',') if s.strip()]
    if not items:
        raise ParameterError('--params', text, 'at least one NAME[=LOW:HIGH[:log]]; ' + valid)
    for item in items:
        m = _SPEC.match(item)
        if not m:
            raise ParameterError('--params', item, 'NAME[=LOW:HIGH[:log]] with NAME ' + valid)
        name, idx, rng = m.group(1), m.group(2), m.group(3)
        if name not in tunable:
            raise ParameterError('--params', name, valid)
        p = tunable[name]
        vector = isinstance(p.default, (list, tuple))
        index = None if idx is None else int(idx)
        if index is not None and (not vector or index > 2):
            raise ParameterError(
                '--params', item, f'{name}[i] only for a 3-vector parameter, i in 0..2'
            )
        d = p.default if not vector else (
            p.default[index] if index is not None else max(p.default)
        )
        d = float(d)
        if rng is None:
            low, high, log = _default_range(p, d, item)
        else:
            low, high, log = _parse_range(rng, item)
        _check_bounds(p, low, high, item)
        axis = TuneAxis(name, index, low, high, log)
        if any(a.name == axis.name or (a.param == name and (a.index is None) != (index is None))
               for a in axes):
            raise ParameterError('--params', item, f'{name} given once (whole or by component)')
        axes.append(axis)
    return axes


def _default_range(p, d: float, item: str) -> tuple[float, float, bool]:
    """Return ``[d/10, 10·d]`` log-uniform clipped to the declared bounds (module doc)."""
    if not d > 0:
        raise ParameterError(
            '--params', item, f'an explicit LOW:HIGH: the default of {p.name} is {d:g}, '
            'so no default range scales from it'
        )
    low, high = d / DEFAULT_RANGE_FACTOR, d * DEFAULT_RANGE_FACTOR
    if p.low is not None:
        low = max(low, float(p.low))
    if p.high is not None:
        high = min(high, float(p.high))
    return low, high, True


def _parse_range(rng: str, item: str) -> tuple[float, float, bool]:
    parts = [s.strip() for s in rng.split(':')]
    log = len(parts) == 3 and parts[2] == 'log'
    if len(parts) not in (2, 3) or (len(parts) == 3 and not log):
        raise ParameterError('--params', item, 'a range LOW:HIGH or LOW:HIGH:log')
    try:
        low, high = float(parts[0]), float(parts[1])
    except ValueError:
        raise ParameterError('--params', item, 'numbers LOW:HIGH[:log]') from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ParameterError('--params', item, 'a non-empty range: finite LOW < HIGH')
    if log and not low > 0:
        raise ParameterError('--params', item, 'LOW > 0 for a log range')
    return low, high, log


def _check_bounds(p, low: float, high: float, item: str) -> None:
    lo_bad = p.low is not None and (low <= p.low if p.low_open else low < p.low)
    hi_bad = p.high is not None and high > p.high
    if lo_bad or hi_bad:
        raise ParameterError('--params', item, f'a range within {p.name}: {p.expected()}')


def model_params(model: str, axes: Sequence[TuneAxis], values: dict) -> dict:
    """
    Return the GPS model parameters of one trial: the model's defaults with the tuned values set.

    ``values``: axis name → value (Optuna's ``trial.params``); a vector tuned by its name alone
    gets the value on every axis.
    """
    from vepd_ros.models.gps import gps_model_params

    defaults = {p.name: p.default for p in gps_model_params(model)}
    out: dict = {}
    for a in axes:
        v = float(values[a.name])
        d = defaults[a.param]
        if isinstance(d, (list, tuple)):
            vec = list(out.get(a.param, [float(x) for x in d]))
            if a.index is None:
                vec = [v, v, v]
            else:
                vec[a.index] = v
            out[a.param] = vec
        else:
            out[a.param] = v
    return out


def start_values(model: str, axes: Sequence[TuneAxis]) -> dict:
    """Return the model's defaults as axis values (clipped into range): the untuned start."""
    from vepd_ros.models.gps import gps_model_params

    defaults = {p.name: p.default for p in gps_model_params(model)}
    out = {}
    for a in axes:
        d = defaults[a.param]
        if isinstance(d, (list, tuple)):
            d = d[a.index] if a.index is not None else max(d)
        out[a.name] = min(max(float(d), a.low), a.high)
    return out


class Objective:
    """
    VEPD of a GPS model against fixed reference runs, as a function of the model's parameters.

    The reference runs are read (a directory) or simulated (a GPS model name, with
    ``reference_params``) once; their E and S are computed once. Each call simulates and judges
    ``runs`` runs per scenario of ``model`` under ``TUNED_LABEL`` (common random numbers) in this
    process and returns the combined VEPD (``EvaluatorCore``; NaN when it cannot be scored).
    """

    def __init__(
        self,
        model: str,
        reference: str,
        scenarios: Sequence[str],
        runs: int,
        duration_s: float,
        seed: int = 0,
        imu_model: str = 'ch_drift_paper',
        judge: str = 'builtin',
        reference_params: dict | None = None,
        velocity: str = 'speed',
    ):
        from vepd_ros.judge.registry import get_judge
        from vepd_ros.metrics.evaluator import EvaluatorCore, REFERENCE
        from vepd_ros.models.gps import GPS_MODELS, make_gps_model
        from vepd_ros.models.imu import make_imu_model
        from vepd_ros.pipelines import study
        from vepd_ros.truth import canonical_scenario

        if not 2 <= runs <= study.MAX_RUNS:
            raise ValueError(f'runs must be within 2..{study.MAX_RUNS}, got {runs}')
        if not duration_s >= study.MIN_DURATION_S:
            raise ValueError(
                f'duration must be at least {study.MIN_DURATION_S:g} s per run, got {duration_s!r}'
            )
        if model not in GPS_MODELS:
            raise ValueError(
                f'unknown GPS model {model!r}: expected one of {", ".join(GPS_MODELS)}'
            )
        get_judge(judge)
        make_gps_model(model, 0)
        make_imu_model(imu_model, 0)
        self.model, self.imu_model, self.judge = model, imu_model, judge
        self.runs, self.duration_s, self.seed, self.velocity = runs, duration_s, seed, velocity
        self.scenarios = [canonical_scenario(s) for s in scenarios]
        self._ref = EvaluatorCore(k=runs, velocity=velocity, n_boot=0, seed=seed)
        ref_dir = study.reference_dir(reference)
        if ref_dir is not None:
            from vepd_ros.runs.format import read_run
            from vepd_ros.runs.layout import scan_batch_dir

            batch, warns = scan_batch_dir(ref_dir, REFERENCE, 'Real')
            self._ref.warnings += warns
            runs_of = {canonical_scenario(sc): lst for sc, lst in batch.runs.items()}
            missing = [sc for sc in self.scenarios if sc not in runs_of]
            if missing:
                raise ValueError(
                    f'--reference {reference}: no runs of scenario(s) {", ".join(missing)}; '
                    f'it has {", ".join(sorted(runs_of)) or "none"} (--scenarios)'
                )
            for sc in self.scenarios:  # the reference's other scenarios are not compared
                self._ref.add_records(REFERENCE, sc, [read_run(p) for _, p in runs_of[sc]])
        elif reference in GPS_MODELS:
            make_gps_model(reference, 0, **(reference_params or {}))
            specs = [(REFERENCE, reference, sc, j) for sc in self.scenarios
                     for j in range(1, runs + 1)]
            recs = [r for chunk in study.simulate_and_judge(
                specs, imu_model, duration_s, seed, judge=judge, workers=1,
                label_params={REFERENCE: dict(reference_params or {})}) for r in chunk]
            for sc in self.scenarios:
                self._ref.add_records(
                    REFERENCE, sc, sorted((r for r in recs if r.meta['scenario'] == sc),
                                          key=lambda r: r.meta['j']))
        else:
            raise ValueError(
                f'--reference {reference!r}: neither a directory of real runs nor a GPS model '
                f'({", ".join(GPS_MODELS)})'
            )
        if not self._ref.counts().get(REFERENCE):
            raise ValueError(f'--reference {reference!r}: no reference runs found')
        self.reference = str(reference)
        self.sim_seconds = 0.0  # time spent in the study path (simulate, judge, metrics)
        self.last_warnings: list[str] = []  # the evaluator's warnings on the last call

    def evaluate(self, params: dict, n_boot: int = 0, seed: int | None = None) -> dict:
        """Return the evaluator's entry for the model with ``params`` (VEPD, W1, W2, ci95)."""
        from vepd_ros.metrics.evaluator import EvaluatorCore, REFERENCE
        from vepd_ros.pipelines import study

        t0 = time.perf_counter()
        seed = self.seed if seed is None else seed
        specs = [(TUNED_LABEL, self.model, sc, j) for sc in self.scenarios
                 for j in range(1, self.runs + 1)]
        recs = [r for chunk in study.simulate_and_judge(
            specs, self.imu_model, self.duration_s, seed, judge=self.judge, workers=1,
            label_params={TUNED_LABEL: dict(params)}) for r in chunk]
        core = EvaluatorCore(k=self.runs, velocity=self.velocity, n_boot=n_boot, seed=seed)
        for sc in self._ref.counts().get(REFERENCE, {}):
            E, S, names = self._ref.values(REFERENCE, sc)
            core.add_values(REFERENCE, sc, E, S, names)
        core.add_model(TUNED_LABEL)
        for sc in self.scenarios:
            core.add_records(TUNED_LABEL, sc, sorted(
                (r for r in recs if r.meta['scenario'] == sc), key=lambda r: r.meta['j']))
        res = core.result()
        entry = dict(res['models'][TUNED_LABEL])
        entry['warnings'] = list(res['warnings'])  # short batches, excluded runs: flagged
        self.last_warnings = entry['warnings']
        self.sim_seconds += time.perf_counter() - t0
        return entry

    def __call__(self, params: dict) -> float:
        """Return the combined VEPD of the model with ``params`` (NaN: not scored)."""
        v = self.evaluate(params)['VEPD']
        return float('nan') if v is None else float(v)


def make_storage(url: str):
    """
    Return Optuna's RDB storage for ``url`` with the heartbeat on (module doc).

    A plain path is a SQLite file (``sqlite:///PATH``); ``sqlite:///``, ``postgresql://``,
    ``mysql://`` URLs are passed to SQLAlchemy as they are.
    """
    import optuna
    import sqlalchemy

    url = str(url)
    if '://' not in url:
        from pathlib import Path

        url = 'sqlite:///' + str(Path(url).resolve())
    try:
        with warnings.catch_warnings():  # the heartbeat is 'experimental' in Optuna 5 (a warning)
            warnings.simplefilter('ignore', optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(
                url,
                heartbeat_interval=HEARTBEAT_INTERVAL_S,
                grace_period=2 * HEARTBEAT_INTERVAL_S,
            )
    except (ImportError, sqlalchemy.exc.SQLAlchemyError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            f'--storage {redact_url(url)}: cannot open the study storage ({first}); expected a '
            'SQLite file, sqlite:///PATH or postgresql://USER@HOST[:PORT]/DB'
        ) from None


def redact_url(url: str) -> str:
    """Return a storage URL without its password (``user:secret@host`` → ``user:***@host``)."""
    return re.sub(r'(://[^:/@]*):[^@/]*@', r'\1:***@', str(url))


def make_sampler(name: str, seed: int):
    """Return a seeded Optuna sampler by name: ``tpe`` (default) or ``cmaes``."""
    import optuna

    if name == 'tpe':
        return optuna.samplers.TPESampler(seed=seed)
    if name == 'cmaes':
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    raise ValueError(f'unknown sampler {name!r}: expected one of {", ".join(SAMPLERS)}')


def completed(study) -> list:
    """Return the COMPLETE trials of an Optuna study, by number."""
    from optuna.trial import TrialState

    return sorted(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)),
                  key=lambda t: t.number)


def tune(
    objective: Callable[[dict], float],
    model: str,
    axes: Sequence[TuneAxis],
    trials: int,
    storage,
    study_name: str,
    seed: int = 0,
    sampler: str = 'tpe',
    on_trial: Callable | None = None,
):
    """
    Minimise ``objective(model_params(...))`` until the study holds ``trials`` COMPLETE trials.

    ``storage``: an Optuna storage or URL (``make_storage``). The study ``study_name`` is created
    or continued (``load_if_exists``); a new study's first trial is the model's defaults
    (``start_values``), the untuned start. Several processes may call this on one study: each
    stops once the total is reached (``MaxTrialsCallback`` counting COMPLETE trials; a trial in
    flight elsewhere may finish past it). ``on_trial(study, frozen_trial)`` after each trial.
    Returns the Optuna study.
    """
    import optuna
    from optuna.study import MaxTrialsCallback
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if isinstance(storage, str):
        storage = make_storage(storage)
    study = optuna.create_study(
        storage=storage,
        study_name=study_name,
        direction='minimize',
        sampler=make_sampler(sampler, seed),
        load_if_exists=True,
    )
    if not study.get_trials(deepcopy=False):
        study.enqueue_trial(start_values(model, axes))

    worker = f'{socket.gethostname()}:{os.getpid()}'

    def run(trial) -> float:
        trial.set_user_attr('worker', worker)  # which process ran it (several share a study)
        values = {
            a.name: trial.suggest_float(a.name, a.low, a.high, log=a.log) for a in axes
        }
        value = objective(model_params(model, axes, values))
        warned = getattr(objective, 'last_warnings', None)
        if warned:  # a trial scored on fewer runs than planned says so in the study
            trial.set_user_attr('warnings', list(warned))
        return value

    callbacks = [MaxTrialsCallback(trials, states=(TrialState.COMPLETE,))]
    if on_trial is not None:
        callbacks.append(on_trial)
    if len(completed(study)) < trials:
        study.optimize(run, callbacks=callbacks, catch=(ValueError, FloatingPointError))
    return study


def trials_rows(study, axes: Sequence[TuneAxis]) -> tuple[list[str], list[list]]:
    """Return trials.csv's header and rows: number, state, VEPD, each axis, seconds, warnings."""
    header = ['number', 'state', 'vepd'] + [a.name for a in axes] + ['duration_s', 'warnings']
    rows = []
    for t in sorted(study.get_trials(deepcopy=False), key=lambda t: t.number):
        dur = (t.datetime_complete - t.datetime_start).total_seconds() if (
            t.datetime_complete and t.datetime_start) else ''
        rows.append([t.number, t.state.name, '' if t.value is None else repr(float(t.value))]
                    + [repr(float(t.params[a.name])) if a.name in t.params else ''
                       for a in axes] + [dur if dur == '' else f'{dur:.3f}',
                                         len(t.user_attrs.get('warnings', []))])
    return header, rows


def best_finite(study):
    """Return the COMPLETE trial with the lowest finite VEPD, or None."""
    done = [t for t in completed(study) if t.value is not None and np.isfinite(t.value)]
    return min(done, key=lambda t: (t.value, t.number)) if done else None
