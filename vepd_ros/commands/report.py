"""``vepd report DIR``: Markdown + HTML report with Tables I/II, Fig. 3 histograms, Fig. 4 overlays."""
from __future__ import annotations

import sys


def register(sub):
    p = sub.add_parser('report', help='write a Markdown/HTML VEPD report with figures for a run directory',
                       description='Evaluate DIR (Real/ + Sim/<model>/, the authors\' layout or ours) and write '
                                   'report.md, report.html, result.json and PNG figures (default DIR/report).')
    p.add_argument('dir', help='directory holding Real/ and Sim/')
    p.add_argument('--out', default=None, help='output folder (default DIR/report)')
    p.add_argument('--overlay', action='append', default=None, metavar='SCENARIO:J',
                   help='run to overlay in Fig. 4 (repeatable; default: run 1 of each moving scenario)')
    p.add_argument('--velocity', choices=('speed', 'vx', 'vector'), default='speed')
    p.add_argument('--preprocessing', default='paper')
    p.add_argument('--k', type=int, default=None)
    p.add_argument('--scenarios', default=None, help='extra scenario names to accept (comma-separated)')
    p.add_argument('--n-boot', type=int, default=1000)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--no-progress', action='store_true')
    p.add_argument('--overwrite', action='store_true',
                   help='write into an --out folder that is not a previous vepd report output')
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from vepd_ros.report import build_report
    from vepd_ros.runs.safety import prepare_output_dir
    overlays = None
    if args.overlay:
        overlays = []
        for o in args.overlay:
            sc, _, j = o.rpartition(':')
            if not sc or not j.isdigit():
                raise ValueError(f'--overlay expects SCENARIO:J (e.g. circle:3), got {o!r}')
            overlays.append((sc, int(j)))
    out_dir = prepare_output_dir(Path(args.out) if args.out else Path(args.dir) / 'report',
                                 command='report', overwrite=args.overwrite)
    out = build_report(args.dir, out_dir, overlays, args.velocity, args.preprocessing, args.n_boot, args.seed,
                       [s for s in (args.scenarios or '').split(',') if s], args.k, progress=not args.no_progress)
    print(f"report: {out['markdown']}\n        {out['html']}\n        {len(out['figures'])} figures, "
          f"{len(out['warnings'])} warning(s)")
    for w in out['warnings']:
        print(f'warning: {w}', file=sys.stderr)
    return 0
