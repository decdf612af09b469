# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The install page's `colcon build` / `source install/setup.bash` / `vepd` lines work as written.

colcon as a ROS 2 user has it (colcon-common-extensions from PyPI, requirements-dev.txt) runs the
colcon, source and vepd lines of docs/install.md's real-ROS block exactly as written
(``real_ros_block``), in one bash in a fresh workspace, as on a real install: with the setuptools
of this venv, of Ubuntu jammy (Humble: 59.6.0) and of Ubuntu noble (Jazzy: 68.1.2). The install
space must hold every executable in lib/vepd_ros/ (where `ros2 run` and launch_ros look), `vepd` in
bin/ (found on PATH once install/setup.bash is sourced), share/vepd_ros with package.xml, launch/
and config/, the ament index marker, and the importable Python package with its bundled message
definitions.
"""

import os
from pathlib import Path
import shutil
import subprocess
import sys

import pytest
from test_package_executables import setup_py_nodes
from test_readme_commands import real_ros_block

REPO = Path(__file__).resolve().parents[1]
COLCON = Path(sys.executable).with_name('colcon')
# python3-setuptools of the Ubuntu releases the ROS 2 distributions build on.
SETUPTOOLS = {'venv': None, 'humble-jammy': '59.6.0', 'jazzy-noble': '68.1.2'}


def copy_package(dst):
    """Copy the source tree as a user clones it into src/ (no venv, caches or build output)."""
    skip = shutil.ignore_patterns('.*', '__pycache__', 'build', 'install', 'log', '*.egg-info')
    shutil.copytree(REPO, dst, ignore=skip)


def setuptools_dir(version, tmp_path):
    """Install that setuptools into a directory for PYTHONPATH (None: the venv's own)."""
    if version is None:
        return None
    target = tmp_path / f'setuptools-{version}'
    pip = subprocess.run(
        [
            sys.executable,
            '-m',
            'pip',
            'install',
            '-q',
            '--no-deps',
            '--disable-pip-version-check',
            '--target',
            str(target),
            f'setuptools=={version}',
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if pip.returncode != 0:
        pytest.skip(f'setuptools {version} not installable here (no index?): {pip.stderr[-300:]}')
    return target


@pytest.mark.slow
@pytest.mark.parametrize('flavour', sorted(SETUPTOOLS))
def test_colcon_build_gives_a_complete_install_space(tmp_path, flavour):
    if not COLCON.is_file():
        pytest.skip(f'colcon is not installed in {COLCON.parent} (make venv installs it)')
    ws = tmp_path / 'ws'
    copy_package(ws / 'src' / 'vepd_ros')
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    extra = setuptools_dir(SETUPTOOLS[flavour], tmp_path)
    if extra is not None:
        env['PYTHONPATH'] = str(extra)
        probe = 'import setuptools; print(setuptools.__version__)'
        used = subprocess.run(
            [sys.executable, '-c', probe], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        assert used == SETUPTOOLS[flavour]
    # docs/install.md's lines from `colcon build` to `vepd --help`, as written, in one shell
    # (the source carries over); colcon from this venv on PATH, as a user's is on theirs
    lines = real_ros_block()
    first = lines.index('colcon build --packages-select vepd_ros')
    steps = lines[first: lines.index('vepd --help') + 1]
    env['PATH'] = f'{COLCON.parent}{os.pathsep}{env.get("PATH", "")}'
    script = '\n'.join(['set -e', *steps, 'echo "vepd is $(command -v vepd)"'])
    build = subprocess.run(
        ['bash', '-c', script], cwd=ws, env=env, capture_output=True, text=True, timeout=900
    )
    said = f'{script}\n{build.stdout[-3000:]}{build.stderr[-3000:]}'
    assert build.returncode == 0, said
    assert build.stdout.count('usage: vepd') == 1, said  # vepd --help, from the install space
    assert f'vepd is {ws / "install" / "vepd_ros" / "bin" / "vepd"}' in build.stdout, said

    prefix = ws / 'install' / 'vepd_ros'
    for exe in setup_py_nodes() + ['vepd']:
        path = prefix / 'lib' / 'vepd_ros' / exe
        assert path.is_file() and os.access(path, os.X_OK), f'{path} missing or not executable'
    path = prefix / 'bin' / 'vepd'
    assert path.is_file() and os.access(path, os.X_OK), f'{path} missing or not executable'
    share = prefix / 'share' / 'vepd_ros'
    assert (share / 'package.xml').read_bytes() == (REPO / 'package.xml').read_bytes()
    for folder, pattern in (('launch', '*.launch.py'), ('config', '*.yaml')):
        expected = sorted(p.name for p in (REPO / folder).glob(pattern))
        assert expected and sorted(p.name for p in (share / folder).glob(pattern)) == expected
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'vepd_ros'
    assert marker.is_file()
    site = next(prefix.glob('lib/python3*/site-packages'))
    msgdefs = sorted(
        p.relative_to(REPO / 'vepd_ros') for p in (REPO / 'vepd_ros').glob('io/msgdefs/*/*.msg')
    )
    assert msgdefs and all((site / 'vepd_ros' / m).is_file() for m in msgdefs)

    # The install space runs on its own: its package first on the path, found by the ament index.
    run_env = dict(os.environ, PYTHONPATH=str(site), AMENT_PREFIX_PATH=str(prefix))
    probe = (
        'import vepd_ros; from ament_index_python.packages import '
        'get_package_share_directory as share; '
        'print(vepd_ros.__file__); print(share("vepd_ros"))'
    )
    out = subprocess.run(
        [sys.executable, '-c', probe],
        env=run_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == [str(site / 'vepd_ros' / '__init__.py'), str(share)]
    cli = subprocess.run(
        [str(prefix / 'lib' / 'vepd_ros' / 'vepd'), '--help'],
        env=run_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.startswith('usage: vepd')

    if flavour == 'venv':
        # docs/install.md's colcon test line, as written: pytest (setup.py's test extra) on the
        # ament linters, then colcon test-result: all must pass
        (line,) = [x for x in lines if x.startswith('colcon test ')]
        tests = subprocess.run(
            ['bash', '-c', line], cwd=ws, env=env, capture_output=True, text=True, timeout=900
        )
        said = f'{line}\n{tests.stdout[-3000:]}{tests.stderr[-3000:]}'
        assert tests.returncode == 0, said
        assert 'Summary: 3 tests, 0 errors, 0 failures' in tests.stdout, said
