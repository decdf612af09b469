# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Fit a sensor model's parameters by minimising VEPD against reference runs (``vepd tune``).

The objective of a trial is the VEPD (W1 + W2) / 2 of MODEL with the trial's parameters against
the reference runs, computed by the offline study's own path (``pipelines.study``: truth → model
→ judge → runs → ``EvaluatorCore``), in memory: no run files are written per trial.

Common random numbers: the truth trajectories and the noise seeds depend only on the study seed,
the scenario, the run and the label (``seeding.derive_seed``); every trial uses the one label
``TUNED_LABEL``, so the objective is a deterministic function of the parameters (same parameters,
same bits).

The model (``resolve_model``): a GPS model (the IMU model fixed, the same on both sides), an IMU
model (the GPS model fixed) or a pair ``GPS,IMU`` whose parameters are tuned together.

Parameter specs (``parse_param_specs``): ``NAME[=LOW:HIGH[:log]]`` joined by commas. The names,
types and bounds are the models' ``Param`` declarations (``models.gps.gps_model_params``,
``models.imu.imu_model_params``: the one place; no name is declared by both a GPS and an IMU
model, so a name says its sensor); only real-valued parameters (a float or a 3-vector of floats)
can be tuned. A 3-vector
given by its name alone is tuned as one value for every axis; ``name[i]`` tunes component i (the
others keep the model's default). Without a range, the default range is ``[d/10, 10·d]``
log-uniform around the model's default d (the component's largest value for a vector), clipped to
the declaration's bounds (an open lower bound of 0 stays open: the low end is then d/10 > 0).

