# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd bag``: real (or recorded sim) vehicle bags in, runs in the batch layout out.

    vepd bag BAG [BAG ...] --profile art|chrono|custom --out DIR [--side real|sim] [--label L]
             [--scenario S] [--topic ROLE=/name ...]
             [--static-tf "parent child x y z roll pitch yaw" ...]
             [--ekf-config YAML] [--navsat-config YAML] [--estimate judge|recorded]
             [--split whole|ranges|stationary] [--ranges FILE] [--replace imu=MODEL | gps=MODEL]

BAG: ROS 1 ``.bag``, ROS 2 bag directory (sqlite3 or mcap) or a bare ``.db3``/``.mcap`` file. The
built-in judge (navsat_transform + ekf from robot_localization's own YAML; default the ART
configuration in config/) runs over the bag's GPS and IMU in arrival order — or ``--estimate
recorded`` takes the bag's own /odometry/filtered — and is paired with the truth topic. Runs go to
``DIR/Real/<scenario>_<j>.csv`` (side real) or ``DIR/Sim/<label>/<scenario>_<j>.csv`` with JSON
sidecars; j continues after existing runs. Everything is computed before the first file is written:
a bad bag leaves no run file. See docs/real_data.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

from vepd_ros.commands._args import (
    add_ekf_config_option,
    add_gravity_frame_option,
    add_navsat_config_option,
    add_static_tf_option,
    seed_type,
)
from vepd_ros.io.profiles import PROFILES

EXAMPLE = """example (robot_localization's Husky bag, truth = wheel odometry; its IMU frame
imu_link and its fixes' frame gps need the mountings):
  vepd bag ../shared/data/robot_localization_tests/test1.bag --profile custom --topic gps=/fix \\
      --topic imu=/imu/data --topic truth=/husky_velocity_controller/odom \\
      --static-tf "base_link imu_link 0 -0.3 0.52 1.570796327 0 -1.570796327" \\
      --static-tf "base_link gps 0 0 0 0 0 0" --scenario husky --out out
A run with no estimate or no finite speed error is an error (exit 2) naming the cause; nothing
is written."""


