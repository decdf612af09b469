# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``judge:=robot_localization`` (and ``judge:=auto``) under the real ``ros2 launch``.

- A launch whose judge cannot start (here: a robot_localization prefix whose ``ekf_node`` is a real
  ELF executable that the dynamic loader refuses, exit 127, a missing shared library) ends by
  itself with a non-zero status and names the process, the status and the cause; no process is
  left behind. Runs without the robot_localization build (Jazzy and Humble tooling).
- With the build (``make rl``; skipped with the reason without it): ``judge:=robot_localization``
  under Jazzy and ``judge:=auto`` under Humble end by themselves with a result; each chain runs one
  ekf_node + navsat_transform_node pair per run, one at a time, each stopped with status 0; no
  process is left; run 2 starts from rest like run 1 (docs/judge.md's former checklist).

No number of the real judge is compared with ``judge:=builtin`` here: measured on this launch
(straight, 5 s, seed 3, three real launches; docs/judge.md, "The real judge against the built-in
judge, measured"), the real judge's per-run E lies above the built-in's on every run (+4 % to
+22 %), its own run-to-run spread is as large (up to 13 %), and 2 of 3 real launches had run 1
excluded by the start rule. A tolerance from that spread would be one widened to pass, and could
not fail on a doubled process-noise entry (+2.6 to +3.3 % in E).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys

import pytest
from ros2_tooling import DISTROS, package_executables_ready, ros2_cmd, ros2_env

pytestmark = [pytest.mark.ros, pytest.mark.slow]

SHORT = {
    'k': 2,
    'models': 'ch_rw',
    'duration_s': 2.0,
    'scenarios': 'straight',
    'time_scale': 2.0,
}


def _vepd_or_rl_processes_on_domain(domain_id: int) -> list[str]:
    """Return the command lines of vepd_ros / robot_localization processes left on the domain."""
    from test_ros2_launch import _vepd_processes_on_domain

    return _vepd_processes_on_domain(domain_id, ('vepd_ros', 'robot_localization'))


def _broken_prefix(root: Path) -> Path:
    """
    Build an ament prefix that holds a robot_localization whose executables cannot start.

    ``ekf_node`` and ``navsat_transform_node`` are compiled C programs linked against a shared
    library that is then removed: the dynamic loader refuses them with its own message and exit
    status 127, as a real build on a machine without one of its libraries does.
    """
    cc = shutil.which('cc') or shutil.which('gcc')
    if cc is None:
        pytest.skip('no C compiler (cc) to build the broken executables')
    prefix = root / 'broken_prefix'
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (index / 'robot_localization').touch()
    (prefix / 'share' / 'robot_localization').mkdir(parents=True)
    lib = prefix / 'lib' / 'robot_localization'
    lib.mkdir(parents=True)
    src = root / 'gone.c'
    src.write_text('int rl_gone(void) { return 0; }\n')
    subprocess.run(
        [cc, '-shared', '-fPIC', '-o', str(root / 'librl_gone.so'), str(src)], check=True
    )
    main = root / 'main.c'
    main.write_text('int rl_gone(void);\nint main(void) { return rl_gone(); }\n')
    for exe in ('ekf_node', 'navsat_transform_node'):
        subprocess.run(
            [cc, '-o', str(lib / exe), str(main), f'-L{root}', '-lrl_gone'], check=True
        )
    (root / 'librl_gone.so').unlink()
    return prefix


@pytest.mark.parametrize('distro, judge', zip(DISTROS, ('robot_localization', 'auto')))
def test_a_judge_that_cannot_start_ends_the_launch_non_zero_naming_it(
    distro, judge, domain_id, tmp_path
):
    package_executables_ready()
    prefix = _broken_prefix(tmp_path)
    env = ros2_env(distro, domain_id)
    env['AMENT_PREFIX_PATH'] = os.pathsep.join([str(prefix), sys.prefix])
    cmd = ros2_cmd(
        'launch',
        'vepd_ros',
        'sim_judge.launch.py',
        *[f'{k}:={v}' for k, v in SHORT.items()],
        f'judge:={judge}',  # auto: picks robot_localization, installed on AMENT_PREFIX_PATH
        f'output_dir:={tmp_path / "out"}',
    )
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    log = proc.stdout + proc.stderr
    (tmp_path / 'launch.log').write_text(log)
    assert proc.returncode != 0, log[-4000:]
    # the loader's own message, then the supervisor naming the process and the status, then the
    # launch naming the supervisor that failed and that there is no result
    assert 'error while loading shared libraries: librl_gone.so' in log, log[-4000:]
    assert 'ekf_node exited with status 127' in log or (
        'navsat_transform_node exited with status 127' in log
    ), log[-4000:]
    assert 'the launch ends without a result' in log, log[-4000:]
    assert 'judge_supervisor' in log.split('the launch ends without a result')[0][-2000:], log[
        -4000:
    ]
    assert not (tmp_path / 'out' / 'result.json').exists()
    assert not _vepd_or_rl_processes_on_domain(domain_id)


# -- the real judge ------------------------------------------------------------------------------
REAL = {**SHORT, 'duration_s': 5.0, 'seed': 3}
START_SPEED_MPS = 0.2
"""A run starts from rest: its estimates over its first 0.2 s stay below this (m/s; run 1 of this
straight ends at ~1.5 m/s, where a filter carried over would start run 2)."""
CHAINS = ('real', 'ch_rw')  # the supervisors' namespaces (reference chain, one model)
CHAIN_LINE = re.compile(r'\[(\w+)\.judge_supervisor\]: judge chain #(\d+) (up|stopped)(?:: (.*))?')


def _chain_history(log: str) -> dict:
    """Return, per chain namespace, its supervisor's 'up' / 'stopped' lines in order."""
    history = {}
    for ns, n, what, rest in CHAIN_LINE.findall(log):
        history.setdefault(ns, []).append((int(n), what, rest))
    return history


@pytest.mark.parametrize('distro, judge', zip(DISTROS, ('robot_localization', 'auto')))
def test_real_judge_launch_ends_itself_with_one_pair_per_run_and_none_left(
    distro, judge, domain_id, tmp_path, rl_judge
):
    """
    Check ``judge:=robot_localization`` (``auto``: it is on AMENT_PREFIX_PATH) end to end.

    The docs' former checklist, asserted: the launch ends by itself (status 0, a result); each
    chain runs one ekf_node + navsat_transform_node pair per run, one at a time, each stopped with
    status 0, none left afterwards; run 2 starts from rest (a filter carried over from run 1 would
    start it at run 1's final speed: ~1.5 m/s on this straight).
    """
    from vepd_ros import rl_install
    from vepd_ros.runs.format import read_run

    package_executables_ready()
    out = tmp_path / 'out'
    env = rl_install.rl_environment(
        base=ros2_env(distro, domain_id), venv=Path(sys.prefix), root=rl_judge.root
    )
    cmd = ros2_cmd(
        'launch', 'vepd_ros', 'sim_judge.launch.py',
        *[f'{k}:={v}' for k, v in REAL.items()], f'judge:={judge}', f'output_dir:={out}',
    )
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400)
    log = proc.stdout + proc.stderr
    (tmp_path / 'launch.log').write_text(log)
    # Known defect (issue 23, docs/judge.md "Run 1 with the real judge is not repeatable"): run 1's
    # first estimate landed later than 2 periods in 2 of 3 launches, because nothing held /clock
    # until the noise nodes' publishers had matched the real nodes' subscriptions. The supervisor
    # now vouches for them (chain_vouches) and 3 of 3 launches here were complete; until more runs
    # show it gone, that outcome (the evaluator excludes the run, naming it, and the launch exits 1
    # naming that cause: flagged, as every incomplete run must be) is accepted besides a result.
    late = r'straight_1\.csv .*the first sample [0-9.]+ s after the run start'
    late_run_1 = proc.returncode == 1 and 'no VEPD result' in log and re.search(late, log)
    assert proc.returncode == 0 or late_run_1, log[-4000:]
    assert 'Traceback' not in log, log[-4000:]
    history = _chain_history(log)
    for ns in CHAINS:  # up, stopped, up, stopped: one pair at a time, each stopped cleanly
        steps = [(n, what) for n, what, _ in history.get(ns, [])]
        assert steps == [(1, 'up'), (1, 'stopped'), (2, 'up'), (2, 'stopped')], (ns, steps)
        for n, what, rest in history[ns]:
            if what == 'stopped':
                assert rest == 'navsat_transform_node 0, ekf_node 0', (ns, n, rest)
    assert not _vepd_or_rl_processes_on_domain(domain_id)
    for label in ('Real', 'Sim/ch_rw'):  # run 2 from rest, as run 1
        for j in (1, 2):
            se_t, se_v, gt_t, gt_v = read_run(out / label / f'straight_{j}.csv').signal('speed')
            first = se_v[se_t < se_t[0] + 0.2]
            assert len(first) and abs(first).max() < START_SPEED_MPS, (label, j, first)
    # the evaluator writes result.json either way: a result, or (the flagged late run 1) one
    # saying there is none and which run was excluded why (complete: false)
    res = json.loads((out / 'result.json').read_text())
    assert res['complete'] == (proc.returncode == 0), res
    if not res['complete']:
        assert [ex for ex in res['excluded_runs'] if ex['path'].endswith('straight_1.csv')
                and re.search(r'the first sample [0-9.]+ s after the run start', ex['reason'])
                ], res


def test_live_eval_with_the_real_judge_rolls_over_runs_and_stops_on_ctrl_c(
    domain_id, tmp_path, rl_judge
):
    """
    live_eval.launch.py judge:=robot_localization (the Jetson's launch), fed a bag player.

    The real ekf_node and navsat_transform_node run on through the runs (live_eval segments one
    continuous stream); the rolling evaluation scores the window of k runs, and Ctrl-C ends the
    launch with status 0, no traceback, the finished runs on disk and no node left on the domain.
    The bag's fixes are in frame ``gps``: its mounting is given (without it upstream's navsat puts
    every odometry/gps at the origin, test_rl_bag_replay).
    """
    from test_ros2_launch import live_eval_rolls_until_ctrl_c
    from vepd_ros import rl_install

    env = rl_install.rl_environment(
        base=ros2_env('jazzy', domain_id), venv=Path(sys.prefix), root=rl_judge.root
    )
    result, log = live_eval_rolls_until_ctrl_c(
        domain_id, tmp_path, env, judge='robot_localization',
        static_tf='base_link gps 0 0 0 0 0 0',
    )
    assert 'ekf_node' in log and 'navsat_transform_node' in log, log[-3000:]
    assert not _vepd_or_rl_processes_on_domain(domain_id)
