"""The VEPD report: Tables I and II, intervals, run counts, warnings, and matplotlib figures —
histograms of per-run RMSE (E) and entropy difference (S) per model against the reference (the paper's
Fig. 3) and velocity overlays of chosen runs (Fig. 4) — written as Markdown and HTML beside the PNGs.

    build_report(root, out_dir, overlays=None, velocity='speed', ...) -> {'markdown': path, 'html': path, ...}
"""
from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np

from vepd_ros.metrics.core import resample_run
from vepd_ros.metrics.evaluator import REFERENCE, evaluate_root
from vepd_ros.runs.format import read_run
from vepd_ros.runs.layout import scan_root

__all__ = ['build_report', 'tables_markdown', 'interval_rows']


def _f(x, nd=4):
    return '—' if x is None else f'{x:.{nd}f}'


def _r(x):
    return '—' if x is None else f'{x:g}'


def table_rows(res: dict):
    t1 = [['Sensor model', 'W1', 'W2', 'VEPD', '95% interval', 'rank']]
    for e in res['models'].values():
        ci = e.get('ci95')
        t1.append([e['display_name'], _f(e['W1']), _f(e['W2']), _f(e['VEPD']),
                   f'[{_f(ci[0])}, {_f(ci[1])}]' if ci else '—', _r(e.get('rank'))])
    sc = res['scenarios']
    t2 = [['Sensor model'] + [x for s in sc for x in (f'{s} VEPD', 'R')]]
    for e in res['models'].values():
        row = [e['display_name']]
        for s in sc:
            p = e['per_scenario'].get(s)
            row += [_f(p['VEPD']), _r(p.get('rank'))] if p else ['—', '—']
        t2.append(row)
    sides = list(res['k'])
    t3 = [['side'] + sc] + [[res['models'][s]['display_name'] if s in res['models'] else 'Real']
                            + [str(res['k'][s].get(x, 0)) for x in sc] for s in sides]
    return t1, t2, t3


def interval_rows(res: dict):
    """Table II's intervals: per model and scenario, the 95 % bootstrap interval of that scenario's VEPD
    (``per_scenario.<s>.ci95``; '—' when absent, e.g. n_boot 0)."""
    sc = res['scenarios']
    rows = [['Sensor model'] + [f'{s} 95% interval' for s in sc]]
    for e in res['models'].values():
        row = [e['display_name']]
        for s in sc:
            ci = (e['per_scenario'].get(s) or {}).get('ci95')
            row.append(f'[{_f(ci[0])}, {_f(ci[1])}]' if ci else '—')
        rows.append(row)
    return rows


def _md_table(rows):
    out = ['| ' + ' | '.join(rows[0]) + ' |', '|' + '---|' * len(rows[0])]
    out += ['| ' + ' | '.join(r) + ' |' for r in rows[1:]]
    return '\n'.join(out)


def _html_table(rows):
    h = ''.join(f'<th>{html.escape(c)}</th>' for c in rows[0])
    b = ''.join('<tr>' + ''.join(f'<td>{html.escape(c)}</td>' for c in r) + '</tr>' for r in rows[1:])
    return f'<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>'


def tables_markdown(res: dict) -> str:
    t1, t2, t3 = table_rows(res)
    return '\n\n'.join([
        f"**Table I** — VEPD over {', '.join(res['combined_scenarios'])} (excluded: "
        f"{', '.join(res['excluded_from_combined']) or 'none'}); lower is better.", _md_table(t1),
        '**Table II** — VEPD per scenario; R = rank (1 = best, ties share the average rank).', _md_table(t2),
        '**Table II intervals** — 95 % bootstrap interval of each scenario\'s VEPD (the same resamples as '
        'Table I\'s, restricted to the scenario).', _md_table(interval_rows(res)),
        '**Runs per side and scenario (K)**', _md_table(t3)])


def _combined(res, side, what):
    runs = res['runs'][side]
    if side == REFERENCE:
        scs = res['combined_scenarios']
    else:
        scs = [res['models'][side]['per_scenario'][s].get('sim_scenario', s) for s in res['models'][side]['combined_scenarios']]
    return np.concatenate([np.asarray(runs[s][what]) for s in scs if s in runs]) if scs else np.empty(0)


