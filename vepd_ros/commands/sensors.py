# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd sensors``: run the GPS/IMU noise models offline.

They give the very numbers the noise nodes publish.
"""

from __future__ import annotations

import argparse

from vepd_ros.commands._args import add_overwrite_file_option, seed_type, writes_out_file
from vepd_ros.models import DEFAULT_IMU_MODEL

DEFAULT_GPS = 'ch_rw'  # the paper's random-walk GPS (simulate's example)

SIMULATE_EXAMPLE = """example (30 s circle, the paper's random-walk GPS and drift IMU, seed 5):
  vepd sensors simulate --scenario circle --gps ch_rw --imu ch_drift_paper --seed 5 --out sim_out
writes sim_out/truth.csv, gps.csv and imu.csv (the numbers the noise nodes would publish)."""

FROM_EXAMPLE = """examples:
  vepd sensors from-sdf robot.urdf --out gazebo_sensors.yaml   # Gazebo (Classic or gz) or hector
  vepd sensors from-carla objects.json --out carla_sensors.yaml # CARLA blueprint attributes
  vepd sensors from-matlab sensors.yaml --out matlab_sensors.yaml # MATLAB gpsSensor/imuSensor
prints the model each sensor becomes and writes one ROS 2 parameters file with a gps_noise_node
and an imu_noise_node section: pass it to the noise nodes (--params-file) or to
`vepd sensors simulate --gps-params FILE --imu-params FILE`."""

MODELS_EXAMPLE = """examples:
  vepd sensors models            # every GPS and IMU model
  vepd sensors models ch_rw      # the parameters of one model, with defaults and units"""


SIMULATE_FILES = ('truth', 'gps', 'imu')
"""The CSVs ``models.sensors.write_csvs`` writes (``<name>.csv``): what a re-run replaces."""


def register(sub):
    p = sub.add_parser(
        'sensors',
        help='GPS/IMU noise models: simulate a run to CSV, list models and parameters',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=SIMULATE_EXAMPLE + '\n\n' + MODELS_EXAMPLE,
    )
    s = p.add_subparsers(dest='sensors_cmd', metavar='ACTION')
    sim = s.add_parser(
        'simulate',
        help='truth → GPS and IMU models → truth.csv, gps.csv, imu.csv',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=SIMULATE_EXAMPLE,
    )
    sim.add_argument(
        '--scenario',
        default='circle',
        help='truth scenario (rest, straight, sine, circle; default circle)',
    )
    # None when not given: a --gps-params/--imu-params file names its own model unless the flag
    # is given (simulate); the defaults apply to neither
    sim.add_argument(
        '--gps', default=None, help=f'GPS model (see `vepd sensors models`; default {DEFAULT_GPS})'
    )
    sim.add_argument('--imu', default=None, help=f'IMU model (default {DEFAULT_IMU_MODEL})')
    sim.add_argument('--duration', type=float, default=30.0, help='seconds of truth (default 30)')
    sim.add_argument(
        '--seed',
        type=seed_type,
        default=0,
        help='seed of the truth and of both models (default 0)',
    )
    sim.add_argument('--gps-rate', type=float, default=None,
                     help="GPS rate in Hz (default the --gps-params file's rate_hz, else 10)")
    sim.add_argument('--imu-rate', type=float, default=None,
                     help="IMU rate in Hz (default the --imu-params file's rate_hz, else 100)")
    sim.add_argument(
        '--datum',
        type=float,
        nargs=3,
        metavar=('LAT', 'LON', 'ALT'),
        default=None,
        help='ENU datum (default the ART lab: 43.070 -89.400 260.0)',
    )
    sim.add_argument(
        '--gps-params',
        default=None,
        help='ROS 2 parameters YAML for gps_noise_node (e.g. from `vepd calibrate gps`) or a '
        "simulator's own file (as the node's config_file); its model is used unless --gps is "
        'given explicitly',
    )
    sim.add_argument('--imu-params', default=None,
                     help='ROS 2 parameters YAML for imu_noise_node, or a simulator file')
    sim.add_argument(
        '--set',
        action='append',
        default=[],
        metavar='NAME:=VALUE',
        help='override a model parameter (gps or imu, matched by name), repeatable',
    )
    sim.add_argument('--out', required=True, help='output directory')
    sim.add_argument(
        '--overwrite',
        action='store_true',
        help='write into a non-empty OUT that is not a previous '
        '`vepd sensors simulate` output (its truth.csv, gps.csv, imu.csv '
        'are replaced)',
    )
    sim.set_defaults(func=simulate, _gps_explicit=None)
    ls = s.add_parser(
        'models',
        help='list the GPS and IMU models and their parameters',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=MODELS_EXAMPLE,
    )
    ls.add_argument('model', nargs='?', help='show the parameters of one model')
    ls.set_defaults(func=models)
    for fmt, what in (('sdf', 'an SDF/URDF file (Gazebo sensors, hector GPS plugin)'),
                      ('carla', 'a CARLA attribute file (JSON or YAML)'),
                      ('matlab', 'a MATLAB gpsSensor/imuSensor parameters YAML')):
        fr = s.add_parser(
            f'from-{fmt}',
            help=f'read {what} → the noise models and their parameters YAML',
            formatter_class=argparse.RawDescriptionHelpFormatter,
            epilog=FROM_EXAMPLE,
        )
        fr.add_argument('file', help=f'{what}')
        fr.add_argument('--gps-sensor', default=None, metavar='NAME',
                        help='which GPS sensor when the file has several (default the first)')
        fr.add_argument('--imu-sensor', default=None, metavar='NAME',
                        help='which IMU sensor when the file has several (default the first)')
        fr.add_argument('--out', default=None,
                        help='write the parameters YAML here (default: print only)')
        add_overwrite_file_option(fr)
        fr.set_defaults(func=from_config, config_format=fmt)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])