def register(sub):
    p = sub.add_parser(
        'bag',
        help='real vehicle bags (ROS 1/ROS 2) through the judge → runs in the batch layout',
        description=__doc__.split('\n\n', 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXAMPLE,
    )
    p.add_argument(
        'bags', nargs='+', metavar='BAG', help='ROS 1 .bag, ROS 2 bag directory, .db3 or .mcap'
    )
    p.add_argument(
        '--profile',
        default='art',
        choices=tuple(PROFILES),
        help='topic profile (default art: /fix, /imu, /sbg/gps_vel, /odometry/filtered; '
        "gazebo and carla: a simulator's recording, the simulated side with --side sim)",
    )
    p.add_argument(
        '--topic',
        action='append',
        default=[],
        metavar='ROLE=/name',
        help='override a role: gps, imu, accel, gyro, truth, odom (repeatable)',
    )
    p.add_argument(
        '--out', required=True, metavar='DIR', help='batch root (Real/ and Sim/<label>/ below it)'
    )
    p.add_argument(
        '--side',
        default='real',
        choices=('real', 'sim'),
        help='which side the runs are (default real)',
    )
    p.add_argument('--label', default=None, help='model label of a sim batch (folder Sim/<label>)')
    p.add_argument('--scenario', default='run', help='scenario label of the runs (default "run")')
    add_static_tf_option(p)
    add_ekf_config_option(p)
    add_navsat_config_option(p)
    add_gravity_frame_option(p)
    p.add_argument(
        '--estimate',
        choices=('judge', 'recorded'),
        default='judge',
        help="'judge' runs the built-in judge (default); 'recorded' uses the bag's odom topic",
    )
    p.add_argument(
        '--split',
        choices=('whole', 'ranges', 'stationary'),
        default='whole',
        help='one run per bag (default), runs from a time-ranges file, or runs between '
             'standstills',
    )
    p.add_argument('--ranges', metavar='FILE', help='time-ranges YAML/CSV for --split ranges')
    p.add_argument(
        '--time-base',
        choices=('bag', 'absolute'),
        default=None,
        help='times in --ranges: seconds from the bag start (default) or epoch seconds',
    )
    p.add_argument(
        '--stationary-threshold',
        type=float,
        default=0.05,
        metavar='M_S',
        help='--split stationary: truth speed below this is standstill (default 0.05 m/s)',
    )
    p.add_argument(
        '--min-gap', type=float, default=2.0, metavar='S', help='minimum standstill (default 2 s)'
    )
    p.add_argument(
        '--min-run', type=float, default=3.0, metavar='S', help='minimum run length (default 3 s)'
    )
    p.add_argument(
        '--pad',
        type=float,
        default=1.0,
        metavar='S',
        help='rest kept before/after each run (default 1 s)',
    )
    p.add_argument(
        '--scenarios', metavar='A,B,...', help='--split stationary: a label per run, in order'
    )
    p.add_argument(
        '--replace',
        action='append',
        default=[],
        metavar='ROLE=MODEL',
        help='hybrid experiment: imu=MODEL feeds a simulated IMU made from the truth (real GPS '
             'kept); '
        'gps=MODEL the reverse',
    )
    p.add_argument(
        '--seed', type=seed_type, default=0, help='study seed for --replace models (default 0)'
    )
    p.add_argument(
        '--sim-imu-rate', type=float, default=100.0, help='simulated IMU rate (default 100 Hz)'
    )
    p.add_argument(
        '--sim-gps-rate', type=float, default=10.0, help='simulated GPS rate (default 10 Hz)'
    )
    p.add_argument(
        '--odom-twist-frame',
        choices=('child', 'world'),
        default=None,
        help='Odometry truth: twist in the child frame (REP-105, default) or the world frame',
    )
    p.add_argument(
        '--twist-frame',
        choices=('world', 'body', 'ned'),
        default=None,
        help='TwistStamped/TwistWithCovarianceStamped truth frame (default world)',
    )
    p.add_argument(
        '--sbg-frame',
        choices=('ned', 'enu'),
        default=None,
        help='SBG velocity axes: ned (driver default) or enu (use_enu: true)',
    )
    p.add_argument(
        '--truth-stamp',
        choices=('header', 'arrival'),
        default='header',
        help='truth time: header stamp (default) or bag receive time',
    )
    p.add_argument('--quiet', action='store_true', help='no per-run lines')
    p.add_argument(
        '--overwrite',
        action='store_true',
        help='write into a DIR that is not a previous vepd bag output; the target '
        'batch folder (Real/ or Sim/<label>/) is replaced (without it, runs are '
        'added to a previous output)',
    )
    p.set_defaults(func=run)


def _replace(items) -> dict:
    out = {}
    for it in items or ():
        if '=' not in it:
            raise ValueError(f'--replace {it!r}: expected imu=MODEL or gps=MODEL')
        role, model = (x.strip() for x in it.split('=', 1))
        if role not in ('imu', 'gps') or not model:
            raise ValueError(f'--replace {it!r}: expected imu=MODEL or gps=MODEL')
        out[role] = model
    if len(out) == 2:
        raise ValueError(
            '--replace imu=... and gps=... together leave nothing real; use vepd study instead'
        )
    return out


def _check_numbers(args) -> None:
    """
    Check that the numeric options are in their stated ranges.

    The numeric options in their stated ranges, each error naming the option: simulated rates
    in the judge's frequency range (judge.config: a rate of 1e-300 Hz is an infinite period, 1e12
    Hz a zero one), the standstill options finite and non-negative.
    """
    from vepd_ros.judge.config import MAX_FREQUENCY_HZ, MIN_FREQUENCY_HZ

    for opt, v in (('--sim-imu-rate', args.sim_imu_rate), ('--sim-gps-rate', args.sim_gps_rate)):
        if not MIN_FREQUENCY_HZ <= v <= MAX_FREQUENCY_HZ:  # also refuses NaN
            raise ValueError(
                f'{opt} {v!r}: expected a rate in [{MIN_FREQUENCY_HZ:g}, {MAX_FREQUENCY_HZ:g}] Hz'
            )
    for opt, v, positive in (
        ('--stationary-threshold', args.stationary_threshold, True),
        ('--min-gap', args.min_gap, False),
        ('--min-run', args.min_run, True),
        ('--pad', args.pad, False),
    ):
        if not (math.isfinite(v) and (v > 0 if positive else v >= 0) and v <= 1e6):
            raise ValueError(
                f'{opt} {v!r}: expected a finite number {">" if positive else ">="} 0 and <= 1e6'
            )
    if args.static_tf:
        from vepd_ros.judge.navsat import StaticTF

        StaticTF.parse(args.static_tf)  # refused before the bag is read


def run(args) -> int:
    from pathlib import Path

    from vepd_ros.io.bagrun import read_bag_streams, segments_for, SplitSpec
    from vepd_ros.io.ins import TruthOptions
    from vepd_ros.io.profiles import get_profile, parse_topic_overrides
    from vepd_ros.pipelines.bag import make_runs
    from vepd_ros.naming import is_reference_label
    from vepd_ros.runs.layout import BatchWriter

    t_wall = time.perf_counter()
    _check_numbers(args)
    profile = get_profile(args.profile, parse_topic_overrides(args.topic))
    static_tf = profile.static_tf_with(args.static_tf)
    topts = dict(profile.truth_options)
    for k in ('odom_twist_frame', 'twist_frame', 'sbg_frame'):
        if getattr(args, k) is not None:
            topts[k] = getattr(args, k)
    topts['stamp'] = args.truth_stamp
    truth_options = TruthOptions(**topts)
    replace = _replace(args.replace)
    if replace and args.estimate == 'recorded':
        raise ValueError('--replace needs the judge (--estimate judge)')
    if args.side == 'sim' and not args.label:
        raise ValueError('--side sim needs --label (runs go to Sim/<label>/)')
    label = args.label if args.side == 'sim' else 'real'
    from vepd_ros.runs.safety import output_dir, safe_component

    names = [('--label', label), ('--scenario', args.scenario)]
    if args.scenarios:
        names += [('--scenarios', s.strip()) for s in args.scenarios.split(',')]
    for kind, name in names:
        safe_component(kind, name)
    if args.side == 'sim' and is_reference_label(label):  # the check `vepd evaluate` applies
        raise ValueError(
            f'--label {label!r}: a model label cannot name the reference side '
            f"('real', any case, with or without '_results'); use --side real"
        )
    ekf = navsat = None
    if args.estimate == 'judge':
        from vepd_ros.params_file import config_file  # the study's defaults

        ekf = Path(args.ekf_config) if args.ekf_config else config_file('ekf.yaml')
        navsat = Path(args.navsat_config) if args.navsat_config else config_file('navsat.yaml')
        for f, opt in ((ekf, '--ekf-config'), (navsat, '--navsat-config')):
            if not f.is_file():
                raise FileNotFoundError(f'{opt} {f}: no such file')
    spec = SplitSpec(
        args.split,
        args.ranges,
        args.time_base,
        args.stationary_threshold,
        args.min_gap,
        args.min_run,
        args.pad,
        [s.strip() for s in args.scenarios.split(',')] if args.scenarios else None,
    )
    out = Path(args.out)
    folder = Path('Real') if args.side == 'real' else Path('Sim') / label
    # decided and locked here, before any bag is read; the new output (the runs on disk and
    # these) is swapped in whole once every run is written
    with output_dir(out, command='bag', overwrite=args.overwrite,
                    replaces=[folder.as_posix()] if args.overwrite else []) as stage:
        # j numbering continues after what is on disk
        existing = {}
        if (out / folder).is_dir() and not args.overwrite:
            from vepd_ros.runs.layout import RUN_FILE_RE

            for f in (out / folder).glob('*.csv'):
                m = RUN_FILE_RE.match(f.name)
                if m:
                    existing[m['scenario']] = max(existing.get(m['scenario'], 0), int(m['j']))
        j_next = {s: j + 1 for s, j in existing.items()}
        from vepd_ros.progress import progress_bar

        runs, bag_seconds = [], 0.0
        bar = progress_bar(total=len(args.bags), desc='vepd bag', unit='bag', quiet=args.quiet)
        for bag in args.bags:
            streams = read_bag_streams(
                bag,
                profile,
                need_sensors=args.estimate == 'judge',
                need_odom=args.estimate == 'recorded',
                truth_options=truth_options,
            )
            segs = segments_for(streams, spec, args.scenario)
            bag_seconds += (streams.end_ns - streams.start_ns) / 1e9
            meta = {
                'side': args.side,
                'label': label,
                'profile': profile.name,
                'static_tf': static_tf,
                'ekf_config': str(ekf) if ekf else None,
                'navsat_config': str(navsat) if navsat else None,
                'judge': 'builtin' if args.estimate == 'judge' else 'recorded',
                'gravity_frame': args.gravity_frame,
                'study_seed': args.seed,
            }
            new = make_runs(
                streams,
                segs,
                estimate=args.estimate,
                ekf_config=ekf,
                navsat_config=navsat,
                static_tf=static_tf,
                gravity_frame=args.gravity_frame,
                replace=replace,
                seed=args.seed,
                label=label,
                j_start=j_next,
                sim_rates={'imu': args.sim_imu_rate, 'gps': args.sim_gps_rate},
                meta=meta,
            )
            for r in new:
                j_next[r.scenario] = r.meta['j'] + 1
            runs += new
            bar.update(1)
        bar.close()
        for r in runs:  # names from a ranges file: checked before any write
            safe_component('scenario', r.scenario)
        # a run without a finite score is an error, found before writing
        for r in runs:
            rmse = speed_rmse(r.record)
            if not math.isfinite(rmse):
                rec = r.record
                raise ValueError(
                    f'{r.meta["bag"]} ({r.scenario} #{r.meta["j"]}): no speed error can '
                    f'be computed '
                    f'({len(rec.se_t)} estimates over [{_span(rec.se_t)}] s, '
                    f'{len(rec.gt_t)} truth '
                    f'samples over [{_span(rec.gt_t)}] s: they must overlap by a sample '
                    f'or more)'
                )
        writer = BatchWriter(stage, args.side, label if args.side == 'sim' else None)
        for r in runs:
            path = out / writer.write(r.record, r.scenario, r.meta, j=r.meta['j']).relative_to(
                stage)
            if not args.quiet:
                rec = r.record
                print(
                    f'vepd bag: {path}  {r.meta["segment"]["duration_s"]:.1f} s, '
                    f'{len(rec.se_t)} estimates, '
                    f'{len(rec.gt_t)} truth ({r.meta["truth_type"]}); {_rmse_text(rec)}'
                )
    wall = time.perf_counter() - t_wall
    print(
        f'vepd bag: {len(runs)} run(s) from {len(args.bags)} bag(s), {bag_seconds:.1f} s of data '
        f'in {wall:.2f} s '
        f'({bag_seconds / wall if wall > 0 else float("inf"):.0f}x real time) -> {out / folder}',
        file=sys.stderr,
    )
    return 0


def speed_rmse(rec, rate_hz: float = 15.0) -> float:
    """RMSE of estimate minus truth speed on a common grid (linear interpolation, no smoothing)."""
    import numpy as np

    if len(rec.se_t) < 2 or len(rec.gt_t) < 2:
        return float('nan')
    t0 = max(rec.se_t[0], rec.gt_t[0])
    t1 = min(rec.se_t[-1], rec.gt_t[-1])
    if t1 <= t0:
        return float('nan')
    g = np.arange(t0, t1, 1.0 / rate_hz)
    return float(
        np.sqrt(
            np.mean((np.interp(g, rec.se_t, rec.se_v) - np.interp(g, rec.gt_t, rec.gt_v)) ** 2)
        )
    )


def _span(t) -> str:
    return f'{t[0]:.2f}, {t[-1]:.2f}' if len(t) else 'none'


def _rmse_text(rec) -> str:
    return f'speed RMSE {speed_rmse(rec):.3f} m/s'
