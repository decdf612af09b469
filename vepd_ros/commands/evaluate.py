# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""``vepd evaluate ROOT``: VEPD of every model batch against the real batch (Tables I and II)."""

from __future__ import annotations

import argparse
import sys

from vepd_ros.commands._args import add_batch_options, add_bootstrap_options, add_velocity_option
from vepd_ros.commands._output import print_result

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
    add_velocity_option(p)
    add_batch_options(p)
    add_bootstrap_options(p)
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
    import contextlib
    from pathlib import Path

    from vepd_ros.progress import progress_enabled
    from vepd_ros.report.explain import coverage_lines, evaluate_dir
    from vepd_ros.runs.safety import output_dir

    scen = [s for s in (args.scenarios or '').split(',') if s]
    # --out is decided and locked before the evaluation (contract C3), written whole after it
    with (output_dir(args.out, command='evaluate', overwrite=args.overwrite,
                     replaces=['result.json', 'table1.csv', 'table2.csv', 'runs.csv'])
          if args.out else contextlib.nullcontext()) as stage:
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

            paths = {k: Path(args.out) / Path(v).name
                     for k, v in write_result(res, stage).items()}
            if not args.runs:
                res.pop('runs', None)
                res.pop('display_names', None)
    print_result(res, args.json)
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