def simulate(args) -> int:
    from pathlib import Path

    from vepd_ros.io.simconfig import load_sensor_file
    from vepd_ros.models.geodesy import DEFAULT_DATUM
    from vepd_ros.models.sensors import simulate_sensors, write_csvs
    from vepd_ros.models.spec import NODE_PARAMS, sensor_spec, split_specs
    from vepd_ros.params import parse_assignments
    from vepd_ros.runs.safety import check_memory_plan, check_output_dir, output_dir
    from vepd_ros.truth import generate

    # refused before the simulation, not after it (contract C3): a user's own truth.csv is kept
    check_output_dir(args.out, command='sensors simulate', overwrite=args.overwrite)
    specs = {}
    for kind, file, given, default in (('gps', args.gps_params, args.gps, DEFAULT_GPS),
                                       ('imu', args.imu_params, args.imu, DEFAULT_IMU_MODEL)):
        # a parameters file is read as the node reads it (models.spec.sensor_spec): every key
        # a node or model parameter, the model named by the file unless given explicitly
        name = default if given is None else given
        spec = load_sensor_file(file, kind).spec if file else sensor_spec(kind, model=name)
        if file and given is not None and name != spec.model:
            spec = sensor_spec(kind, {**spec.node_params, **spec.params}, model=name,
                               rate_hz=spec.rate_hz, source=spec.source)
        specs[kind] = spec
    overrides = parse_assignments(args.set)
    if overrides:
        split_specs(specs['gps'].model, specs['imu'].model, overrides)  # an unknown name: refused
        for kind in specs:
            names = {q.name for q in specs[kind].declarations()}
            mine = {k: v for k, v in overrides.items() if k in names}
            if mine:
                specs[kind] = specs[kind].with_params(mine)
    gps, imu = specs['gps'], specs['imu']

    def rate(kind: str, given: float | None) -> float:
        """--gps-rate/--imu-rate, else the file's rate_hz, else the node's default."""
        if given is not None:
            return given
        default = next(q.default for q in NODE_PARAMS[kind] if q.name == 'rate_hz')
        return specs[kind].rate_hz if specs[kind].rate_hz is not None else default

    datum = tuple(args.datum) if args.datum else tuple(
        gps.node_params.get('datum', DEFAULT_DATUM))
    gps_rate_hz, imu_rate_hz = rate('gps', args.gps_rate), rate('imu', args.imu_rate)
    # truth on its 1 kHz grid and the sensor streams, before anything is allocated
    check_memory_plan(args.duration * 8.0 * (1000 * 20 + imu_rate_hz * 20 + gps_rate_hz * 40),
                      f'--duration {args.duration:g} x --imu-rate {imu_rate_hz:g} x --gps-rate '
                      f'{gps_rate_hz:g}')
    with output_dir(  # decided and locked before the simulation, written whole after it
        args.out,
        command='sensors simulate',
        overwrite=args.overwrite,
        replaces=[f'{k}.csv' for k in SIMULATE_FILES],
    ) as stage:
        traj = generate(args.scenario, args.duration, seed=args.seed)
        run = simulate_sensors(
            traj,
            gps.make_model(args.seed),
            imu.make_model(args.seed),
            gps_rate_hz=gps_rate_hz,
            imu_rate_hz=imu_rate_hz,
            datum=datum,
        )
        paths = {k: Path(args.out) / Path(v).name for k, v in write_csvs(run, stage).items()}
    g = run.gps
    print(
        f'vepd sensors simulate: {args.scenario} {args.duration:g} s seed {args.seed}; GPS '
        f'{gps.model} '
        f'({int(g.published.sum())} fixes, error rms '
        f'{float((g.error_enu[:, :2] ** 2).sum(1).mean() ** 0.5):.4f} m), '
        f'IMU {imu.model} ({len(run.imu)} samples)'
    )
    for k, v in paths.items():
        print(f'  {k}: {v}')
    return 0


