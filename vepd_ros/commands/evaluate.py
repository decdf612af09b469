# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""``vepd evaluate ROOT``: VEPD of every model batch against the real batch (Tables I and II)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from vepd_ros.commands._args import n_boot_type, seed_type

EPILOG = """\
Example:
  vepd study --runs 10 --duration 30 --reference rtk --seed 1 --out study1
  vepd evaluate study1                       # Tables I and II, the closest model, warnings
  vepd evaluate study1 --json | head         # the result as JSON
  vepd evaluate study1 --out eval1           # eval1/result.json, table1.csv, table2.csv, runs.csv

The bootstrap seed defaults to the study seed the runs were made with (their sidecars' study_seed;
0 when they name none), so `vepd study`, `vepd evaluate` and `vepd report` print the same interval
for the same directory.
"""


def register(sub):
    p = sub.add_parser(
        'evaluate',
        help="VEPD of simulated batches against the real batch (authors' layout or ours)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
        description='Evaluate ROOT/Real/<scenario>_<j>.csv against every '
        'ROOT/Sim/<model>[_results]/ batch:\n'
        'per-run RMSE (E, m/s) and spectral-flatness difference (S, unitless), '
        'W1 (m/s), W2,\n'
        'VEPD = (W1+W2)/2 over the moving scenarios (rest excluded), per-scenario '
        'VEPD with\nranks, and a bootstrap 95 % interval. Lower is better.',
    )
    p.add_argument('root', help='directory holding Real/ and Sim/')
    p.add_argument('--json', action='store_true', help='print the result as JSON')
    p.add_argument(
        '--out',
        default=None,
        metavar='DIR',
        help='also write DIR/result.json and the tables as CSV (table1.csv, '
        "table2.csv, runs.csv: every run's E and S with its path)",
    )
    p.add_argument(
        '--overwrite',
        action='store_true',
        help='write into an --out folder that is not a previous vepd evaluate output',
    )
    p.add_argument(
        '--velocity',
        choices=('speed', 'vx', 'vector'),
        default='speed',
        help="signal compared: horizontal speed (default, the paper's columns), body vx, or the "
             'planar '
        "vector form of eq. 1 (vx, vy); vx/vector need our run files' extra columns",
    )
    p.add_argument(
        '--preprocessing',
        default='paper',
        help="'paper' (default: 15 Hz grid, 2-sample moving average of the estimate) or "
             "'unsmoothed'",
    )
    p.add_argument(
        '--k', type=int, default=None, help='expected runs per side and scenario (warn when fewer)'
    )
    p.add_argument(
        '--scenarios',
        default=None,
        help='comma-separated extra scenario names to accept besides '
             'rest/path/straight/circle/sine',
    )
    p.add_argument(
        '--n-boot',
        type=n_boot_type,
        default=1000,
        help='bootstrap resamples for the interval (0 = none)',
    )
    p.add_argument(
        '--seed',
        type=seed_type,
        default=None,
        help="bootstrap seed (default: the runs' study seed, else 0)",
    )
    p.add_argument('--runs', action='store_true', help="include every run's E and S in the JSON")
    p.add_argument(
        '--strict', action='store_true', help='exit with status 3 when the result carries warnings'
    )
    p.add_argument(
        '--allow-incomplete',
        action='store_true',
        help='exit 0 even when runs were excluded or a batch has fewer than K runs (else exit 4)',
    )
    p.add_argument(
        '--min-coverage',
        type=float,
        default=0.9,
        help='exclude a run whose sidecar coverage is below this fraction (default 0.9)',
    )
    p.set_defaults(func=run)


