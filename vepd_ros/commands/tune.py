# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd tune``: fit a sensor model's parameters by minimising VEPD against reference runs.

The core is ``vepd_ros.pipelines.tune``; this module only translates arguments and writes OUT.
"""

from __future__ import annotations

import argparse
import json
import sys

from vepd_ros.commands._args import (
    add_ekf_config_option,
    add_judge_option,
    int_range,
    seed_type,
)
from vepd_ros.models import DEFAULT_IMU_MODEL

EPILOG = """\
Example (fit Ch:RW+AirSim's walk and HDOP to reference runs, 100 trials, 2 workers; here the
reference is a study's simulated RTK side, ref/Real/ — a directory of your vehicle's runs in the
batch layout goes the same way):
  vepd study --models ch_rw+airsim --scenarios straight,circle,sine --runs 10 --duration 30 \\
             --reference rtk --seed 1 --quiet --out ref
  vepd tune --model ch_rw+airsim \\
            --params rw_sigma,rw_max_velocity,hdop_final=0.1:3:log,hdop_tau_s=0.1:30:log \\
            --reference ref --scenarios straight,circle,sine --runs 10 --duration 30 \\
            --trials 100 --workers 2 --out tune1
  vepd study --models ch_rw+airsim --gps-config tuned=tune1/best_params.yaml \\
             --scenarios straight,circle,sine --runs 10 --duration 30 --reference ref --seed 2 \\
             --quiet --out check1                # the tuned model beside the untuned one
  (a tuned IMU, or a pair: add --imu-config tune1/best_params.yaml)

