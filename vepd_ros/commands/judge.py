# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd judge``: the built-in robot_localization-compatible judge.

* ``vepd judge check DIR [DIR ...]`` runs golden scenario directories (rl_golden layout:
  scenario.json, raw_*.csv, golden_ticks.csv) from their raw messages, prints the largest absolute
  deviation per state and a last line ``max_abs_dev <value>``; exit 0 only within the rl_golden
  README tolerances.
* ``vepd judge replay --ekf-config YAML [--navsat-config YAML] INPUT --out CSV`` (implemented in
  ``vepd_ros.pipelines.replay``).
"""

from __future__ import annotations

import argparse
import sys

from vepd_ros.commands._args import (
    add_ekf_config_option,
    add_gravity_frame_option,
    add_judge_option,
    add_navsat_config_option,
    add_overwrite_file_option,
    add_static_tf_option,
    writes_out_file,
)

REPLAY_EXAMPLE = """example (robot_localization's Husky bag; its IMU frame imu_link and its
fixes' frame gps need the mountings):
  vepd judge replay --ekf-config config/ekf.yaml --navsat-config config/navsat.yaml \\
      --static-tf "base_link imu_link 0 -0.3 0.52 1.570796327 0 -1.570796327" \\
      --static-tf "base_link gps 0 0 0 0 0 0" \\
      ../shared/data/robot_localization_tests/test1.bag --out husky.csv
An ekf topic missing from the input, a missing transform or no output is an error (exit 2)."""

CHECK_EXAMPLE = """example:
  vepd judge check ../shared/data/rl_golden/s1_circle2d_odom_imu_gps
prints max_abs_dev per state and exits 0 only within the rl_golden tolerances."""


def register(sub):
    p = sub.add_parser(
        'judge',
        help='the built-in robot_localization-compatible judge (check, replay)',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=CHECK_EXAMPLE + '\n\n' + REPLAY_EXAMPLE,
    )
    jsub = p.add_subparsers(dest='judge_command', metavar='SUBCOMMAND')
    c = jsub.add_parser(
        'check',
        help='run golden scenario directories and compare with robot_localization',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=CHECK_EXAMPLE,
    )
    c.add_argument(
        'dirs',
        nargs='+',
        metavar='DIR',
        help='scenario directory (scenario.json, raw_*.csv, golden_ticks.csv)',
    )
    c.set_defaults(func=run_check)
    r = jsub.add_parser(
        'replay',
        help='run recorded sensor data through the judge and write its output',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=REPLAY_EXAMPLE,
    )
    add_replay_arguments(r)
    r.set_defaults(func=run_replay)
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


def add_replay_arguments(p) -> None:
    """
    Add every option of ``vepd judge replay`` to a parser (the one declaration of them).

    ``register`` builds the subcommand's parser with this; tests parse with it. The options the
    judge shares with other commands come from ``_args``.
    """
    add_ekf_config_option(p, required=True)
    add_navsat_config_option(p, shipped_default=False)
    p.add_argument('input', metavar='INPUT', help='ROS 1/ROS 2 bag, or a directory of raw_*.csv')
    p.add_argument(
        '--out', required=True, metavar='CSV', help='output CSV (/odometry/filtered stream)'
    )
    add_overwrite_file_option(p)
    add_static_tf_option(p)
    p.add_argument(
        '--remap', action='append', default=[], metavar='FROM:=TO', help='rename a bag topic'
    )
    p.add_argument(
        '--gps-topic', metavar='TOPIC', help='NavSatFix topic for navsat (default: the only one)'
    )
    p.add_argument(
        '--navsat-imu-topic', metavar='TOPIC', help="navsat's imu input (default: imu0's topic)"
    )
    p.add_argument('--ekf-node-name', metavar='NAME', help='node section of the ekf YAML')
    add_gravity_frame_option(p)
    add_judge_option(p)


@writes_out_file('judge replay')
def run_replay(args) -> int:
    from vepd_ros.pipelines.replay import run_replay as impl

    return int(impl(args) or 0)


def run_check(args) -> int:
    from pathlib import Path

    from vepd_ros.judge.golden import ATOL_POSITION, ATOL_STATE, RTOL_P, run_scenario

    worst, all_ok = 0.0, True
    for d in args.dirs:
        d = Path(d)
        if not (d / 'scenario.json').is_file() or not (d / 'golden_ticks.csv').is_file():
            print(
                f'vepd judge check: {d}: not a golden scenario directory (needs scenario.json and '
                'golden_ticks.csv)',
                file=sys.stderr,
            )
            return 2
        rep = run_scenario(d)
        print(
            f'{d.name}: {rep.n_ticks} ticks, rows {"match" if rep.rows_match else "DIFFER"}, '
            f'stamps {"match" if rep.stamps_match else "DIFFER"}'
        )
        for name, v in rep.max_abs_dev.items():
            print(f'  {name:7s} max_abs_dev {v:.3e}   P rel {rep.max_rel_dev_P[name]:.3e}')
        print(
            f'  -> {"OK" if rep.ok else "FAIL"} (tolerance: state {ATOL_STATE:g}, positions '
            f'{ATOL_POSITION:g}, '
            f'P relative {RTOL_P:g})'
        )
        worst = max(worst, rep.max_abs)
        all_ok = all_ok and rep.ok
    print(f'max_abs_dev {worst:.6e}')
    return 0 if all_ok else 1
