"""``vepd calibrate gps|imu FILE``: fit the noise models to a standstill log and write the nodes' YAML."""
from __future__ import annotations


def register(sub):
    p = sub.add_parser('calibrate', help='fit GPS/IMU noise-model parameters from standstill logs')
    s = p.add_subparsers(dest='calibrate_cmd', metavar='SENSOR')
    g = s.add_parser('gps', help='GPS standstill log (NMEA, UBX, CSV t,lat,lon,alt[,hdop], or a bag) → YAML')
    g.add_argument('file')
    g.add_argument('--topic', default=None, help='NavSatFix topic when FILE is a bag (default /fix)')
    g.add_argument('--model', default='ch_rw', help='model whose parameters the YAML sets (default ch_rw; '
                   'ch_gauss, gauss_markov, airsim and + combinations work too)')
    g.add_argument('--segment', type=float, nargs=2, metavar=('START', 'END'), default=None,
                   help='standstill stretch in s from the first fix (default: the whole log)')
    g.add_argument('--out', default=None, help='write the gps_noise_node parameters YAML here')
    g.set_defaults(func=gps)
    i = s.add_parser('imu', help='IMU standstill log (CSV or a bag) → Allan fit → YAML for the allan model')
    i.add_argument('file')
    i.add_argument('--topic', default=None, help='Imu topic when FILE is a bag (default /imu)')
    i.add_argument('--segment', type=float, nargs=2, metavar=('START', 'END'), default=None,
                   help='static segment in s from the start (default: the longest still stretch)')
    i.add_argument('--out', default=None, help='write the imu_noise_node parameters YAML here')
    i.set_defaults(func=imu)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])


def gps(args) -> int:
    import json

    from vepd_ros.models.calibration import fit_gps, node_params_yaml, read_gps_log
    from vepd_ros.models.gps import gps_model_params, parse_gps_model

    log = read_gps_log(args.file, args.topic)
    fit = fit_gps(log.window(*args.segment) if args.segment else log)
    spec = parse_gps_model(args.model)
    params = {}
    if spec['error'] == 'gauss':
        params.update(fit['ch_gauss'])
    elif spec['error'] == 'rw':
        params.update(fit['ch_rw'])
    elif spec['error'] == 'gm':
        params.update({k: fit['gauss_markov'][k] for k in ('gm_sigma_m', 'gm_tau_s')})
    if spec['meta'] == 'airsim':
        params.update({k: v for k, v in fit['airsim'].items() if k in ('hdop_final', 'hdop_tau_s') and v is not None})
    known = {q.name for q in gps_model_params(args.model)}
    params = {k: v for k, v in params.items() if k in known}
    print(json.dumps(fit, indent=2))
    if args.out:
        with open(args.out, 'w') as fh:
            fh.write(f"# vepd calibrate gps {args.file}\n# fitted {fit['n_fixes']} fixes over {fit['duration_s']:.1f} s "
                     f"at {fit['rate_hz']:.2f} Hz\n")
            fh.write(node_params_yaml('gps_noise_node', args.model, params))
        print(f'wrote {args.out}')
    return 0


def imu(args) -> int:
    import json

    import numpy as np

    from vepd_ros.models.calibration import fit_imu, node_params_yaml, read_imu_log

    log = read_imu_log(args.file, args.topic)
    seg = None
    if args.segment:
        a, b = np.searchsorted(log.t_s, args.segment)
        seg = slice(int(a), int(b))
    fit = fit_imu(log, seg)
    print(json.dumps(fit, indent=2))
    if args.out:
        with open(args.out, 'w') as fh:
            fh.write(f"# vepd calibrate imu {args.file}\n# static segment {fit['segment_s'][0]:.2f}–"
                     f"{fit['segment_s'][1]:.2f} s at {fit['rate_hz']:.1f} Hz\n")
            fh.write(node_params_yaml('imu_noise_node', 'allan', fit['allan']))
        print(f'wrote {args.out}')
    return 0
