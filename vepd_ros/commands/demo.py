"""``vepd demo``: the main job on the embedded defaults (what ``make demo`` runs)."""
from __future__ import annotations

import time


def register(sub):
    p = sub.add_parser('demo', help='run the main job on the embedded defaults (what `make demo` runs)')
    p.add_argument('--duration', type=float, default=10.0, help='sim seconds of truth to publish (default 10)')
    p.add_argument('--time-scale', type=float, default=5.0, help='sim seconds per wall second (default 5)')
    p.set_defaults(func=run)


def run(args) -> int:
    import numpy as np
    import rclpy
    from nav_msgs.msg import Odometry
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Imu

    from vepd_ros.nodes.truth_node import TruthNode

    rclpy.init()
    try:
        truth = TruthNode(parameter_overrides=[
            Parameter('scenario', value='circle'), Parameter('duration_s', value=float(args.duration)),
            Parameter('time_scale', value=float(args.time_scale)), Parameter('shutdown_when_done', value=True)])
        listener = rclpy.create_node('demo_listener')
        odom, imu = [], []
        listener.create_subscription(Odometry, '/ground_truth/odometry', odom.append, 100)
        listener.create_subscription(Imu, '/ground_truth/imu', imu.append, 100)
        ex = SingleThreadedExecutor()
        ex.add_node(truth)
        ex.add_node(listener)
        t0 = time.monotonic()
        while rclpy.ok() and time.monotonic() - t0 < 10 * args.duration / args.time_scale + 10:
            ex.spin_once(timeout_sec=0.05)
        wall = time.monotonic() - t0
    finally:
        rclpy.try_shutdown()
    if len(odom) < 2:
        print('demo: no ground truth received over DDS (is discovery blocked?)')
        return 1
    st = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in odom])
    v = np.array([m.twist.twist.linear.x for m in odom])
    last = odom[-1].pose.pose.position
    print('vepd demo — ground-truth source over DDS (truth_node + a listener in one process)')
    print(f'  scenario circle, {args.duration:g} s of sim time at x{args.time_scale:g} on /clock, {wall:.1f} s wall')
    print(f'  received {len(odom)} /ground_truth/odometry and {len(imu)} /ground_truth/imu messages')
    print(f'  rate on stamps {(len(st) - 1) / (st[-1] - st[0]):.2f} Hz; speed up to {v.max():.2f} m/s; '
          f'final position ({last.x:.2f}, {last.y:.2f}) m')
    print(f'  specific force at rest: {imu[0].linear_acceleration.z:.5f} m/s² on z')
    return 0