Storage: Optuna's own RDB storage (``sqlite:///FILE`` on one machine, ``postgresql://...`` for
many workers on one or many machines) with a heartbeat, so a trial whose worker was killed is
marked FAIL when any worker next looks, and ``tune`` with the same study name resumes: trials
already COMPLETE count towards the total, none is run twice. ``workers`` > 1 forks that many
processes on the one study (Optuna's storage is the only thing they share: no queue of our own).

Pareto (``pareto=True``): W1 and W2 are two objectives (Optuna's multi-objective study); the
chosen point is the front's point with the least VEPD (``best_finite``).
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
from vepd_ros import interrupts
from vepd_ros.models import DEFAULT_IMU_MODEL
from vepd_ros.models.spec import split_specs
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
    sensor: str = 'gps'  # whose declaration: 'gps' or 'imu'

    @property
    def name(self) -> str:
        """Return the Optuna parameter name: the parameter, or the parameter and ``[i]``."""
        return self.param if self.index is None else f'{self.param}[{self.index}]'


SENSORS = ('gps', 'imu')


def resolve_model(model: str, gps: str = 'rtk', imu: str = DEFAULT_IMU_MODEL):
    """
    Return ``(gps_model, imu_model, tuned)`` for ``--model``: a GPS model, an IMU model or a pair.

    ``GPS,IMU`` tunes both; a GPS model alone keeps the IMU model ``imu``, an IMU model alone the
    GPS model ``gps`` (fixed: the same on the reference side when it is simulated). ``tuned`` is
    the tuple of tuned sensors ('gps', 'imu'). 'none' is the GPS model none. Raises
    ParameterError naming ``--model`` and listing the models.
    """
    from vepd_ros.models.gps import GPS_MODELS, parse_gps_model
    from vepd_ros.models.imu import IMU_MODELS

    def is_gps(name: str) -> bool:  # a named model or any '+'-joined combination of tokens
        try:
            parse_gps_model(name)
        except ParameterError:
            return False
        return True

    parts = [x.strip() for x in str(model).split(',')]
    if len(parts) == 2 and is_gps(parts[0]) and parts[1] in IMU_MODELS:
        return parts[0], parts[1], SENSORS
    if len(parts) == 1 and is_gps(parts[0]):
        return parts[0], imu, ('gps',)
    if len(parts) == 1 and parts[0] in IMU_MODELS:
        return gps, parts[0], ('imu',)
    raise ParameterError('--model', model, 'a GPS model (' + ', '.join(GPS_MODELS)
                         + "; or '+'-joined tokens), an IMU model (" + ', '.join(IMU_MODELS)
                         + ') or a pair GPS,IMU')


def declarations(model: str) -> dict:
    """Return the real-valued parameters of ``--model``'s tuned sensors: name → (sensor, Param)."""
    from vepd_ros.models.gps import gps_model_params
    from vepd_ros.models.imu import imu_model_params

    gps, imu, tuned = resolve_model(model)
    out = {}
    for sensor, specs in (('gps', gps_model_params(gps) if 'gps' in tuned else []),
                          ('imu', imu_model_params(imu) if 'imu' in tuned else [])):
        out.update((name, (sensor, p)) for name, p in _tunable(specs).items())
    return out


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
    Parse ``NAME[=LOW:HIGH[:log]],...`` for ``model`` (``resolve_model``) into TuneAxis entries.

    Raises ParameterError (naming the spec and listing the tunable parameters) for an unknown
    name, a component out of range, a malformed or empty range, or a range outside the
    declaration's bounds.
    """
    tunable = declarations(model)
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
        sensor, p = tunable[name]
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
        axis = TuneAxis(name, index, low, high, log, sensor)
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


def _defaults(model: str) -> dict:
    """Return the defaults of ``model``'s tuned sensors' parameters: name → default."""
    return {name: p.default for name, (_, p) in declarations(model).items()}


def model_params(model: str, axes: Sequence[TuneAxis], values: dict) -> dict:
    """
    Return the model parameters of one trial: the defaults with the tuned values set.

    ``values``: axis name → value (Optuna's ``trial.params``); a vector tuned by its name alone
    gets the value on every axis. One flat dict for a pair too: no name is both a GPS and an IMU
    parameter (``models.spec.split_specs`` parts them).
    """
    defaults = _defaults(model)
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
    defaults = _defaults(model)
    out = {}
    for a in axes:
        d = defaults[a.param]
        if isinstance(d, (list, tuple)):
            d = d[a.index] if a.index is not None else max(d)
        out[a.name] = min(max(float(d), a.low), a.high)
    return out


class Objective:
    """
    VEPD of a sensor model against fixed reference runs, as a function of the model's parameters.

    ``model`` as ``resolve_model`` takes it (``imu_model`` / ``gps_model``: the fixed partner).
    The reference runs are read (a directory) or simulated (a GPS model name with the IMU model
    ``imu_model`` resolves to, ``reference_params`` parted by ``split_specs``) once; their E and
    S are computed once. Each call simulates and judges ``runs`` runs per scenario of the model
    under ``TUNED_LABEL`` (common random numbers) in this process and returns the combined VEPD
    (``EvaluatorCore``; NaN when it cannot be scored). ``ekf_yaml``: the judge's
    robot_localization ekf YAML for both sides (None: config/ekf.yaml, whose gates keep the IMU
    accelerations out; one that fuses them lets IMU parameters move the VEPD).
    ``known_params``: when the reference is the tuned model itself simulated (``reference`` names
    the GPS model tuned or kept), the tuned sensors' parameters it was simulated with (defaults
    and ``reference_params``): what a tune should recover; else None.
    """

    def __init__(
        self,
        model: str,
        reference: str,
        scenarios: Sequence[str],
        runs: int,
        duration_s: float,
        seed: int = 0,
        imu_model: str = DEFAULT_IMU_MODEL,
        judge: str = 'builtin',
        reference_params: dict | None = None,
        velocity: str = 'speed',
        gps_model: str = 'rtk',
        ekf_yaml=None,
    ):
        from vepd_ros.judge.registry import get_judge
        from vepd_ros.metrics.evaluator import EvaluatorCore, REFERENCE
        from vepd_ros.models.gps import GPS_MODELS
        from vepd_ros.models.spec import sensor_spec
        from vepd_ros.pipelines import study
        from vepd_ros.truth import canonical_scenario

        if not 2 <= runs <= study.MAX_RUNS:
            raise ValueError(f'runs must be within 2..{study.MAX_RUNS}, got {runs}')
        if not duration_s >= study.MIN_DURATION_S:
            raise ValueError(
                f'duration must be at least {study.MIN_DURATION_S:g} s per run, got {duration_s!r}'
            )
        self.gps_model, self.imu_model, self.tuned = resolve_model(model, gps_model, imu_model)
        get_judge(judge)
        sensor_spec('gps', model=self.gps_model).make_model(0)
        sensor_spec('imu', model=self.imu_model).make_model(0)
        self.model, self.judge = model, judge
        self.known_params = None  # real runs, or another model: no parameters to recover
        self.ekf_yaml = None if ekf_yaml is None else str(ekf_yaml)
        if self.ekf_yaml is not None:  # a bad file: the clear error before any trial runs
            from vepd_ros.params_file import node_section

            node_section(self.ekf_yaml, 'ekf_filter_node')
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
            ref_gps, ref_imu = split_specs(reference, self.imu_model, reference_params,
                                           source='the reference')
            ref_gps.make_model(0)
            ref_imu.make_model(0)
            self._add_simulated(self._ref, REFERENCE, seed, ref_gps, ref_imu)
            if reference == self.gps_model:  # the tuned model itself, at known parameters
                self.known_params = {**_defaults(model), **(reference_params or {})}
        else:
            raise ValueError(
                f'--reference {reference!r}: neither a directory of real runs nor a GPS model '
                f'({", ".join(GPS_MODELS)})'
            )
        if not self._ref.counts().get(REFERENCE):
            raise ValueError(f'--reference {reference!r}: no reference runs found')
        self.reference = str(reference)
        self.sim_seconds = 0.0  # time spent in the study path (simulate, judge, metrics)

    def _add_simulated(self, core, label, seed, gps, imu) -> None:
        """Simulate and judge ``runs`` runs per scenario of ``label`` and add them to ``core``."""
        from vepd_ros.pipelines import study

        specs = [(label, gps, sc, j) for sc in self.scenarios
                 for j in range(1, self.runs + 1)]
        recs = [r for chunk in study.simulate_and_judge(
            specs, imu, self.duration_s, seed, judge=self.judge, ekf_yaml=self.ekf_yaml,
            workers=1)
            for r in chunk]
        for sc in self.scenarios:
            core.add_records(label, sc, sorted(
                (r for r in recs if r.meta['scenario'] == sc), key=lambda r: r.meta['j']))

    def evaluate(self, params: dict, n_boot: int = 0, seed: int | None = None) -> dict:
        """Return the evaluator's entry for the model with ``params`` (VEPD, W1, W2, ci95)."""
        from vepd_ros.metrics.evaluator import EvaluatorCore, REFERENCE

        t0 = time.perf_counter()
        seed = self.seed if seed is None else seed
        gps, imu = split_specs(self.gps_model, self.imu_model, params, source='a trial')
        core = EvaluatorCore(k=self.runs, velocity=self.velocity, n_boot=n_boot, seed=seed)
        for sc in self._ref.counts().get(REFERENCE, {}):
            E, S, names = self._ref.values(REFERENCE, sc)
            core.add_values(REFERENCE, sc, E, S, names)
        core.add_model(TUNED_LABEL)
        self._add_simulated(core, TUNED_LABEL, seed, gps, imu)
        res = core.result()
        entry = dict(res['models'][TUNED_LABEL])
        entry['warnings'] = list(res['warnings'])  # short batches, excluded runs: flagged
        self.sim_seconds += time.perf_counter() - t0
        return entry

    def reference_floor(self) -> float | None:
        """
        Return the VEPD two batches of the reference itself differ by, scaled to K runs.

        The reference's runs of each scenario are split in two halves (odd and even positions)
        and scored against each other (``EvaluatorCore``, no bootstrap). A Wasserstein distance
        between two samples of one distribution shrinks as sqrt(1/n1 + 1/n2): halves of K/2 runs
        are sqrt(2) further apart than two batches of K, so the halves' VEPD is divided by
        sqrt(2). None when a scenario has fewer than 4 reference runs (halves of 2 at least).
        """
        from vepd_ros.metrics.evaluator import EvaluatorCore, REFERENCE

        core = EvaluatorCore(k=None, velocity=self.velocity, n_boot=0, seed=self.seed)
        for sc in self._ref.counts().get(REFERENCE, {}):
            E, S, names = self._ref.values(REFERENCE, sc)
            if E.size < 4:
                return None
            core.add_values(REFERENCE, sc, E[0::2], S[0::2], names[0::2])
            core.add_values('half', sc, E[1::2], S[1::2], names[1::2])
        v = core.result()['models']['half']['VEPD']
        return None if v is None else float(v) / math.sqrt(2.0)

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
    # an in-memory SQLite database lives in one connection: the heartbeat thread's own connection
    # would see an empty database (tracebacks from the thread); no other worker can share it, so
    # there is no trial of a dead worker to find
    memory = (url.rstrip('/') in ('sqlite:', 'sqlite:/') or ':memory:' in url
              or 'mode=memory' in url)
    beat = {} if memory else {'heartbeat_interval': HEARTBEAT_INTERVAL_S,
                              'grace_period': 2 * HEARTBEAT_INTERVAL_S}
    try:
        with warnings.catch_warnings():  # the heartbeat is 'experimental' in Optuna 5 (a warning)
            warnings.simplefilter('ignore', optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(url, **beat)
    except (ImportError, sqlalchemy.exc.SQLAlchemyError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            f'--storage {redact_url(url)}: cannot open the study storage ({first}); expected a '
            'SQLite file, sqlite:///PATH or postgresql://USER@HOST[:PORT]/DB'
        ) from None


def redact_url(url: str) -> str:
    """Return a storage URL without its password (``user:secret@host`` → ``user:***@host``)."""
    return re.sub(r'(://[^:/@]*):[^@/]*@', r'\1:***@', str(url))


def make_sampler(name: str, seed: int, parallel: bool = False):
    """
    Return a seeded Optuna sampler by name: ``tpe`` (default) or ``cmaes``.

    ``parallel``: several workers share the study; TPE then treats the trials running elsewhere
    as bad (``constant_liar``) so the workers do not all propose the same point.
    """
    import optuna

    if name == 'tpe':
        if parallel:
            with warnings.catch_warnings():  # 'experimental' in Optuna 5 (a warning)
                warnings.simplefilter('ignore', optuna.exceptions.ExperimentalWarning)
                return optuna.samplers.TPESampler(seed=seed, constant_liar=True)
        return optuna.samplers.TPESampler(seed=seed)
    if name == 'cmaes':
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    raise ValueError(f'unknown sampler {name!r}: expected one of {", ".join(SAMPLERS)}')


def completed(study) -> list:
    """Return the COMPLETE trials of an Optuna study, by number."""
    from optuna.trial import TrialState

    return sorted(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)),
                  key=lambda t: t.number)


def check_sampler(sampler: str, pareto: bool) -> None:
    """Refuse a sampler that cannot run the study's objectives, or cannot run here (ValueError)."""
    if pareto and sampler == 'cmaes':
        raise ValueError('--pareto: CMA-ES optimises one objective; use --sampler tpe')
    if sampler == 'cmaes':
        try:  # Optuna imports it only once the sampler samples: say so before anything is written
            import cmaes  # noqa: F401
        except ImportError:
            raise ValueError(
                '--sampler cmaes needs the cmaes package: pip install -r requirements-pip-only.txt'
                ' (or pip install cmaes)'
            ) from None


def open_study(storage, study_name: str, model: str, *, axes: Sequence[TuneAxis], seed: int = 0,
               sampler: str = 'tpe', pareto: bool = False, parallel: bool = False):
    """
    Create or continue the study ``study_name`` in ``storage`` (an Optuna storage or a URL).

    A new study's first trial is the model's defaults (``start_values``), the untuned start. A
    study made with (or without) ``pareto`` continued the other way is a ValueError.
    """
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    _quiet_interrupted_trials()
    if isinstance(storage, str):
        storage = make_storage(storage)
    check_sampler(sampler, pareto)
    study = optuna.create_study(
        storage=storage,
        study_name=study_name,
        directions=['minimize', 'minimize'] if pareto else ['minimize'],
        sampler=make_sampler(sampler, seed, parallel),
        load_if_exists=True,
    )
    check_study(storage, study_name, pareto)
    if not study.get_trials(deepcopy=False):
        study.enqueue_trial(start_values(model, axes))
    return study


def check_study(storage, study_name: str, pareto: bool) -> None:
    """Raise ValueError when the existing study ``study_name`` was made the other way (pareto)."""
    try:
        sid = storage.get_study_id_from_name(study_name)
    except KeyError:  # no such study yet
        return
    n = len(storage.get_study_directions(sid))
    if n != (2 if pareto else 1):
        raise ValueError(
            f'--study-name {study_name}: made {"without" if pareto else "with"} --pareto '
            f'({n} objective(s)); continue it the same way or give a new name'
        )


def _trial_function(objective, model: str, axes: Sequence[TuneAxis], pareto: bool):
    """Return Optuna's objective: the trial's parameters → VEPD, or (W1, W2) with ``pareto``."""
    worker = f'{socket.gethostname()}:{os.getpid()}'

    def run(trial):
        trial.set_user_attr('worker', worker)  # which process ran it (several share a study)
        values = {
            a.name: trial.suggest_float(a.name, a.low, a.high, log=a.log) for a in axes
        }
        with interrupts.released():  # the simulation and judging: a signal ends them at once
            entry = objective.evaluate(model_params(model, axes, values))
        for key in ('VEPD', 'W1', 'W2'):  # every figure kept, whatever is optimised
            trial.set_user_attr(key, entry[key])
        if entry['warnings']:  # a trial scored on fewer runs than planned says so in the study
            trial.set_user_attr('warnings', list(entry['warnings']))

        def num(v):
            return float('nan') if v is None else float(v)  # NaN: Optuna marks the trial FAIL
        return (num(entry['W1']), num(entry['W2'])) if pareto else num(entry['VEPD'])

    return run


class _InterruptedTrialFilter:
    """
    Drop Optuna's report of a trial ended by SIGINT/SIGTERM (its traceback and 'failed' line).

    The trial is marked FAIL and the interrupt goes on to ``vepd``'s clean end, whose one line
    says what was kept; Optuna's warning would print the traceback of the interrupt.
    """

    def __init__(self):
        self.trial = None

    def filter(self, record) -> bool:  # noqa: A003 - the logging.Filter protocol
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, KeyboardInterrupt):
            self.trial = getattr(record, 'msg', '')
            return False
        if self.trial is not None and 'failed with value None' in str(record.msg):
            self.trial = None
            return False
        return True


