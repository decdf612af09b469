# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The real ROS 2 command-line tooling (``ros2 launch``, ``ros2 run``, ``ros2 pkg``) for tests.

``../shared/ros2_tooling/`` holds wheels of the unchanged upstream ``launch``, ``launch_ros``,
``ros2cli``, ``ros2launch``, ``ros2run`` and ``ros2pkg`` for Jazzy and Humble (its README says what
and from where). Each distro is installed once into its own directory,
``.venv/ros2_tooling/<distro>`` (``pip install --target``, no dependencies: the pip ROS 2 runtime
in the venv provides rclpy and the messages), next to but not inside the venv's site-packages, so
the Jazzy and the Humble sets never mix. A command then runs as a user's would: ``python -m
ros2cli.cli launch PKG FILE`` with that directory first on ``PYTHONPATH`` and
``AMENT_PREFIX_PATH=<venv>`` (the package's ``share/`` and ``lib/vepd_ros/`` executables live
there).

Tests that need the wheels skip with the reason when ``../shared/ros2_tooling`` is absent.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOLING = Path(os.environ.get('VEPD_ROS2_TOOLING', REPO.parent / 'shared' / 'ros2_tooling'))
DISTROS = ('jazzy', 'humble')
PYPI_DEPS = ('osrf-pycommon', 'lark')  # what install.sh takes from PyPI beside the wheels


def tooling_dir(distro: str) -> Path:
    """
    Return the directory holding ``distro``'s tooling, installing it on first use.

    The directory holding ``distro``'s tooling, installed on first use (skips without the wheels).
    """
    wheels = sorted((TOOLING / distro).glob('*.whl')) + sorted((TOOLING / 'common').glob('*.whl'))
    if not wheels:
        pytest.skip(
            f'ROS 2 {distro} tooling wheels not found at {TOOLING / distro} '
            '(put shared/ beside the clone or set VEPD_ROS2_TOOLING)'
        )
    target = Path(sys.prefix) / 'ros2_tooling' / distro
    stamp = target / '.installed'
    want = '\n'.join(sorted(w.name for w in wheels))
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f'.{distro}.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest processes never install at once
        if not (stamp.is_file() and stamp.read_text() == want):
            cmd = [
                sys.executable,
                '-m',
                'pip',
                'install',
                '-q',
                '--disable-pip-version-check',
                '--no-deps',
                '--upgrade',
                '--target',
                str(target),
                *map(str, wheels),
                *PYPI_DEPS,
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                pytest.fail(f'installing the {distro} tooling failed:\n{proc.stderr[-2000:]}')
            stamp.write_text(want)
    return target


def package_executables_ready() -> None:
    """
    Fail unless the package executables are installed for ``ros2 run``.

    ``ros2 run`` / launch_ros find executables in ``<prefix>/lib/vepd_ros`` (``make venv`` puts
    them there).
    """
    lib = Path(sys.prefix) / 'lib' / 'vepd_ros'
    if not (lib / 'truth_node').exists():
        pytest.fail(
            f'{lib}/truth_node is missing: run `make venv` (it installs the node executables '
            f'where '
            'ros2 run and launch_ros look)'
        )


def ros2_env(distro: str, domain_id: int) -> dict:
    """Return the environment of a ``ros2`` command with ``distro``'s tooling, on ``domain_id``."""
    from ros_helpers import ros_env

    env = ros_env(domain_id)
    env['PYTHONPATH'] = os.pathsep.join(
        [str(tooling_dir(distro)), str(REPO)]
        + ([env['PYTHONPATH']] if env.get('PYTHONPATH') else [])
    )
    env['AMENT_PREFIX_PATH'] = sys.prefix
    env['PATH'] = os.pathsep.join([str(Path(sys.prefix) / 'bin'), env.get('PATH', '')])
    env.pop('PYTHONSAFEPATH', None)
    return env


def ros2_cmd(*args: str) -> list[str]:
    """
    Return the command line of ``ros2 ARGS...`` run by the venv's Python.

    ``ros2 ARGS...`` as the real CLI's entry point (``ros2cli.cli:main``) run by the venv's Python.
    """
    return [
        sys.executable,
        '-c',
        'import sys; from ros2cli.cli import main; sys.exit(main())',
        *args,
    ]


_LAUNCH_EVENTS = ('process has died', 'exit code', 'Caught exception', 'Unknown child',
                  'Traceback', 'KeyboardInterrupt', 'no VEPD result', 'ERROR')


def launch_log_excerpt(log: str, tail_chars: int = 3000) -> str:
    """
    Return what explains a launch's outcome: its event lines from the whole log, then its tail.

    A failing launch test's message: the tail alone loses the first failure of a long log (the
    process that died first, launch's own exception), which is what names the cause.
    """
    events = [ln for ln in log.splitlines() if any(k in ln for k in _LAUNCH_EVENTS)][:40]
    return '\n'.join(['-- event lines --', *events, '-- tail --', log[-tail_chars:]])
