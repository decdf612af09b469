# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The real robot_localization built by `make rl`, for tests: the `rl_judge` fixture.

    def test_x(rl_judge, domain_id):  # the fixture: test/conftest.py imports it from here
        proc = rl_judge.start('ekf_node', '--ros-args', '-r', '__node:=ekf_filter_node',
                              '--params-file', str(rl_judge.config('ekf.yaml')),
                              domain_id=domain_id)
        ...
        assert rl_judge.stop(proc) == 0

Skips with the reason when ../shared/ros2_sources is absent or the build is missing (`make test`
runs `make rl` first when the sources are there). The environment comes from
vepd_ros.rl_install (the one place that composes it).
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import signal
import subprocess
import sys

import pytest
from ros_helpers import REPO, ros_env
from vepd_ros import rl_install

RL_SOURCES = Path(os.environ.get('VEPD_RL_SOURCES', REPO.parent / 'shared' / 'ros2_sources'))


@dataclass(frozen=True)
class RlJudge:
    """A complete build of robot_localization's nodes and the environment they start in."""

    root: Path

    @property
    def prefix(self) -> Path:
        """Return the build's ament prefix."""
        return rl_install.install_prefix(self.root)

    def executable(self, name: str) -> Path:
        """Return the path of a built executable: ekf_node, static_transform_publisher, ..."""
        for sub in ('robot_localization', 'tf2_ros'):
            path = self.prefix / 'lib' / sub / name
            if path.exists():
                return path
        raise FileNotFoundError(
            f'{name} is not in {self.prefix}/lib/robot_localization or lib/tf2_ros')

    def env(self, domain_id: int) -> dict:
        """Return the environment for a node on `domain_id`: ros_env plus the build's paths."""
        return rl_install.rl_environment(base=ros_env(domain_id), venv=Path(sys.prefix),
                                         root=self.root)

    @staticmethod
    def config(name: str) -> Path:
        """Return the repository's config/<name> (ekf.yaml, navsat.yaml)."""
        return REPO / 'config' / name

    def start(self, name: str, *args: str, domain_id: int) -> subprocess.Popen:
        """Start one built executable with `args`; stdout and stderr merged, text mode."""
        return subprocess.Popen([str(self.executable(name)), *args], env=self.env(domain_id),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    @staticmethod
    def stop(proc: subprocess.Popen, timeout_s: float = 20.0) -> int:
        """SIGINT the process (what Ctrl-C and launch send); return its exit status (`.output`)."""
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            out = proc.communicate(timeout=timeout_s)[0]  # waits, reads the rest, closes the pipe
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError(f'{proc.args[0]} did not stop within {timeout_s} s of SIGINT')
        proc.output = out or ''  # what the process printed after the test last read it
        return proc.returncode


def find_rl_judge() -> RlJudge:
    """Return the build this venv records; pytest.skip naming what is missing otherwise."""
    if not RL_SOURCES.is_dir():
        pytest.skip(f'{RL_SOURCES} not found: the real robot_localization cannot be built here'
                    ' (put shared/ beside the clone)')
    try:
        root = rl_install.build_root(Path(sys.prefix))
    except rl_install.RlBuildMissing as exc:
        pytest.skip(str(exc))
    return RlJudge(root)


@pytest.fixture(scope='session')
def rl_judge() -> RlJudge:
    """Give the real robot_localization built by `make rl`, or skip with the reason."""
    return find_rl_judge()
