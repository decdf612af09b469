# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark the real robot_localization ekf_node (built by `make rl`) beside the built-in judge.

The performance anchor of issue 23: CPU seconds per 30 s run. One 30 s planar circle drive
(``circle_inputs``, 100 Hz IMU, 10 Hz GPS with 0.03 m noise, seed 1; the inputs bench_judge's graph
case uses):

- real: ekf_node with config/ekf.yaml on sim time, fed over DDS by this process the run's
  sensor_msgs/Imu on /imu/data and its GPS as nav_msgs/Odometry on /odometry/gps (UTM offsets from
  the first fix, what navsat_transform publishes), /clock advancing with every IMU sample at
  --time-scale times real time. The process's CPU (user + system, /proc/<pid>/stat) from the first
  message to the last /odometry/filtered, and its idle CPU per second before (DDS housekeeping);
- built-in: ``run_judge_batch`` (ekf + navsat, config/ekf.yaml + navsat.yaml) on the same inputs,
  K = 1 and batched K = --k, CPU seconds per run (the least of --repeat).

Prints the figures and the ratios real / built-in. Skips (exit 0, the reason printed) when the
build is missing: `make rl` needs ../shared/ros2_sources.

    .venv/bin/python benchmarks/bench_rl_judge.py [--k 30] [--repeat 3] [--time-scale 2.0]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import time

from _trees import ROOT

DURATION = 30.0
GPS_SIGMA = 0.03
SEED = 1


def inputs(k: int):
    """Return the (imu, gps) of the circle drive for K runs."""
    sys.path.insert(0, str(ROOT))  # the working tree, not an installed copy
    from vepd_ros.testing.judge_inputs import circle_inputs

    imu, gps, _ = circle_inputs(k=k, duration_s=DURATION, gps_sigma=GPS_SIGMA, seed=SEED)
    return imu, gps


def builtin_cpu(k: int, repeat: int) -> float:
    """Return the least CPU seconds per run of the built-in judge over K runs at once."""
    from vepd_ros.judge.rl_graph import run_judge_batch

    imu, gps = inputs(k)
    ekf, navsat = ROOT / 'config' / 'ekf.yaml', ROOT / 'config' / 'navsat.yaml'
    run_judge_batch(ekf, navsat, imu, gps)  # warm-up: first-call imports and caches
    best = float('inf')
    for _ in range(repeat):
        t = time.process_time()
        run_judge_batch(ekf, navsat, imu, gps)
        best = min(best, time.process_time() - t)
    return best / k


