# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The run-time environment of robot_localization built here by `make rl` (tools/rl_build).

`make rl` builds robot_localization's C++ nodes from ../shared/ros2_sources against this venv's
Kilted wheels into a cache outside the clone (`<cache>/<key>`, the key made of the sources'
SHA256SUMS, the installed ros-* wheel versions, Debian's -dev package versions and the build
script), and records which build this venv uses in `<venv>/vepd_rl.json`. This module is the one
place that turns that build into an environment in which its executables start:

- `AMENT_PREFIX_PATH`: the build's install prefix, then the venv (the wheels' ament prefix), so
  `get_package_share_directory('robot_localization')` and launch_ros find the nodes;
- `LD_LIBRARY_PATH`: the build's `rcl_nopy/` (copies of the wheels' librcl*.so without their
  `*__rosidl_generator_py.so` entries, which need libpython: a C++ node would stop at start with
  `undefined symbol: PyExc_RuntimeError`), the build's `lib/`, the venv's `lib/` and every
  `site-packages/ros_*.libs` (the wheels are auditwheel-repaired: their RPATHs point where the
  wheels were built);
- `PYTHONPATH`: the build's site-packages (tf2_msgs, geographic_msgs, ... for rclpy).

No ROS import: tests, benchmarks, launch files and the build script all use it.
`python -m vepd_ros.rl_install` prints the `export` lines (`eval "$(...)"`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import shlex
import sys
from typing import Mapping, Optional

POINTER = 'vepd_rl.json'
ROOT_ENV = 'VEPD_RL_ROOT'
COMPLETE = 'COMPLETE'
RCL_NOPY = 'rcl_nopy'
INSTALL = 'install'
EXECUTABLES = ('ekf_node', 'ukf_node', 'navsat_transform_node')


class RlBuildMissing(RuntimeError):
    """No complete robot_localization build is recorded for this venv (the message says why)."""


def _python_dir() -> str:
    return f'python{sys.version_info[0]}.{sys.version_info[1]}'


def site_packages(venv: Path) -> Path:
    """Return the venv's site-packages directory."""
    return Path(venv) / 'lib' / _python_dir() / 'site-packages'


def wheel_library_dirs(venv: Path) -> list:
    """Return `<venv>/lib` and every `site-packages/ros_*.libs` (the wheels' bundled libraries)."""
    venv = Path(venv)
    return [venv / 'lib', *sorted(site_packages(venv).glob('ros_*.libs'))]


def pointer_path(venv: Optional[Path] = None) -> Path:
    """Return the file in which `make rl` records the build this venv uses."""
    return Path(venv or sys.prefix) / POINTER


def build_root(venv: Optional[Path] = None) -> Path:
    """
    Return the complete build this venv uses (`$VEPD_RL_ROOT`, else the venv's record).

    Raises RlBuildMissing naming what is missing.
    """
    explicit = os.environ.get(ROOT_ENV)
    if explicit:
        root, origin = Path(explicit), f'${ROOT_ENV}'
    else:
        pointer = pointer_path(venv)
        if not pointer.is_file():
            raise RlBuildMissing(
                f'robot_localization is not built for this venv ({pointer} is missing): run'
                ' `make rl` (needs ../shared/ros2_sources)')
        try:
            root = Path(json.loads(pointer.read_text(encoding='utf-8'))['root'])
        except (ValueError, KeyError, TypeError) as exc:
            raise RlBuildMissing(f'{pointer}: expected JSON with "root", got an unreadable file'
                                 f' ({exc}): run `make rl`') from None
        origin = str(pointer)
    if not (root / COMPLETE).is_file():
        raise RlBuildMissing(f'{root} (from {origin}) is not a complete robot_localization build:'
                             ' run `make rl`')
    return root


def install_prefix(root: Path) -> Path:
    """Return the build's ament prefix (holding lib/robot_localization/ekf_node, ...)."""
    return Path(root) / INSTALL


def executable(name: str, root: Optional[Path] = None, venv: Optional[Path] = None) -> Path:
    """Return the path of one of robot_localization's executables (`ekf_node`, ...)."""
    root = Path(root) if root is not None else build_root(venv)
    return install_prefix(root) / 'lib' / 'robot_localization' / name


def _prepend(entries: list, current: Optional[str]) -> str:
    parts = [str(e) for e in entries]
    parts += [p for p in (current or '').split(os.pathsep) if p and p not in parts]
    return os.pathsep.join(parts)


def rl_environment(base: Optional[Mapping[str, str]] = None, venv: Optional[Path] = None,
                   root: Optional[Path] = None) -> dict:
    """
    Return `base` (default os.environ) with the built robot_localization's paths put first.

    `venv` is the venv whose wheels the nodes run on (default: this interpreter's); `root` a
    build (default: the one the venv records). Raises RlBuildMissing when there is none.
    """
    venv = Path(venv or sys.prefix)
    root = Path(root) if root is not None else build_root(venv)
    prefix = install_prefix(root)
    env = dict(os.environ if base is None else base)
    env['AMENT_PREFIX_PATH'] = _prepend([prefix, venv], env.get('AMENT_PREFIX_PATH'))
    env['LD_LIBRARY_PATH'] = _prepend(
        [root / RCL_NOPY, prefix / 'lib', *wheel_library_dirs(venv)], env.get('LD_LIBRARY_PATH'))
    env['PYTHONPATH'] = _prepend([site_packages(prefix)], env.get('PYTHONPATH'))
    return env


def env_script(venv: Optional[Path] = None, root: Optional[Path] = None) -> str:
    """Return the shell `export` lines putting the build first (`<venv>/vepd_rl_env.sh`)."""
    env = rl_environment(base={}, venv=venv, root=root)
    lines = ['# robot_localization built by `make rl`: source this file (bash/sh).']
    for name in ('AMENT_PREFIX_PATH', 'LD_LIBRARY_PATH', 'PYTHONPATH'):
        own = env[name]
        lines.append(f'export {name}={shlex.quote(own)}"${{{name}:+:${name}}}"')
    return '\n'.join(lines) + '\n'


def main() -> int:
    """Print the export lines, or the reason there is no build (exit 2)."""
    try:
        sys.stdout.write(env_script())
    except RlBuildMissing as exc:
        print(f'rl_install: {exc}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
