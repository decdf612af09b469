# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A ``ros2 launch`` of sim_judge ends with its result printed, or non-zero naming why it has none.

Under the real tooling (../shared/ros2_tooling, test/ros2_tooling.py): a launch that ends with a
result prints Tables I and II as ``vepd run`` does and where result.json went, exit 0; a launch
that ends without one (here a node of the graph dies: SIGKILL, as an out-of-memory kill would)
exits 1 and its last error names the cause (``launch_support.LaunchFailed``), not 0 after a
shutdown that leaves no result.
"""

from __future__ import annotations

import os
from pathlib import Path
import re
import signal
import subprocess
import time

import pytest
from ros2_tooling import (
    launch_log_excerpt,
    package_executables_ready,
    ros2_cmd,
    ros2_env,
)

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARGS = ['k:=2', 'models:=ch_rw', 'scenarios:=straight', 'judge:=builtin', 'time_scale:=2.0']


def _node_pids(domain_id: int, executable: str) -> list[int]:
    """Return the pids of ``executable`` processes running on ``domain_id``."""
    pids = []
    for proc in Path('/proc').iterdir():
        try:
            env = (proc / 'environ').read_bytes().split(b'\0')
            cmd = (proc / 'cmdline').read_bytes().split(b'\0')
        except OSError:
            continue
        if f'ROS_DOMAIN_ID={domain_id}'.encode() in env and any(
            c.endswith(executable.encode()) for c in cmd[:2]
        ):
            pids.append(int(proc.name))
    return pids


def test_launch_prints_the_result_tables_and_where_they_went(domain_id, tmp_path):
    package_executables_ready()
    out = tmp_path / 'out'
    cmd = ros2_cmd(
        'launch', 'vepd_ros', 'sim_judge.launch.py', *ARGS, 'duration_s:=4.0', f'output_dir:={out}'
    )
    proc = subprocess.run(
        cmd, env=ros2_env('jazzy', domain_id), capture_output=True, text=True, timeout=300
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, launch_log_excerpt(log)
    assert 'Table I' in log and 'Ch:RW' in log and 'Table II' in log, launch_log_excerpt(log)
    assert f'VEPD result: {(out / "result.json").resolve()}' in log, launch_log_excerpt(log)
    assert 'VEPD (1)' not in log


@pytest.fixture
def launch_process():
    """Start ``ros2 launch`` processes (``start(cmd, env)``), each in its own process group."""
    started = []

    def start(cmd, env):
        started.append(
            subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        )
        return started[-1]

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_launch_that_loses_a_node_exits_1_naming_the_cause(domain_id, tmp_path, launch_process):
    package_executables_ready()
    out = tmp_path / 'out'
    cmd = ros2_cmd(
        'launch', 'vepd_ros', 'sim_judge.launch.py', *ARGS, 'duration_s:=30.0',
        f'output_dir:={out}',
    )
    proc = launch_process(cmd, ros2_env('jazzy', domain_id))
    deadline = time.monotonic() + 120
    pids = []
    while time.monotonic() < deadline and not pids:
        pids = _node_pids(domain_id, 'gps_noise_node')
        time.sleep(0.2)
    assert pids, 'no gps_noise_node started within 120 s'
    time.sleep(2.0)  # let the graph come up: the failure is a node lost mid-launch
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    log, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1, launch_log_excerpt(log)
    # launch's process name: the executable and its number in the launch
    assert (
        re.search(r'no VEPD result: gps_noise_node-\d+ exited with status -9', log)
    ), launch_log_excerpt(log)
    assert (
        'gps_noise_node' in log.split('no VEPD result', 1)[1].splitlines()[0]
    ), launch_log_excerpt(log)
    assert 'exited with status -9' in log, launch_log_excerpt(log)
    assert not (out / 'result.json').exists()
