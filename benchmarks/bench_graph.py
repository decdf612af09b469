# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark the sim_judge graph over DDS: rates, latency, CPU, lossless time_scale.

sim_judge graph over DDS: rates, latency, CPU per node at real time, and the fastest lossless
time_scale.

Starts the graph's nodes (``vepd_ros.ros_graph.build_graph``, the description the launch files and
``vepd run`` use) as real processes over Fast DDS on loopback, with a monitor node in this process,
and prints measured figures.

Part 1 — real time (time_scale 1, wall clock): truth_node and ONE chain (models:=ch_gauss:
gps_noise,
imu_noise, navsat, judge, recorder; the reference chain and the evaluator are left out), one
process each.
  * IMU / GPS / odometry/filtered rates on received header stamps: (n − 1) / (last − first stamp),
    and loss as missing stamps on the sensor grid (10 ms, 100 ms);
  * end-to-end latency, per /<ns>/odometry/filtered message: monotonic receipt time of the filtered
    message minus the monotonic receipt time (same monitor, same process) of the
    /ground_truth/odometry sample with the same stamp (the filtered stamp is the last fused
    measurement's time: an IMU or GPS tick = a truth stamp). Split into truth → imu/data (the noise
    hop) and imu/data → odometry/filtered (waiting for the judge's 35 Hz tick + EKF + publish);
  * CPU per node: psutil user+sys over the measured window, % of one core.
Part 2 — accelerated (truth_node drives /clock, every node use_sim_time), increasing time_scale:
the full
sim_judge graph for models:=ch_gauss (reference chain + ch_gauss chain + evaluator, k:=2 runs of
one
scenario), as one process per node and in one process (``vepd run sim_judge``). Counted per run:
  * /ch_gauss/imu/data and gps/fix received by the monitor with the judge's QoS (best effort, depth
    imu0_queue_size 5 / navsat's 1) vs the sensor ticks of the run (100 Hz, 10 Hz, both ends
    included);
  * /ch_gauss/odometry/filtered received (reliable) vs the count at the slowest scale, and missed
    judge ticks (consecutive filtered stamps more than 1.5 tick periods apart);
  * every recorder's sidecar (both chains): truth message count vs the truth samples of a run (one
    short is tolerated and flagged: a start-event race in the recorder), estimate count vs 35 Hz x
    run length.
  Two verdicts per scale: no message lost (imu, gps, truth), and also no judge tick missed.
  The sweep stops at the first scale that loses a message (``--all-scales``: go on).
  The monitor counts a run only if it was already matched when the run started (first stamp = run
  start).

    .venv/bin/python benchmarks/bench_graph.py [--window 30] [--scales 1 2 4 8 16] [--duration 10]
        [--modes processes inprocess] [--skip-realtime] [--skip-sweep] [--all-scales]
        [--domain 217]

Needs `make venv` (the nodes run as the installed console scripts). Default total ≈ 3–4 min.
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import os
from pathlib import Path
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NS = 1_000_000_000
LABEL = 'ch_gauss'
PROCS: list[subprocess.Popen] = []


# ---------------------------------------------------------------------------------------------
# processes
def ros_env(domain: int, log_dir: str) -> dict:
    env = dict(os.environ)
    env.update(
        ROS_DOMAIN_ID=str(domain),
        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
        ROS_LOG_DIR=log_dir,
        AMENT_PREFIX_PATH=sys.prefix,
        PYTHONUNBUFFERED='1',
        PYTHONPATH=os.pathsep.join(x for x in (str(ROOT), os.environ.get('PYTHONPATH', '')) if x),
    )
    env.pop('RMW_IMPLEMENTATION', None)
    env.pop('ROS_LOCALHOST_ONLY', None)
    return env


def spawn(cmd: list[str], log: Path) -> subprocess.Popen:
    f = open(log, 'w')
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
    f.close()
    PROCS.append(p)
    return p


def stop_all(procs=None, grace_s: float = 8.0) -> None:
    """SIGINT every process still running, wait up to grace_s, then SIGKILL the rest."""
    procs = list(PROCS if procs is None else procs)
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace_s
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for p in procs:
        if p in PROCS:
            PROCS.remove(p)


