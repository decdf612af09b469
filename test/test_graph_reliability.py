# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Reliability of the ROS graph's nodes over real DDS:.

1. a recorder SIGKILLed mid-batch loses no completed run (files intact, sidecars, index, no temp
   file under a final name), and a restarted recorder continues the batch: the latched events of
   finished runs and the run it was killed in are not recorded (no half run under a final name),
   later runs are;
2. bad input (wrong frame, NaN, stamps going backwards) is dropped, warned about once per throttle
   period, counted on /diagnostics, and the node's output afterwards is what clean input gives;
3. a topic that never appears is named after ``topic_timeout_s``.
"""

import json
import math
import os
import re
import signal
import subprocess
import time

import numpy as np
import pytest
from ros_helpers import console_script, ros_env, spin_until
from vepd_ros.streams import TOPIC_GPS_FIX, TOPIC_GROUND_TRUTH, TOPIC_GROUND_TRUTH_IMU, TOPIC_IMU

pytestmark = pytest.mark.ros

NS = 1_000_000_000
EST_TOPIC = '/rel/odometry/filtered'
TRUTH_TOPIC = TOPIC_GROUND_TRUTH
DT_NS = 50_000_000  # 20 Hz on both streams
N_RUN = 50  # samples per run: 2.45 s of stamps
RUN_SPACING_NS = 3 * NS


def _odom(t_ns, vx, vy, frame='odom'):
    from nav_msgs.msg import Odometry
    from vepd_ros.nodes.stamps import ns_to_stamp

    m = Odometry()
    m.header.stamp, m.header.frame_id, m.child_frame_id = (
        ns_to_stamp(int(t_ns)),
        frame,
        'base_link',
    )
    m.twist.twist.linear.x, m.twist.twist.linear.y = float(vx), float(vy)
    return m


def _truth_v(j, k):
    return 1.0 + 0.1 * j + 0.01 * k, 0.02 * math.sin(k)


def _est_v(j, k):
    vx, vy = _truth_v(j, k)
    return vx + 0.05 * math.cos(k), vy - 0.01


class Feeder:
    """
    Play truth_node and the judge, and collect runs and diagnostics.

    Plays truth_node and the judge: truth Odometry, an estimate Odometry, run events; collects
    /vepd/runs and /diagnostics. Stamps start two minutes in the future, so the recorder's
    staleness check (node clock) never closes a run: runs close on their samples, as in a live
    graph.
    """

    def __init__(self, ctx, executor, base_ns=None):
        from diagnostic_msgs.msg import DiagnosticArray
        from nav_msgs.msg import Odometry
        import rclpy
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String
        from vepd_ros.nodes.qos import EVENT_QOS
        from vepd_ros.nodes.recorder_node import RUNS_TOPIC
        from vepd_ros.nodes.run_events import RUN_EVENTS_TOPIC

        self.node = rclpy.create_node('feeder', context=ctx)
        self.ex = executor
        executor.add_node(self.node)
        rel = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self.pub_truth = self.node.create_publisher(Odometry, TRUTH_TOPIC, rel)
        self.pub_est = self.node.create_publisher(Odometry, EST_TOPIC, rel)
        self.pub_ev = self.node.create_publisher(String, RUN_EVENTS_TOPIC, EVENT_QOS)
        self.runs, self.diags = [], []
        self.node.create_subscription(
            String, RUNS_TOPIC, lambda m: self.runs.append(json.loads(m.data)), EVENT_QOS
        )
        self.node.create_subscription(
            DiagnosticArray, '/diagnostics', self.diags.append, QoSProfile(depth=100)
        )
        self.base_ns = base_ns or (time.time_ns() // NS + 120) * NS
        self.String = String

    def start_ns(self, j):
        return self.base_ns + (j - 1) * RUN_SPACING_NS

    def spin(self, n=3):
        for _ in range(n):
            self.ex.spin_once(timeout_sec=0.0)

    def event(self, kind, j):
        s = self.start_ns(j)
        stamp = s if kind == 'start' else s + (N_RUN - 1) * DT_NS
        self.pub_ev.publish(
            self.String(
                data=json.dumps(
                    {
                        'event': kind,
                        'scenario': 'circle',
                        'run': j,
                        'index': j - 1,
                        'total': 9,
                        'seed': 100 + j,
                        'study_seed': 1,
                        'stamp_ns': stamp,
                    }
                )
            )
        )

    def samples(self, j, ks, pre_gap=False):
        """
        Return truth and estimate samples k of run j.

        Truth and estimate samples k of run j (same stamps on both streams; the last, k = N_RUN -
        1, is the end stamp). pre_gap: one sample of each stream 0.2 s before the start first
        (outside any run).
        """
        s = self.start_ns(j)
        if pre_gap:
            self.pub_est.publish(_odom(s - 200_000_000, 0.0, 0.0))
            self.pub_truth.publish(_odom(s - 200_000_000, 0.0, 0.0))
            self.spin()
        for k in ks:
            self.pub_truth.publish(_odom(s + k * DT_NS, *_truth_v(j, k)))
            self.pub_est.publish(_odom(s + k * DT_NS, *_est_v(j, k)))
            self.spin()

    def full_run(self, j):
        self.event('start', j)
        # the start event and the samples travel on different topics: under load DDS may deliver
        # the event after a burst of samples (the recorder then rightly refuses the run), so give
        # it a moment first, as truth_node's paced steps do
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            self.ex.spin_once(timeout_sec=0.01)
        self.samples(j, range(N_RUN), pre_gap=True)
        self.event('end', j)

    def written(self):
        return sorted(e['j'] for e in self.runs if e.get('status') == 'written')

    def last_diag(self, suffix):
        for arr in reversed(self.diags):
            for st in arr.status:
                if st.name.endswith(suffix):
                    return st
        return None

    def diag_value(self, suffix, key):
        st = self.last_diag(suffix)
        return None if st is None else {kv.key: kv.value for kv in st.values}.get(key)


def _check_run_file(folder, j, ks=range(N_RUN)):
    from vepd_ros.runs.format import read_run, sidecar_path

    path = folder / f'circle_{j}.csv'
    assert sidecar_path(path).is_file(), f'{path}: sidecar missing'
    rec = read_run(path)
    ks = np.array(list(ks))
    t = ks * DT_NS * 1e-9
    # absolute stamps (~1.7e9 s) are float seconds in the recorder: ~2.4e-7 s resolution
    np.testing.assert_allclose(rec.gt_t, t, atol=1e-6)
    np.testing.assert_allclose(rec.se_t, t, atol=1e-6)
    np.testing.assert_allclose(rec.gt_vx, [_truth_v(j, k)[0] for k in ks], atol=1e-12)
    np.testing.assert_allclose(rec.gt_vy, [_truth_v(j, k)[1] for k in ks], atol=1e-12)
    np.testing.assert_allclose(rec.se_vx, [_est_v(j, k)[0] for k in ks], atol=1e-12)
    np.testing.assert_allclose(rec.se_vy, [_est_v(j, k)[1] for k in ks], atol=1e-12)
    assert rec.meta['j'] == j and rec.meta['scenario'] == 'circle' and rec.meta['seed'] == 100 + j
    return rec


def _start_recorder(domain_id, out, log):
    return subprocess.Popen(
        [
            console_script('recorder_node'),
            '--ros-args',
            '-p',
            f'output_dir:={out}',
            '-p',
            'side:=sim',
            '-p',
            'label:=ch_rw',
            '-p',
            'model:=ch_rw',
            '-p',
            'segmentation:=events',
            '-p',
            f'estimate_topic:={EST_TOPIC}',
            '-p',
            'truth_frame_id:=odom',
        ],
        env=ros_env(domain_id),
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _endpoint_gids(node, topic):
    return {bytes(i.endpoint_gid) for i in node.get_subscriptions_info_by_topic(topic)}


def _stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            return proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


def test_sigkill_mid_batch_loses_no_completed_run_and_the_batch_resumes(
    ros_ctx, executor, domain_id, tmp_path
):
    from vepd_ros.fileio import is_temp_name
    from vepd_ros.nodes.run_events import RUN_EVENTS_TOPIC
    from vepd_ros.runs.layout import scan_batch_dir

    out = tmp_path / 'out'
    folder = out / 'Sim' / 'ch_rw'
    f = Feeder(ros_ctx, executor)
    log1, log2 = open(tmp_path / 'rec1.log', 'w+'), open(tmp_path / 'rec2.log', 'w+')
    rec = _start_recorder(domain_id, out, log1)
    rec2 = None
    try:
        assert spin_until(
            executor,
            lambda: (
                f.pub_truth.get_subscription_count()
                and f.pub_est.get_subscription_count()
                and f.pub_ev.get_subscription_count()
            ),
            20,
        ), 'recorder did not subscribe'
        # matched is not yet spinning: its first /diagnostics report (once a second) says its
        # executor runs
        assert spin_until(executor, lambda: f.last_diag('/recorder') is not None, 20), (
            'recorder not spinning'
        )
        for j in (1, 2):
            f.full_run(j)
            assert spin_until(executor, lambda: j in f.written(), 10), (
                f.runs,
                f.last_diag('/recorder'),
                (tmp_path / 'rec1.log').read_text(),
            )
        # run 3: start and the first 21 samples; kill once the recorder has them (its /diagnostics
        # says so)
        f.event('start', 3)
        f.samples(3, range(21), pre_gap=True)
        n_truth = 2 * (N_RUN + 1) + 22
        assert spin_until(
            executor,
            lambda: (
                f.diag_value('/recorder', 'truth_messages') == str(n_truth)
                and f.diag_value('/recorder', 'estimate_messages') == str(n_truth)
            ),
            10,
        ), (
            f.diag_value('/recorder', 'truth_messages'),
            f.diag_value('/recorder', 'estimate_messages'),
        )
        rec.send_signal(signal.SIGKILL)
        assert rec.wait(timeout=10) == -signal.SIGKILL

        # every completed run intact, listed, with its sidecar; nothing else under a final name, no
        # temp file
        names = sorted(p.name for p in folder.iterdir())
        assert names == [
            'circle_1.csv',
            'circle_1.json',
            'circle_2.csv',
            'circle_2.json',
            'index.json',
        ], names
        assert not [n for n in names if is_temp_name(n)]
        for j in (1, 2):
            _check_run_file(folder, j)
        index = json.loads((folder / 'index.json').read_text())
        assert [(r['file'], r['j'], r['se_len'], r['gt_len']) for r in index['runs']] == [
            ('circle_1.csv', 1, N_RUN, N_RUN),
            ('circle_2.csv', 2, N_RUN, N_RUN),
        ]

        # restarted while run 3 goes on (truth_node does not wait): the rest of run 3 comes 1.5 s
        # after its start
        old = {t: _endpoint_gids(f.node, t) for t in (TRUTH_TOPIC, EST_TOPIC, RUN_EVENTS_TOPIC)}
        rec2 = _start_recorder(domain_id, out, log2)
        assert spin_until(
            executor, lambda: all(_endpoint_gids(f.node, t) - old[t] for t in old), 20
        ), 'restarted recorder did not subscribe'
        # and has the latched events of runs 1-3 (a late joiner's reliable reader gets them through
        # DDS repair, which can take a heartbeat period; live events queue behind them)
        assert spin_until(
            executor,
            lambda: (
                f.diag_value('/recorder', 'run_events') == '5'
                and f.diag_value('/recorder', 'truth_messages') == '0'
            ),
            20,
        ), f.last_diag('/recorder')
        n_before = len(f.runs)
        f.samples(3, range(30, N_RUN))
        f.event('end', 3)
        for j in (4, 5):
            f.full_run(j)
            assert spin_until(executor, lambda: j in f.written(), 10), (
                f.runs,
                f.last_diag('/recorder'),
                (tmp_path / 'rec2.log').read_text(),
            )
        new = f.runs[n_before:]
        # the latched events of runs 1-2 and the half of run 3 it saw leave no file and no
        # 'discarded' noise
        assert [(e['status'], e.get('j')) for e in new] == [('written', 4), ('written', 5)], new
        assert _stop(rec2) == 0
        text = (tmp_path / 'rec2.log').read_text()
        # (1.5 s or a little more: the latched start event may reach it after the first samples it
        # gets)
        lost = re.findall(
            r'run circle #3 not recorded: its first sample here came ([0-9.]+) s after its start',
            text,
        )
        assert len(lost) == 1 and 1.5 <= float(lost[0]) < 2.45, text
        assert 'run circle #1' not in text and 'run circle #2' not in text, text
    finally:
        for p in (rec, rec2):
            if p is not None and p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
        log1.close()
        log2.close()

    names = sorted(p.name for p in folder.iterdir())
    assert names == [f'circle_{j}.{e}' for j in (1, 2, 4, 5) for e in ('csv', 'json')] + [
        'index.json'
    ], names
    for j in (1, 2, 4, 5):
        _check_run_file(folder, j)
    index = json.loads((folder / 'index.json').read_text())
    assert [r['j'] for r in index['runs']] == [1, 2, 4, 5]
    assert all(
        (folder / r['file']).is_file() and (r['se_len'], r['gt_len']) == (N_RUN, N_RUN)
        for r in index['runs']
    )
    batch, warnings = scan_batch_dir(folder, 'ch_rw')
    assert [j for j, _ in batch.runs['circle']] == [1, 2, 4, 5]
    assert any('miss j = 3' in w for w in warnings), (
        warnings
    )  # the lost run is reported, not hidden


def test_recorder_drops_bad_input_counts_it_on_diagnostics_and_records_the_rest(
    ros_ctx, executor, tmp_path, capfd
):
    from rclpy.parameter import Parameter
    from vepd_ros.nodes.recorder_node import RecorderNode

    out = tmp_path / 'out'
    node = RecorderNode(
        context=ros_ctx,
        parameter_overrides=[
            Parameter('output_dir', value=str(out)),
            Parameter('side', value='real'),
            Parameter('estimate_topic', value=EST_TOPIC),
            Parameter('truth_frame_id', value='odom'),
        ],
    )
    executor.add_node(node)
    f = Feeder(ros_ctx, executor)
    assert spin_until(
        executor,
        lambda: (
            f.pub_truth.get_subscription_count()
            and f.pub_est.get_subscription_count()
            and f.pub_ev.get_subscription_count()
        ),
        10,
    )
    s = f.start_ns(1)
    f.event('start', 1)
    f.samples(1, range(20), pre_gap=True)
    bad = [
        (f.pub_truth, _odom(s + 20 * DT_NS - DT_NS // 2, 1.0, 0.0, frame='map')),  # wrong frame
        (f.pub_truth, _odom(s + 20 * DT_NS - DT_NS // 3, float('nan'), 0.0)),  # NaN twist ...
        (f.pub_truth, _odom(s + 20 * DT_NS - DT_NS // 4, 1.0, float('inf'))),
        (f.pub_truth, _odom(s + 20 * DT_NS - DT_NS // 5, float('nan'), float('nan'))),
        (f.pub_est, _odom(s + 20 * DT_NS - DT_NS // 3, float('nan'), 0.0)),
        (f.pub_truth, _odom(s + 5 * DT_NS, 1.0, 0.0)),  # stamps going backwards
        (f.pub_est, _odom(s + 5 * DT_NS, 1.0, 0.0)),
    ]
    for pub, m in bad:
        pub.publish(m)
        f.spin()
    f.samples(1, range(20, N_RUN))
    f.event('end', 1)
    assert spin_until(executor, lambda: f.written() == [1], 10), f.runs
    _check_run_file(out / 'Real', 1)  # exactly the good samples
    assert node.drops.counts == {'wrong_frame': 1, 'non_finite': 4, 'rejected_by_recorder': 2}
    assert spin_until(
        executor, lambda: f.diag_value('/recorder', 'dropped_rejected_by_recorder') == '2', 5
    )
    st = f.last_diag('/recorder')
    from diagnostic_msgs.msg import DiagnosticStatus

    assert st.name == 'vepd_ros/recorder' and st.level == DiagnosticStatus.WARN
    assert st.message == '7 input messages dropped'
    v = {kv.key: kv.value for kv in st.values}
    assert (
        v['dropped_wrong_frame'],
        v['dropped_non_finite'],
        v['gt_dropped_out_of_order'],
        v['se_dropped_out_of_order'],
        v['runs_written'],
    ) == ('1', '4', '1', '1', '1'), v
    err = capfd.readouterr().err
    # throttled: one warning per reason within the throttle period, however many messages were
    # dropped
    assert err.count('dropped message (non_finite)') == 1, err
    assert (
        err.count('dropped message (wrong_frame)') == 1
        and err.count('dropped message (rejected_by_recorder)') == 1
    )


def test_noise_nodes_drop_bad_truth_report_it_on_diagnostics_and_publish_what_clean_truth_gives(
    ros_ctx, executor
):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from nav_msgs.msg import Odometry
    import rclpy
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Imu, NavSatFix
    from vepd_ros.models.sensors import simulate_sensors
    from vepd_ros.nodes.gps_noise_node import GpsNoiseNode
    from vepd_ros.nodes.imu_noise_node import ImuNoiseNode
    from vepd_ros.nodes.stamps import ns_to_stamp
    from vepd_ros.truth import generate

    run_s, t0_ns = 2.0, NS
    traj = generate('circle', run_s + 1.0, seed=4)
    stamps = t0_ns + np.arange(int(run_s * 100) + 1) * 10_000_000
    tr = traj.sample(stamps / 1e9 - t0_ns / 1e9)
    tr.t_s = stamps / 1e9

    def msgs(k, t_ns=None):
        o = Odometry()
        o.header.stamp, o.header.frame_id, o.child_frame_id = (
            ns_to_stamp(int(stamps[k] if t_ns is None else t_ns)),
            'odom',
            'base_link',
        )
        o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z = (
            float(x) for x in tr.position_enu[k]
        )
        q = o.pose.pose.orientation
        q.x, q.y, q.z, q.w = (float(x) for x in tr.quaternion[k])
        o.twist.twist.linear.x, o.twist.twist.linear.y, o.twist.twist.linear.z = (
            float(x) for x in tr.velocity_body[k]
        )
        i = Imu()
        i.header = o.header
        i.orientation = q
        w, a = tr.angular_velocity_body[k], tr.specific_force_body[k]
        i.angular_velocity.x, i.angular_velocity.y, i.angular_velocity.z = (float(x) for x in w)
        i.linear_acceleration.x, i.linear_acceleration.y, i.linear_acceleration.z = (
            float(x) for x in a
        )
        return o, i

    gps = GpsNoiseNode(
        context=ros_ctx,
        parameter_overrides=[Parameter('model', value='ch_gauss'), Parameter('seed', value=3)],
    )
    imu = ImuNoiseNode(
        context=ros_ctx,
        parameter_overrides=[Parameter('model', value='ch_drift'), Parameter('seed', value=3)],
    )
    t = rclpy.create_node('noise_test', context=ros_ctx)
    rel = QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
    pub_o, pub_i = (
        t.create_publisher(Odometry, TRUTH_TOPIC, rel),
        t.create_publisher(Imu, TOPIC_GROUND_TRUTH_IMU, rel),
    )
    be = QoSProfile(depth=2000, reliability=ReliabilityPolicy.BEST_EFFORT)
    fixes, imus, diags = [], [], []
    t.create_subscription(NavSatFix, TOPIC_GPS_FIX, fixes.append, be)
    t.create_subscription(Imu, TOPIC_IMU, imus.append, be)
    t.create_subscription(DiagnosticArray, '/diagnostics', diags.append, QoSProfile(depth=100))
    for n in (gps, imu, t):
        executor.add_node(n)
    assert spin_until(
        executor,
        lambda: (
            pub_o.get_subscription_count() >= 2
            and pub_i.get_subscription_count() >= 1
            and gps.pub.get_subscription_count()
            and imu.pub.get_subscription_count()
        ),
        15,
    )

    def feed(pairs):
        for o, i in pairs:
            pub_o.publish(o)
            pub_i.publish(i)
            for _ in range(4):
                executor.spin_once(timeout_sec=0.0)

    half = len(stamps) // 2
    feed(msgs(k) for k in range(half))
    nan_o, nan_i = msgs(half, stamps[half] - 5_000_000)  # extra messages between two good ones
    nan_o.pose.pose.position.x = float('nan')
    nan_i.angular_velocity.y = float('nan')
    back_o, back_i = msgs(3)  # stamps going backwards
    feed([(nan_o, nan_i), (back_o, back_i)])
    feed(msgs(k) for k in range(half, len(stamps)))
    lib = simulate_sensors(tr, 'ch_gauss', 'ch_drift', seed=3)
    assert spin_until(
        executor, lambda: len(fixes) >= len(lib.gps) and len(imus) >= len(lib.imu), 10
    ), (len(fixes), len(lib.gps), len(imus), len(lib.imu))
    assert gps.drops.counts == {'non_finite': 1, 'stamp_not_increasing': 1}
    assert imu.drops.counts == {'non_finite': 1, 'stamp_not_increasing': 1}
    # the output after the bad input is what clean truth gives: the library, sample for sample
    assert len(fixes) == len(lib.gps) and len(imus) == len(lib.imu)
    lla = np.array([[m.latitude, m.longitude] for m in fixes])
    np.testing.assert_allclose(lla, lib.gps_lla[:, :2], rtol=0, atol=1e-12)
    acc = np.array(
        [[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z] for m in imus]
    )
    np.testing.assert_array_equal(acc, lib.imu.linear_acceleration)

    def diag(name):
        for arr in reversed(diags):
            for st in arr.status:
                if st.name == name:
                    return st, {kv.key: kv.value for kv in st.values}
        return None, {}

    want = {'dropped_non_finite': '1', 'dropped_stamp_not_increasing': '1'}
    assert spin_until(
        executor,
        lambda: all(
            diag(n)[1].get('published') == str(c)
            for n, c in (
                ('vepd_ros/gps_noise_node', len(fixes)),
                ('vepd_ros/imu_noise_node', len(imus)),
            )
        ),
        5,
    ), diags[-2:]
    for name in ('vepd_ros/gps_noise_node', 'vepd_ros/imu_noise_node'):
        st, v = diag(name)
        assert st.level == DiagnosticStatus.WARN and st.message == '2 input messages dropped', (
            name,
            st,
        )
        assert {k: v[k] for k in want} == want, (name, v)
    assert diag('vepd_ros/gps_noise_node')[1]['truth_messages'] == str(len(stamps) + 2)


class _Output:
    """
    Collect a subprocess's output lines on a thread.

    Collects a subprocess's output lines on a thread (select() on a text pipe misses lines already
    in Python's read buffer).
    """

    def __init__(self, proc):
        import threading

        self.lines = []
        self._t = threading.Thread(
            target=lambda: self.lines.extend(iter(proc.stdout.readline, '')), daemon=True
        )
        self._t.start()

    def text(self):
        return ''.join(self.lines)


def _expect_output(env, procs, expect, timeout_s=30.0):
    running = {
        k: subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for k, cmd in procs.items()
    }
    out = {k: _Output(p) for k, p in running.items()}
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not all(
            w in out[k].text() for k in expect for w in expect[k]
        ):
            if any(p.poll() is not None for p in running.values()):
                break
            time.sleep(0.05)  # polling a condition (the output), not waiting for time to pass
        for k in expect:
            for w in expect[k]:
                assert w in out[k].text(), (k, w, out[k].text())
        for k, p in running.items():
            assert _stop(p) == 0, k
        # warned once, not every second (the next reminder is 30 s later)
        assert all(out[k].text().count(w) == 1 for k in expect for w in expect[k])
    finally:
        for p in running.values():
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
            p.stdout.close()


def test_topics_that_never_appear_are_named_after_the_timeout(domain_id, tmp_path):
    env = ros_env(domain_id)
    _expect_output(
        env,
        {
            'recorder': [
                console_script('recorder_node'),
                '--ros-args',
                '-p',
                'topic_timeout_s:=1.0',
                '-p',
                'truth_topic:=/nothing/truth',
                '-p',
                f'output_dir:={tmp_path}',
            ],
            'gps': [console_script('gps_noise_node'), '--ros-args', '-p', 'topic_timeout_s:=1.0'],
            'imu': [console_script('imu_noise_node'), '--ros-args', '-p', 'topic_timeout_s:=1.0'],
        },
        {
            'recorder': [
                'no message on /odometry/filtered after 1 s',
                'no message on /nothing/truth after 1 s',
            ],
            'gps': ['no message on /ground_truth/odometry after 1 s'],
            'imu': ['no message on /ground_truth/imu or /ground_truth/odometry after 1 s'],
        },
    )
    # the evaluator alone (a recorder would be a /vepd/runs publisher): no recorder in the graph is
    # named
    _expect_output(
        env,
        {
            'evaluator': [
                console_script('evaluator_node'),
                '--ros-args',
                '-p',
                'topic_timeout_s:=1.0',
                '-p',
                f'output_dir:={tmp_path}',
            ]
        },
        {'evaluator': ['no publisher on /vepd/runs after 1 s']},
    )