_FILTER = _InterruptedTrialFilter()


def _quiet_interrupted_trials() -> None:
    import logging

    log = logging.getLogger('optuna.study._optimize')
    if _FILTER not in log.filters:
        log.addFilter(_FILTER)


def _optimize(study, run, trials: int, quota: int | None = None, on_trial=None) -> None:
    """
    Run trials of ``study`` here: ``quota`` of them, or (None) until ``trials`` are COMPLETE.

    Each stop is checked after a trial (``MaxTrialsCallback`` counting COMPLETE trials), so
    without a quota a trial in flight in another worker when the total is reached may finish past
    it; with quotas summing to what is left, the workers of one ``tune`` end on the total.
    """
    from optuna.study import MaxTrialsCallback
    from optuna.trial import TrialState

    callbacks = [MaxTrialsCallback(trials, states=(TrialState.COMPLETE,))]
    if on_trial is not None:
        callbacks.append(on_trial)
    catch = (ValueError, FloatingPointError)

    # a signal waits out Optuna's bookkeeping and the trial's writes to the study (ask, the
    # heartbeat thread, suggest, tell: a signal in Thread.start can leave the heartbeat thread
    # running and the interpreter waiting for it at exit) and ends the trial's evaluation at once
    # (``_trial_function``; interrupts module doc)
    with interrupts.held():
        if quota is not None:
            if quota > 0 and len(completed(study)) < trials:
                study.optimize(run, n_trials=quota, callbacks=callbacks, catch=catch)
        elif len(completed(study)) < trials:
            study.optimize(run, callbacks=callbacks, catch=catch)


