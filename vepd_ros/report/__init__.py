# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Build the VEPD report: tables, explanation, warnings and figures as Markdown and HTML.

The VEPD report: Tables I and II with captions, intervals, run counts, what the result means
(``report.explain``), warnings, and matplotlib figures — histograms of per-run RMSE (E) and
entropy difference (S) per model against the reference (the paper's Fig. 3) and velocity overlays
of chosen runs (Fig. 4), each a grid of panels legible at page width — written as Markdown and HTML
(the same text: one list of blocks rendered twice) beside the PNGs, result.json and the CSV tables
(``report.tables``).

    build_report(root, out_dir, overlays=None, velocity='speed', ...)
        -> {'markdown': path, 'html': path, 'json': path, 'csv': {...}, 'figures': [...], ...}
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
from vepd_ros.metrics.core import resample_run
from vepd_ros.metrics.evaluator import REFERENCE
from vepd_ros.progress import progress_bar
from vepd_ros.report.explain import (
    bootstrap_note,
    evaluate_dir,
    explanation_lines,
    reference_phrase,
)
from vepd_ros.report.tables import interval_rows, side_name, table_rows, write_result
from vepd_ros.runs.format import read_run
from vepd_ros.runs.layout import scan_root

__all__ = ['build_report', 'table_rows', 'interval_rows', 'write_result']


def _combined(res, side, what):
    runs = res['runs'][side]
    if side == REFERENCE:
        scs = res['combined_scenarios']
    else:
        e = res['models'][side]
        scs = [e['per_scenario'][s].get('sim_scenario', s) for s in e['combined_scenarios']]
    if not scs:
        return np.empty(0)
    return np.concatenate([np.asarray(runs[s][what]) for s in scs if s in runs])


def _grid(n: int, ncols: int = 3, panel_in=(3.6, 2.7)):
    """
    Make a figure of n panels in a grid legible at page width.

    A figure of n panels in rows of ``ncols`` (at most n), legible when shown at page width
    (~1100 px at 110 dpi: three panels of 3.6 in), unused cells hidden.
    """
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    fig, axs = plt.subplots(
        nrows,
        ncols,
        figsize=(panel_in[0] * ncols, panel_in[1] * nrows),
        squeeze=False,
        constrained_layout=True,
    )
    axs = axs.ravel()
    for ax in axs[n:]:
        ax.set_visible(False)
    return plt, fig, axs[:n]


def _histograms(res, what, path, xlabel):
    """
    Fig.

    3: per-run E (or S) of each side; every model panel overlays the reference's (grey, in the
    legend).
    """
    sides = [REFERENCE] + list(res['models'])
    data = [_combined(res, s, what) for s in sides]
    filled = [d for d in data if d.size]
    allv = np.concatenate(filled) if filled else np.zeros(1)
    hi = float(np.quantile(allv, 0.995)) if allv.size else 1.0
    bins = np.linspace(0.0, hi * 1.05 if hi > 0 else 1.0, 25)
    plt, fig, axs = _grid(len(sides))
    ref, ref_name = data[0], side_name(res, REFERENCE)
    for ax, s, d in zip(axs, sides, data):
        name = side_name(res, s)
        if s != REFERENCE:
            ax.hist(ref, bins=bins, color='0.6', alpha=0.6, label=ref_name)
        ax.hist(d, bins=bins, alpha=0.7, color='C0' if s != REFERENCE else '0.35', label=name)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(xlabel, fontsize=9)
        ax.set_ylabel('runs', fontsize=9)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=8, loc='upper right')  # 'best' searches the data: seconds on long runs
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _run_E(res, side, path):
    """
    Return the evaluator's E of one run, or None.

    Looked up in ``res['runs']``; names are the run files' paths.
    """
    for v in res.get('runs', {}).get(side, {}).values():
        for e, name in zip(v['E'], v['names']):
            if name == str(path):
                return float(e)
    return None


def _overlay(paths_by_side, scenario, j, res, path, velocity, preprocessing):
    """
    Fig.

    4: estimate and truth of run j of a scenario for each side, on the metric's grid, in a grid of
    panels; titles give the run's E (m/s), every panel has its legend.
    """
    plt, fig, axs = _grid(len(paths_by_side), panel_in=(3.6, 2.6))
    for ax, (side, p) in zip(axs, paths_by_side.items()):
        sig = read_run(p).signal(velocity)
        grid, se, gt = resample_run(*sig, preprocessing=preprocessing, name=str(p))
        e = _run_E(res, side, p)
        if np.iscomplexobj(se):
            se, gt = np.abs(se), np.abs(gt)
        if e is None:
            e = float(np.sqrt(np.mean((se - gt) ** 2)))
        ax.plot(grid, gt, color='0.3', lw=1.2, label='truth')
        ax.plot(grid, se, color='C1', lw=1.0, label='estimate')
        ax.set_title(f'{side_name(res, side)}: {scenario}_{j} (E = {e:.3f} m/s)', fontsize=10)
        ax.set_xlabel('t (s)', fontsize=9)
        ax.set_ylabel(f'{"|v|" if velocity == "vector" else velocity} (m/s)', fontsize=9)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=8, loc='upper right')  # 'best' searches the data: seconds on long runs
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------- page rendering
# The page is a list of blocks rendered twice, to Markdown and to HTML, so both carry one text:
# ('h1'|'h2'|'p', text), ('ul', [text]), ('table', rows, caption), ('fig', file, caption).
# Text is Markdown inline markup (**bold**, `code`), rendered for HTML by ``_inline_html``.