A NAME without a range is tuned over [d/10, 10 d] (log) around the model's default d, clipped to
its declared bounds; a 3-vector by its name alone is one value for every axis, NAME[i] one
component. Trials are kept in OUT/study.db (or --storage URL): the same command with the same
--study-name continues an interrupted study; several processes given one PostgreSQL URL share it.
--workers W runs W processes on the study (--storage or OUT/study.db). --model takes a GPS
model (IMU fixed: --imu), an IMU model (GPS fixed: --gps) or a pair GPS,IMU (e.g.
ch_rw+airsim,ch_drift) tuned together. --pareto: W1 and W2 as two objectives; the Pareto front
goes to result.json and trials.csv, best_params.yaml takes the front's point with least VEPD.
Writes OUT/best_params.yaml (the gps_noise_node / imu_noise_node sections of the tuned sensors:
read by the nodes and vepd study --gps-config / --imu-config), OUT/trials.csv, OUT/result.json
(best and start VEPD re-checked on fresh seeds with their bootstrap interval, and the verdict on
the model's structure: that interval against the reference's own spread) and the report page
OUT/report/report.html (its landscape grid costs a trial per point; --no-landscape skips it).
The built-in judge (config/ekf.yaml) gates the IMU accelerations out, so no IMU parameter moves
the VEPD under it: tune an IMU with --ekf-config, the ekf YAML the real runs are judged with.
"""

REPLACES = ['best_params.yaml', 'trials.csv', 'result.json', 'report']
"""What a tune writes in OUT at its end (replaced on a resume); the study storage is kept."""


def register(sub):
    p = sub.add_parser(
        'tune',
        help="fit a sensor model's parameters by minimising VEPD against reference runs "
        '(Optuna)',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
        description='Each trial simulates MODEL with its parameters through the study path '
        '(truth -> model -> judge -> runs -> metrics, common random numbers) and scores its '
        'VEPD against the reference runs.',
    )
    p.add_argument('--model', required=True,
                   help='model to tune: a GPS model (e.g. ch_rw+airsim), an IMU model (e.g. '
                   'ch_drift) or a pair GPS,IMU')
    p.add_argument(
        '--params',
        required=True,
        help="comma-separated NAME[=LOW:HIGH[:log]] or NAME[i]=...; the model's real-valued "
        'parameters (of either model of a pair)',
    )
    p.add_argument(
        '--reference',
        required=True,
        help='directory of real runs (REF/Real/<scenario>_<j>.csv) or a GPS model simulated as '
        'the real side (e.g. rtk)',
    )
    p.add_argument('--scenarios', default='straight,circle,sine', help='comma-separated scenarios')
    p.add_argument('--runs', type=int_range(2, 1000, 'a number of runs'), default=10,
                   help='runs per scenario and trial (K, default 10)')
    p.add_argument('--duration', type=float, default=30.0, help='seconds per run (default 30)')
    p.add_argument('--trials', type=int_range(1, None, 'a number of trials'), default=100,
                   help='COMPLETE trials the study should hold (default 100)')
    p.add_argument('--sampler', choices=('tpe', 'cmaes'), default='tpe',
                   help='Optuna sampler (default tpe; cmaes for several continuous parameters)')
    p.add_argument('--storage', default=None,
                   help='Optuna storage: a SQLite file or URL (default OUT/study.db), or a '
                   'postgresql:// URL shared by several workers')
    p.add_argument('--study-name', default=None,
                   help='study in the storage to create or continue (default tune-MODEL)')
    p.add_argument('--imu', default=DEFAULT_IMU_MODEL,
                   help='IMU model for both sides when --model is a GPS model')
    p.add_argument('--gps', default='rtk',
                   help='GPS model of the simulated side when --model is an IMU model')
    p.add_argument('--workers', type=int_range(1, 256, 'a number of worker processes'),
                   default=1, help='worker processes on the one study (default 1)')
    p.add_argument('--pareto', action='store_true',
                   help='W1 and W2 as two objectives (Pareto front); the chosen point is the '
                   "front's point with the least VEPD")
    add_judge_option(p)
    add_ekf_config_option(p)
    p.add_argument('--no-landscape', action='store_true',
                   help='report page without the landscape grid around the optimum (each of '
                   "its points costs one trial's time; the page then plots the trials' own "
                   'points)')
    p.add_argument('--seed', type=seed_type, default=0,
                   help='study seed: the runs, fixed across trials (every worker of a study '
                   'must give the same) and, by default, the sampler')
    p.add_argument('--sampler-seed', type=seed_type, default=None,
                   help='seed of the sampler (default --seed); give each worker sharing a study '
                   'its own, or they propose the same first points')
    p.add_argument('--out', required=True, help='output directory')
    p.add_argument('--overwrite', action='store_true',
                   help='write into a non-empty OUT that is not a previous tune output')
    p.add_argument('--json', action='store_true', help='print the result as JSON')
    p.add_argument('--quiet', action='store_true', help='no progress bar')
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from vepd_ros.pipelines import tune as core
    from vepd_ros.pipelines.study import memory_plan
    from vepd_ros.runs.safety import check_memory_plan, mark_output, output_dir

    axes = core.parse_param_specs(args.params, args.model)
    core.check_sampler(args.sampler, args.pareto)  # before the reference is simulated
    scen = [s for s in args.scenarios.split(',') if s]
    # the reference and one trial's runs, held together (before anything is simulated)
    check_memory_plan(memory_plan(2 * len(scen) * args.runs, args.duration, args.workers),
                      f'--runs {args.runs} x --duration {args.duration:g} x {len(scen)} '
                      'scenarios')
    objective = core.Objective(
        args.model,
        args.reference,
        [s for s in args.scenarios.split(',') if s],
        args.runs,
        args.duration,
        seed=args.seed,
        imu_model=args.imu,
        judge=args.judge,
        gps_model=args.gps,
        ekf_yaml=args.ekf_config,
    )
    out = Path(args.out)
    db = out / 'study.db'
    name = args.study_name or f'tune-{args.model}'
    # a storage given (or left by a previous tune) is opened and its study checked before OUT is
    # touched: a bad URL or a study continued the other way leaves everything as it was
    storage = (core.make_storage(args.storage or db) if args.storage or db.is_file()
               else None)
    if storage is not None:
        core.check_study(storage, name, args.pareto)
    live = ['study.db'] if storage is None else _storage_inside(storage, out)
    info = {'model': args.model, 'params': args.params}
    with output_dir(out, command='tune', overwrite=args.overwrite, replaces=REPLACES, live=live,
                    info=info) as stage:
        if storage is None:
            # a new study: its storage lives in OUT from the first trial (marked as a tune that
            # has not finished), so a killed tune is continued by the same command; the results
            # are swapped in beside it at the end
            mark_output(out, 'tune', state='running', **info)
            storage = core.make_storage(out / 'study.db')
        where = core.redact_url(storage.url)
        return _tune_into(args, stage, out=out, core=core, axes=axes, objective=objective,
                          storage=storage, where=where, name=name)


def _storage_inside(storage, out) -> list[str]:
    """
    Return the names in OUT of a SQLite storage file kept there (updated in place, ``live``).

    OUT/study.db of a previous tune, or a --storage file inside OUT: its trials are added while
    the tune runs, so the new output takes that file, not a copy made at the start.
    """
    from pathlib import Path

    url = getattr(storage, 'url', '') or ''
    if not url.startswith('sqlite:///'):
        return []
    f = Path(url[len('sqlite:///'):])
    try:
        return [f.resolve().relative_to(out.resolve()).as_posix()]
    except ValueError:
        return []


def _tune_into(args, stage, *, out, core, axes, objective, storage, where, name) -> int:
    """Run the trials and write the tune's output into ``stage`` (swapped in as OUT); print."""
    from vepd_ros.pipelines.tune_run import run_tune
    from vepd_ros.progress import progress_bar
    from vepd_ros.report.tune import write_tune_report

    with progress_bar(total=args.trials, desc='tune', unit='trial',
                      quiet=args.quiet or args.json) as bar:

        def on_progress(n_complete, best_vepd, per_min):
            bar.n = min(n_complete, args.trials)
            bar.set_postfix(best=f'{best_vepd:.4g}' if best_vepd is not None else '-',
                            per_min=f'{per_min:.0f}')

        result = run_tune(
            objective, axes, storage, stage, model=args.model, reference=args.reference,
            trials=args.trials, study_name=name, storage_shown=where, seed=args.seed,
            sampler_seed=args.sampler_seed, sampler=args.sampler, pareto=args.pareto,
            workers=args.workers, ekf_config=args.ekf_config, on_progress=on_progress)
    best, confirm = result.best, result.confirmation
    if args.json:
        print(json.dumps(result.to_json(), indent=1, allow_nan=False))
    else:
        def ci(c):
            return '' if c.ci95 is None else ' [{:.4g}, {:.4g}]'.format(*c.ci95)

        print(f'{args.model}: best VEPD {best.vepd:.4g} (trial {best.number} of '
              f'{result.trials_complete} complete{"; " + best.chosen if args.pareto else ""}); '
              f'on fresh seeds (seed {result.confirmation_seed}) '
              f'{confirm["best"].vepd:.4g}{ci(confirm["best"])}, untuned start '
              f'{confirm["start"].vepd:.4g}{ci(confirm["start"])}')
        for k, v in best.params.items():
            print(f'  {k}: {v}')
        if args.pareto:
            print(f'Pareto front (W1, W2): {len(result.pareto_front)} trials, in result.json')
        print(f'structure: {result.structure["text"]}')
    for a in best.on_range_edge:
        print(f'warning: best {a} lies on the edge of its range: widen it', file=sys.stderr)
    for w in best.warnings + confirm['best'].warnings:
        print(f'warning: {w}', file=sys.stderr)
    print(f'wrote {out / "best_params.yaml"}, {out / "trials.csv"}, {out / "result.json"}',
          file=sys.stderr)
    # the page: the landscape grid is the study's own objective on the study's seeds
    page = write_tune_report(
        stage, objective=None if args.no_landscape else (
            lambda v: objective(core.model_params(args.model, axes, v))),
        progress=not (args.quiet or args.json), shown_as=out)
    page = out / page.relative_to(stage)
    print(f'report: {page}', file=sys.stderr)
    return 0