def proc_cpu(pid: int) -> float:
    """Return the user + system CPU seconds of a process so far (/proc/<pid>/stat)."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def _messages(imu, gps):
    """Yield (t_s, kind, fields) of run 0 in time order: IMU samples and GPS odometry."""
    import numpy as np
    from vepd_ros.judge.navsat import utm_forward

    t_imu = imu['stamp_ns'] * 1e-9
    t_gps = gps['stamp_ns'] * 1e-9
    x, y, _, _ = utm_forward(gps['latitude'][0], gps['longitude'][0])
    x, y = np.asarray(x) - x[0], np.asarray(y) - y[0]
    events = [(t, 0, i) for i, t in enumerate(t_imu)] + [(t, 1, j) for j, t in enumerate(t_gps)]
    for t, kind, i in sorted(events):
        if kind == 0:
            yield t, 'imu', (imu['orientation'][0, i], imu['angular_velocity'][0, i],
                             imu['linear_acceleration'][0, i])
        else:
            yield t, 'gps', (float(x[i]), float(y[i]))


def real_cpu(time_scale: float, domain_id: int) -> dict:
    """Run ekf_node over the 30 s drive on sim time; return its CPU figures and output count."""
    import rclpy
    from builtin_interfaces.msg import Time
    from nav_msgs.msg import Odometry
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu
    from vepd_ros import rl_install

    env = rl_install.rl_environment()
    env.update(ROS_DOMAIN_ID=str(domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    exe = rl_install.executable('ekf_node')
    proc = subprocess.Popen(
        [str(exe), '--ros-args', '-r', '__node:=ekf_filter_node', '--params-file',
         str(ROOT / 'config' / 'ekf.yaml'), '-p', 'use_sim_time:=true', '--log-level', 'warn'],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ctx = rclpy.context.Context()
    rclpy.init(context=ctx, domain_id=domain_id)
    node = Node('bench_rl_feeder', context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    out = []
    node.create_subscription(Odometry, '/odometry/filtered', out.append, 1000)
    pubs = {
        'clock': node.create_publisher(Clock, '/clock', 10),
        'imu': node.create_publisher(Imu, '/imu/data', 100),
        'gps': node.create_publisher(Odometry, '/odometry/gps', 100),
    }
    try:
        deadline = time.monotonic() + 60
        while not all(p.get_subscription_count() for p in pubs.values()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f'ekf_node did not subscribe (exit {proc.poll()}):'
                                   f' {proc.stderr.read() if proc.poll() is not None else ""}')
            ex.spin_once(timeout_sec=0.05)
        idle0, w0 = proc_cpu(proc.pid), time.monotonic()
        while time.monotonic() - w0 < 3.0:
            ex.spin_once(timeout_sec=0.05)
        idle_rate = (proc_cpu(proc.pid) - idle0) / (time.monotonic() - w0)
        imu, gps = inputs(1)
        t0_ns = 1_700_000_000 * 10**9
        c0, w0 = proc_cpu(proc.pid), time.monotonic()
        for t, kind, fields in _messages(imu, gps):
            stamp_ns = t0_ns + int(round(t * 1e9))
            stamp = Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9)
            while time.monotonic() - w0 < t / time_scale:
                ex.spin_once(timeout_sec=0.0005)
            if kind == 'imu':
                pubs['clock'].publish(Clock(clock=stamp))
                q, w, a = fields
                m = Imu()
                m.header.stamp, m.header.frame_id = stamp, 'base_link'
                o = m.orientation
                (o.x, o.y, o.z, o.w) = map(float, q)
                (m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z) = map(float, w)
                a = [float(v) for v in a]
                (m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z) = a
                for cov in (m.orientation_covariance, m.angular_velocity_covariance,
                            m.linear_acceleration_covariance):
                    cov[0] = cov[4] = cov[8] = 1e-3
                pubs['imu'].publish(m)
            else:
                m = Odometry()
                m.header.stamp, m.header.frame_id, m.child_frame_id = stamp, 'odom', 'base_link'
                m.pose.pose.position.x, m.pose.pose.position.y = fields
                m.pose.pose.orientation.w = 1.0
                pubs['gps'].publish(m)
        # Drain: the last outputs arrive once the node has taken the last messages.
        quiet = time.monotonic()
        n = len(out)
        while time.monotonic() - quiet < 1.0:
            ex.spin_once(timeout_sec=0.05)
            if len(out) != n:
                n, quiet = len(out), time.monotonic()
        wall = time.monotonic() - w0
        cpu = proc_cpu(proc.pid) - c0
        if proc.poll() is not None:
            raise RuntimeError(f'ekf_node exited with {proc.returncode}: {proc.stderr.read()}')
        return {'cpu': cpu, 'wall': wall, 'idle_rate': idle_rate, 'outputs': len(out)}
    finally:
        if proc.poll() is None:
            proc.send_signal(2)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        ex.shutdown()
        node.destroy_node()
        ctx.try_shutdown()


def main(argv=None) -> int:
    """Print the real ekf_node's CPU per 30 s run beside the built-in judge's."""
    ap = argparse.ArgumentParser()
    ap.add_argument('--k', type=int, default=30)
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--time-scale', type=float, default=2.0,
                    help='sim time per wall second while feeding ekf_node (default 2.0)')
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from vepd_ros import rl_install
    from vepd_ros.graph.domain import DomainLease

    try:
        rl_install.build_root()
    except rl_install.RlBuildMissing as exc:
        print(f'bench_rl_judge: skipped: {exc}')
        return 0
    b1 = builtin_cpu(1, args.repeat)
    bk = builtin_cpu(args.k, args.repeat)
    lease = DomainLease()
    try:
        reals = [real_cpu(args.time_scale, lease.domain_id) for _ in range(args.repeat)]
    finally:
        lease.release()
    real = min(reals, key=lambda r: r['cpu'])
    each = ', '.join(f'{r["cpu"]:.2f}' for r in reals)
    print(f'bench_rl_judge: one {DURATION:.0f} s run (100 Hz IMU + 10 Hz GPS), CPU s per run')
    print(f'  real ekf_node (config/ekf.yaml, sim time x{args.time_scale:g}): {real["cpu"]:.3f} s'
          f' (least of {args.repeat}: {each}; wall'
          f' {real["wall"]:.1f} s; {real["outputs"]} /odometry/filtered; idle'
          f' {real["idle_rate"]:.3f} CPU s per wall s)')
    print(f'  built-in judge K=1 (ekf + navsat): {b1:.3f} s; batched K={args.k}: {bk:.4f} s'
          ' per run')
    print(f'  ratio real / built-in: K=1 {real["cpu"] / b1:.2f}x, K={args.k}'
          f' {real["cpu"] / bk:.1f}x (> 1: the built-in judge costs less)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