def _inline_html(text: str) -> str:
    import re

    out = html.escape(text, quote=False)
    out = re.sub(r'\*\*(.+?)\*\*', r'<strong>\1</strong>', out)
    return re.sub(r'`([^`]+)`', r'<code>\1</code>', out)


def _md_table(rows):
    out = ['| ' + ' | '.join(rows[0]) + ' |', '|' + '---|' * len(rows[0])]
    out += ['| ' + ' | '.join(r) + ' |' for r in rows[1:]]
    return '\n'.join(out)


def _html_table(rows, caption):
    h = ''.join(f'<th>{html.escape(c)}</th>' for c in rows[0])
    b = ''.join(
        '<tr>' + ''.join(f'<td>{html.escape(c)}</td>' for c in r) + '</tr>' for r in rows[1:]
    )
    return (
        f'<figure class="table"><figcaption>{_inline_html(caption)}</figcaption>'
        f'<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table></figure>'
    )


def _markdown(blocks) -> str:
    parts = []
    for b in blocks:
        kind = b[0]
        if kind == 'h1':
            parts.append(f'# {b[1]}')
        elif kind == 'h2':
            parts.append(f'## {b[1]}')
        elif kind == 'p':
            parts.append(b[1])
        elif kind == 'ul':
            parts.append('\n'.join(f'- {x}' for x in b[1]) or 'None.')
        elif kind == 'table':
            parts += [b[2], _md_table(b[1])]
        elif kind == 'fig':
            parts += [f'![{b[1]}]({b[1]})', b[2]]
    return '\n\n'.join(parts) + '\n'


CSS = (
    'body{font-family:sans-serif;max-width:1100px;margin:auto;padding:0 12px;line-height:1.4}'
    'table{border-collapse:collapse;margin:.3em 0}'
    'td,th{border:1px solid #999;padding:3px 8px;text-align:right}td:first-child,th:first-child'
    '{text-align:left}figure{margin:1.5em 0}img{max-width:100%;height:auto;display:block}'
    'figcaption{margin-top:4px}'
    '.warn{background:#fff3cd;padding:6px 10px;border-left:4px solid #e0a800}'
)


def _html(blocks, title) -> str:
    body = []
    for b in blocks:
        kind = b[0]
        if kind in ('h1', 'h2'):
            body.append(f'<{kind}>{_inline_html(b[1])}</{kind}>')
        elif kind == 'p':
            warn = b[1].startswith(('**Warning', '**Incomplete'))
            cls = ' class="warn"' if warn else ''
            body.append(f'<p{cls}>{_inline_html(b[1])}</p>')
        elif kind == 'ul':
            items = ''.join(f'<li>{_inline_html(x)}</li>' for x in b[1]) or '<li>None.</li>'
            body.append(f'<ul>{items}</ul>')
        elif kind == 'table':
            body.append(_html_table(b[1], b[2]))
        elif kind == 'fig':
            f = html.escape(b[1])
            body.append(
                f'<figure id="{html.escape(Path(b[1]).stem)}"><img src="{f}" alt="{f}">'
                f'<figcaption>{_inline_html(b[2])}</figcaption></figure>'
            )
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<style>{CSS}</style></head><body>' + ''.join(body) + '</body></html>\n'
    )


