# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test that evaluator_node over DDS publishes what ``vepd evaluate`` computes.

evaluator_node over DDS: fed /vepd/runs events for runs on disk, it publishes on /vepd/result
exactly what ``vepd evaluate`` (``evaluate_root``) computes for the same directory, and writes
result.json.
"""

import json

import numpy as np
import pytest
from ros_helpers import spin_until

pytestmark = pytest.mark.ros

K = 2
LABELS = ('ch_gauss', 'ch_rw')


def _write_batches(root):
    from vepd_ros.runs.layout import BatchWriter
    from vepd_ros.testing.synthetic_runs import synthetic_run

    rng = np.random.default_rng(11)
    events = []
    for side, label, noise in [
        ('real', None, 0.04),
        ('sim', 'ch_gauss', 0.12),
        ('sim', 'ch_rw', 0.05),
    ]:
        w = BatchWriter(root, side, label, fsync=False)
        for sc in ('straight', 'circle'):
            for j in range(1, K + 1):
                rec = synthetic_run(rng, sc, duration_s=8.0, noise=noise)
                path = w.write(rec, sc, {'model': label or 'real'}, j=j)
                events.append(
                    {
                        'status': 'written',
                        'side': side,
                        'label': w.label,
                        'scenario': sc,
                        'j': j,
                        'path': str(path),
                        'model': label or '',
                    }
                )
    return events


def test_evaluator_node_publishes_what_evaluate_root_computes(ros_ctx, executor, tmp_path):
    import rclpy
    from rclpy.parameter import Parameter
    from std_msgs.msg import String
    from vepd_ros.nodes.evaluator_node import EvaluatorNode
    from vepd_ros.nodes.qos import EVENT_QOS
    from vepd_ros.nodes.recorder_node import RUNS_TOPIC
    from vepd_ros.runs.batch import evaluate_root
    from vepd_ros.streams import TOPIC_RESULT

    root = tmp_path / 'batches'
    events = _write_batches(root)
    out = tmp_path / 'out'
    node = EvaluatorNode(
        context=ros_ctx,
        parameter_overrides=[
            Parameter('k', value=K),
            Parameter('expected_labels', value=','.join(LABELS)),
            Parameter('output_dir', value=str(out)),
            Parameter('report', value=False),
            Parameter('warnings', value=['cfg: what the graph knows', '']),
        ],
    )
    test = rclpy.create_node('runs_src', context=ros_ctx)
    pub = test.create_publisher(String, RUNS_TOPIC, EVENT_QOS)
    results = []
    test.create_subscription(
        String, TOPIC_RESULT, lambda m: results.append(json.loads(m.data)), EVENT_QOS
    )
    for n in (node, test):
        executor.add_node(n)
    assert spin_until(
        executor, lambda: pub.get_subscription_count() and test.count_publishers(TOPIC_RESULT), 10
    )

    # the reference last but one run: nothing is evaluated before every batch holds K runs of every
    # scenario
    events.append(events.pop(K - 1))
    pub.publish(
        String(
            data=json.dumps(
                {
                    'status': 'discarded',
                    'side': 'sim',
                    'label': 'ch_rw',
                    'scenario': 'circle',
                    'reason': 'short run',
                }
            )
        )
    )
    for ev in events[:-1]:
        pub.publish(String(data=json.dumps(ev)))
    assert spin_until(
        executor,
        lambda: sum(len(v) for b in node.batches.values() for v in b.values()) == len(events) - 1,
        10,
    )
    assert node.evaluations == 0 and not results and not (out / 'result.json').exists()
    pub.publish(String(data=json.dumps(events[-1])))
    assert spin_until(executor, lambda: results, 15), 'no /vepd/result'

    want = evaluate_root(root, n_boot=1000, seed=0)
    got = results[0]
    assert set(got['models']) == set(want['models']) == set(LABELS)
    for label in LABELS:
        g, w = got['models'][label], want['models'][label]
        for key in ('W1', 'W2', 'VEPD'):
            assert g[key] == pytest.approx(w[key], rel=0, abs=1e-12), (label, key)
        np.testing.assert_allclose(g['ci95'], w['ci95'], rtol=0, atol=1e-12)
        assert set(g['per_scenario']) == set(w['per_scenario']) == {'straight', 'circle'}
        for sc, ws in w['per_scenario'].items():
            for key in ('W1', 'W2', 'VEPD'):
                assert g['per_scenario'][sc][key] == pytest.approx(ws[key], rel=0, abs=1e-12), (
                    label,
                    sc,
                    key,
                )
        assert w['VEPD'] > 0
    assert (
        got['models']['ch_gauss']['VEPD'] > got['models']['ch_rw']['VEPD']
    )  # the noisier model is farther
    written = json.loads((out / 'result.json').read_text())
    assert written['models'] == got['models']
    assert node.evaluations == 1
    # what the graph passed (a configured sensor's rate not applied) is said with the result
    assert 'cfg: what the graph knows' in got['warnings'] == written['warnings']
    assert '' not in got['warnings']


def test_evaluator_ending_a_launch_prints_the_tables_and_where_they_went(
    ros_ctx, executor, tmp_path, capfd
):
    """
    With ``exit_when_done`` (the end of a ``ros2 launch``) the result is printed as ``vepd run``.

    The launch's last words are the result, not one log line among the nodes': Tables I and II,
    excluded runs and what they mean, in the one text form (``format_tables``), then where
    result.json and the runs are. An evaluator stopped before its batches are complete says which
    are short.
    """
    import rclpy
    from rclpy.parameter import Parameter
    from std_msgs.msg import String
    from vepd_ros.nodes.evaluator_node import EvaluatorNode
    from vepd_ros.nodes.qos import EVENT_QOS
    from vepd_ros.nodes.recorder_node import RUNS_TOPIC
    from vepd_ros.report.text import format_tables

    events = _write_batches(tmp_path / 'batches')
    out = tmp_path / 'out'

    def evaluator(name):
        return EvaluatorNode(
            context=ros_ctx,
            parameter_overrides=[
                Parameter('k', value=K),
                Parameter('expected_labels', value=','.join(LABELS)),
                Parameter('output_dir', value=str(out / name)),
                Parameter('report', value=False),
                Parameter('exit_when_done', value=True),
            ],
        )

    node = evaluator('done')
    src = rclpy.create_node('runs_src', context=ros_ctx)
    pub = src.create_publisher(String, RUNS_TOPIC, EVENT_QOS)
    for n in (node, src):
        executor.add_node(n)
    assert spin_until(executor, lambda: pub.get_subscription_count(), 10)
    for ev in events:
        pub.publish(String(data=json.dumps(ev)))
    assert spin_until(executor, lambda: node.evaluations == 1, 15)
    node._exit_timer.cancel()  # the test's context stays up
    printed = capfd.readouterr().out
    res = json.loads((out / 'done' / 'result.json').read_text())
    assert format_tables(res) in printed
    assert f'VEPD result: {(out / "done" / "result.json").resolve()}' in printed
    assert 'Table I' in printed and 'Ch:RW' in printed

    short = evaluator('short')
    executor.add_node(short)
    for ev in events[:3]:
        short._on_run(String(data=json.dumps(ev)))
    short.destroy_node()
    err = capfd.readouterr().err
    assert 'stopped before a result (3 run events received)' in err, err
    assert 'real circle: 1 of 2 runs' in err and 'ch_rw straight: 0 of 2 runs' in err, err
