# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the package under the real ROS 2 tooling, as a robotics user starts it.

The package under the real ROS 2 tooling (Jazzy and Humble ``launch``/``launch_ros``/``ros2cli``,
unchanged upstream wheels from ../shared/ros2_tooling; see test/ros2_tooling.py), as a robotics
user starts it.

- ``ros2 launch vepd_ros sim_judge.launch.py ...`` ends by itself with status 0 once the evaluator
  has its result, every node exits cleanly, and its run files, sidecars and result.json equal
  ``vepd run``'s for the same arguments and seeds byte for byte — the launch at time_scale 1.0,
  ``vepd run`` at 2.0: the graph is on truth_node's /clock at every time_scale. Separate processes
  step in lockstep with truth_node (message counts on ``/vepd/progress``), so no run loses or
  reorders messages, on a loaded machine too, without re-runs.
- ``ros2 launch vepd_ros bag_replay.launch.py ...`` equals ``vepd run bag_replay`` for the same
  arguments (K, each real run's E, W1 and W2 bit for bit; both step bag_player_node's /clock in
  lockstep), and ``vepd run bag_replay`` twice gives the same bits.
- Ctrl-C (SIGINT to the whole process group, twice) in the middle of the runs: exit 0, no
  traceback, only complete runs on disk.
- ``ros2 pkg executables vepd_ros`` lists every node; ``ros2 run vepd_ros <node> --help`` prints
  its parameters and exits 0 without starting.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest
from ros2_tooling import (
    DISTROS,
    launch_log_excerpt,
    package_executables_ready,
    ros2_cmd,
    ros2_env,
)
from ros_helpers import DomainLease, ros_env
from vepd_ros.runs.safety import MARKER_NAME
from vepd_ros.streams import TOPIC_ART_GPS_FIX, TOPIC_ART_IMU

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NODES = (
    'bag_player_node',
    'evaluator_node',
    'gps_noise_node',
    'imu_noise_node',
    'judge_node',
    'judge_supervisor_node',
    'navsat_node',
    'recorder_node',
    'truth_node',
)
ARGS = {
    'k': 2,
    'models': 'ch_rw',
    'duration_s': 5.0,
    'scenarios': 'straight',
    'judge': 'builtin',
    'time_scale': 2.0,
}


@pytest.fixture(scope='module')
def vepd_run_result(tmp_path_factory):
    """
    Return ``vepd run sim_judge``'s result for ARGS, which the launch must reproduce.

    ``vepd run sim_judge`` (one process, lockstep) for ARGS: the result the launch must reproduce.
    """
    from test_sim_judge_graph import vepd_run

    out = tmp_path_factory.mktemp('vepd_run')
    lease = DomainLease()
    try:
        result = vepd_run(ARGS, out, lease.domain_id)
    finally:
        lease.release()
    return {**result, 'test_output_dir': str(out)}


@pytest.mark.parametrize('distro', DISTROS)
def test_sim_judge_launch_ends_itself_and_equals_vepd_run(
    distro, domain_id, tmp_path, vepd_run_result
):
    from test_sim_judge_graph import assert_same_outputs

    package_executables_ready()
    out = tmp_path / 'out'
    cmd = ros2_cmd(
        'launch',
        'vepd_ros',
        'sim_judge.launch.py',
        *[f'{k}:={v}' for k, v in {**ARGS, 'time_scale': 1.0}.items()],
        f'output_dir:={out}',
    )
    proc = subprocess.run(
        cmd, env=ros2_env(distro, domain_id), capture_output=True, text=True, timeout=1500
    )
    log = proc.stdout + proc.stderr
    (tmp_path / 'launch.log').write_text(log)  # the whole log (a hang's stack dump) stays beside
    assert proc.returncode == 0, launch_log_excerpt(log)
    assert 'Traceback' not in log, launch_log_excerpt(log)
    assert log.count('process has finished cleanly') == 12, log[
        -4000:
    ]  # 2 chains x 5 + truth + evaluator
    # lockstep by message counts on sim time: the same callbacks in the same order as vepd run, so
    # the same bits (before, at time_scale 1.0 on the wall clock: ch_rw W1 0.0347, then 0.0151,
    # then no result, against vepd run's 0.0220, 0.0319, 0.0253)
    assert_same_outputs(out, Path(vepd_run_result['test_output_dir']))
    assert len(sorted(out.rglob('straight_*.json'))) == 4