def run(args) -> int:
    from vepd_ros.progress import progress_enabled
    from vepd_ros.report.explain import coverage_lines, evaluate_dir
    from vepd_ros.runs.safety import check_output_dir, prepare_output_dir

    scen = [s for s in (args.scenarios or '').split(',') if s]
    if args.out:  # refused before the evaluation, not after it (contract C3)
        check_output_dir(args.out, command='evaluate', overwrite=args.overwrite)
    res = evaluate_dir(
        args.root,
        seed=args.seed,
        velocity=args.velocity,
        preprocessing=args.preprocessing,
        n_boot=args.n_boot,
        scenarios=scen,
        k=args.k,
        include_runs=args.runs or bool(args.out),
        progress=progress_enabled(args.json),
        min_coverage=args.min_coverage,
    )
    if args.out:
        from vepd_ros.report.tables import write_result

        out = prepare_output_dir(
            args.out,
            command='evaluate',
            overwrite=args.overwrite,
            replaces=['result.json', 'table1.csv', 'table2.csv', 'runs.csv'],
        )
        paths = write_result(res, out)
        if not args.runs:
            res.pop('runs', None)
            res.pop('display_names', None)
    if args.json:
        print(json.dumps(res, indent=1, allow_nan=False))
    else:
        print(format_tables(res))
    for w in res['warnings']:
        print(f'warning: {w}', file=sys.stderr)
    if args.json:  # the tables' text (stdout) lists them otherwise
        for line in coverage_lines(res):
            print(line, file=sys.stderr)
    if args.out:
        print('wrote ' + ', '.join(str(p) for p in paths.values()), file=sys.stderr)
    if not res['complete'] and not args.allow_incomplete:
        print(
            'vepd evaluate: incomplete result (runs excluded or batches short of K, listed '
            'above); exit 4 (pass --allow-incomplete to accept it)',
            file=sys.stderr,
        )
        return 4
    return 3 if (args.strict and (res['warnings'] or not res['complete'])) else 0


def _plain(text: str) -> str:
    """Markdown emphasis dropped for the terminal (code backticks kept)."""
    return text.replace('**', '')


def format_tables(res: dict, width: int = 99) -> str:
    """
    Format Tables I and II as text, then what they mean.

    Tables I and II as text, then what they mean (``report.explain``: the reference, the closest
    model and whether its interval is separated from the next, warnings on K and excluded runs, how
    to read VEPD).
    """
    from vepd_ros.report.explain import explanation_lines, fmt, fmt_interval, fmt_rank
    from vepd_ros.report.tables import side_name

    lines = [
        f'VEPD against {res["root"] if "root" in res else "the reference"} — velocity: '
        f'{res["velocity"]}, '
        f'preprocessing: {res["preprocessing"]["description"]}',
        f'combined over {", ".join(res["combined_scenarios"]) or "—"}'
        + (
            f' (excluded: {", ".join(res["excluded_from_combined"])})'
            if res['excluded_from_combined']
            else ''
        ),
        '',
        'Table I',
        f'{"model":<18}{"W1":>9}{"W2":>9}{"VEPD":>9}   95% interval       rank',
    ]
    for m, e in res['models'].items():
        ci_s = fmt_interval(e.get('ci95'), missing='—')
        lines.append(
            f'{e["display_name"]:<18}{fmt(e["W1"]):>9}{fmt(e["W2"]):>9}'
            f'{fmt(e["VEPD"]):>9}   {ci_s:<18} {fmt_rank(e["rank"])}'
        )
    sc = res['scenarios']
    lines += [
        '',
        'Table II (VEPD, rank per scenario)',
        f'{"model":<18}' + ''.join(f'{s:>16}' for s in sc),
    ]
    for m, e in res['models'].items():
        cells = []
        for s in sc:
            p = e['per_scenario'].get(s)
            cells.append(f'{fmt(p["VEPD"])} ({fmt_rank(p.get("rank"))})' if p else '—')
        lines.append(f'{e["display_name"]:<18}' + ''.join(f'{c:>16}' for c in cells))
    k = res['k']
    lines += ['', 'W1 in m/s, W2 unitless, VEPD = (W1 + W2)/2; lower is better.']
    counts = '; '.join(
        f'{side_name(res, s)}: ' + ', '.join(f'{a} {n}' for a, n in v.items())
        for s, v in k.items()
    )
    lines += textwrap.wrap(f'runs: {counts}', width, subsequent_indent='      ')
    for text in explanation_lines(res):
        lines += [''] + textwrap.wrap(_plain(text), width, break_on_hyphens=False)
    return '\n'.join(lines)