def _worker(objective, model, axes, trials, url, study_name, seed, sampler, pareto, quota):
    """
    Run one forked worker's trials on the study at ``url`` (its own connections).

    Ctrl-C reaches the whole process group: Optuna marks this worker's trial FAIL and the worker
    ends quietly (exit 130), leaving the traceback, if any, to the parent.
    """
    try:
        study = open_study(url, study_name, model, axes=axes, seed=seed, sampler=sampler,
                           pareto=pareto, parallel=True)
        _optimize(study, _trial_function(objective, model, axes, pareto), trials, quota)
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def tune(
    objective,
    model: str,
    axes: Sequence[TuneAxis],
    *,
    trials: int,
    storage,
    study_name: str,
    seed: int = 0,
    sampler: str = 'tpe',
    on_trial: Callable | None = None,
    pareto: bool = False,
    workers: int = 1,
    study=None,
):
    """
    Minimise the VEPD of ``objective`` (an ``Objective``) until the study holds ``trials``.

    ``storage``: an Optuna storage or URL (``make_storage``). The study ``study_name`` is created
    or continued (``open_study``), unless the caller opened it already with these arguments and
    passes it as ``study`` (``vepd tune`` counts the trials done before). Several processes may
    call this on one study: each stops once the total is reached (``_optimize``). ``workers`` >
    1: this process forks ``workers`` − 1 more (the objective's reference runs inherited), each
    opening the storage by its URL with its own sampler seed (``seed`` + i); the trials still to
    run are split between them (``quota``), so without failures the study ends with ``trials``
    COMPLETE exactly; a worker that dies leaves its share to the others.
    ``on_trial(study, frozen_trial)`` after each trial of this process. ``pareto``: W1 and W2 are
    the two objectives. Returns the Optuna study.
    """
    parallel = workers > 1
    url = storage if isinstance(storage, str) else getattr(storage, 'url', None)
    if study is None:
        study = open_study(storage, study_name, model, axes=axes, seed=seed, sampler=sampler,
                           pareto=pareto, parallel=parallel)
    run = _trial_function(objective, model, axes, pareto)
    left = trials - len(completed(study))
    if left <= 0:
        return study
    if not parallel:
        _optimize(study, run, trials, None, on_trial)
        return study
    if url is None:
        raise ValueError('--workers > 1 needs a storage the workers open by URL (SQLite, '
                         'PostgreSQL), not an in-memory study')
    quota = [left // workers + (i < left % workers) for i in range(workers)]
    import multiprocessing as mp

    ctx = mp.get_context('fork')  # the objective (its reference runs) is inherited, not rebuilt
    procs = [ctx.Process(target=_worker, daemon=True, name=f'tune-worker-{i}',
                         args=(objective, model, axes, trials, url, study_name, seed + i,
                               sampler, pareto, quota[i]))
             for i in range(1, workers)]
    for p in procs:
        p.start()
    try:
        _optimize(study, run, trials, quota[0], on_trial)
    finally:
        for p in procs:
            p.join()
    # a worker that died (killed, crashed) or a failed trial left trials to run: run them here
    _optimize(study, run, trials, None, on_trial)
    return study


def trial_vepd(t) -> float | None:
    """Return a trial's VEPD: its value, or (Pareto study) the VEPD recorded beside W1, W2."""
    if len(t.values or ()) == 1:
        return float(t.values[0])
    v = t.user_attrs.get('VEPD')
    return None if v is None else float(v)


def pareto_front(study) -> list:
    """Return the trials on the Pareto front of a two-objective study (W1, W2), by number."""
    if len(study.directions) < 2:
        return []
    return sorted(study.best_trials, key=lambda t: t.number)


def trials_rows(study, axes: Sequence[TuneAxis]) -> tuple[list[str], list[list]]:
    """
    Return trials.csv's header and rows.

    Columns: number, state, VEPD, each axis, seconds, warnings (their count), then W1, W2, whether
    the trial is on the Pareto front (a --pareto study; else empty) and the worker that ran it.
    """
    header = (['number', 'state', 'vepd'] + [a.name for a in axes]
              + ['duration_s', 'warnings', 'w1', 'w2', 'pareto', 'worker'])
    front = {t.number for t in pareto_front(study)}
    multi = len(study.directions) > 1

    def num(v):
        return '' if v is None else repr(float(v))

    rows = []
    for t in sorted(study.get_trials(deepcopy=False), key=lambda t: t.number):
        dur = (t.datetime_complete - t.datetime_start).total_seconds() if (
            t.datetime_complete and t.datetime_start) else ''
        vepd = trial_vepd(t) if t.state.name == 'COMPLETE' else None
        rows.append([t.number, t.state.name, num(vepd)]
                    + [repr(float(t.params[a.name])) if a.name in t.params else ''
                       for a in axes] + [dur if dur == '' else f'{dur:.3f}',
                                         len(t.user_attrs.get('warnings', [])),
                                         num(t.user_attrs.get('W1')), num(t.user_attrs.get('W2')),
                                         int(t.number in front) if multi else '',
                                         t.user_attrs.get('worker', '')])
    return header, rows


def best_finite(study):
    """
    Return the COMPLETE trial with the lowest finite VEPD, or None.

    In a Pareto study: the point of the front (W1, W2) with the least VEPD.
    """
    pool = pareto_front(study) if len(study.directions) > 1 else completed(study)
    done = [t for t in pool if trial_vepd(t) is not None and np.isfinite(trial_vepd(t))]
    return min(done, key=lambda t: (trial_vepd(t), t.number)) if done else None


def on_range_edge(axes, values) -> list[str]:
    """Return the axes whose best value lies within 1 % of its range's end (on a log scale)."""
    out = []
    for a in axes:
        v = values[a.name]
        lo, hi, x = (
            (math.log(a.low), math.log(a.high), math.log(v)) if a.log else (a.low, a.high, v)
        )
        if min(x - lo, hi - x) <= 0.01 * (hi - lo):
            out.append(a.name)
    return out


def structure_verdict(confirm_best: dict, floor) -> dict:
    """
    Return the verdict on the model's structure: the tuned VEPD against the reference's spread.

    ``confirm_best``: the evaluator's entry of the tuned point on fresh seeds (its ``ci95``);
    ``floor`` (``Objective.reference_floor``): what two batches of the reference itself differ
    by. A tuned VEPD whose bootstrap interval lies wholly above it is a difference the
    parameters could not remove.
    """
    ci = confirm_best['ci95']
    above = floor is not None and ci is not None and ci[0] > floor
    if floor is None or ci is None:
        text = ('no verdict: the reference has fewer than 4 runs of a scenario (its own spread '
                'cannot be measured)')
    elif above:
        text = (f'the tuned VEPD on fresh seeds, interval [{ci[0]:.4g}, {ci[1]:.4g}], lies above '
                f"the reference's own spread ({floor:.4g}: two batches of it differ that much): "
                'no parameters of this model close the gap; its structure differs from the '
                'reference (unless a best value sits on the edge of its range)')
    else:
        text = (f'the tuned VEPD on fresh seeds, interval [{ci[0]:.4g}, {ci[1]:.4g}], reaches '
                f"the reference's own spread ({floor:.4g}): within what two batches of the "
                'reference differ by')
    return {'reference_floor': floor, 'above_floor': bool(above), 'text': text}
