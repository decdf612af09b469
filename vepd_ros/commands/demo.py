"""``vepd demo``: the main job on the embedded defaults (what ``make demo`` runs).

A short sim_judge graph over DDS through the pip runtime: truth_node on accelerated sim time, one chain per GPS
model (noise nodes → built-in navsat + EKF judge → recorder) plus the simulated RTK reference, and the evaluator,
ending with the VEPD table. ``vepd study`` runs the paper-sized study offline in seconds.
"""
from __future__ import annotations

import argparse


def register(sub):
    p = sub.add_parser('demo', help='run the main job on the embedded defaults (what `make demo` runs)')
    p.add_argument('--out', default='demo_out', help='output directory (runs, result.json, report/)')
    p.add_argument('--json', action='store_true', help='print the result as JSON')
    p.set_defaults(func=run)


DEMO_ARGS = ['k:=2', 'models:=ch_gauss,ch_rw,airsim', 'scenarios:=circle,sine', 'duration_s:=10.0',
             'time_scale:=4.0', 'seed:=1', 'judge:=builtin']


def run(args) -> int:
    from vepd_ros.commands import run as run_cmd
    print('vepd demo: the sim_judge graph over DDS (pip runtime, built-in judge): truth on /clock x4, '
          'GPS models ch_gauss, ch_rw, airsim vs a simulated RTK reference, 2 runs x 2 scenarios x 10 s each',
          flush=True)
    ns = argparse.Namespace(graph='sim_judge', assignments=DEMO_ARGS + [f'output_dir:={args.out}'], json=args.json,
                            processes=False, timeout=0.0, list=False, quiet=True)
    rc = run_cmd.run(ns)
    if rc == 0 and not args.json:
        print(f'runs, result.json and report/ (Markdown, HTML, figures) in {args.out}/; '
              f'`vepd study` runs the paper-sized study offline')
    return rc