def _blocks(root, res, figs, warnings, csvs) -> list:
    t1, t2, t3 = table_rows(res)
    ref = side_name(res, REFERENCE)
    intro = (
        f'Velocity: **{res["velocity"]}**. Preprocessing: '
        f'{res["preprocessing"]["description"]}. ' + bootstrap_note(res)
    )
    notes = explanation_lines(res)
    head = [('h1', f'VEPD report — {root}'), ('p', intro)] + [('p', x) for x in notes[:-1]]
    combined = ', '.join(res['combined_scenarios']) or 'none'
    excluded = ', '.join(res['excluded_from_combined']) or 'none'
    files = ', '.join(f'`{Path(p).name}`' for p in csvs.values())
    tables = [
        ('h2', 'Tables'),
        (
            'table',
            t1,
            f'**Table I** — VEPD over {combined} (excluded: {excluded}) against '
            f'{reference_phrase(res)}; **lower is better**. W1 in m/s, W2 unitless, '
            'VEPD = (W1 + W2)/2; rank 1 = closest.',
        ),
        (
            'table',
            t2,
            '**Table II** — VEPD per scenario; R = rank (1 = best, ties share the '
            'average rank); lower is better.',
        ),
        (
            'table',
            interval_rows(res),
            '**Table II intervals** — 95 % bootstrap interval of each '
            "scenario's VEPD (the same resamples as Table I's, "
            'restricted to the scenario).',
        ),
        ('table', t3, f'**Runs per side and scenario (K)** — {ref} and each model.'),
        (
            'p',
            f'The same tables as CSV beside this page: {files} (full precision; runs.csv lists '
            "every run's E in m/s and S with its file).",
        ),
        ('h2', 'Reading VEPD'),
        ('p', notes[-1]),
    ]
    f3 = [
        ('h2', 'Fig. 3 — distributions against the reference'),
        (
            'fig',
            'fig3a_rmse.png',
            '**Fig. 3a** — per-run RMSE E (m/s) of each model (blue) over the moving scenarios, '
            f"with the reference's ({ref}, grey) behind it. A model whose histogram covers the "
            'grey one has a small W1.',
        ),
        (
            'fig',
            'fig3b_entropy.png',
            '**Fig. 3b** — per-run spectral-flatness (entropy) difference S (unitless) of each '
            'model (blue) and the reference (grey); their distance is W2.',
        ),
    ]
    f4 = [('h2', 'Fig. 4 — velocity overlays (resampled onto the metric grid)')]
    for f in figs:
        if f.startswith('fig4_'):
            run = f[len('fig4_'): -len('.png')]
            f4.append(
                (
                    'fig',
                    f,
                    f'**Fig. 4, run {run}** — estimated {res["velocity"]} (orange) '
                    f'against truth (grey) of run {run} for {ref} and each model; '
                    "titles give the run's E.",
                )
            )
    return head + tables + f3 + f4 + [('h2', 'Warnings'), ('ul', warnings)]


def build_report(
    root,
    out_dir=None,
    *,
    overlays=None,
    velocity: str = 'speed',
    preprocessing='paper',
    n_boot: int = 1000,
    seed: int | None = None,
    scenarios=None,
    k=None,
    progress: bool = True,
) -> dict:
    """
    Evaluate ``root`` and write the report into ``out_dir``.

    Evaluate ``root`` and write report.md, report.html, result.json, the CSV tables
    (``tables.write_result``) and the PNGs into ``out_dir`` (default ROOT/report). ``overlays``:
    list of (scenario, j) runs to overlay; default the first run of each moving scenario of the
    reference. ``seed``: bootstrap seed, default ``explain.bootstrap_seed`` (the runs' study seed,
    else 0). ``progress``: draw the progress bars (the caller decides: ``progress_enabled``).
    """
    root = Path(root)
    out = Path(out_dir) if out_dir else root / 'report'
    out.mkdir(parents=True, exist_ok=True)
    res = evaluate_dir(
        root,
        seed=seed,
        velocity=velocity,
        preprocessing=preprocessing,
        n_boot=n_boot,
        scenarios=scenarios,
        k=k,
        include_runs=True,
        progress=progress,
    )
    layout = scan_root(root, scenarios)
    if overlays is None:
        overlays = [
            (s, layout.real.runs[s][0][0])
            for s in res['combined_scenarios']
            if layout.real.runs.get(s)
        ]
    jobs = [
        ('fig3a_rmse.png', lambda p: _histograms(res, 'E', p, 'RMSE E (m/s)')),
        (
            'fig3b_entropy.png',
            lambda p: _histograms(res, 'S', p, 'entropy difference S (unitless)'),
        ),
    ]
    warnings = list(res['warnings'])
    for sc, j in overlays:
        paths = {}
        for side, b in [(REFERENCE, layout.real)] + list(layout.models.items()):
            sim_sc = (
                res['models'].get(side, {}).get('per_scenario', {}).get(sc, {}).get('sim_scenario')
            )
            match = [s for s in b.runs if s == sc or (side != REFERENCE and s == sim_sc)]
            hit = [p for jj, p in b.runs.get(match[0], []) if jj == j] if match else []
            if hit:
                paths[side] = hit[0]
            else:
                warnings.append(
                    f'overlay {sc}_{j}: no such run for {b.display_name}; panel left out'
                )
        if paths:
            jobs.append(
                (
                    f'fig4_{sc}_{j}.png',
                    lambda p, paths=paths, sc=sc, j=j: _overlay(
                        paths, sc, j, res, p, velocity, preprocessing
                    ),
                )
            )
    for name, fn in progress_bar(
        iterable=jobs, total=len(jobs), desc='figures', unit='fig', quiet=not progress, leave=False
    ):
        fn(out / name)
    figs = [name for name, _ in jobs]
    paths = write_result(res, out)
    csvs = {k_: v for k_, v in paths.items() if k_ != 'json'}
    blocks = _blocks(root, res, figs, warnings, csvs)
    (out / 'report.md').write_text(_markdown(blocks))
    (out / 'report.html').write_text(_html(blocks, f'VEPD report — {root}'))
    return {
        'markdown': out / 'report.md',
        'html': out / 'report.html',
        'json': paths['json'],
        'csv': csvs,
        'figures': [out / f for f in figs],
        'warnings': warnings,
        'result': res,
    }
