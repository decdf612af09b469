# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
`vepd run` on a domain shared with a stranger stops at once with a named error.

`vepd run` on a domain shared with a stranger: a second publisher on the graph's truth or /clock
topic stops the run at once with an error naming the topic, the other node and the fix; the domain
lease is exclusive; the stall limit and the result check name what went wrong.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time

import pytest
from ros_helpers import REPO, ros_env
from vepd_ros.graph.domain import DomainLease
from vepd_ros.graph.monitor import _Monitor, result_problems, RunError
from vepd_ros.streams import TOPIC_GROUND_TRUTH


def vepd(*args) -> list[str]:
    """Return the `vepd` command from this tree (no reinstall needed)."""
    return [sys.executable, '-m', 'vepd_ros.cli', *args]


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize('topic', [TOPIC_GROUND_TRUTH, '/clock'])
def test_foreign_publisher_stops_the_run(topic, ros_ctx, domain_id, tmp_path):
    from nav_msgs.msg import Odometry
    import rclpy
    from rosgraph_msgs.msg import Clock

    node = rclpy.create_node('stranger', namespace='/other_graph', context=ros_ctx)
    pub = node.create_publisher(Clock if topic == '/clock' else Odometry, topic, 10)
    pub.publish((Clock if topic == '/clock' else Odometry)())
    t0 = time.monotonic()
    proc = subprocess.run(
        vepd(
            'run',
            'sim_judge',
            'k:=2',
            'models:=ch_rw',
            'scenarios:=circle',
            'duration_s:=30',
            'time_scale:=2',
            'judge:=builtin',
            f'output_dir:={tmp_path / "out"}',
            '--quiet',
        ),
        cwd=REPO,
        env=ros_env(domain_id),
        capture_output=True,
        text=True,
        timeout=180,
    )
    wall = time.monotonic() - t0
    node.destroy_node()
    err = proc.stderr
    assert proc.returncode == 1, err[-2000:]
    assert (
        f'{topic}: a publisher that is not part of this graph (node /other_graph/stranger)' in err
    ), err[-2000:]
    assert f'ROS_DOMAIN_ID={domain_id}' in err and 'another domain' in err
    # 4 runs x 30 s of sim time at x2 would take a minute: it stopped well before the end
    assert not (tmp_path / 'out' / 'result.json').exists()
    print(f'stopped after {wall:.1f} s')


def test_domain_leases_are_exclusive():
    a, b = DomainLease(), DomainLease()
    try:
        assert a.domain_id != b.domain_id
        c = DomainLease(avoid={a.domain_id, b.domain_id})
        assert c.domain_id not in (a.domain_id, b.domain_id)
        c.release()
    finally:
        a.release()
        b.release()


def _monitor(sim, stall_s, box=None):
    opts = {'stall_s': stall_s, 'timeout': 0.0, 'progress_quiet': True}
    return _Monitor(box if box is not None else {}, opts, sim, 4, lambda: [], watch_stall=True)


def test_stall_names_what_stood_still():
    m = _monitor(lambda: 5_000_000_000, 0.2)
    m.check()
    time.sleep(0.8)
    with pytest.raises(
        RunError,
        match=r'stalled: sim time stuck at 5.0 s and 0 of 4 runs finished, '
        r'no advance for 0.2 s \(--stall-timeout\)',
    ):
        m.check()


def test_advancing_sim_time_is_no_stall():
    t = {'ns': 0}

    def sim():
        t['ns'] += 1_000_000
        return t['ns']

    m = _monitor(sim, 0.2)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        m.check()  # never raises: the graph is slow, not stuck
        time.sleep(0.05)


def test_result_problems_name_the_cause():
    ok = {
        'complete': True,
        'models': {'ch_rw': {'display_name': 'Ch:RW', 'W1': 0.1, 'W2': 0.2, 'VEPD': 0.15}},
    }
    assert result_problems(ok) == []
    nan = {'models': {'ch_rw': {'display_name': 'Ch:RW', 'W1': math.nan, 'W2': 0.2, 'VEPD': 0.15}}}
    assert result_problems(nan) == ['model Ch:RW: a W1, W2 or VEPD is NaN']
    rest_only = {
        'models': {
            'ch_rw': {
                'display_name': 'Ch:RW',
                'VEPD': None,
                'per_scenario': {'rest': {'VEPD': 0.01}},
            }
        }
    }
    assert result_problems(rest_only) == []  # no combined score by design, scored per scenario
    nan_scenario = {
        'models': {
            'ch_rw': {
                'display_name': 'Ch:RW',
                'W1': 0.1,
                'W2': 0.2,
                'VEPD': 0.15,
                'per_scenario': {'circle': {'VEPD': math.nan}},
            }
        }
    }
    assert result_problems(nan_scenario) == ['model Ch:RW: a W1, W2 or VEPD is NaN']
    none = {'models': {'ch_rw': {'display_name': 'Ch:RW', 'W1': None, 'W2': None, 'VEPD': None}}}
    assert 'model Ch:RW: no VEPD' in result_problems(none)[0]
    short = {
        **ok,
        'complete': False,
        'incomplete_batches': [{'label': 'ch_rw', 'scenario': 'circle', 'have': 1, 'k': 2}],
        'excluded_runs': [
            {
                'path': 'Sim/ch_rw/circle/x.csv',
                'label': 'ch_rw',
                'scenario': 'circle',
                'reason': 'estimates 40/100 < 0.9',
            }
        ],
    }
    assert result_problems(short) == [
        'run Sim/ch_rw/circle/x.csv excluded (estimates 40/100 < 0.9)',
        'batch ch_rw/circle has 1 of k=2 runs',
    ]
    assert result_problems({**ok, 'complete': False}) == [
        'the evaluator marked the result incomplete'
    ]
    empty = {
        'runs': [{'path': 'Real/a.csv', 'E': math.nan, 'S': math.nan, 'se_len': 0, 'gt_len': 100}]
    }
    assert 'Real/a.csv: no estimate from the judge' in result_problems(empty)[0]


