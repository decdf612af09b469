# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Write the report page of a ``vepd tune`` output: convergence, importance, landscape, confirmation.

    write_tune_report(tune_dir, out_dir=None, *, objective=None) -> Path of report.html

The page reads TUNE_DIR/result.json and TUNE_DIR/trials.csv, what ``vepd tune`` writes, and
nothing else (not the Optuna storage: a PostgreSQL study gives the same page), so every number on
it comes from those files or from the files written beside the page (importance.csv,
landscape.csv). Markdown and HTML carry one text (``report._markdown``/``report._html``, the
study report's renderers), the figures are PNGs drawn with matplotlib's Agg backend.

- Convergence: the VEPD of every COMPLETE trial and the best so far over the trial number; FAIL,
  PRUNED and unfinished trials are marked on the axis.
- Parameter importance: Optuna's PED-ANOVA evaluator (``PedAnovaImportanceEvaluator``, Watanabe
  et al. 2023, arXiv 2304.10255: the Pearson divergence between the parameter's distribution in
  the best ``IMPORTANCE_QUANTILE`` of the trials and in all of them), run on an in-memory study
  rebuilt from trials.csv. fANOVA and mean-decrease-impurity need scikit-learn, which the suite
  does not install; PED-ANOVA needs nothing beyond Optuna.
- Landscape: VEPD over the two most important parameters around the best trial, the others held
  at the best. With ``objective`` (a callable {axis name: value} -> VEPD, the study's own
  objective on the study's seeds) a ``LANDSCAPE_POINTS`` x ``LANDSCAPE_POINTS`` grid is evaluated,
  log-spaced on a log axis, spanning ``LANDSCAPE_HALF_WIDTH`` of the range on either side of the
  best value and holding the best value itself as a node; without it, the trials' own points.
- Confirmation: result.json's fresh-seed re-check (tuned, untuned start, known parameters when
  the file has them) with the bootstrap interval, and what it means and its limits.
- A study with fewer COMPLETE trials than asked, or with failed trials, is flagged on the page.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
from typing import Callable
import warnings

import numpy as np
from vepd_ros.csvio import check_row_lengths, nonblank_rows
from vepd_ros.fileio import load_json
from vepd_ros.report import _grid, _html, _markdown
from vepd_ros.report.explain import fmt, fmt_interval
from vepd_ros.report.tables import _csv_text

RESULT_NAME = 'result.json'
TRIALS_NAME = 'trials.csv'
FIG_CONVERGENCE = 'tune_convergence.png'
FIG_IMPORTANCE = 'tune_importance.png'
FIG_LANDSCAPE = 'tune_landscape.png'
REPORT_FILES = ('report.md', 'report.html', 'importance.csv', 'landscape.csv',
                FIG_CONVERGENCE, FIG_IMPORTANCE, FIG_LANDSCAPE)
"""What the tune report writes in its folder (replaced when it is written again)."""

IMPORTANCE_QUANTILE = 0.1
"""PED-ANOVA's target quantile: importance of reaching the best 10 % of the trials."""

LANDSCAPE_POINTS = 5
"""Grid nodes per parameter of the landscape (a 1-parameter tune: 2·n - 1 nodes on its line)."""

LANDSCAPE_HALF_WIDTH = 0.25
"""Half the landscape's span per parameter, as a share of its range (of log10 range if log)."""

CONFIRMATION_LABELS = {
    'best': 'tuned (best trial)',
    'start': 'untuned start (model defaults)',
    'known': 'known parameters (the reference)',
}
"""Rows of the confirmation table, in this order; other entries follow under their own key."""

STATES_DONE = ('COMPLETE',)
STATES_LOST = ('FAIL', 'PRUNED')


@dataclass(frozen=True)
class Axis:
    """One tuned value as result.json states it: name (a trials.csv column) and range."""

    name: str
    low: float
    high: float
    log: bool


@dataclass(frozen=True)
class Trial:
    """One row of trials.csv: number, Optuna state, VEPD (None: not scored) and axis values."""

    number: int
    state: str
    vepd: float | None
    params: dict