def test_ctrl_c_in_the_middle_exits_0_without_traceback_and_leaves_only_complete_runs(
    domain_id, tmp_path
):
    package_executables_ready()
    out = tmp_path / 'out'
    args = {**ARGS, 'duration_s': 4.0, 'k': 3}
    cmd = ros2_cmd(
        'launch',
        'vepd_ros',
        'sim_judge.launch.py',
        *[f'{k}:={v}' for k, v in args.items()],
        f'output_dir:={out}',
    )
    proc = subprocess.Popen(
        cmd,
        env=ros2_env('jazzy', domain_id),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(out.rglob('straight_1.csv')):
            time.sleep(0.2)
        assert list(out.rglob('straight_1.csv')), 'no run finished within 120 s'
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole group
        time.sleep(0.3)
        # and again, impatiently, to our nodes. Not to `ros2 launch` itself: upstream launch
        # restores Python's default SIGINT handling once its run() has ended, so a second Ctrl-C
        # landing after that, while the interpreter exits, ends it with -2 (seen in CI once the
        # nodes shut down within 0.3 s); that window belongs to launch, not to vepd_ros
        for pid in _group_members(proc.pid):
            if pid != proc.pid:
                try:
                    os.kill(pid, signal.SIGINT)
                except ProcessLookupError:  # it ended (and was reaped) since the listing
                    pass
        log, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, launch_log_excerpt(log)
    assert 'Traceback' not in log and 'KeyboardInterrupt' not in log, launch_log_excerpt(log)
    assert 'exit code' not in log or 'exit code 0' in log, launch_log_excerpt(log)
    # no partial file (the output directory's marker, .vepd-output.json, is whole and stays)
    assert not [
        p
        for p in out.rglob('*')
        if (p.name.startswith('.') and p.name != MARKER_NAME) or p.suffix in ('.tmp', '.part')
    ]
    for csv in out.rglob('straight_*.csv'):  # every run on disk is whole: it has its sidecar
        meta = json.loads(csv.with_suffix('.json').read_text())
        assert meta['coverage']['truth']['received'] >= meta['coverage']['truth']['expected'] - 1


def _group_members(pgid: int) -> list[int]:
    """Return the live processes of process group ``pgid`` (from /proc)."""
    pids = []
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            fields = stat.read_text().rsplit(')', 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[2]) == pgid:  # after the command: state, ppid, pgrp
            pids.append(int(stat.parent.name))
    return pids


@pytest.mark.parametrize('distro', DISTROS)
def test_ros2_pkg_executables_and_ros2_run_help(distro, domain_id):
    package_executables_ready()
    env = ros2_env(distro, domain_id)
    proc = subprocess.run(
        ros2_cmd('pkg', 'executables', 'vepd_ros'),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    # every node, and the vepd CLI (colcon's setup.cfg and make venv both put it in lib/vepd_ros)
    assert sorted(line.split()[1] for line in proc.stdout.splitlines()) == sorted([*NODES, 'vepd'])
    for node in NODES:
        proc = subprocess.run(
            ros2_cmd('run', 'vepd_ros', node, '--help'),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, (node, proc.stderr)
        assert proc.stdout.startswith(f'usage: ros2 run vepd_ros {node}'), (
            node,
            proc.stdout[:300],
        )
        if node not in ('judge_node', 'navsat_node'):
            assert 'parameters:' in proc.stdout and 'default' in proc.stdout, (node, proc.stdout)
    text = subprocess.run(
        ros2_cmd('run', 'vepd_ros', 'truth_node', '--help'),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert 'time_scale (float, default 1.0)' in text and 'pace_nodes (int, default 0)' in text


def _bag_and_reference(tmp_path) -> list[str]:
    """
    Write a 12 s ART-layout bag and a stored simulated batch; return the bag_replay arguments.

    The bag (/fix, /imu, an Odometry truth) is split into runs of 5 s and scored against the
    stored batch (ch_rw, two 5 s circle runs; its real side removed: the bag is the real side).
    """
    import shutil

    from test_bag_replay_graph import _write_art_bag
    from vepd_ros.pipelines.study import run_study, simulate_run

    bag = tmp_path / 'art_bag'
    _write_art_bag(bag, simulate_run('real', 'rtk', 'ch_drift_paper', 'circle', j=1,
                                     duration_s=12.0, seed=4))
    ref = tmp_path / 'ref'
    run_study(['ch_rw'], ['circle'], 2, duration_s=5.0, reference='rtk', out_dir=ref, seed=3,
              workers=1)
    shutil.rmtree(ref / 'Real')  # the real side is the bag's
    return [
        f'bag:={bag}',
        'gps_topic:=/fix',
        'imu_topic:=/imu',
        'truth_topic:=/truth',
        'truth_type:=nav_msgs/msg/Odometry',
        'scenario:=circle',
        'rate:=3.0',
        'run_duration_s:=5.0',
        'k:=2',
        f'reference_dir:={ref}',
        'judge:=builtin',
    ]


def _launch_bag_replay(args: list[str], out: Path, distro: str, domain_id: int) -> None:
    """
    Run ``ros2 launch vepd_ros bag_replay.launch.py`` into ``out``: it ends by itself, status 0.

    The whole log stays beside ``out`` (launch.log), a hang's stack dump included.
    """
    cmd = ros2_cmd('launch', 'vepd_ros', 'bag_replay.launch.py', *args, f'output_dir:={out}')
    proc = subprocess.run(
        cmd, env=ros2_env(distro, domain_id), capture_output=True, text=True, timeout=300
    )
    log = proc.stdout + proc.stderr
    (out.parent / f'{out.name}_launch.log').write_text(log)
    assert proc.returncode == 0, launch_log_excerpt(log)
    assert 'Traceback' not in log, launch_log_excerpt(log)


@pytest.mark.parametrize('distro', DISTROS)
def test_bag_replay_launch_scores_the_bag_and_ends_itself(distro, domain_id, tmp_path):
    """
    The bag_replay launch scores a bag against a stored batch and ends by itself.

    A 12 s bag in the ART layout (/fix, /imu, an Odometry truth) split into runs of 5 s, against a
    stored simulated batch: the launch plays it (bag_player_node where rosbag2 is absent), scores
    the two complete runs, and ends by itself with status 0.
    """
    package_executables_ready()
    args = _bag_and_reference(tmp_path)
    out = tmp_path / 'out'
    _launch_bag_replay(args, out, distro, domain_id)
    result = json.loads((out / 'result.json').read_text())
    assert result['k']['real'] == {'circle': 2} and 'ch_rw' in result['models']
    for p in sorted((out / 'Real').glob('circle_*.json')):
        cov = json.loads(p.read_text())['coverage']
        assert cov['estimates']['received'] >= cov['estimates']['expected'] - 1, (p, cov)


def _bag_replay_numbers(out: Path) -> dict:
    """Return a bag_replay output's K, W1/W2 per model and the E of each real run, by file."""
    from vepd_ros.metrics.core import run_metrics
    from vepd_ros.runs.format import read_run

    result = json.loads((out / 'result.json').read_text())
    return {
        'k': result['k'],
        'models': {m: (r['W1'], r['W2']) for m, r in result['models'].items()},
        'E': {
            p.name: run_metrics(*read_run(p).signal('speed'))[0]
            for p in sorted((out / 'Real').glob('circle_*.csv'))
        },
    }


def test_bag_replay_launch_equals_vepd_run_and_vepd_run_repeats_its_bits(domain_id, tmp_path):
    """
    ``ros2 launch bag_replay.launch.py`` and ``vepd run bag_replay`` give the same numbers.

    For the same arguments the launch (one process per node, bag_player_node pacing /clock by
    message counts) and ``vepd run`` (one process, the player stepped in lockstep as truth_node)
    take the same callbacks in the same order: the same K, real-run E and W1/W2, bit for bit; and
    ``vepd run`` twice gives the same bits (before the player was lockstepped in process, two runs
    gave W 0.04654 and 0.04628).
    """
    package_executables_ready()
    args = _bag_and_reference(tmp_path)
    got = {}
    for name in ('vepd_run_1', 'vepd_run_2'):
        out = tmp_path / name
        cmd = [
            sys.executable, '-m', 'vepd_ros.cli', 'run', 'bag_replay', *args,
            f'output_dir:={out}', '--json', '--timeout', '200',
        ]
        proc = subprocess.run(
            cmd, env=ros_env(domain_id), capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        got[name] = _bag_replay_numbers(out)
    out = tmp_path / 'launch'
    _launch_bag_replay(args, out, 'jazzy', domain_id)
    got['launch'] = _bag_replay_numbers(out)
    assert got['vepd_run_1']['k']['real'] == {'circle': 2}, got
    assert len(got['vepd_run_1']['E']) == 2, got
    assert got['vepd_run_1'] == got['vepd_run_2'], got
    assert got['launch'] == got['vepd_run_1'], got


def test_live_eval_launch_rolls_over_runs_fed_by_a_player_and_stops_on_ctrl_c(domain_id, tmp_path):
    """
    The live_eval launch scores every new window of runs and stops on Ctrl-C.

    live_eval as documented: fed live topics (here a bag player on its /clock, paced by the graph's
    progress reports, so a loaded machine slows it instead of losing ticks), it scores every new
    window of k runs; it runs until Ctrl-C, which ends it with status 0 and no traceback, finished
    runs on disk.
    """
    live_eval_rolls_until_ctrl_c(domain_id, tmp_path, ros2_env('jazzy', domain_id))


def live_eval_rolls_until_ctrl_c(domain_id, tmp_path, env, **extra) -> tuple[dict, str]:
    """
    Feed live_eval.launch.py a bag player, Ctrl-C it once it has a result; check how it ended.

    ``extra``: more launch arguments (``judge:=robot_localization``, a ``static_tf``). Returns the
    result and the launch log.
    """
    import shutil

    from test_bag_replay_graph import _write_art_bag
    from vepd_ros.pipelines.study import run_study, simulate_run
    from vepd_ros.ros_graph import build_graph, NodeSpec, paced_nodes, typed_args

    package_executables_ready()
    bag = tmp_path / 'art_bag'
    _write_art_bag(bag, simulate_run('real', 'rtk', 'ch_drift_paper', 'circle', j=1,
                                     duration_s=12.0, seed=4))
    ref = tmp_path / 'ref'
    run_study(['ch_rw'], ['circle'], 2, duration_s=4.0, reference='rtk', out_dir=ref, seed=3,
              workers=1)
    shutil.rmtree(ref / 'Real')
    out = tmp_path / 'out'
    args = {
        'gps_topic': TOPIC_ART_GPS_FIX,
        'imu_topic': TOPIC_ART_IMU,
        'truth_topic': '/truth',
        'truth_type': 'nav_msgs/msg/Odometry',
        'scenario': 'circle',
        'use_sim_time': 'true',
        'run_duration_s': '4.0',
        'k': '2',
        'reference_dir': str(ref),
        'judge': 'builtin',
        'output_dir': str(out),
        **extra,
    }
    # The player paces its /clock on the graph's progress reports, as bag_replay's does: unpaced at
    # x3, a loaded machine makes the judge miss ticks and run 1 is (rightly) excluded, flagged
    # (test_a_time_scale_the_machine_cannot_hold... covers that side)
    # the graph as the launch builds it, with the launch's package index (robot_localization's
    # judge is resolved there)
    saved = os.environ.get('AMENT_PREFIX_PATH')
    os.environ['AMENT_PREFIX_PATH'] = env.get('AMENT_PREFIX_PATH', saved or '')
    try:
        graph = build_graph('live_eval', typed_args('live_eval', args))
    finally:
        if saved is None:
            os.environ.pop('AMENT_PREFIX_PATH', None)
        else:
            os.environ['AMENT_PREFIX_PATH'] = saved
    player_spec = NodeSpec('vepd_ros', 'bag_player_node', 'bag_player', role='bag')
    launch = subprocess.Popen(
        ros2_cmd(
            'launch',
            'vepd_ros',
            'live_eval.launch.py',
            *[f'{k}:={v}' for k, v in args.items()],
        ),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    player = subprocess.Popen(
        ros2_cmd(
            'run',
            'vepd_ros',
            'bag_player_node',
            '--ros-args',
            '-p',
            f'bag:={bag}',
            '-p',
            'rate:=3.0',
            '-p',
            'topics:=[/fix, /imu, /truth]',
            '-p',
            'wait_for_subscribers:=3',
            '-p',
            'shutdown_when_done:=true',
            '-p',
            f'pace_nodes:={paced_nodes(player_spec, graph)}',
        ),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        player_log, _ = player.communicate(timeout=120)
        assert player.returncode == 0, player_log[-3000:]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (out / 'result.json').is_file():
            time.sleep(0.2)
        assert launch.poll() is None  # the rolling window runs on by design
        os.killpg(launch.pid, signal.SIGINT)  # ... until Ctrl-C
        log, _ = launch.communicate(timeout=60)
    finally:
        for p in (player, launch):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert launch.returncode == 0, launch_log_excerpt(log)
    assert 'Traceback' not in log, launch_log_excerpt(log)
    result = json.loads((out / 'result.json').read_text())
    assert result['k']['real'] == {'circle': 2} and 'ch_rw' in result['models']
    assert sorted(p.name for p in (out / 'Real').glob('circle_*.csv')) == [
        'circle_1.csv',
        'circle_2.csv',
    ]
    return result, log


def test_a_time_scale_the_machine_cannot_hold_slows_the_launch_instead_of_losing_data(
    domain_id, tmp_path
):
    """
    A time_scale the machine cannot hold slows the launch instead of losing data.

    time_scale 100 with two chains of five processes on two shared cores: truth_node holds /clock
    back (lockstep pacing, counted in its log line at each run's end) and every run is complete
    (its sidecar's coverage: every estimate and truth sample, no gap).
    """
    import re

    package_executables_ready()
    out = tmp_path / 'out'
    args = {**ARGS, 'time_scale': 100.0, 'duration_s': 4.0}
    cmd = ros2_cmd(
        'launch',
        'vepd_ros',
        'sim_judge.launch.py',
        *[f'{k}:={v}' for k, v in args.items()],
        f'output_dir:={out}',
    )
    proc = subprocess.run(
        cmd, env=ros2_env('jazzy', domain_id), capture_output=True, text=True, timeout=300
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, launch_log_excerpt(log)
    held = re.search(r'\((\d+) steps held back by pacing\)', log)
    assert held and int(held.group(1)) > 0, log[-3000:]
    for p in sorted(out.rglob('straight_*.json')):
        cov = json.loads(p.read_text())['coverage']
        for stream in ('estimates', 'truth'):
            assert cov[stream]['received'] >= cov[stream]['expected'] - 1, (p, cov)
            assert cov[stream]['max_gap_s'] < 1.5 / cov[stream]['rate_hz'], (p, cov)
    assert len(list(out.rglob('straight_*.json'))) == 4


def test_bag_replay_launch_static_tf_scores_as_vepd_bag(domain_id, tmp_path):
    """
    Check ``ros2 launch bag_replay.launch.py static_tf:=...`` on a bag with a rotated IMU.

    The launch feeds the built-in judge the mounting and its first run scores as ``vepd bag
    --static-tf``'s (which refuses the bag without the transform). bag_player_node steps /clock in
    lockstep with the nodes' message counts, as truth_node does, so the launch's runs are the same
    bits every time (measured: 5 of 5 under load); the tolerance is the graph-vs-offline one, not a
    margin for timing. Jazzy tooling: the argument goes through the same graph description under
    Humble's.
    """
    from test_bag_replay_graph import assert_runs_equal_vepd_bag, mounted_imu_case

    package_executables_ready()
    args, offline = mounted_imu_case(tmp_path)
    out = tmp_path / 'out'
    _launch_bag_replay(args, out, 'jazzy', domain_id)
    assert_runs_equal_vepd_bag(out, offline)


def _vepd_processes_on_domain(domain_id: int, names=('vepd_ros',)) -> list[str]:
    """Return the command lines of processes left on ``domain_id`` naming one of ``names``."""
    found = []
    for proc in Path('/proc').iterdir():
        try:
            env = (proc / 'environ').read_bytes().split(b'\0')
            cmd = (proc / 'cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue  # gone, or not ours to read
        if f'ROS_DOMAIN_ID={domain_id}'.encode() in env and any(n in cmd for n in names):
            found.append(cmd)
    return found


def test_one_judge_chain_per_run_equals_the_built_in_reset(domain_id, tmp_path, vepd_run_result):
    """
    Check the per-run judge supervisor with the built-in judge against its reset per run.

    ``judge_per_run:=true judge:=builtin``: judge_supervisor_node starts judge_node + navsat_node
    (without ``reset_on_run_events``) as new processes for every run, as it starts ekf_node +
    navsat_transform_node under ``judge:=robot_localization`` (which cannot run here). Each run's
    speed RMSE equals ``vepd run``'s (the built-in judge reset by run events) for the same seeds,
    every chain was started once per run, and the launch ends by itself leaving no process behind.
    """
    from vepd_ros.metrics.core import run_metrics
    from vepd_ros.runs.format import read_run

    package_executables_ready()
    out = tmp_path / 'out'
    cmd = ros2_cmd(
        'launch',
        'vepd_ros',
        'sim_judge.launch.py',
        *[f'{k}:={v}' for k, v in ARGS.items()],
        'judge_per_run:=true',
        f'output_dir:={out}',
    )
    proc = subprocess.run(
        cmd, env=ros2_env('jazzy', domain_id), capture_output=True, text=True, timeout=1500
    )
    log = proc.stdout + proc.stderr
    (tmp_path / 'launch.log').write_text(log)
    assert proc.returncode == 0, launch_log_excerpt(log)
    assert 'Traceback' not in log, launch_log_excerpt(log)
    # two chains (real, ch_rw) x two runs: each chain started afresh for run 2
    assert (
        log.count('judge chain #1 up') == 2 and log.count('judge chain #2 up') == 2
    ), launch_log_excerpt(log)
    assert 'filter restarted' not in log  # no reset by run events: new processes instead
    assert not _vepd_processes_on_domain(domain_id)  # the supervisors stopped their chains
    ref_out = Path(vepd_run_result['test_output_dir'])
    csvs = sorted(p.relative_to(out) for p in out.rglob('straight_*.csv'))
    assert len(csvs) == 4, csvs
    for rel in csvs:  # a fresh chain per run is the reset per run, bit for bit
        e = run_metrics(*read_run(out / rel).signal('speed'))[0]
        e_ref = run_metrics(*read_run(ref_out / rel).signal('speed'))[0]
        assert e == e_ref, (rel, e, e_ref)
    result = json.loads((out / 'result.json').read_text())
    for label, ref in vepd_run_result['models'].items():
        for key in ('W1', 'W2'):
            got = result['models'][label][key]
            assert got == ref[key], (label, key, got, ref[key])
