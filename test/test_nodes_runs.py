# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Noise nodes in a study restart per run with the offline study's seeds (seeding.derive_seed)."""

import json

import numpy as np
import pytest
from ros_helpers import spin_until
from vepd_ros.models.sensors import simulate_sensors
from vepd_ros.seeding import derive_seed
from vepd_ros.streams import TOPIC_GPS_FIX, TOPIC_GROUND_TRUTH
from vepd_ros.truth import generate

pytestmark = pytest.mark.ros
NS = 1_000_000_000


def test_gps_node_reseeds_each_run_like_the_offline_study(ros_ctx, executor):
    from nav_msgs.msg import Odometry
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import NavSatFix
    from std_msgs.msg import String
    from vepd_ros.nodes.gps_noise_node import GpsNoiseNode
    from vepd_ros.nodes.qos import EVENT_QOS
    from vepd_ros.nodes.run_events import RUN_EVENTS_TOPIC

    model, label, study_seed = 'ch_rw+airsim', 'ch_rw+airsim', 5
    gps = GpsNoiseNode(
        context=ros_ctx,
        parameter_overrides=[
            Parameter('model', value=model),
            Parameter('label', value=label),
            Parameter('seed', value=study_seed),
        ],
    )
    src = rclpy.create_node('truth_src', context=ros_ctx)
    pub_truth = src.create_publisher(Odometry, TOPIC_GROUND_TRUTH, 500)
    pub_ev = src.create_publisher(String, RUN_EVENTS_TOPIC, EVENT_QOS)
    fixes = []
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    src.create_subscription(
        NavSatFix,
        TOPIC_GPS_FIX,
        fixes.append,
        QoSProfile(depth=500, reliability=ReliabilityPolicy.BEST_EFFORT),
    )
    executor.add_node(gps)
    executor.add_node(src)
    assert spin_until(
        executor,
        lambda: pub_truth.get_subscription_count() and src.count_publishers(TOPIC_GPS_FIX),
        10,
    )

    starts, expected = [NS, 9 * NS], []
    for j, t0 in enumerate(starts):
        traj = generate('circle', 5.0, seed=derive_seed(study_seed, 'truth', 'circle', j))
        expected.append(
            simulate_sensors(
                traj, model, 'none', seed=derive_seed(study_seed, 'gps', label, 'circle', j)
            )
        )
        pub_ev.publish(
            String(
                data=json.dumps({'event': 'start', 'scenario': 'circle', 'run': j, 'stamp_ns': t0})
            )
        )
        tt = np.arange(501) / 100.0
        s = traj.sample(tt)
        for k in range(len(tt)):
            m = Odometry()
            st = t0 + k * 10_000_000
            m.header.stamp.sec, m.header.stamp.nanosec = st // NS, st % NS
            m.pose.pose.position.x, m.pose.pose.position.y, m.pose.pose.position.z = (
                s.position_enu[k]
            )
            pub_truth.publish(m)
            for _ in range(3):  # truth in, fix out, fix received: no queue ever fills up
                executor.spin_once(timeout_sec=0)
    spin_until(executor, lambda: len(fixes) >= 2 * 51, 5)
    for j, t0 in enumerate(starts):
        got = [
            f
            for f in fixes
            if t0 <= f.header.stamp.sec * NS + f.header.stamp.nanosec < t0 + 6 * NS
        ]
        exp = expected[j].gps_lla
        assert len(got) == len(exp) == 51, ([f.header.stamp.nanosec for f in got][:3], len(got))
        # 1e-9 deg ≈ 0.1 mm: the node works in the absolute time base (runs start at 1 s and 9 s),
        # the library from t = 0, so time differences inside the random walk's internal 100 Hz
        # stepping round differently in the last bits (observed ≤ 2e-10 deg ≈ 20 µm). Different
        # seeds would differ by centimetres.
        np.testing.assert_allclose(
            [[f.latitude, f.longitude] for f in got], exp[:, :2], rtol=0, atol=1e-9
        )
        np.testing.assert_allclose(
            [f.position_covariance[0] for f in got],
            expected[j].gps.covariance_enu[:, 0, 0],
            rtol=1e-12,
        )
