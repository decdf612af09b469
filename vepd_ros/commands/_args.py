# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Argparse value types and options shared by the ``vepd`` subcommands.

Not a subcommand: the leading ``_`` keeps ``vepd_ros.cli`` from registering it. The options that
several commands take with one meaning are declared here once: ``add_velocity_option`` (evaluate,
report, study), ``add_batch_options`` (evaluate, report: how a run directory is read),
``add_bootstrap_options`` (evaluate, report, study), ``add_judge_option`` (study, tune, judge
replay), ``add_ekf_config_option`` (bag, tune, judge replay) and the judge's inputs
``add_navsat_config_option``, ``add_static_tf_option``, ``add_gravity_frame_option`` (bag, judge
replay).

A bad value is refused by argparse itself: ``vepd CMD: error: argument --seed: ...`` naming the
option, exit status 2, before any work starts.
"""

from __future__ import annotations

import argparse


def int_range(low: int, high: int | None = None, what: str = 'an integer'):
    """Build an argparse ``type``: an integer ``low <= n`` (``<= high`` when given)."""
    expected = f'{what} >= {low}' if high is None else f'{what} from {low} to {high}'

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'expected {expected}, got {text[:80]!r}') from None
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(f'expected {expected}, got {n}')
        return n

    parse.__name__ = 'integer'  # argparse's fallback message says "invalid integer value"
    return parse


seed_type = int_range(0, what='an integer seed')
"""``--seed``: numpy's SeedSequence takes any non-negative integer."""


def n_boot_type(text: str) -> int:
    """
    Parse ``--n-boot``, the number of bootstrap resamples.

    ``--n-boot``: 0 (no interval) to ``metrics.vepd.MAX_N_BOOT`` (imported when the option is
    given: the metrics pull in scipy, which ``vepd --help`` need not load).
    """
    from vepd_ros.metrics.vepd import MAX_N_BOOT

    return int_range(0, MAX_N_BOOT, 'a number of resamples')(text)


def add_overwrite_file_option(p) -> None:
    """``--overwrite``: the explicit choice to replace an existing ``--out`` FILE."""
    p.add_argument('--overwrite', action='store_true',
                   help='replace the --out file when it exists (else refused, exit 2)')


def writes_out_file(command: str):
    """
    Decorate a command that writes the FILE ``args.out`` (when given).

    The command runs holding the file's lock, after the decision that it may be written
    (``runs.safety.output_file``: new, or ``--overwrite``), so a refusal comes before any input
    is read.
    """
    import functools

    def wrap(func):
        @functools.wraps(func)
        def run(args):
            from vepd_ros.runs.safety import output_file

            with output_file(getattr(args, 'out', None), command=command,
                             overwrite=getattr(args, 'overwrite', False)):
                return func(args)

        return run

    return wrap


def add_velocity_option(p) -> None:
    """Add ``--velocity``: the velocity signal E and S are computed on."""
    p.add_argument(
        '--velocity',
        choices=('speed', 'vx', 'vector'),
        default='speed',
        help="signal compared: horizontal speed (default, the paper's columns), body vx, or the "
        "planar vector form of eq. 1 (vx, vy); vx/vector need our run files' extra columns",
    )


def add_batch_options(p) -> None:
    """Add how a directory of runs is read: ``--preprocessing``, ``--k``, ``--scenarios``."""
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


BOOTSTRAP_SEED_HELP = "bootstrap seed (default: the runs' study seed, else 0)"


def add_bootstrap_options(
    p, seed_default: int | None = None, seed_help: str = BOOTSTRAP_SEED_HELP
) -> None:
    """Add ``--n-boot`` and ``--seed``: the bootstrap interval of VEPD."""
    p.add_argument(
        '--n-boot',
        type=n_boot_type,
        default=1000,
        help='bootstrap resamples for the interval (0 = none)',
    )
    p.add_argument('--seed', type=seed_type, default=seed_default, help=seed_help)


def add_judge_option(p) -> None:
    """Add ``--judge``: the state estimator by name (``judge.registry``)."""
    p.add_argument(
        '--judge',
        default='builtin',
        metavar='NAME',
        help='judge by name (vepd_ros.judge.registry): builtin (default) or bicycle',
    )


def add_ekf_config_option(p, required: bool = False) -> None:
    """Add ``--ekf-config``: the judge's robot_localization ekf YAML (else config/ekf.yaml)."""
    p.add_argument(
        '--ekf-config',
        required=required,
        metavar='YAML',
        help='robot_localization ekf YAML' + ('' if required else ' (default config/ekf.yaml)'),
    )


def add_navsat_config_option(p, shipped_default: bool = True) -> None:
    """
    Add ``--navsat-config``: the navsat_transform YAML of the judge.

    ``shipped_default``: when absent, the command uses config/navsat.yaml (else no navsat).
    """
    p.add_argument(
        '--navsat-config',
        metavar='YAML',
        help='robot_localization navsat_transform YAML'
        + (' (default config/navsat.yaml)' if shipped_default else ''),
    )


def add_static_tf_option(p) -> None:
    """Add ``--static-tf`` (repeatable): the transforms standing in for /tf_static."""
    p.add_argument(
        '--static-tf',
        action='append',
        default=[],
        metavar='"PARENT CHILD X Y Z ROLL PITCH YAW"',
        help='a static transform for the judge (repeatable); angles in radians, fixed-axis roll '
        'pitch yaw, or 4 numbers qx qy qz qw. ROS 1 static_transform_publisher order is x y z '
        'YAW PITCH ROLL: convert.',
    )


def add_gravity_frame_option(p) -> None:
    """Add ``--gravity-frame``: where the judge removes gravity for a rotated IMU."""
    p.add_argument(
        '--gravity-frame',
        choices=('imu', 'base_link'),
        default='imu',
        help="where gravity is removed for a rotated IMU with orientation: 'imu' (ROS 1, ROS 2 "
        "after PR #946; default) or 'base_link' (robot_localization 3.5/3.6 snapshot)",
    )
