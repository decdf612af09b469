"""The ``vepd`` command: one entry, one subcommand per module in ``vepd_ros.commands``.

Each module there defines ``register(subparsers)`` that adds its parser and sets ``func(args) -> int``.
Modules are discovered, so each area (sensors, judge, study, bag, ...) owns its own file.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from vepd_ros import __version__, commands
from vepd_ros.params import ParameterError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='vepd',
        description='VEPD: quantify how realistic simulated GPS and IMU sensors are, by running real and '
                    'simulated data through the same state estimator (the judge) and comparing how its '
                    'velocity estimate errs (arXiv 2403.11000).')
    parser.add_argument('--version', action='version', version=f'vepd_ros {__version__}')
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith('_'):
            continue
        importlib.import_module(f'{commands.__name__}.{info.name}').register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, 'func', None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except ParameterError as exc:
        print(f'vepd {args.command}: {exc}', file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError) as exc:
        print(f'vepd {args.command}: error: {exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