def _histograms(res, what, path, xlabel):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    sides = [REFERENCE] + list(res['models'])
    data = [_combined(res, s, what) for s in sides]
    allv = np.concatenate([d for d in data if d.size]) if any(d.size for d in data) else np.zeros(1)
    hi = float(np.quantile(allv, 0.995)) if allv.size else 1.0
    bins = np.linspace(0.0, hi * 1.05 if hi > 0 else 1.0, 25)
    fig, axs = plt.subplots(1, len(sides), figsize=(2.2 * len(sides), 2.2), sharey=True, constrained_layout=True)
    axs = np.atleast_1d(axs)
    ref = data[0]
    for ax, s, d in zip(axs, sides, data):
        if s != REFERENCE:
            ax.hist(ref, bins=bins, color='0.75', alpha=0.8, label='Real')
        ax.hist(d, bins=bins, alpha=0.7, color='C0' if s != REFERENCE else '0.4',
                label=res['models'][s]['display_name'] if s in res['models'] else 'Real')
        ax.set_title(res['models'][s]['display_name'] if s in res['models'] else 'Real', fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.tick_params(labelsize=7)
    axs[0].set_ylabel('runs', fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _overlay(paths_by_side, scenario, j, res, path, velocity, preprocessing):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    n = len(paths_by_side)
    fig, axs = plt.subplots(1, n, figsize=(3.2 * n, 2.6), sharey=True, constrained_layout=True)
    axs = np.atleast_1d(axs)
    for ax, (side, p) in zip(axs, paths_by_side.items()):
        name = res['models'][side]['display_name'] if side in res['models'] else 'Real'
        rec = read_run(p)
        sig = rec.signal(velocity)
        grid, se, gt = resample_run(*sig, preprocessing=preprocessing, name=str(p))
        if np.iscomplexobj(se):
            se, gt = np.abs(se), np.abs(gt)
        e = float(np.sqrt(np.mean((se - gt) ** 2)))
        ax.plot(grid, gt, color='0.3', lw=1.2, label='truth')
        ax.plot(grid, se, color='C1', lw=1.0, label='estimate')
        ax.set_title(f'{name}: {scenario}_{j} (E = {e:.3f})', fontsize=8)
        ax.set_xlabel('t (s)', fontsize=8)
        ax.tick_params(labelsize=7)
    axs[0].set_ylabel(f'{velocity} (m/s)', fontsize=8)
    axs[0].legend(fontsize=7)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def build_report(root, out_dir=None, overlays=None, velocity: str = 'speed', preprocessing='paper',
                 n_boot: int = 1000, seed: int = 0, scenarios=None, k=None, progress: bool = True) -> dict:
    """Evaluate ``root`` and write report.md, report.html, result.json and the PNGs into ``out_dir``
    (default ROOT/report). ``overlays``: list of (scenario, j) runs to overlay; default the first run of
    each moving scenario of the reference."""
    root = Path(root)
    out = Path(out_dir) if out_dir else root / 'report'
    out.mkdir(parents=True, exist_ok=True)
    res = evaluate_root(root, velocity=velocity, preprocessing=preprocessing, n_boot=n_boot, seed=seed,
                        scenarios=scenarios, k=k, include_runs=True, progress=progress)
    layout = scan_root(root, scenarios)
    if overlays is None:
        overlays = [(s, layout.real.runs[s][0][0]) for s in res['combined_scenarios'] if layout.real.runs.get(s)]
    jobs = [('fig3a_rmse.png', lambda p: _histograms(res, 'E', p, 'RMSE E (m/s)')),
            ('fig3b_entropy.png', lambda p: _histograms(res, 'S', p, 'entropy difference S'))]
    warnings = list(res['warnings'])
    for sc, j in overlays:
        paths = {}
        for side, b in [(REFERENCE, layout.real)] + list(layout.models.items()):
            match = [s for s in b.runs if s == sc or (side != REFERENCE and s == res['models'].get(side, {})
                     .get('per_scenario', {}).get(sc, {}).get('sim_scenario'))]
            hit = [p for jj, p in b.runs.get(match[0], []) if jj == j] if match else []
            if hit:
                paths[side] = hit[0]
            else:
                warnings.append(f'overlay {sc}_{j}: no such run for {b.display_name}; panel left out')
        if paths:
            jobs.append((f'fig4_{sc}_{j}.png', lambda p, paths=paths, sc=sc, j=j:
                         _overlay(paths, sc, j, res, p, velocity, preprocessing)))
    it = jobs
    if progress:
        from tqdm import tqdm
        it = tqdm(jobs, desc='figures', unit='fig', leave=False)
    for name, fn in it:
        fn(out / name)
    figs = [name for name, _ in jobs]
    res_public = {k_: v for k_, v in res.items()}
    (out / 'result.json').write_text(json.dumps(res_public, indent=1) + '\n')
    title = f'VEPD report — {root}'
    intro = (f"Velocity: **{res['velocity']}**. Preprocessing: {res['preprocessing']['description']}. "
             f"Intervals: {int(res['bootstrap']['level'] * 100)} % bootstrap, {res['bootstrap']['n_boot']} "
             f"resamples, seed {res['bootstrap']['seed']} ({res['bootstrap']['scheme']}).")
    fig_md = '\n\n'.join(
        ['## Fig. 3 — distributions against the reference',
         '![RMSE per run](fig3a_rmse.png)', '![Entropy difference per run](fig3b_entropy.png)',
         '## Fig. 4 — velocity overlays (resampled onto the metric grid)']
        + [f'![{f}]({f})' for f in figs if f.startswith('fig4_')])
    warn_md = '\n'.join(f'- {w}' for w in warnings) or 'None.'
    md = f'# {title}\n\n{intro}\n\n{tables_markdown(res)}\n\n{fig_md}\n\n## Warnings\n\n{warn_md}\n'
    (out / 'report.md').write_text(md)
    t1, t2, t3 = table_rows(res)
    imgs = ''.join(f'<figure><img src="{html.escape(f)}" alt="{html.escape(f)}"></figure>' for f in figs)
    warn_html = ''.join(f'<li>{html.escape(w)}</li>' for w in warnings) or '<li>None.</li>'
    page = (f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            '<style>body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse;'
            'margin:1em 0}td,th{border:1px solid #999;padding:3px 8px;text-align:right}img{max-width:100%}'
            '</style></head><body>'
            f'<h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>'
            f'<h2>Table I</h2>{_html_table(t1)}<h2>Table II</h2>{_html_table(t2)}'
            f'<h3>Table II intervals (95 % bootstrap, per scenario)</h3>{_html_table(interval_rows(res))}'
            f'<h2>Runs per side and scenario</h2>{_html_table(t3)}<h2>Figures</h2>{imgs}'
            f'<h2>Warnings</h2><ul>{warn_html}</ul></body></html>\n')
    (out / 'report.html').write_text(page)
    return {'markdown': out / 'report.md', 'html': out / 'report.html', 'json': out / 'result.json',
            'figures': [out / f for f in figs], 'warnings': warnings, 'result': res}
