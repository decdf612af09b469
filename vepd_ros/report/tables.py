# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Lay out the result's tables as rows for text and as CSV files.

The result's tables as rows: for text (the report's Markdown and HTML) and as CSV files beside
result.json.

    table_rows(res)      -> Table I, Table II, runs per side and scenario (formatted strings)
    interval_rows(res)   -> Table II's per-scenario intervals (formatted strings)
    write_tables_csv(res, out_dir) -> {name: path} of table1, table2 and runs (with runs)
    write_result(res, out_dir)     -> result.json and the CSVs (vepd evaluate --out, vepd report)

CSV (full precision, Python's shortest round-trip repr; empty cell = no value):

* ``table1.csv``: label, model, W1_mps, W2, VEPD, ci95_low, ci95_high, rank, combined_scenarios
  (';'-joined);
* ``table2.csv``: one row per model and scenario — label, model, scenario, sim_scenario, W1_mps,
  W2, VEPD, ci95_low, ci95_high, rank, k_real, k_sim;
* ``runs.csv``: one row per run — side (real/sim), label, model, scenario, E_mps, S, path.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from vepd_ros.fileio import atomic_write_text
from vepd_ros.metrics.evaluator import REFERENCE
from vepd_ros.report.explain import fmt, fmt_interval, fmt_rank, reference_name

__all__ = ['table_rows', 'interval_rows', 'write_tables_csv', 'write_result']


def _ci(ci) -> str:
    return fmt_interval(ci, missing='—')


def side_name(res: dict, side: str) -> str:
    """Display name of a side: the model's, or the reference's (``explain.reference_name``)."""
    if side in res['models']:
        return res['models'][side]['display_name']
    if side == res.get('reference', REFERENCE):
        return reference_name(res)
    return (res.get('display_names') or {}).get(side, side)


def table_rows(res: dict):
    """
    Return the rows of Table I, Table II and the run counts.

    Table I (combined), Table II (per scenario, rank R), and the run counts K per side and
    scenario.
    """
    t1 = [['Sensor model', 'W1 (m/s)', 'W2', 'VEPD', '95% interval', 'rank']]
    for e in res['models'].values():
        t1.append(
            [
                e['display_name'],
                fmt(e['W1']),
                fmt(e['W2']),
                fmt(e['VEPD']),
                _ci(e.get('ci95')),
                fmt_rank(e.get('rank')),
            ]
        )
    sc = res['scenarios']
    t2 = [['Sensor model'] + [x for s in sc for x in (f'{s} VEPD', 'R')]]
    for e in res['models'].values():
        row = [e['display_name']]
        for s in sc:
            p = e['per_scenario'].get(s)
            row += [fmt(p['VEPD']), fmt_rank(p.get('rank'))] if p else ['—', '—']
        t2.append(row)
    t3 = [['side'] + sc] + [
        [side_name(res, s)] + [str(res['k'][s].get(x, 0)) for x in sc] for s in res['k']
    ]
    return t1, t2, t3


def interval_rows(res: dict):
    """
    Return Table II's 95 % bootstrap intervals per model and scenario.

    Table II's intervals: per model and scenario, the 95 % bootstrap interval of that scenario's
    VEPD (``per_scenario.<s>.ci95``; '—' when absent, e.g. n_boot 0).
    """
    sc = res['scenarios']
    rows = [['Sensor model'] + [f'{s} 95% interval' for s in sc]]
    for e in res['models'].values():
        rows.append(
            [e['display_name']] + [_ci((e['per_scenario'].get(s) or {}).get('ci95')) for s in sc]
        )
    return rows


def _cell(x) -> str:
    if x is None:
        return ''
    if isinstance(x, float):
        return repr(x)
    return str(x)


def _csv_text(header, rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator='\n')
    w.writerow(header)
    w.writerows([[_cell(c) for c in r] for r in rows])
    return buf.getvalue()


def csv_tables(res: dict) -> dict[str, str]:
    """{'table1': text, 'table2': text[, 'runs': text]} — the CSV files' contents."""
    t1, t2 = [], []
    for label, e in res['models'].items():
        ci = e.get('ci95') or (None, None)
        t1.append(
            [
                label,
                e['display_name'],
                e['W1'],
                e['W2'],
                e['VEPD'],
                ci[0],
                ci[1],
                e.get('rank'),
                ';'.join(e.get('combined_scenarios') or []),
            ]
        )
        for s, p in e['per_scenario'].items():
            ci = p.get('ci95') or (None, None)
            t2.append(
                [
                    label,
                    e['display_name'],
                    s,
                    p.get('sim_scenario', s),
                    p['W1'],
                    p['W2'],
                    p['VEPD'],
                    ci[0],
                    ci[1],
                    p.get('rank'),
                    p.get('k_real'),
                    p.get('k_sim'),
                ]
            )
    out = {
        'table1': _csv_text(
            [
                'label',
                'model',
                'W1_mps',
                'W2',
                'VEPD',
                'ci95_low',
                'ci95_high',
                'rank',
                'combined_scenarios',
            ],
            t1,
        ),
        'table2': _csv_text(
            [
                'label',
                'model',
                'scenario',
                'sim_scenario',
                'W1_mps',
                'W2',
                'VEPD',
                'ci95_low',
                'ci95_high',
                'rank',
                'k_real',
                'k_sim',
            ],
            t2,
        ),
    }
    if res.get('runs'):
        ref = res.get('reference', REFERENCE)
        rows = []
        # the reference first, then the models (however the runs were gathered)
        for side, by_sc in sorted(res['runs'].items(), key=lambda kv: kv[0] != ref):
            for s, v in by_sc.items():
                for e, s_, name in zip(v['E'], v['S'], v['names']):
                    rows.append(
                        [
                            'real' if side == ref else 'sim',
                            side,
                            side_name(res, side),
                            s,
                            e,
                            s_,
                            name,
                        ]
                    )
        out['runs'] = _csv_text(['side', 'label', 'model', 'scenario', 'E_mps', 'S', 'path'], rows)
    return out


def write_tables_csv(res: dict, out_dir) -> dict[str, Path]:
    """
    Write the result's tables as CSV files into ``out_dir``.

    table1.csv, table2.csv and (when ``res`` carries every run's E and S) runs.csv in
    ``out_dir``, each written atomically. Returns their paths by name.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return {
        name: atomic_write_text(out / f'{name}.csv', text, fsync=False)
        for name, text in csv_tables(res).items()
    }


def write_result(res: dict, out_dir) -> dict[str, Path]:
    """result.json and the CSV tables beside it (``write_tables_csv``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(res, indent=1, allow_nan=False) + '\n'  # a result is finite (metrics)
    paths = {'json': atomic_write_text(out / 'result.json', text, fsync=False)}
    paths.update(write_tables_csv(res, out))
    return paths
