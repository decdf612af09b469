# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Say in words what a VEPD result means, for the terminal tables and the report.

What a VEPD result means, in words: one source for the terminal tables (``vepd study``,
``vepd evaluate``, ``vepd run``: ``commands._output.format_tables``) and the report (Markdown
and HTML).

* ``closest_model``: the model with the lowest combined VEPD and whether its 95 % interval is
  separated from the next model's (the two intervals do not overlap);
* ``reading_vepd``: one paragraph on the units and scale of W1, W2 and VEPD and the paper's values;
* ``reference_model`` / ``reference_phrase``: "simulated reference (`rtk`)" whenever the reference
  runs were simulated by a GPS model (a study's ``--reference rtk``; the ``model`` field of the
  reference runs' sidecars, written by the study and by the graph's recorders; real recordings have
  none);
* ``k_warning``: intervals over fewer than ``MIN_K_FOR_INTERVALS`` runs per batch;
* ``coverage_lines``: runs excluded and batches incomplete (the evaluator's ``excluded_runs``,
  ``incomplete_batches``, ``complete``; shown when present);
* ``bootstrap_seed``: the one default of the bootstrap seed for a directory of runs;
  ``evaluate_dir`` evaluates a directory with it.

Text uses Markdown's ``**bold**`` and ``code`` backticks; ``report`` renders them for HTML.
"""

from __future__ import annotations

from math import comb

from vepd_ros.metrics.evaluator import DEFAULT_BOOTSTRAP_SEED  # noqa: F401 (named here too)

MIN_K_FOR_INTERVALS = 5
"""Below this many runs in a batch the 95 % interval is not worth reading: a bootstrap of K values
has only C(2K-1, K) distinct resamples (3 for K = 2, 10 for K = 3, 35 for K = 4, 126 for K = 5), so
the 2.5 % and 97.5 % percentiles land on a handful of possible values."""

PAPER_TABLE_I = (
    ('AirSim', 0.039),
    ('Ch:RW', 0.043),
    ('Ch:RW+AirSim', 0.0482),
    ('Ch:Gauss+AirSim', 0.0627),
    ('Ch:Gauss', 0.155),
)
"""The paper's Table I (arXiv 2403.11000): combined VEPD of each GPS model against K = 30 real runs
(10 each of line, circle, sine) of the ART vehicle with an RTK GPS; best to worst."""


# ------------------------------------------------------------------------------------- numbers
# The one way a result's numbers are written (terminal tables, report tables, sentences).
def fmt(x, nd=4) -> str:
    """Format a W1, W2 or VEPD value to ``nd`` decimals; '—' when absent."""
    return '—' if x is None else f'{x:.{nd}f}'


def fmt_rank(x) -> str:
    """Format a rank (or count); '—' when absent."""
    return '—' if x is None else f'{x:g}'


def fmt_interval(ci, missing: str = 'no interval') -> str:
    """Format a 95 % interval as ``[lo, hi]``; ``missing`` when there is none (e.g. n_boot 0)."""
    return f'[{fmt(ci[0])}, {fmt(ci[1])}]' if ci else missing


# ------------------------------------------------------------------------------------ provenance
def bootstrap_seed(root, seed: int | None = None) -> tuple[int, str]:
    """
    Return the bootstrap seed for evaluating ``root`` and where it comes from.

    The bootstrap seed for evaluating ``root`` and where it comes from — THE default, so
    ``vepd study``, ``vepd evaluate`` and ``vepd report`` give the same interval for one directory.

    An explicit ``seed`` wins; otherwise the study seed the runs were made with (``vepd study
    --seed`` seeds both its runs and its interval), else ``DEFAULT_BOOTSTRAP_SEED`` (0). The rule
    lives in ``runs.batch.evaluate_root(seed=None)``, which reads it from the sidecars it scores;
    this asks it without a bootstrap.
    """
    if seed is not None:
        return int(seed), 'given'
    from vepd_ros.runs.batch import evaluate_root

    b = evaluate_root(root, n_boot=0, seed=None)['bootstrap']
    return b['seed'], b['seed_source']


def evaluate_dir(root, seed: int | None = None, **kwargs) -> dict:
    """
    Evaluate ``root`` with the defaults `vepd evaluate` and `vepd report` share.

    ``runs.batch.evaluate_root`` with the defaults `vepd evaluate` and `vepd report` share: the
    bootstrap seed of ``bootstrap_seed`` (the runs' study seed unless ``seed`` is given, recorded
    as ``bootstrap.seed_source``) and the reference's provenance (``reference_model``), both from
    the sidecars the evaluator reads. ``kwargs`` go to ``evaluate_root``.
    """
    from vepd_ros.runs.batch import evaluate_root

    return evaluate_root(root, seed=seed, **kwargs)


def reference_model(res: dict) -> str | None:
    """
    Return the GPS model that simulated the reference runs, or None for real data.

    The GPS model that simulated the reference runs, or None when they are real data (as far as
    the result knows): ``res['reference_model']`` (set from the sidecars by ``vepd evaluate`` and
    ``vepd report``), or a study's ``--reference`` when it names a model, not a directory.
    """
    if res.get('reference_model'):
        return res['reference_model']
    ref = (res.get('study') or {}).get('reference')
    if ref:
        from vepd_ros.models.gps import GPS_MODELS

        if ref in GPS_MODELS:
            return ref
    return None


def reference_known(res: dict) -> bool:
    """
    Tell whether ``res`` records where its reference came from.

    Whether ``res`` records where its reference came from (``reference_model`` set — None
    meaning real data — or a study's ``--reference``).
    """
    return 'reference_model' in res or bool((res.get('study') or {}).get('reference'))


def reference_name(res: dict) -> str:
    """
    Return the short name of the reference side for tables and plots.

    Short name of the reference side for tables and plots: 'Real', 'Simulated reference (rtk)',
    or 'Reference' when the result does not say.
    """
    m = reference_model(res)
    if m is not None:
        return f'Simulated reference ({m})'
    return 'Real' if reference_known(res) else 'Reference'


def reference_phrase(res: dict) -> str:
    """
    Name the reference in a sentence.

    The reference in a sentence: 'the real runs', 'the simulated reference (`rtk`)' or
    'the reference'.
    """
    m = reference_model(res)
    if m is not None:
        return f'the simulated reference (`{m}`)'
    return 'the real runs' if reference_known(res) else 'the reference'


def reference_note(res: dict) -> str:
    m = reference_model(res)
    if m is not None:
        return (
            f'Reference: **simulated reference (`{m}`)**, not real data — these numbers rank '
            'the models against that stand-in, not against a real vehicle; pass real runs '
            "(`--reference DIR`) for the paper's comparison."
        )
    if reference_known(res):
        return (
            'Reference: the real runs (`Real/`); a model close to it makes the estimator err '
            'as the real sensors did.'
        )
    return (
        'Reference: the runs of the reference side; this result does not record whether they '
        'are real or simulated (`vepd evaluate DIR` reads it from the run files).'
    )


# ------------------------------------------------------------------------------------ verdicts
def closest_model(res: dict) -> dict | None:
    """
    Return the best model, the next one, and whether their intervals are separated.

    The best model (lowest combined VEPD) and the next one, and whether their intervals are
    separated (do not overlap).

    ``{'best': label, 'next': label | None, 'separated': bool | None, 'text': str}``; ``separated``
    is None when there is no next model or no interval (``--n-boot 0``). None when no model has a
    combined score.
    """
    scored = sorted((e['VEPD'], m) for m, e in res['models'].items() if e.get('VEPD') is not None)
    if not scored:
        return None
    ms = res['models']
    best = scored[0][1]
    b = ms[best]
    head = (
        f'Closest to {reference_phrase(res)}: **{b["display_name"]}**, VEPD {fmt(b["VEPD"])} '
        f'(95 % interval {fmt_interval(b.get("ci95"))})'
    )
    if len(scored) == 1:
        return {
            'best': best,
            'next': None,
            'separated': None,
            'text': head + '; the only model scored, so nothing to rank it against.',
        }
    nxt = scored[1][1]
    n = ms[nxt]
    other = f'{n["display_name"]} ({fmt(n["VEPD"])}, {fmt_interval(n.get("ci95"))})'
    if scored[0][0] == scored[1][0]:
        return {
            'best': best,
            'next': nxt,
            'separated': False,
            'text': head + f'; tied with {other}.',
        }
    bc, nc = b.get('ci95'), n.get('ci95')
    if not bc or not nc:
        return {
            'best': best,
            'next': nxt,
            'separated': None,
            'text': head + f'; next: {other}. No interval computed (--n-boot 0): whether the '
            'order holds beyond these runs is not assessed.',
        }
    separated = bool(bc[1] < nc[0])
    if separated:
        tail = f'; separated from the next, {other}: their 95 % intervals do not overlap.'
    else:
        tail = (
            f'; **not separated** from the next, {other}: their 95 % intervals overlap, so '
            'other runs or another seed may swap them.'
        )
    return {'best': best, 'next': nxt, 'separated': separated, 'text': head + tail}


def smallest_batch(res: dict) -> tuple[int, str, str] | None:
    """(K, side, scenario) of the batch with the fewest runs."""
    cells = [(n, side, sc) for side, v in res.get('k', {}).items() for sc, n in v.items()]
    return min(cells, key=lambda c: c[0]) if cells else None


def k_warning(res: dict) -> str | None:
    """
    Return a warning when intervals rest on too few runs, else None.

    A warning when intervals were computed over fewer than ``MIN_K_FOR_INTERVALS`` runs in some
    batch.
    """
    if not res.get('bootstrap', {}).get('n_boot'):
        return None
    low = smallest_batch(res)
    if low is None or low[0] >= MIN_K_FOR_INTERVALS:
        return None
    k, side, sc = low
    name = res['models'][side]['display_name'] if side in res['models'] else reference_name(res)
    return (
        f'K = {k} runs in the smallest batch ({name} / {sc}): with K < {MIN_K_FOR_INTERVALS} '
        f'the 95 % intervals are not meaningful — a bootstrap of {k} values has only '
        f'{comb(2 * k - 1, k)} distinct resamples, so the percentiles fall on a handful of '
        f'values. Use K ≥ {MIN_K_FOR_INTERVALS} (the paper: 10 per scenario).'
    )


def coverage_lines(res: dict) -> list[str]:
    """
    Describe excluded runs and incomplete batches, one line each.

    Excluded runs and incomplete batches (the evaluator's ``excluded_runs``,
    ``incomplete_batches``, ``complete``, ``min_coverage``), one line each; empty when the result
    has none of them.
    """
    lines = []
    if res.get('complete') is False:
        lines.append(
            '**Incomplete result**: some runs were excluded or some batches hold fewer '
            'than K runs; the scores below cover only what is listed as used.'
        )
    cov = res.get('min_coverage')
    for r in res.get('excluded_runs') or []:
        lines.append(
            f'excluded run `{r.get("path", "?")}` ({r.get("label", "?")} / '
            f'{r.get("scenario", "?")}): {r.get("reason", "no reason given")}'
            + (f' (threshold {cov:g})' if cov is not None else '')
        )
    for b in res.get('incomplete_batches') or []:
        lines.append(
            f'incomplete batch {b.get("label", "?")} / {b.get("scenario", "?")}: '
            f'{b.get("have", "?")} of K = {b.get("k", "?")} runs'
        )
    return lines


def bootstrap_note(res: dict) -> str:
    b = res.get('bootstrap') or {}
    if not b.get('n_boot'):
        return 'No intervals (--n-boot 0).'
    why = {
        'given': 'given',
        "the runs' study seed": "the runs' study seed",
        'default': 'default; the runs name no study seed',
    }.get(b.get('seed_source'), '')
    return (
        f'Intervals: {int(b.get("level", 0.95) * 100)} % percentile bootstrap, {b["n_boot"]} '
        f'resamples, seed {b.get("seed")}' + (f' ({why})' if why else '') + '.'
    )


def reading_vepd(res: dict) -> str:
    """One paragraph: units and scale of E, S, W1, W2 and VEPD, and the paper's values."""
    what = {'speed': 'speed', 'vx': 'forward velocity vx', 'vector': 'planar velocity vector'}.get(
        res.get('velocity', 'speed'), 'velocity'
    )
    best, worst = PAPER_TABLE_I[0], PAPER_TABLE_I[-1]
    return (
        f'**Reading VEPD.** Per run, E is the RMSE of the estimated {what} against truth '
        '(m/s) and S the difference of their spectral flatness (unitless, 0–1). **W1** is the '
        "Wasserstein distance between a model's per-run E and the reference's, **in m/s**; "
        "**W2** the same distance (1-Wasserstein, as the authors' code) between the per-run "
        'S, **unitless**, at most 1. **VEPD = (W1 + W2)/2** adds a speed to a pure number, so '
        'it has no single unit: compare models scored against the same reference over the '
        'same manoeuvres, not numbers from different vehicles or speeds. 0 means the '
        'estimator errs in the same way with the simulated sensor as with the reference; '
        '**lower is better**; there is no fixed upper bound (W1 grows with the speed error; '
        "the paper's VEPD ∈ [0, 1] holds only while speed errors stay below 1 m/s). For "
        'scale, the paper (arXiv 2403.11000, K = 30 real runs with an RTK GPS) found VEPD '
        f'from {best[1]} ({best[0]}) to {worst[1]} ({worst[0]}) in its Table I, 0.0211 '
        'between a simulated and the real IMU (with the real GPS), and 0.0796 against 0.0867 '
        'for one model scored against two terrains (≈ 8 %, a difference it reads as no '
        'difference).'
    )


def explanation_lines(res: dict) -> list[str]:
    """
    Return every sentence above that applies to ``res``, in reading order.

    Every sentence above that applies to ``res``, in reading order (Markdown inline markup); the
    last is always ``reading_vepd``.
    """
    lines = [reference_note(res)]
    c = closest_model(res)
    if c:
        lines.append(c['text'])
    w = k_warning(res)
    if w:
        lines.append(f'**Warning:** {w}')
    lines += coverage_lines(res)
    lines.append(reading_vepd(res))
    return lines