# ------------------------------------------------------------------------------------ reading
def _field(obj, key, kinds, where: str):
    """Return ``obj[key]`` if it is one of ``kinds``; else ValueError naming file and field."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    v = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds):
        names = ' or '.join(k.__name__ for k in kinds)
        raise ValueError(f'{where}: field {key!r} missing or not {names} (a vepd tune result)')
    return v


def is_tune_dir(path) -> bool:
    """Return whether ``path`` holds a ``vepd tune`` result.json (``axes``, ``confirmation``)."""
    p = Path(path) / RESULT_NAME
    if not p.is_file():
        return False
    try:
        res = load_json(p, 'tune result')
    except ValueError:
        return False
    return isinstance(res.get('axes'), list) and isinstance(res.get('confirmation'), dict)


def read_result(tune_dir) -> tuple[dict, list[Axis]]:
    """Return result.json of a tune output and its axes; ValueError naming a missing field."""
    path = Path(tune_dir) / RESULT_NAME
    if not path.is_file():
        raise FileNotFoundError(f'{path}: no such file (expected the result.json of vepd tune)')
    res = load_json(path, 'tune result')
    where = str(path)
    _field(res, 'model', str, where)
    axes = []
    for i, a in enumerate(_field(res, 'axes', list, where)):
        at = f'{where}: axes[{i}]'
        low, high = _field(a, 'low', (int, float), at), _field(a, 'high', (int, float), at)
        try:
            low, high = float(low), float(high)
        except OverflowError:  # an integer beyond float
            raise ValueError(f'{at}: range is not a tuned range (beyond float)') from None
        axis = Axis(_field(a, 'name', str, at), low, high, _field(a, 'log', bool, at))
        if not (math.isfinite(low) and math.isfinite(high) and low < high) or (
                axis.log and not low > 0):
            raise ValueError(f'{at}: range [{low!r}, {high!r}] is not a tuned range')
        axes.append(axis)
    if not axes:
        raise ValueError(f"{where}: field 'axes' is empty (a vepd tune result tunes something)")
    _field(res, 'trials_complete', int, where)
    best = _field(res, 'best', dict, where)
    _field(best, 'number', int, f'{where}: best')
    _field(best, 'VEPD', (int, float), f'{where}: best')
    _field(best, 'params', dict, f'{where}: best')
    _field(_field(res, 'start', dict, where), 'params', dict, f'{where}: start')
    conf = _field(res, 'confirmation', dict, where)
    for key in ('best', 'start'):
        _field(conf, key, dict, f'{where}: confirmation')
    for key, c in conf.items():
        if isinstance(c, dict):
            _confirmation_entry(c, f'{where}: confirmation.{key}')
    return res, axes


def _confirmation_entry(c: dict, where: str) -> None:
    """Check one fresh-seed entry: VEPD, W1, W2 (numbers or null) and ci95 ([lo, hi] or null)."""
    for k in ('VEPD', 'W1', 'W2'):
        if k not in c or not (c[k] is None or isinstance(c[k], (int, float))):
            raise ValueError(f'{where}: field {k!r} missing or not a number or null')
    ci = c.get('ci95')
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2
                               and all(isinstance(x, (int, float)) for x in ci)):
        raise ValueError(f"{where}: field 'ci95' is not [low, high] or null")


def read_trials(tune_dir, axes: list[Axis]) -> list[Trial]:
    """Return the rows of trials.csv; ValueError naming the file, line and column of a bad cell."""
    path = Path(tune_dir) / TRIALS_NAME
    if not path.is_file():
        raise FileNotFoundError(f'{path}: no such file (expected the trials.csv of vepd tune)')
    try:
        text = path.read_text(encoding='utf-8')
    except UnicodeDecodeError as exc:
        raise ValueError(f'{path}: not UTF-8 text (byte {exc.start})') from None
    rows, line_of = nonblank_rows(text.splitlines())
    if not rows:
        raise ValueError(f'{path}: empty (expected a header number,state,vepd,... and trials)')
    check_row_lengths(path, rows, line_of)
    header = [h.strip() for h in rows[0]]
    need = ['number', 'state', 'vepd'] + [a.name for a in axes]
    missing = [n for n in need if n not in header]
    if missing:
        raise ValueError(f'{path}: no column(s) {", ".join(missing)} (result.json names them)')
    col = {n: header.index(n) for n in need}
    out = []
    for r, line in zip(rows[1:], line_of[1:]):
        def num(name, kind=float):
            cell = r[col[name]].strip()
            if cell == '':
                return None
            try:
                v = kind(cell)
            except ValueError:
                raise ValueError(f'{path}, line {line}: {name} {cell[:40]!r} is not a number') \
                    from None
            if kind is float and not math.isfinite(v):
                raise ValueError(f'{path}, line {line}: {name} {cell!r} is not finite')
            return v

        number = num('number', int)
        if number is None:
            raise ValueError(f'{path}, line {line}: no trial number')
        params = {a.name: num(a.name) for a in axes}
        out.append(Trial(number, r[col['state']].strip(), num('vepd'),
                         {k: v for k, v in params.items() if v is not None}))
    return sorted(out, key=lambda t: t.number)


def _scored(trials: list[Trial], axes: list[Axis]) -> list[Trial]:
    """Return the COMPLETE trials with a VEPD and every axis value."""
    return [t for t in trials if t.state in STATES_DONE and t.vepd is not None
            and all(a.name in t.params for a in axes)]


# ---------------------------------------------------------------------------------- importance
def param_importance(axes: list[Axis], trials: list[Trial]) -> tuple[dict, list[str]]:
    """
    Return each axis's importance (PED-ANOVA, normalised to sum 1) and how it was found.

    An in-memory Optuna study holds the scored trials with the axes' distributions; Optuna's
    ``PedAnovaImportanceEvaluator(target_quantile=IMPORTANCE_QUANTILE)`` evaluates it (module
    doc). Empty dict when it cannot be computed (fewer than 2 scored trials); one axis is 1.
    """
    import optuna
    from optuna.distributions import FloatDistribution
    from optuna.importance import get_param_importances, PedAnovaImportanceEvaluator
    from optuna.trial import create_trial

    done = _scored(trials, axes)
    n = len(done)
    if len(axes) == 1:
        return {axes[0].name: 1.0}, ['one parameter tuned: its importance is 1 by definition']
    if n < 2:
        return {}, [f'parameter importance not computed: {n} scored trial(s), at least 2 needed']
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dists = {a.name: FloatDistribution(a.low, a.high, log=a.log) for a in axes}
    study = optuna.create_study(direction='minimize')
    try:
        study.add_trials([create_trial(params=dict(t.params), distributions=dists, value=t.vepd)
                          for t in done])
    except ValueError as exc:
        raise ValueError(f'{TRIALS_NAME}: a trial lies outside the ranges of result.json '
                         f'({exc})') from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        imp = get_param_importances(
            study, evaluator=PedAnovaImportanceEvaluator(target_quantile=IMPORTANCE_QUANTILE),
            normalize=True)
    top = math.ceil(IMPORTANCE_QUANTILE * n)
    notes = [f"Optuna's PED-ANOVA evaluator (PedAnovaImportanceEvaluator, target quantile "
             f'{IMPORTANCE_QUANTILE:g}) on the {n} scored trials of trials.csv: the importance of '
             f'reaching the best {top} of them']
    if top < 5:
        notes.append(f'only {top} trial(s) in the best {IMPORTANCE_QUANTILE * 100:g} %: '
                     'Optuna advises at least 5 there, so the importances are rough')
    notes += [f'Optuna: {w.message}' for w in caught
              if 'importance' in str(w.message).lower() or 'quantile' in str(w.message).lower()]
    values = {a.name: float(imp.get(a.name, 0.0)) for a in axes}
    if not sum(values.values()) > 0:
        notes.append('no parameter stands out (every importance 0)')
    return values, notes


def ranked(axes: list[Axis], imp: dict) -> list[Axis]:
    """Return the axes by importance, most important first (ties: the order of result.json)."""
    order = {a.name: i for i, a in enumerate(axes)}
    return sorted(axes, key=lambda a: (-imp.get(a.name, 0.0), order[a.name]))


# ----------------------------------------------------------------------------------- landscape
def grid_values(axis: Axis, best: float, n: int) -> np.ndarray:
    """
    Return ``n`` grid values of ``axis`` around ``best``, the node nearest it set to ``best``.

    The span is ``LANDSCAPE_HALF_WIDTH`` of the axis range (in log10 for a log axis) on each side
    of ``best``, shifted to lie inside [low, high]; evenly spaced in that scale.
    """
    if axis.log:
        lo, hi, c = math.log10(axis.low), math.log10(axis.high), math.log10(best)
    else:
        lo, hi, c = axis.low, axis.high, best
    half = LANDSCAPE_HALF_WIDTH * (hi - lo)
    a, b = c - half, c + half
    if a < lo:
        a, b = lo, lo + 2 * half
    if b > hi:
        a, b = hi - 2 * half, hi
    t = np.linspace(a, b, n)
    v = np.clip(10.0 ** t if axis.log else t, axis.low, axis.high)
    v[int(np.argmin(np.abs(t - c)))] = best
    return v


def evaluate_landscape(objective: Callable[[dict], float], base: dict, shown: list[Axis],
                       n: int, progress: bool = False) -> tuple[list[np.ndarray], np.ndarray, int]:
    """
    Return the grid values per shown axis, VEPD on the grid (NaN: not scored) and failures.

    ``base``: every axis at the best trial's value; ``shown``: one or two axes varied over
    ``grid_values``. ``objective`` raising ValueError or FloatingPointError at a node (as a failed
    trial does) leaves NaN there and is counted.
    """
    from vepd_ros.progress import progress_bar

    values = [grid_values(a, base[a.name], n) for a in shown]
    shape = tuple(len(v) for v in values)
    z = np.full(shape, np.nan)
    failed = 0
    with progress_bar(total=z.size, desc='landscape', unit='point', quiet=not progress,
                      leave=False) as bar:
        for idx in np.ndindex(*shape):
            params = dict(base)
            params.update({a.name: float(v[i]) for a, v, i in zip(shown, values, idx)})
            try:
                r = float(objective(params))
            except (ValueError, FloatingPointError):
                r = float('nan')
            if math.isfinite(r):
                z[idx] = r
            else:
                failed += 1
            bar.update(1)
    return values, z, failed


# ------------------------------------------------------------------------------------ figures
def _axis_label(a: Axis) -> str:
    return f'{a.name}{" (log scale)" if a.log else ""}'


def _convergence_figure(trials: list[Trial], best_number: int, path: Path) -> None:
    plt, fig, (ax,) = _grid(1, panel_in=(9.0, 4.2))
    done = [t for t in trials if t.state in STATES_DONE and t.vepd is not None]
    lost = [t for t in trials if t not in done]
    x = np.array([t.number for t in done])
    y = np.array([t.vepd for t in done])
    if done:
        ax.plot(x, y, 'o', ms=4, color='C0', alpha=0.7, label=f'VEPD of a trial ({len(done)})')
        ax.step(x, np.minimum.accumulate(y), where='post', color='C1', lw=1.6,
                label='best so far')
        b = [t for t in done if t.number == best_number]
        if b:
            ax.plot([b[0].number], [b[0].vepd], '*', ms=14, color='C3',
                    label=f'best: trial {b[0].number}')
        if y.min() > 0 and y.max() / y.min() > 20:
            ax.set_yscale('log')
    if lost:
        ax.plot([t.number for t in lost], [0.02] * len(lost), 'x', ms=8, color='C3',
                transform=ax.get_xaxis_transform(), clip_on=False,
                label=f'failed, pruned or unfinished ({len(lost)})')
    ax.set_xlabel('trial number', fontsize=9)
    ax.set_ylabel('VEPD (lower is better)', fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=8, loc='upper right')  # 'best' searches the data: seconds on long runs
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _importance_figure(axes: list[Axis], imp: dict, path: Path) -> None:
    order = ranked(axes, imp)
    plt, fig, (ax,) = _grid(1, panel_in=(9.0, 0.8 + 0.45 * len(order)))
    names = [a.name for a in order][::-1]
    vals = [imp.get(n, 0.0) for n in names]
    ax.barh(names, vals, color='C0')
    for i, v in enumerate(vals):
        ax.text(v, i, f' {v:.3f}', va='center', fontsize=8)
    ax.set_xlim(0, max(1.0, max(vals) * 1.15))
    ax.set_xlabel('importance (PED-ANOVA, sums to 1)', fontsize=9)
    ax.tick_params(labelsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _landscape_figure(shown, values, z, trials, axes, best: Trial, path) -> None:
    """Draw the grid (a heat map with each node's VEPD) or the trials' points when z is None."""
    at = best.params
    plt, fig, (ax,) = _grid(1, panel_in=(8.0, 5.6 if len(shown) == 2 else 4.2))
    if z is not None and len(shown) == 2:
        im = ax.imshow(np.ma.masked_invalid(z.T), origin='lower', cmap='viridis_r',
                       aspect='auto')
        for (i, j), v in np.ndenumerate(z):
            if math.isfinite(v):  # dark cells get white text
                r, g, b, _ = im.cmap(im.norm(v))
                ink = 'w' if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else 'k'
            ax.text(i, j, f'{v:.4f}' if math.isfinite(v) else 'n/a', ha='center', va='center',
                    fontsize=8, color=ink if math.isfinite(v) else 'C3')
        for set_ticks, set_labels, v in ((ax.set_xticks, ax.set_xticklabels, values[0]),
                                         (ax.set_yticks, ax.set_yticklabels, values[1])):
            set_ticks(range(len(v)))
            set_labels([f'{x:.3g}' for x in v], fontsize=8)
        i0 = int(np.flatnonzero(values[0] == at[shown[0].name])[0])
        j0 = int(np.flatnonzero(values[1] == at[shown[1].name])[0])
        ax.add_patch(plt.Rectangle((i0 - 0.5, j0 - 0.5), 1, 1, fill=False, ec='C3', lw=2.5))
        fig.colorbar(im, ax=ax, label='VEPD')
        ax.set_xlabel(_axis_label(shown[0]), fontsize=9)
        ax.set_ylabel(_axis_label(shown[1]), fontsize=9)
    elif z is not None:
        ax.plot(values[0], z, 'o-', color='C0', label='VEPD on the grid')
        ax.plot([at[shown[0].name]], [best.vepd], '*', ms=14, color='C3', label='best trial')
        ax.set_xscale('log' if shown[0].log else 'linear')
        ax.set_xlabel(_axis_label(shown[0]), fontsize=9)
        ax.set_ylabel('VEPD', fontsize=9)
        ax.legend(fontsize=8, loc='upper right')  # 'best' searches the data: seconds on long runs
    else:
        done = _scored(trials, axes)
        if len(shown) == 2:
            x = [t.params[shown[0].name] for t in done]
            y = [t.params[shown[1].name] for t in done]
            sc = ax.scatter(x, y, c=[t.vepd for t in done], cmap='viridis_r', s=30)
            fig.colorbar(sc, ax=ax, label='VEPD')
            ax.plot([at[shown[0].name]], [at[shown[1].name]], '*', ms=16, mfc='none',
                    mec='C3', mew=2, label='best trial')
            ax.set_yscale('log' if shown[1].log else 'linear')
            ax.set_ylim(shown[1].low, shown[1].high)
            ax.set_ylabel(_axis_label(shown[1]), fontsize=9)
        else:
            ax.plot([t.params[shown[0].name] for t in done], [t.vepd for t in done], 'o',
                    color='C0', label='trials')
            ax.plot([at[shown[0].name]], [best.vepd], '*', ms=14,
                    color='C3', label='best trial')
            ax.set_ylabel('VEPD', fontsize=9)
        ax.set_xscale('log' if shown[0].log else 'linear')
        ax.set_xlim(shown[0].low, shown[0].high)
        ax.set_xlabel(_axis_label(shown[0]), fontsize=9)
        ax.legend(fontsize=8, loc='upper right')  # 'best' searches the data: seconds on long runs
    ax.tick_params(labelsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------------------- page
def _g(v) -> str:
    """Format a parameter value (a number to 6 significant digits, a vector element-wise)."""
    if isinstance(v, (list, tuple)):
        return '[' + ', '.join(_g(x) for x in v) + ']'
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f'{v:.6g}'
    return str(v)


def _ci_overlap(a, b) -> bool | None:
    """Return whether two intervals overlap (None when either is missing)."""
    if not a or not b:
        return None
    return a[0] <= b[1] and b[0] <= a[1]


def confirmation_rows(res: dict) -> list[list[str]]:
    """Return the confirmation table: header, then tuned, untuned start, known, others."""
    conf = res['confirmation']
    keys = [k for k in CONFIRMATION_LABELS if isinstance(conf.get(k), dict)]
    keys += [k for k, v in conf.items() if isinstance(v, dict) and k not in keys]
    seed = conf.get('seed')
    rows = [[f'fresh seeds{f" (seed {seed})" if seed is not None else ""}', 'VEPD',
             '95 % interval', 'W1 (m/s)', 'W2 (unitless)']]
    for k in keys:
        c = conf[k]
        label = CONFIRMATION_LABELS.get(k, k)
        if k == 'best':
            label = f'tuned (best trial {res["best"]["number"]})'
        rows.append([label, fmt(c['VEPD']), fmt_interval(c.get('ci95'), missing='—'),
                     fmt(c['W1']), fmt(c['W2'])])
    return rows


def _meaning(res: dict) -> list[str]:
    """Return what the fresh-seed check says, from result.json's numbers, and the limits."""
    conf, model = res['confirmation'], res['model']
    tuned, start, known = conf['best'], conf['start'], conf.get('known')
    out = []
    if res['best']['params'] == res['start']['params']:
        out.append('The best trial is the untuned start itself: no trial scored lower on the '
                   'tuning seeds.')
    over = _ci_overlap(tuned.get('ci95'), start.get('ci95'))
    if tuned['VEPD'] is not None and start['VEPD'] is not None:
        change = (f'On fresh seeds the tuned {model} scores VEPD {fmt(tuned["VEPD"])} against '
                  f'{fmt(start["VEPD"])} for the untuned start')
        if over is None:
            out.append(change + ' (no bootstrap interval to tell them apart).')
        elif over:
            out.append(change + ': their 95 % intervals overlap, so on seeds it was not tuned on '
                       'the tuned model is not measurably closer to the reference than the start.')
        elif tuned['ci95'][1] < start['ci95'][0]:
            out.append(change + ": the tuned interval lies below the start's, an improvement "
                       'that holds on seeds it was not tuned on.')
        else:
            out.append(change + ": the tuned interval lies above the start's — the optimum of "
                       'the tuning seeds does not carry over (too few runs per trial?).')
    if isinstance(known, dict) and known.get('VEPD') is not None and tuned['VEPD'] is not None:
        ko = _ci_overlap(tuned.get('ci95'), known.get('ci95'))
        if ko:
            out.append(f'With the known parameters it scores {fmt(known["VEPD"])}; the intervals '
                       'overlap: the tuned parameters are as close as the known ones.')
        elif ko is False and tuned['ci95'][0] > known['ci95'][1]:
            out.append(f'With the known parameters it scores {fmt(known["VEPD"])}, below the '
                       'tuned interval: the search did not converge, or VEPD does not identify '
                       'every tuned parameter.')
        else:
            out.append(f'With the known parameters it scores {fmt(known["VEPD"])}.')
    out.append(
        f'**Limits.** A model can only be as real as its structure: {fmt(tuned["VEPD"])} is the '
        f'closest {model} comes to this reference over the ranges searched. If that VEPD is still '
        'large next to the other candidate models against the same reference (`vepd study`), '
        "the model's structure — its noise law — differs from the real sensor's, and no "
        'parameter value fixes that; a better fit needs another model, not more trials.'
    )
    return out


def _structure_blocks(res: dict) -> list:
    """Return the structure verdict and the Pareto front (a --pareto study), when present."""
    out = []
    verdict = res.get('structure')
    if isinstance(verdict, dict) and isinstance(verdict.get('text'), str):
        bold = '**Structure** — ' if not verdict.get('above_floor') else (
            '**Structure: the model falls short** — ')
        out.append(('p', bold + verdict['text'] + '.'))
    front = res.get('pareto_front')
    if isinstance(front, list) and front:
        rows = [['trial', 'W1 (m/s)', 'W2 (unitless)', 'VEPD']] + [
            [str(t.get('number')), fmt(t.get('W1')), fmt(t.get('W2')), fmt(t.get('VEPD'))]
            for t in front if isinstance(t, dict)]
        out.append(('table', rows, f'**Pareto front** — the {len(rows) - 1} trials no other '
                    'beats in both W1 and W2 (their parameters in result.json); the chosen point '
                    f'is {res["best"].get("chosen", "the least VEPD")}.'))
    return out


def _blocks(tune_dir, res, axes, trials, best, imp, imp_notes, shown, land, warns) -> list:
    from collections import Counter

    states = Counter(t.state for t in trials)
    n_done = states.get('COMPLETE', 0)
    lost = {s: states.get(s, 0) for s in STATES_LOST}
    other = sum(c for s, c in states.items() if s not in STATES_DONE + STATES_LOST)
    asked = res.get('trials_requested')
    asked = asked if isinstance(asked, int) and not isinstance(asked, bool) else None
    detail = (f'{lost["FAIL"]} failed, {lost["PRUNED"]} pruned, {other} unfinished '
              f'({len(trials)} rows in trials.csv)')
    if asked is not None and n_done < asked:
        status = (f'**Incomplete study** — {n_done} of {asked} trials asked completed; {detail}. '
                  'The optimum, importance and landscape rest on fewer trials than planned.')
    elif lost['FAIL'] or lost['PRUNED'] or other:
        status = (f'**Warning** — {n_done} trials completed'
                  f'{f" of {asked} asked" if asked is not None else ""}; {detail}.')
    else:
        status = (f'{n_done} trials completed'
                  f'{f" of {asked} asked" if asked is not None else ""}; {detail}.')
    if asked is None:
        status += ' (result.json does not record how many trials were asked.)'
    sensor = {a.get('name'): a.get('sensor') for a in res['axes'] if isinstance(a, dict)}
    pair = len(set(sensor.values()) - {None}) > 1  # a GPS,IMU pair: say whose each value is
    ranges = ', '.join(f'`{a.name}`{f" ({sensor[a.name].upper()})" if pair else ""} in '
                       f'[{a.low:.6g}, {a.high:.6g}]{" (log)" if a.log else ""}' for a in axes)
    judge = res.get('ekf_config')
    judge = (f" The judge's ekf configuration: `{judge}` (not the package's config/ekf.yaml)."
             if judge else '')
    head = [
        ('h1', f'Tune report — {res["model"]} against {res.get("reference", "?")}'),
        ('p', f'Study `{res.get("study_name", "?")}` ({res.get("storage", "storage not named")}), '
              f'from `{tune_dir}`. Tuned: {ranges}. The objective of a trial is the VEPD of '
              f'{res["model"]} with its parameters against the reference runs (common random '
              f'numbers: the same seeds every trial); **lower is better**.{judge}'),
        ('p', status),
    ]
    bp, sp = res['best']['params'], res['start']['params']
    params = [['parameter', 'tuned (best trial)', 'untuned start']] + [
        [k, _g(bp.get(k, '—')), _g(sp.get(k, '—'))]
        for k in list(bp) + [k for k in sp if k not in bp]]
    confirm = [
        ('h2', 'Confirmation on fresh seeds'),
        ('table', confirmation_rows(res),
         f'**Confirmation** — VEPD of {res["model"]} re-simulated on seeds no trial used, with '
         'its 95 % bootstrap interval; W1 in m/s, W2 unitless, VEPD = (W1 + W2)/2.'),
    ] + [('p', x) for x in _meaning(res)] + _structure_blocks(res) + [
        ('table', params, f'**Best parameters** — trial {best.number}, VEPD {fmt(best.vepd)} on '
                          'the tuning seeds (best_params.yaml beside result.json holds them).'),
    ]
    conv = [
        ('h2', 'Convergence'),
        ('fig', FIG_CONVERGENCE,
         f'**Convergence** — VEPD of each of the {n_done} complete trials (blue) and the best so '
         f'far (orange) over the trial number; best: trial {best.number}, VEPD {fmt(best.vepd)}. '
         'Crosses on the axis: trials failed, pruned or unfinished '
         f'({sum(lost.values()) + other}).'),
    ]
    if imp:
        itab = [['parameter', 'importance', 'rank']] + [
            [a.name, f'{imp[a.name]:.3f}', str(i + 1)] for i, a in enumerate(ranked(axes, imp))]
        impb = [('h2', 'Parameter importance'),
                ('fig', FIG_IMPORTANCE, '**Parameter importance** — share of each tuned value in '
                 'reaching the best trials (sums to 1; importance.csv beside this page).'),
                ('table', itab, '**Importance** — ' + '; '.join(imp_notes) + '.')]
    else:
        impb = [('h2', 'Parameter importance'), ('p', '**Warning** — ' + '; '.join(imp_notes)
                                                 + '.')]
    values, z, failed = land
    names = ' × '.join(f'`{a.name}`' for a in shown)
    if z is not None:
        grid = (f'a {" × ".join(str(len(v)) for v in values)} grid of {names} around the best '
                'trial (boxed)' if len(shown) == 2 else
                f'{len(values[0])} values of {names} around the best trial (starred)')
        at = tuple(int(np.flatnonzero(v == best.params[a.name])[0])
                   for a, v in zip(shown, values))
        z_best = float(z[at])
        text = (f'**Landscape** — VEPD of {res["model"]} on {grid}, spanning '
                f'{LANDSCAPE_HALF_WIDTH * 100:g} % of the range on either side (log-spaced on a '
                "log range), every other parameter held at the best trial's value; evaluated by "
                "the study's objective (landscape.csv beside this page). "
                f'{failed} point(s) not scored (n/a).')
        notes = []
        if z_best == best.vepd:
            notes.append(f"The best trial's point reproduces its VEPD {fmt(best.vepd)} exactly: "
                         'the landscape is on the tuning seeds.')
        elif not math.isfinite(z_best):
            notes.append("**Warning** — the objective did not score the best trial's point.")
        else:
            notes.append(f"**Warning** — the best trial's point scores {fmt(z_best)}, not its "
                         f'{fmt(best.vepd)}: the objective given is not the tuning objective.')
        if np.isfinite(z).any() and np.nanmin(z) < best.vepd:
            k = np.unravel_index(np.nanargmin(z), z.shape)
            where = ', '.join(f'`{a.name}` = {_g(float(v[i]))}'
                              for a, v, i in zip(shown, values, k))
            notes.append(f'A landscape point scores lower than the best trial '
                         f'({fmt(float(z[k]))} at {where}): the search had not converged.')
    else:
        text = (f"**Landscape** — the trials' own points over {names} (colour: VEPD; best trial "
                'starred). No objective was given to evaluate a grid around the optimum, so this '
                "shows where the sampler looked, every other parameter at its trial's value; "
                '`vepd tune` draws the grid with its objective.')
        notes = []
    land_b = [('h2', 'Landscape around the optimum'), ('fig', FIG_LANDSCAPE, text)]
    land_b += [('p', x) for x in notes]
    return head + confirm + conv + impb + land_b + [('h2', 'Warnings'), ('ul', warns)]


def _warnings(res: dict, trials: list[Trial]) -> list[str]:
    """Return the warnings result.json carries and the files' disagreements."""
    out = [f'best trial: {w}' for w in res['best'].get('warnings') or []]
    for k, c in res['confirmation'].items():
        if isinstance(c, dict):
            out += [f'confirmation ({k}): {w}' for w in c.get('warnings') or []]
    n = res.get('trials_with_warnings')
    if n:
        out.append(f'{n} trial(s) were scored on fewer runs than planned (warnings column of '
                   'trials.csv)')
    best = [t for t in trials if t.number == res['best']['number']]
    if best and best[0].vepd != res['best']['VEPD']:
        out.append(f'result.json gives the best trial VEPD {res["best"]["VEPD"]!r}, trials.csv '
                   f'{best[0].vepd!r}')
    done = sum(t.state in STATES_DONE for t in trials)
    if done != res['trials_complete']:
        out.append(f'result.json counts {res["trials_complete"]} complete trials, trials.csv '
                   f'{done}: the files are from different moments of the study')
    return out


def write_tune_report(tune_dir, out_dir=None, *, objective: Callable[[dict], float] | None = None,
                      overwrite: bool = False, progress: bool = False,
                      shown_as=None) -> Path:
    """
    Write the tune report of TUNE_DIR (result.json, trials.csv) and return its report.html.

    ``out_dir``: default TUNE_DIR/report (``safety.output_dir``: a previous report there is
    replaced whole, any other non-empty folder refused unless ``overwrite``). ``shown_as``: the
    name the page gives TUNE_DIR (default TUNE_DIR; ``vepd tune`` writes into its new output
    before it is swapped in). ``objective``: a callable
    {axis name: value} -> VEPD (the names of result.json's ``axes``, trials.csv's columns) — the
    study's own objective on the study's seeds; with it the landscape is a grid, without it the
    trials' points. ``progress``: draw a bar while the grid is evaluated. Writes report.md,
    report.html, importance.csv, landscape.csv and the PNGs; everything is read and computed
    before the folder is touched. Raises ValueError/FileNotFoundError naming the file and field.
    """
    from vepd_ros.fileio import atomic_write_text
    from vepd_ros.runs.safety import output_dir

    tune_dir = Path(tune_dir)
    res, axes = read_result(tune_dir)
    trials = read_trials(tune_dir, axes)
    number = res['best']['number']
    hit = [t for t in _scored(trials, axes) if t.number == number]
    if not hit:
        raise ValueError(f'{tune_dir / RESULT_NAME}: best trial {number} is not a scored row of '
                         f'{tune_dir / TRIALS_NAME}')
    best = hit[0]
    imp, imp_notes = param_importance(axes, trials)
    shown = ranked(axes, imp)[:2]
    values = z = None
    failed = 0
    if objective is not None:
        n = LANDSCAPE_POINTS if len(shown) == 2 else 2 * LANDSCAPE_POINTS - 1
        values, z, failed = evaluate_landscape(objective, dict(best.params), shown, n, progress)
    final = Path(out_dir) if out_dir else tune_dir / 'report'
    with output_dir(final, command='report', overwrite=overwrite, replaces=REPORT_FILES) as out:
        _convergence_figure(trials, number, out / FIG_CONVERGENCE)
        if imp:
            _importance_figure(axes, imp, out / FIG_IMPORTANCE)
            atomic_write_text(out / 'importance.csv', _csv_text(
                ['parameter', 'importance'], [[a.name, imp[a.name]] for a in ranked(axes, imp)]))
        _landscape_figure(shown, values, z, trials, axes, best, out / FIG_LANDSCAPE)
        if z is not None:
            atomic_write_text(out / 'landscape.csv', _csv_text(
                [a.name for a in shown] + ['vepd'],
                [[float(v[i]) for v, i in zip(values, idx)]
                 + [float(z[idx]) if math.isfinite(z[idx]) else None]
                 for idx in np.ndindex(z.shape)]))
        blocks = _blocks(shown_as or tune_dir, res, axes, trials, best, imp, imp_notes, shown,
                         (values, z, failed), _warnings(res, trials))
        title = f'Tune report — {res["model"]}'
        atomic_write_text(out / 'report.md', _markdown(blocks))
        atomic_write_text(out / 'report.html', _html(blocks, title))
    return final / 'report.html'
