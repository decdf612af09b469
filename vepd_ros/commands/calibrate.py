# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd calibrate gps|imu FILE``: fit the noise models to a standstill log, write nodes' YAML.

Prints a short table of the fitted parameters (``--json``: the whole fit as JSON). Only
identifiable parameters are written: an IMU record too short to show the bias floor leaves the
bias instability, its correlation time (and the rate random walk) out of the YAML, named with the
record length they need.
"""

from __future__ import annotations

import argparse
import sys

from vepd_ros.commands._args import add_overwrite_file_option, writes_out_file

GPS_EXAMPLE = """example (a standstill stretch of robot_localization's Husky bag):
  vepd calibrate gps ../shared/data/robot_localization_tests/test1.bag --topic /fix \\
      --segment 0 20 --model ch_rw --out gps_noise.yaml"""

IMU_EXAMPLE = """example (x-io handheld log; the longest still stretch is found automatically):
  vepd calibrate imu ../shared/data/real/xio_imu_handheld/sensor_data.csv --out imu_noise.yaml
Parameters the record cannot resolve are listed, with the record length needed, and not written."""


def register(sub):
    p = sub.add_parser(
        'calibrate',
        help='fit GPS/IMU noise-model parameters from standstill logs',
        description=__doc__.split('\n\n', 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            GPS_EXAMPLE.replace('example', 'examples', 1) + '\n' + IMU_EXAMPLE.split('\n', 1)[1]
        ),
    )
    s = p.add_subparsers(dest='calibrate_cmd', metavar='SENSOR')
    g = s.add_parser(
        'gps',
        help='GPS standstill log (NMEA, UBX, CSV t,lat,lon,alt[,hdop], or a bag) → YAML',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=GPS_EXAMPLE,
    )
    g.add_argument('file')
    g.add_argument(
        '--topic', default=None, help='NavSatFix topic when FILE is a bag (default /fix)'
    )
    g.add_argument(
        '--model',
        default='ch_rw',
        help='model whose parameters the YAML sets (default ch_rw; '
        'ch_gauss, gauss_markov, airsim and + combinations work too)',
    )
    g.add_argument(
        '--segment',
        type=float,
        nargs=2,
        metavar=('START', 'END'),
        default=None,
        help='standstill stretch in s from the first fix (default: the whole log)',
    )
    g.add_argument('--out', default=None, help='write the gps_noise_node parameters YAML here')
    add_overwrite_file_option(g)
    g.add_argument(
        '--json', action='store_true', help='print the whole fit as JSON instead of a table'
    )
    g.set_defaults(func=gps)
    i = s.add_parser(
        'imu',
        help='IMU standstill log (CSV or a bag) → Allan fit → YAML for the allan model',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=IMU_EXAMPLE,
    )
    i.add_argument('file')
    i.add_argument('--topic', default=None, help='Imu topic when FILE is a bag (default /imu)')
    i.add_argument(
        '--segment',
        type=float,
        nargs=2,
        metavar=('START', 'END'),
        default=None,
        help='static segment in s from the start (default: the longest still stretch)',
    )
    i.add_argument('--out', default=None, help='write the imu_noise_node parameters YAML here')
    add_overwrite_file_option(i)
    i.add_argument(
        '--json', action='store_true', help='print the whole fit as JSON instead of a table'
    )
    i.add_argument('--quiet', action='store_true', help='no progress bar')
    i.set_defaults(func=imu)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])


def _fmt(v) -> str:
    if isinstance(v, (list, tuple)):
        return '[' + ', '.join(_fmt(x) for x in v) + ']'
    if isinstance(v, float):
        return f'{v:.4g}'
    return str(v)


def _table(rows) -> str:
    """Rows of (name, value, unit) as aligned text."""
    w = max(len(r[0]) for r in rows)
    return '\n'.join(f'  {n:<{w}}  {_fmt(v):<28} {u}'.rstrip() for n, v, u in rows)


_UNITS = {
    'gauss_sigma_m': 'm',
    'rw_sigma': 'm/s^2',
    'rw_p_max_m': 'm',
    'rw_max_velocity': 'm/s',
    'rw_max_acceleration': 'm/s^2',
    'gm_sigma_m': 'm',
    'gm_tau_s': 's',
    'hdop_final': '',
    'hdop_tau_s': 's',
    'rate_hz': 'Hz',
    'gyro_arw': 'rad/s/sqrt(Hz)',
    'gyro_bias_instability': 'rad/s',
    'gyro_bias_tau_s': 's',
    'gyro_rrw': 'rad/s^2/sqrt(Hz)',
    'acc_vrw': 'm/s^2/sqrt(Hz)',
    'acc_bias_instability': 'm/s^2',
    'acc_bias_tau_s': 's',
    'acc_rrw': 'm/s^3/sqrt(Hz)',
}


@writes_out_file('calibrate gps')
def gps(args) -> int:
    import json

    from vepd_ros.io.calibration_logs import read_gps_log
    from vepd_ros.models.calibration import fit_gps
    from vepd_ros.params_file import node_params_yaml, write_params_file
    from vepd_ros.models.gps import gps_model_params, parse_gps_model

    spec = parse_gps_model(args.model)
    log = read_gps_log(args.file, args.topic)
    fit = fit_gps(log.window(*args.segment) if args.segment else log)
    params = {}
    if spec['error'] == 'gauss':
        params.update(fit['ch_gauss'])
    elif spec['error'] == 'rw':
        params.update(fit['ch_rw'])
    elif spec['error'] == 'gm':
        params.update({k: fit['gauss_markov'][k] for k in ('gm_sigma_m', 'gm_tau_s')})
    if spec['meta'] == 'airsim':
        params.update(
            {
                k: v
                for k, v in fit['airsim'].items()
                if k in ('hdop_final', 'hdop_tau_s') and v is not None
            }
        )
    known = {q.name for q in gps_model_params(args.model)}
    params = {k: v for k, v in params.items() if k in known}
    if args.json:
        print(json.dumps(fit, indent=2, ensure_ascii=False))
    else:
        print(
            f'vepd calibrate gps: {fit["source"]}: {fit["n_fixes"]} fixes over '
            f'{fit["duration_s"]:.1f} s at '
            f'{fit["rate_hz"]:.2f} Hz{"" if fit["uniform_rate"] else " (irregular rate)"}'
        )
        print(f'{args.model} parameters:')
        print(_table([(k, v, _UNITS.get(k, '')) for k, v in params.items()]))
        note = fit['airsim'].get('note')
        if spec['meta'] == 'airsim' and note:
            print(f'  note: {note}')
    if args.out:
        write_params_file(
            args.out,
            f'# vepd calibrate gps {args.file}\n# fitted {fit["n_fixes"]} fixes '
            f'over '
            f'{fit["duration_s"]:.1f} s at {fit["rate_hz"]:.2f} Hz\n',
            node_params_yaml('gps_noise_node', args.model, params),
        )
        print(f'wrote {args.out}', file=sys.stderr if args.json else sys.stdout)
    return 0


@writes_out_file('calibrate imu')
def imu(args) -> int:
    import json

    import numpy as np
    from vepd_ros.io.calibration_logs import read_imu_log
    from vepd_ros.models.calibration import fit_imu
    from vepd_ros.params_file import node_params_yaml, write_params_file
    from vepd_ros.progress import progress_bar

    log = read_imu_log(args.file, args.topic)
    seg = None
    if args.segment:
        a, b = np.searchsorted(log.t_s, args.segment)
        seg = slice(int(a), int(b))
    quiet = args.quiet or args.json
    with progress_bar(total=6, desc='calibrate imu', unit='axis', quiet=quiet) as bar:
        fit = fit_imu(log, seg, on_axis=lambda: bar.update(1))
    if args.json:
        print(json.dumps(fit, indent=2, ensure_ascii=False))
    else:
        a0, a1 = fit['segment_s']
        print(
            f'vepd calibrate imu: {fit["source"]}: static segment {a0:.2f} to {a1:.2f} s '
            f'({a1 - a0:.1f} s) '
            f'at {fit["rate_hz"]:.1f} Hz'
        )
        print('allan parameters (median of the three axes):')
        print(_table([(k, v, _UNITS.get(k, '')) for k, v in fit['allan'].items()]))
        if fit['not_identified']:
            print('not identified, not written (the record cannot resolve them):')
            for k, v in fit['not_identified'].items():
                print(
                    f'  {k}: needs a static record of >= {v["need_s"]:.0f} s (this one: '
                    f'{v["have_s"]:.1f} s)'
                )
    if args.out:
        write_params_file(
            args.out,
            f'# vepd calibrate imu {args.file}\n# static segment '
            f'{fit["segment_s"][0]:.2f} to '
            f'{fit["segment_s"][1]:.2f} s at {fit["rate_hz"]:.1f} Hz'
            + ''.join(f'\n# not identified (not written): {k}' for k in fit['not_identified'])
            + '\n',
            node_params_yaml('imu_noise_node', 'allan', fit['allan']),
        )
        print(f'wrote {args.out}', file=sys.stderr if args.json else sys.stdout)
    return 0
