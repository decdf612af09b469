# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd report DIR``: Markdown + HTML report with Tables I/II, Fig.

3 histograms, Fig. 4 overlays.
"""

from __future__ import annotations

import argparse
import sys

from vepd_ros.commands._args import add_batch_options, add_bootstrap_options, add_velocity_option

EPILOG = """\
Example:
  vepd study --runs 10 --duration 30 --reference rtk --seed 1 --out study1
  vepd report study1                         # study1/report/report.html (open it in a browser)
  vepd report study1 --overlay circle:3 --overlay sine:1 --out rep

The bootstrap seed defaults to the runs' study seed (0 when they name none): the same interval as
`vepd study` and `vepd evaluate` print for the directory.

DIR may also be the output of `vepd tune` (its result.json and trials.csv): the tune report
(convergence, parameter importance, the trials around the optimum, the fresh-seed confirmation)
is written into DIR/report; --out, --overwrite and --quiet apply, the evaluation options do not.
  vepd report tune1                          # tune1 written by `vepd tune --out tune1`
"""


def register(sub):
    p = sub.add_parser(
        'report',
        help='write a Markdown/HTML VEPD report with figures for a run directory',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
        description="Evaluate DIR (Real/ + Sim/<model>/, the authors' layout or "
        'ours) and write report.md,\nreport.html, result.json, the '
        'tables as CSV (table1.csv, table2.csv, runs.csv) and\nPNG '
        'figures (default DIR/report).',
    )
    p.add_argument('dir', help='directory holding Real/ and Sim/, or a vepd tune output')
    p.add_argument('--out', default=None, help='output folder (default DIR/report)')
    p.add_argument(
        '--overlay',
        action='append',
        default=None,
        metavar='SCENARIO:J',
        help='run to overlay in Fig. 4 (repeatable; default: run 1 of each moving scenario)',
    )
    add_velocity_option(p)
    add_batch_options(p)
    add_bootstrap_options(p)
    p.add_argument(
        '--quiet', '--no-progress', dest='quiet', action='store_true', help='no progress bar'
    )
    p.add_argument(
        '--overwrite',
        action='store_true',
        help='write into an --out folder that is not a previous vepd report output',
    )
    p.set_defaults(func=run)


REPORT_ENTRIES = ('report.md', 'report.html', 'result.json', '*.csv', 'fig*.png')
"""What a study report writes in its folder (replaced when it is written again)."""


def run(args) -> int:
    from pathlib import Path

    from vepd_ros.progress import progress_enabled
    from vepd_ros.report import build_report
    from vepd_ros.runs.safety import output_dir
    from vepd_ros.yamlio import quote

    from vepd_ros.report.tune import is_tune_dir

    if is_tune_dir(args.dir):
        return _tune_report(args)
    _study_dir(args)
    overlays = None
    if args.overlay:
        overlays = []
        for o in args.overlay:
            sc, _, j = o.rpartition(':')
            if not sc or not j.isdigit():
                raise ValueError(f'--overlay expects SCENARIO:J (e.g. circle:3), got {quote(o)}')
            overlays.append((sc, int(j)))
    final = Path(args.out) if args.out else Path(args.dir) / 'report'
    with output_dir(final, command='report', overwrite=args.overwrite,
                    replaces=REPORT_ENTRIES) as stage:
        out = build_report(
            args.dir,
            stage,
            overlays=overlays,
            velocity=args.velocity,
            preprocessing=args.preprocessing,
            n_boot=args.n_boot,
            seed=args.seed,
            scenarios=[s for s in (args.scenarios or '').split(',') if s],
            k=args.k,
            progress=progress_enabled(args.quiet),
        )
    for k in ('markdown', 'html', 'json'):  # the names the output has once swapped in
        out[k] = final / Path(out[k]).name
    out['csv'] = {n: final / Path(v).name for n, v in out['csv'].items()}
    csvs = ', '.join(p.name for p in out['csv'].values())
    print(
        f'report: {out["html"]}\n        {out["markdown"]}\n'
        f'        {out["json"]} (+ {csvs} beside it)\n'
        f'        {len(out["figures"])} figures, {len(out["warnings"])} warning(s)'
    )
    for w in out['warnings']:
        print(f'warning: {w}', file=sys.stderr)
    return 0


def _study_dir(args) -> None:
    """Check DIR is a study (Real/, Sim/) before the output folder is made; name both kinds."""
    from pathlib import Path

    from vepd_ros.runs.layout import scan_root

    try:
        scan_root(args.dir, [s for s in (args.scenarios or '').split(',') if s])
    except FileNotFoundError as exc:
        if not Path(args.dir).is_dir():
            raise
        raise FileNotFoundError(
            f'{exc}; nor is it a vepd tune output (no result.json of vepd tune)'
        ) from None


def _tune_report(args) -> int:
    """Write the tune report of a ``vepd tune`` output (``report.tune.write_tune_report``)."""
    from vepd_ros.progress import progress_enabled
    from vepd_ros.report.tune import write_tune_report

    given = [f for f, v in (('--overlay', args.overlay), ('--k', args.k),
                            ('--scenarios', args.scenarios), ('--seed', args.seed))
             if v is not None]
    if given:
        raise ValueError(f'{args.dir} is a vepd tune output; {", ".join(given)}: only for a '
                         'study directory')
    page = write_tune_report(args.dir, args.out, overwrite=args.overwrite,
                             progress=progress_enabled(args.quiet))
    print(f'report: {page}\n        {page.with_name("report.md")}')
    return 0