@pytest.mark.parametrize(
    'graph,arg,text',
    [
        ('sim_judge', 'truth_odom_topic:=/ground_truth/odometry', 'truth Odometry'),
        ('bag_replay', 'run_duration_s:=0.0', 'split into runs of this length'),
        ('live_eval', 'reference_dir:=', 'rolling window'),
    ],
)
def test_graph_help_lists_that_graphs_arguments(graph, arg, text):
    out = subprocess.run(
        vepd('run', graph, '--help'), cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert arg in out.stdout and text in out.stdout and 'examples:' in out.stdout
    others = {
        'sim_judge': 'truth_odom_topic',
        'bag_replay': 'rate:=',
        'live_eval': 'run_duration_s:=20.0',
    }
    for g, name in others.items():
        if g != graph and name not in arg:
            assert f'  {name}' not in out.stdout  # only this graph's arguments


@pytest.mark.parametrize('cmd', [('run', '--help'), ('demo', '--help')])
def test_help_has_a_worked_example(cmd):
    out = subprocess.run(vepd(*cmd), cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and 'examples:' in out.stdout
    assert (
        '--stall-timeout' in out.stdout
        and '--domain-id' in out.stdout
        and '--timeout' in out.stdout
    )


@pytest.mark.ros
def test_a_node_on_its_own_stops_on_a_second_publisher_of_its_input(ros_ctx, executor):
    """
    Under launch each node checks its inputs.

    Two publishing nodes on its truth topic stop it.
    """
    from nav_msgs.msg import Odometry
    import rclpy
    from ros_helpers import spin_until
    from vepd_ros.nodes.guard import watch_inputs

    sub_node = rclpy.create_node('gps_noise', namespace='/ch_rw', context=ros_ctx)
    sub_node.create_subscription(Odometry, TOPIC_GROUND_TRUTH, lambda m: None, 10)
    watch_inputs(sub_node, period_s=0.2)
    executor.add_node(sub_node)
    truth = rclpy.create_node('truth_node', context=ros_ctx)
    truth.create_publisher(Odometry, TOPIC_GROUND_TRUTH, 10)
    spin_until(executor, lambda: False, timeout_s=1.0)
    assert sub_node.foreign_publisher is None  # one publisher: its own graph's truth_node
    other = rclpy.create_node('truth_node', namespace='/other_demo', context=ros_ctx)
    other.create_publisher(Odometry, TOPIC_GROUND_TRUTH, 10)
    assert spin_until(executor, lambda: sub_node.foreign_publisher is not None, timeout_s=10.0)
    text = sub_node.foreign_publisher
    assert (
        TOPIC_GROUND_TRUTH in text
        and 'node /other_demo/truth_node' in text
        and 'ROS_DOMAIN_ID' in text
    )
    assert not ros_ctx.ok()  # the node stopped


@pytest.mark.ros
def test_a_leased_domain_with_a_stranger_on_it_is_exchanged():
    """
    A leased domain with other participants on it is exchanged for another.

    A domain can be free of vepd_ros locks and still be in use (a robot, another tool): the
    runner looks for participants before it starts there, and moves to another leased domain when
    it finds one.
    """
    import rclpy
    from vepd_ros.graph.domain import Domain
    from vepd_ros.graph.runner import _init_on_domain

    lease = DomainLease()
    busy = lease.domain_id
    ctx = rclpy.context.Context()
    rclpy.init(context=ctx, domain_id=busy)
    stranger = rclpy.create_node('robot_driver', context=ctx)
    domain = Domain(busy, 'leased', lease)
    try:
        listener = _init_on_domain(domain, {})
        # (another busy domain may be met and left too on a loaded machine: every one is named)
        assert domain.domain_id not in domain.busy and domain.busy[0] == busy
        assert f'{", ".join(map(str, domain.busy))} had other participants' in domain.how
        assert listener.context.get_domain_id() == domain.domain_id
    finally:
        domain.release()
        rclpy.try_shutdown()
        stranger.destroy_node()
        ctx.try_shutdown()


@pytest.mark.ros
@pytest.mark.slow
def test_a_node_executable_exits_1_on_a_second_truth_publisher(ros_ctx, domain_id):
    """The launch path: a noise node started as its own process stops with exit 1 and says why."""
    from nav_msgs.msg import Odometry
    import rclpy
    from ros_helpers import console_script

    ours = rclpy.create_node('truth_node', context=ros_ctx)
    ours.create_publisher(Odometry, TOPIC_GROUND_TRUTH, 10)
    theirs = rclpy.create_node('truth_node', namespace='/other_demo', context=ros_ctx)
    theirs.create_publisher(Odometry, TOPIC_GROUND_TRUTH, 10)
    proc = subprocess.run(
        [console_script('gps_noise_node'), '--ros-args', '-p', 'model:=ch_rw'],
        env=ros_env(domain_id),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert 'stopping: /ground_truth/odometry' in proc.stdout
    assert '/other_demo/truth_node' in proc.stdout
    assert 'Traceback' not in proc.stdout
