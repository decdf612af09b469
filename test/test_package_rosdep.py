# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Every key of package.xml resolves with the real rosdep for Humble (jammy) and Jazzy (noble).

rosdep (from PyPI) runs offline on the snapshot of the rules and distribution files in
../shared/data/rosdep: a sources list and a rosdistro index with file:// URLs in a temporary
ROS_HOME, exactly the lookup `rosdep install --from-paths src -y --ignore-src` does on a user's
machine. One key that resolves nowhere makes that command fail for the whole workspace.
"""

import os
from pathlib import Path
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parents[1]
ROSDEP = Path(sys.executable).with_name('rosdep')
TARGETS = [('humble', 'ubuntu:jammy'), ('jazzy', 'ubuntu:noble')]


@pytest.fixture(scope='module')
def rosdep_env(tmp_path_factory):
    """Environment for an offline rosdep whose cache is built from ../shared/data/rosdep."""
    shared = Path(os.environ.get('VEPD_SHARED_DATA', REPO.parent / 'shared' / 'data')) / 'rosdep'
    if not shared.is_dir():
        pytest.skip(f'rosdep rules not found at {shared} (put shared/ beside the clone)')
    if not ROSDEP.is_file():
        pytest.skip(f'rosdep is not installed in {ROSDEP.parent} (make venv installs it)')
    root = tmp_path_factory.mktemp('rosdep')
    (root / 'sources.list.d').mkdir()
    (root / 'sources.list.d' / '20-default.list').write_text(
        ''.join(f'yaml {(shared / name).as_uri()}\n' for name in ('base.yaml', 'python.yaml'))
    )
    distributions = ''.join(
        f'  {distro}:\n'
        f'    distribution: [{(shared / f"{distro}_distribution.yaml").as_uri()}]\n'
        '    distribution_status: active\n'
        '    distribution_type: ros2\n'
        '    python_version: 3\n'
        for distro, _ in TARGETS
    )
    (root / 'index-v4.yaml').write_text(
        f'%YAML 1.1\n---\ntype: index\nversion: 4\ndistributions:\n{distributions}'
    )
    env = dict(
        os.environ,
        ROS_HOME=str(root / 'home'),
        ROS_PYTHON_VERSION='3',
        ROSDEP_SOURCE_PATH=str(root / 'sources.list.d'),
        ROSDISTRO_INDEX_URL=(root / 'index-v4.yaml').as_uri(),
    )
    update = subprocess.run(
        [str(ROSDEP), 'update'], env=env, capture_output=True, text=True, timeout=300
    )
    assert update.returncode == 0, update.stdout + update.stderr
    for distro, _ in TARGETS:
        assert f'Add distro "{distro}"' in update.stdout, update.stdout
    return env


def package_keys():
    """Every dependency key of package.xml (catkin_pkg, as rosdep reads it)."""
    from catkin_pkg.package import parse_package

    pkg = parse_package(str(REPO / 'package.xml'))
    groups = (
        pkg.build_depends,
        pkg.buildtool_depends,
        pkg.build_export_depends,
        pkg.buildtool_export_depends,
        pkg.exec_depends,
        pkg.test_depends,
        pkg.doc_depends,
    )
    return sorted({dep.name for group in groups for dep in group})


def resolve(env, key, distro, os_name):
    """(installer, [packages]) rosdep resolves key to, or ('unresolved', [its message])."""
    out = subprocess.run(
        [str(ROSDEP), 'resolve', key, f'--os={os_name}', f'--rosdistro={distro}'],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in out.stdout.splitlines() if not line.startswith('#ROSDEP[')]
    if out.returncode != 0 or len(lines) != 2 or not lines[0].startswith('#'):
        return 'unresolved', [(out.stdout + out.stderr).strip()]
    return lines[0][1:], lines[1].split()


@pytest.mark.slow
@pytest.mark.parametrize('distro, os_name', TARGETS)
def test_every_package_xml_key_resolves(rosdep_env, distro, os_name):
    keys = package_keys()
    listed = subprocess.run(
        [str(ROSDEP), 'keys', '--from-paths', str(REPO), '--ignore-src'],
        env=rosdep_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert set(listed.stdout.split()) <= set(keys)  # rosdep sees the keys catkin_pkg reads
    # one by one: rosdep resolve stops at the first key it cannot resolve
    resolved = {key: resolve(rosdep_env, key, distro, os_name) for key in keys}
    missing = {k: v[1] for k, v in resolved.items() if v[0] == 'unresolved'}
    assert not missing, f'{distro} ({os_name}): no rosdep rule for {missing}'
    assert all(packages for _, packages in resolved.values()), resolved
    ros_prefix = f'ros-{distro}-'
    # ROS packages come from the distribution file, as the apt packages of that distro.
    assert resolved['sbg_driver'] == ('apt', [ros_prefix + 'sbg-driver'])
    assert resolved['robot_localization'] == ('apt', [ros_prefix + 'robot-localization'])
    assert resolved['python3-rosbags-pip'] == ('pip', ['rosbags'])


def test_what_rosdep_cannot_provide_is_in_the_pip_only_requirements():
    """Pin what rosdep cannot install (sgp4, allantools, optuna, cmaes) in the pip-only file."""

    def pins(name):
        return {
            line.split('==')[0].strip().lower()
            for line in (REPO / name).read_text().splitlines()
            if '==' in line and not line.startswith('#')
        }

    assert pins('requirements-pip-only.txt') == {'sgp4', 'allantools', 'optuna', 'cmaes'}
    assert '-r requirements-pip-only.txt' in (REPO / 'requirements.txt').read_text().splitlines()
    keys = ' '.join(package_keys())
    assert not {'sgp4', 'allantools', 'optuna', 'cmaes'} & set(keys.split())