def exe(name: str) -> list[str]:
    """
    Return the command of a console script run from the working tree.

    The command of a console script, run from the working tree (``python -m``; PYTHONPATH=ROOT), so
    the benchmark measures the code in this checkout as bench_judge*.py do; config comes from the
    installed share.
    """
    return [sys.executable, '-m', 'vepd_ros.cli' if name == 'vepd' else f'vepd_ros.nodes.{name}']


# ---------------------------------------------------------------------------------------------
# monitor
def cdr_stamp_ns(raw: bytes) -> int:
    """
    Return the header stamp (ns) of a serialized message.

    header.stamp of a serialized message whose first field is std_msgs/Header (CDR, little endian).
    """
    sec, nsec = struct.unpack_from('<iI', raw, 4)
    return sec * NS + nsec


class Monitor:
    """Raw (undeserialized) subscriptions recording (stamp_ns, time.monotonic()) per message."""

    def __init__(self, node):
        self.node = node
        self.data: dict[str, list[tuple[int, float]]] = {}
        self.subs = {}

    def add(self, msg_type, topic: str, qos) -> None:
        rec = self.data.setdefault(topic, [])
        mono = time.monotonic

        def cb(raw, rec=rec):
            rec.append((cdr_stamp_ns(raw), mono()))

        self.subs[topic] = self.node.create_subscription(msg_type, topic, cb, qos, raw=True)

    def matched(self) -> bool:
        return all(s.get_publisher_count() > 0 for s in self.subs.values())

    def clear(self) -> None:
        for v in self.data.values():
            v.clear()


def pct(values, q):
    if not values:
        return float('nan')
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(math.ceil(q / 100 * len(s))) - 1))]


def spin_for(ex, seconds: float, until=None) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if until is not None and until():
            return True
        ex.spin_once(timeout_sec=0.05)
    return bool(until and until())