def models(args) -> int:
    from vepd_ros.models.gps import gps_model_params, GPS_MODELS, PAPER_TABLE_I
    from vepd_ros.models.imu import imu_model_params, IMU_MODELS

    if args.model:
        from vepd_ros.params import ParameterError

        try:
            specs = gps_model_params(args.model)
            kind = 'GPS'
        except ValueError:
            try:
                specs = imu_model_params(args.model)
                kind = 'IMU'
            except ValueError:
                raise ParameterError(
                    'model', args.model, 'a GPS or IMU model (the list: vepd sensors models)'
                ) from None
        print(f'{kind} model {args.model}:')
        for q in specs:
            print(f'  {q.name} = {q.default!r}  — {q.description}')
        return 0
    print('GPS models: ' + ', '.join(GPS_MODELS))
    print(
        '  (any + combination of one error token, one covariance/geometry token and modifiers '
        'outage, latency, '
        'cold_start)'
    )
    print('  paper Table I: ' + ', '.join(f'{k} = {v}' for k, v in PAPER_TABLE_I.items()))
    print('IMU models: ' + ', '.join(IMU_MODELS))
    return 0


def _pick(sensors, kind: str, name: str | None, path):
    """Return the sensor of ``kind`` named ``name`` (the first one when no name is given)."""
    of_kind = [c for c in sensors if c.kind == kind]
    if name is None:
        return of_kind[0] if of_kind else None
    for c in of_kind:
        if c.name == name:
            return c
    from vepd_ros.params import ParameterError

    raise ParameterError(f'--{kind}-sensor', name, f'a {kind.upper()} sensor of {path}: '
                         + (', '.join(repr(c.name) for c in of_kind) or 'there is none'))


@writes_out_file('sensors from-config')
def from_config(args) -> int:
    """Read a simulator's sensor configuration; print the models; write their parameters YAML."""
    import sys

    from vepd_ros.io.simconfig import READERS
    from vepd_ros.params_file import node_params_yaml, write_params_file

    sensors = READERS[args.config_format](args.file)
    chosen = [c for c in (_pick(sensors, 'gps', args.gps_sensor, args.file),
                          _pick(sensors, 'imu', args.imu_sensor, args.file)) if c is not None]
    text = ''
    for c in sensors:
        mark = '*' if c in chosen else ' '
        where = f' (line {c.line})' if c.line else ''
        rate = f', {c.rate_hz:g} Hz' if c.rate_hz else ''
        print(f'{mark} {c.kind.upper()} sensor {c.name!r}{where}: model {c.model}{rate}')
    for c in chosen:
        c.spec.make_model(0)  # checked when read (sensor_spec); built once as a node would
        node = c.spec.node
        for k, v in c.params.items():
            print(f'    {k} = {v}')
        for w in c.warnings:
            print(f'warning: {w}', file=sys.stderr)
        rate = {'rate_hz': float(c.rate_hz)} if c.rate_hz else {}
        text += node_params_yaml(node, c.model, {**rate, **c.params})
    if args.out:
        header = f'# vepd sensors from-{args.config_format} {args.file}\n'
        write_params_file(args.out, header, text)
        print(f'wrote {args.out} (' + ', '.join(
            c.spec.node for c in chosen) + ')')
    return 0
