# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd study``: the offline study, without transport.

Truth → sensor models → judge → runs → VEPD, no transport.
"""

from __future__ import annotations

import argparse
import sys

from vepd_ros.commands._args import (
    add_bootstrap_options,
    add_judge_option,
    add_velocity_option,
)
from vepd_ros.models import DEFAULT_IMU_MODEL

EPILOG = """\
Example (the paper's size: 5 models x 3 scenarios x 10 runs x 30 s, about 4 s on 2 cores):
  vepd study --models ch_gauss,ch_rw,airsim,ch_gauss+airsim,ch_rw+airsim \\
             --scenarios straight,circle,sine --runs 10 --duration 30 \\
             --reference rtk --seed 1 --out study1
  vepd report study1                         # study1/report/report.html with Figs. 3 and 4

Writes study1/Real/, study1/Sim/<model>/, study1/result.json and beside it table1.csv,
table2.csv and runs.csv (every run's E and S with its path). --seed seeds the runs and the
bootstrap interval; `vepd evaluate study1` and `vepd report study1` use the same seed by default.
"""


def register(sub):
    p = sub.add_parser(
        'study',
        help='offline study: simulate K runs per model and scenario, judge them, VEPD',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
        description='Truth (bicycle model) -> GPS/IMU noise models -> built-in '
        'judge (robot_localization ekf +\nnavsat with config/ekf.yaml, '
        'navsat.yaml) -> run files -> VEPD against the reference.\n'
        'Writes OUT/Real, OUT/Sim/<model>/, OUT/result.json and the '
        'tables as CSV.',
    )
    p.add_argument(
        '--models',
        default='ch_gauss,ch_rw,airsim,ch_gauss+airsim,ch_rw+airsim',
        help="comma-separated GPS models under test (default the paper's five)",
    )
    p.add_argument(
        '--gps-config',
        action='append',
        default=[],
        metavar='[LABEL=]FILE',
        help="a simulator's own configuration (SDF/URDF, CARLA JSON/YAML, MATLAB YAML) or a "
        'parameters YAML: its GPS sensor is one more model under test, Sim/LABEL/ (default the '
        "file's name); repeatable",
    )
    p.add_argument(
        '--imu-config',
        metavar='FILE',
        default=None,
        help="the IMU of every side from a file (its IMU sensor: a simulator's configuration or "
        "an imu_noise_node section, e.g. vepd tune's best_params.yaml): its model and "
        'parameters, in place of --imu',
    )
    p.add_argument('--scenarios', default='straight,circle,sine', help='comma-separated scenarios')
    p.add_argument(
        '--runs', type=int, default=10, help='runs per model and scenario (K, default 10)'
    )
    p.add_argument('--duration', type=float, default=30.0, help='seconds per run (default 30)')
    p.add_argument(
        '--reference',
        required=True,
        help='directory of real runs (REF/Real/<scenario>_<j>.csv) or a GPS model simulated as '
             'the '
        'real side (e.g. rtk)',
    )
    add_judge_option(p)
    p.add_argument(
        '--imu', default=None, help=f'IMU model for every side (default {DEFAULT_IMU_MODEL})'
    )
    add_velocity_option(p)
    add_bootstrap_options(
        p,
        seed_default=0,
        seed_help='study seed; every run seed derives from it by name, and it seeds the '
        'bootstrap interval',
    )
    p.add_argument('--out', required=True, help='output directory')
    p.add_argument('--json', action='store_true', help='print the result as JSON')
    p.add_argument(
        '--overwrite',
        action='store_true',
        help='write into a non-empty OUT that is not a previous study (its Real/, '
        'Sim/, result.json are replaced)',
    )
    p.add_argument('--quiet', action='store_true', help='no progress bar')
    p.set_defaults(func=run)


def _configured_models(items) -> dict:
    """Return label → GPS ``SensorSpec`` of every ``--gps-config [LABEL=]FILE``."""
    from vepd_ros.io.simconfig import configured_sensors

    out = {}
    for label, (_, cfg) in configured_sensors(items).items():
        out[label] = cfg.spec
        for w in cfg.warnings:
            print(f'warning: {w}', file=sys.stderr)
    return out


def _imu(args):
    """Return the study's IMU ``SensorSpec``: ``--imu-config FILE``, or the model ``--imu``."""
    from vepd_ros.models.spec import sensor_spec

    if args.imu_config is None:
        return sensor_spec('imu', model=args.imu or DEFAULT_IMU_MODEL, source='--imu')
    if args.imu is not None:
        raise ValueError('--imu and --imu-config: give one (the file names its own IMU model)')
    from vepd_ros.io.simconfig import load_sensor_file

    cfg = load_sensor_file(args.imu_config, 'imu')
    for w in cfg.warnings:
        print(f'warning: {w}', file=sys.stderr)
    return cfg.spec


def run(args) -> int:
    from pathlib import Path

    from vepd_ros.commands._output import print_result
    from vepd_ros.pipelines.study import run_study
    from vepd_ros.progress import progress_enabled
    from vepd_ros.report.tables import write_tables_csv

    configured = _configured_models(args.gps_config)
    imu = _imu(args)
    csvs: dict = {}
    res = run_study(
        [m for m in args.models.split(',') if m],
        [s for s in args.scenarios.split(',') if s],
        args.runs,
        duration_s=args.duration,
        reference=args.reference,
        out_dir=args.out,
        judge=args.judge,
        seed=args.seed,
        imu_model=imu,
        velocity=args.velocity,
        n_boot=args.n_boot,
        progress=progress_enabled(args.quiet or args.json),
        overwrite=args.overwrite,
        include_runs=True,
        configured=configured,
        # runs.csv from every run's E and S as the study scored them (not re-read from disk),
        # written into the new output before it is swapped in
        finish=lambda stage, r: csvs.update(write_tables_csv(r, stage)),
    )
    res['bootstrap']['seed_source'] = "the runs' study seed"
    res.pop('runs')
    res.pop('display_names')
    print_result(res, args.json)
    print(
        f'wrote {Path(args.out) / "result.json"}, '
        + ', '.join(str(Path(args.out) / Path(p).name) for p in csvs.values())
        + f'\nnext: vepd report {args.out}',
        file=sys.stderr,
    )
    return 0