# ---------------------------------------------------------------------------------------------
# part 1
def realtime(ex, node, args, env, tmp: Path) -> dict:
    from nav_msgs.msg import Odometry
    import psutil
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Imu, NavSatFix
    from vepd_ros.nodes.qos import SENSOR_QOS
    from vepd_ros.ros_graph import build_graph

    out = tmp / 'rt_out'
    duration = args.window + args.warmup + 15.0  # one run covers warm-up and the window
    specs = build_graph(
        'sim_judge',
        {
            'models': LABEL,
            'k': 2,
            'scenarios': 'circle',
            'duration_s': duration,
            'time_scale': 1.0,
            'judge': 'builtin',
            'output_dir': str(out),
        },
    )
    keep = [s for s in specs if s.role == 'truth' or s.namespace == LABEL]
    for s in keep:
        if s.executable == 'judge_node' and args.judge_param:
            s.parameters = [*s.parameters, dict(kv.split(':=', 1) for kv in args.judge_param)]
    truth = keep[0]
    truth.parameters = [
        {**truth.parameters[0], 'wait_for_subscribers': 4}
    ]  # gps, imu, recorder + monitor
    ns = f'/{LABEL}'
    mon = Monitor(node)
    mon.add(
        Odometry,
        '/ground_truth/odometry',
        QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE),
    )

    def sensor(depth):
        return QoSProfile(
            depth=depth,
            reliability=SENSOR_QOS.reliability,  # noqa: E731
            history=SENSOR_QOS.history,
            durability=SENSOR_QOS.durability,
        )

    mon.add(Imu, f'{ns}/imu/data', sensor(5))  # the judge's imu0 QoS (queue 5, best effort)
    mon.add(NavSatFix, f'{ns}/gps/fix', sensor(1))  # navsat's QoS
    mon.add(Odometry, f'{ns}/odometry/filtered', QoSProfile(depth=10))
    procs = {}
    for s in keep:
        procs[f'{s.namespace + "/" if s.namespace else ""}{s.executable}'] = spawn(
            [*exe(s.executable), *s.ros_args()], tmp / f'rt_{s.executable}.log'
        )
    t0 = time.monotonic()
    filtered = mon.data[f'{ns}/odometry/filtered']
    if not spin_for(ex, 60.0, until=lambda: len(filtered) > 0):
        raise SystemExit(f'no {ns}/odometry/filtered within 60 s (logs in {tmp})')
    startup = time.monotonic() - t0
    spin_for(ex, args.warmup)
    mon.clear()
    ps = {k: psutil.Process(p.pid) for k, p in procs.items()}
    me = psutil.Process()

    def cpu(p):
        t = p.cpu_times()
        return t.user + t.system

    c0 = {k: cpu(p) for k, p in ps.items()}
    c0['monitor (this process)'] = cpu(me)
    w0 = time.monotonic()
    spin_for(ex, args.window)
    wall = time.monotonic() - w0
    c1 = {k: cpu(p) for k, p in ps.items()}
    c1['monitor (this process)'] = cpu(me)
    stop_all(list(procs.values()))

    res = {
        'startup_s': startup,
        'window_s': wall,
        'cpu': {k: 100 * (c1[k] - c0[k]) / wall for k in c0},
    }
    for key, topic, period_ns in (
        ('imu', f'{ns}/imu/data', NS // 100),
        ('gps', f'{ns}/gps/fix', NS // 10),
        ('filtered', f'{ns}/odometry/filtered', None),
        ('truth', '/ground_truth/odometry', NS // 100),
    ):
        rec = mon.data[topic]
        st = [s for s, _ in rec]
        span = (st[-1] - st[0]) / NS if len(st) > 1 else float('nan')
        r = {
            'n': len(st),
            'rate_stamps_hz': (len(st) - 1) / span if span > 0 else float('nan'),
            'rate_wall_hz': (len(rec) - 1) / (rec[-1][1] - rec[0][1])
            if len(rec) > 1
            else float('nan'),
        }
        if period_ns:
            r['missing'] = int(round((st[-1] - st[0]) / period_ns)) + 1 - len(set(st)) if st else 0
        res[key] = r
    truth_rx = dict(mon.data['/ground_truth/odometry'])
    imu_rx = dict(mon.data[f'{ns}/imu/data'])
    e2e, hop, judge = [], [], []
    for s, t in filtered:
        if s in truth_rx:
            e2e.append(1e3 * (t - truth_rx[s]))
            if s in imu_rx:
                judge.append(1e3 * (t - imu_rx[s]))
    for s, t in mon.data[f'{ns}/imu/data']:
        if s in truth_rx:
            hop.append(1e3 * (t - truth_rx[s]))
    res['latency_ms'] = {'e2e': e2e, 'truth_to_imu': hop, 'imu_to_filtered': judge}
    fs = [s for s, _ in filtered]
    res['filtered']['missed_ticks'] = sum(1 for a, b in zip(fs, fs[1:]) if b - a > 1.5 * NS / 35)
    return res


def print_realtime(r: dict, args) -> None:
    print(
        f'== part 1: real time, truth + one chain ({LABEL}) as 6 processes; '
        f'{r["window_s"]:.1f} s window after {args.warmup:g} s warm-up (graph up in '
        f'{r["startup_s"]:.1f} s)'
    )
    for key, name, goal in (
        ('truth', '/ground_truth/odometry', 100.0),
        ('imu', f'/{LABEL}/imu/data', 100.0),
        ('gps', f'/{LABEL}/gps/fix', 10.0),
        ('filtered', f'/{LABEL}/odometry/filtered', 35.0),
    ):
        x = r[key]
        extra = (
            f', {x["missing"]} missing on the grid'
            if 'missing' in x
            else f', {x["missed_ticks"]} missed ticks'
        )
        print(
            f'rate {name:30s} {x["rate_stamps_hz"]:8.3f} Hz on stamps '
            f'({100 * (x["rate_stamps_hz"] / goal - 1):+.2f} % '
            f'of {goal:g}), {x["rate_wall_hz"]:8.3f} Hz on receipt, n={x["n"]}{extra}'
        )
    for k, label in (
        ('e2e', 'truth -> odometry/filtered (e2e)'),
        ('truth_to_imu', 'truth -> imu/data'),
        ('imu_to_filtered', 'imu/data -> odometry/filtered'),
    ):
        v = r['latency_ms'][k]
        print(
            f'latency {label:34s} p50 {pct(v, 50):6.2f} ms  p99 {pct(v, 99):6.2f} ms  max '
            f'{max(v, default=float("nan")):6.2f} ms'
            f'  (n={len(v)})'
        )
    for k, v in r['cpu'].items():
        print(f'cpu {k:32s} {v:6.1f} % of one core')


# ---------------------------------------------------------------------------------------------
# part 2
def speeds(t: dict) -> str:
    """
    Format the sim speed of each run.

    Sim seconds per wall second of each run, from the monitor's receipt times of the run's IMU
    messages.
    """
    return ', '.join(f'{r["sim_speed"]:.1f}x' for r in t['runs'])


def sweep_trial(ex, node, mode: str, scale: float, args, env, tmp: Path) -> dict:
    from nav_msgs.msg import Odometry
    import psutil
    from rclpy.qos import QoSProfile
    from sensor_msgs.msg import Imu, NavSatFix
    from std_msgs.msg import String
    from vepd_ros.nodes.qos import EVENT_QOS, SENSOR_QOS
    from vepd_ros.nodes.run_events import RUN_EVENTS_TOPIC
    from vepd_ros.ros_graph import build_graph

    out = tmp / f'sw_{mode}_{scale:g}'
    values = {
        'models': LABEL,
        'k': 2,
        'scenarios': 'straight',
        'duration_s': float(args.duration),
        'time_scale': float(scale),
        'use_sim_time': True,
        'judge': 'builtin',
        'output_dir': str(out),
    }
    ns = f'/{LABEL}'

    def sensor(depth):
        return QoSProfile(
            depth=depth,
            reliability=SENSOR_QOS.reliability,  # noqa: E731
            history=SENSOR_QOS.history,
            durability=SENSOR_QOS.durability,
        )

    mon = Monitor(node)
    mon.add(Imu, f'{ns}/imu/data', sensor(5))
    mon.add(NavSatFix, f'{ns}/gps/fix', sensor(1))
    mon.add(Odometry, f'{ns}/odometry/filtered', QoSProfile(depth=10))
    events, box = [], {}
    ev_sub = node.create_subscription(
        String, RUN_EVENTS_TOPIC, lambda m: events.append(json.loads(m.data)), EVENT_QOS
    )
    res_sub = node.create_subscription(
        String, '/vepd/result', lambda m: box.setdefault('r', 1), EVENT_QOS
    )
    if mode == 'processes':
        procs = [
            spawn(
                [*exe(s.executable), *s.ros_args()],
                out.parent / f'{out.name}_{s.namespace}_{s.executable}.log',
            )
            for s in build_graph('sim_judge', values)
        ]
    else:
        cmd = [
            *exe('vepd'),
            'run',
            'sim_judge',
            *(f'{k}:={str(v).lower() if isinstance(v, bool) else v}' for k, v in values.items()),
            '--quiet',
        ]
        procs = [spawn(cmd, out.parent / f'{out.name}_vepd_run.log')]
    n_runs = 2
    total_sim = n_runs * (args.duration + 3.0)
    t0 = time.monotonic()
    ends = lambda: sum(1 for e in events if e.get('event') == 'end')  # noqa: E731
    ok = spin_for(ex, 60.0 + 2 * total_sim / scale, until=lambda: ends() >= n_runs)
    spin_for(ex, 30.0, until=lambda: 'r' in box or any(p.poll() is not None for p in procs))
    wall = time.monotonic() - t0
    spin_for(ex, 0.5)
    cpu_pct = 0.0
    for p in procs:
        try:
            c = psutil.Process(p.pid).cpu_times()
            cpu_pct += 100 * (c.user + c.system) / wall
        except psutil.Error:
            pass
    stop_all(procs)
    for s in (*mon.subs.values(), ev_sub, res_sub):
        node.destroy_subscription(s)

    starts = sorted((int(e['stamp_ns']), e) for e in events if e.get('event') == 'start')
    endstamp = {int(e['index']): int(e['stamp_ns']) for e in events if e.get('event') == 'end'}
    runs = []
    for st, e in starts:
        en = endstamp.get(int(e['index']))
        if en is None:
            continue
        row = {'run': int(e['index'])}
        for key, topic, per in (
            ('imu', f'{ns}/imu/data', NS // 100),
            ('gps', f'{ns}/gps/fix', NS // 10),
        ):
            got = sorted({s for s, _ in mon.data[topic] if st <= s <= en})
            expected = (en - st) // per + 1
            row[key] = (len(got), expected, bool(got) and got[0] == st)
        fs = sorted(s for s, _ in mon.data[f'{ns}/odometry/filtered'] if st <= s <= en + NS // 10)
        row['filtered'] = len(fs)
        gaps = [(a - st) / NS for a, b in zip(fs, fs[1:]) if b - a > 1.5 * NS / 35]
        row['missed_ticks'], row['gap_at_s'] = len(gaps), gaps[:5]
        row['expected_filtered_35hz'] = (en - st) * 35 // NS
        rx = [r for s, r in mon.data[f'{ns}/imu/data'] if st <= s <= en]
        row['sim_speed'] = (
            (en - st) / NS / (max(rx) - min(rx))
            if len(rx) > 1 and max(rx) > min(rx)
            else float('nan')
        )
        runs.append(row)
    sidecars = {}
    for js in sorted(out.rglob('*.json')):
        try:
            d = json.loads(js.read_text())
        except (OSError, ValueError):
            continue
        if 'message_counts' in d:
            sidecars[str(js.relative_to(out))] = d['message_counts']
    return {
        'mode': mode,
        'scale': scale,
        'wall_s': wall,
        'completed': ok,
        'runs': runs,
        'sidecars': sidecars,
        'truth_per_run': int(args.duration * 100) + 1,
        'result': 'r' in box,
        'expected_estimates': int(args.duration * 35),
        'cpu': cpu_pct,
        'exit': [p.returncode for p in procs],
    }


def judge_trial(t: dict, ref: dict | None) -> tuple[bool, bool, list[str]]:
    """
    (no message lost, no judge tick missed, lines).

    Messages: imu/data and gps/fix at the monitor (runs it was matched for), truth in every run
    file (vs the slowest scale). Ticks: no gap > 1.5 periods between consecutive filtered stamps at
    the monitor, and ≥ 35 Hz × run length estimates in every run file.
    """
    lines, msgs, ticks = [], t['completed'], t['completed']
    if not t['completed']:
        lines.append('   not all runs ended before the timeout')
    for r in t['runs']:
        parts = []
        for key in ('imu', 'gps'):
            got, exp, joined = r[key]
            if joined:
                msgs &= got == exp
                parts.append(f'{key} {got}/{exp} ({got / exp:.4f})')
            else:
                parts.append(f'{key} {got}/{exp} (monitor joined late: not counted)')
        if r['imu'][2]:
            ticks &= r['missed_ticks'] == 0
        gaps = (
            f' (after t0+{", ".join(f"{g:.2f}" for g in r["gap_at_s"])} s)'
            if r['missed_ticks']
            else ''
        )
        parts.append(
            f'filtered {r["filtered"]} (35 Hz x run = {r["expected_filtered_35hz"]}), '
            f'missed ticks {r["missed_ticks"]}{gaps}'
        )
        lines.append(f'   run {r["run"]}: ' + '; '.join(parts))
    n_truth = t['truth_per_run']
    if len(t['sidecars']) < 4:
        msgs = False
        lines.append(f'   only {len(t["sidecars"])} of 4 run files written')
    n_est = t['expected_estimates']
    for name, c in t['sidecars'].items():
        # one truth sample short is tolerated and flagged: the recorder can take a run's first
        # sample before the run's start event (a start-up race, seen at every scale), which is not
        # loss under load
        good_t, good_e = c['truth'] >= n_truth - 1, c['estimate'] >= n_est
        msgs &= good_t
        ticks &= good_e
        note = '  [first truth sample not in the run]' if c['truth'] == n_truth - 1 else ''
        lines.append(
            f'   sidecar {name}: truth {c["truth"]}/{n_truth}'
            f'{"" if good_t else " <- LOSS"}, estimate {c["estimate"]}/{n_est}'
            f'{"" if good_e else " <- SHORT"}{note}'
        )
    return msgs, ticks, lines


# ---------------------------------------------------------------------------------------------
# main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    ap.add_argument('--window', type=float, default=30.0, help='real-time measuring window (s)')
    ap.add_argument(
        '--warmup', type=float, default=3.0, help='wait after the first filtered message (s)'
    )
    ap.add_argument('--scales', type=float, nargs='+', default=[1, 2, 4, 8, 16])
    ap.add_argument(
        '--duration', type=float, default=10.0, help='sim seconds per run in the sweep (2 runs)'
    )
    ap.add_argument(
        '--judge-param',
        action='append',
        default=[],
        metavar='NAME:=VALUE',
        help='extra judge_node parameter for part 1 (e.g. publish_on_measurement:=true)',
    )
    ap.add_argument(
        '--modes',
        nargs='+',
        default=['processes', 'inprocess'],
        choices=['processes', 'inprocess'],
    )
    ap.add_argument(
        '--all-scales', action='store_true', help='do not stop the sweep at the first lossy scale'
    )
    ap.add_argument('--skip-realtime', action='store_true')
    ap.add_argument('--skip-sweep', action='store_true')
    ap.add_argument('--domain', type=int, default=int(os.environ.get('VEPD_BENCH_DOMAIN', '217')))
    ap.add_argument('--log-dir', default=os.environ.get('ROS_LOG_DIR', '/tmp/roslog_bench'))
    ap.add_argument('--keep', action='store_true', help='keep the temporary output directory')
    a = ap.parse_args(argv)
    if not 0 <= a.domain <= 232:
        ap.error('--domain must be 0..232')
    env = ros_env(a.domain, a.log_dir)
    os.environ.clear()
    os.environ.update(env)  # for this process's rclpy and every child
    Path(a.log_dir).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix='bench_graph_'))
    atexit.register(stop_all)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

    import platform

    import psutil
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    rclpy.init(args=[])
    node = rclpy.create_node('bench_graph_monitor')
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    print(
        f'bench_graph {time.strftime("%Y-%m-%d %H:%M")}  {platform.node()}  {platform.platform()} '
        f' '
        f'Python {platform.python_version()}  {psutil.cpu_count()} logical cores  '
        f'ROS_DOMAIN_ID={a.domain}  '
        f'loopback (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST)  logs/output {tmp}'
    )
    t_start = time.monotonic()
    rc = 0
    try:
        if not a.skip_realtime:
            print_realtime(realtime(ex, node, a, env, tmp), a)
        if not a.skip_sweep:
            print(
                f'== part 2: time_scale sweep, full sim_judge models:={LABEL} (reference chain + '
                f'{LABEL} chain + '
                f'evaluator, 12 nodes), 2 runs x {a.duration:g} s of straight, all on /clock'
            )
            best = {}
            last = {}
            for mode in a.modes:
                ref = None
                best[mode] = {'msgs': None, 'ticks': None, 'first_msgs': None, 'first_ticks': None}
                b = best[mode]
                for scale in a.scales:
                    t = sweep_trial(ex, node, mode, scale, a, env, tmp)
                    ok_m, ok_t, lines = judge_trial(t, ref)
                    print(
                        f'{mode:10s} time_scale {scale:5g}: messages '
                        f'{"all kept" if ok_m else "LOST"}, judge ticks '
                        f'{"all kept" if ok_t else "MISSED"}  (wall {t["wall_s"]:.1f} s incl. '
                        f'start-up, graph CPU '
                        f'{t["cpu"]:.0f} % of one core, evaluator result '
                        f'{"yes" if t["result"] else "no"}; '
                        f'sim speed achieved in the runs {speeds(t) or "n/a"})'
                    )
                    for ln in lines:
                        print(ln)
                    sys.stdout.flush()
                    ref = ref or t
                    last[mode] = scale
                    for key, ok in (('msgs', ok_m), ('ticks', ok_t)):
                        if ok and b[f'first_{key}'] is None:
                            b[key] = scale
                        elif not ok and b[f'first_{key}'] is None:
                            b[f'first_{key}'] = scale
                    if b['first_msgs'] is not None and not a.all_scales:
                        break
            for mode in a.modes:
                b = best[mode]
                for key, what in (
                    ('msgs', 'no message lost'),
                    ('ticks', 'no message lost and no judge tick missed'),
                ):
                    lim = b[f'first_{key}']
                    print(
                        f'largest time_scale with {what} ({mode}): {b[key]}'
                        + (
                            f' (first failure at {lim:g})'
                            if lim
                            else f' (none up to {last[mode]:g}, the last scale run)'
                        )
                    )
    except KeyboardInterrupt:
        print('interrupted: stopping the graph', file=sys.stderr)
        rc = 130
    finally:
        stop_all()
        node.destroy_node()
        rclpy.try_shutdown()
        if not a.keep and rc == 0:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    print(f'total {time.monotonic() - t_start:.0f} s')
    return rc


if __name__ == '__main__':
    raise SystemExit(main())
