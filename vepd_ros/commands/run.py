"""``vepd run GRAPH [name:=value ...] [--json]``: a vepd_ros graph without launch_ros.

The nodes of ``vepd_ros.graph.build_graph`` (the description the launch files use) are composed in one
process on a SingleThreadedExecutor (``--processes``: one process per node, started with the same
``--ros-args``), with the built-in judge where robot_localization is absent. The run ends when the evaluator
publishes its result (or at ``--timeout``); ``--json`` prints that result in the ``vepd evaluate`` shape.
"""
from __future__ import annotations

import importlib
import json
import sys
import time

from vepd_ros.graph import GRAPH_ARGS, build_graph, typed_args
from vepd_ros.params import parse_assignments

# executable → (module, class) for in-process composition
NODE_CLASSES = {
    'truth_node': ('vepd_ros.nodes.truth_node', 'TruthNode'),
    'gps_noise_node': ('vepd_ros.nodes.gps_noise_node', 'GpsNoiseNode'),
    'imu_noise_node': ('vepd_ros.nodes.imu_noise_node', 'ImuNoiseNode'),
    'judge_node': ('vepd_ros.nodes.judge_node', 'JudgeNode'),
    'navsat_node': ('vepd_ros.nodes.navsat_node', 'NavSatNode'),
    'recorder_node': ('vepd_ros.nodes.recorder_node', 'RecorderNode'),
    'evaluator_node': ('vepd_ros.nodes.evaluator_node', 'EvaluatorNode'),
    'bag_player_node': ('vepd_ros.nodes.bag_player_node', 'BagPlayerNode'),
}


def register(sub):
    p = sub.add_parser('run', help='run a vepd_ros ROS graph (sim_judge, bag_replay, live_eval) without launch_ros',
                       description='Arguments are the launch arguments of the graph, as name:=value. '
                                   'sim_judge: ' + ', '.join(a.name for a in GRAPH_ARGS['sim_judge']))
    p.add_argument('graph', choices=sorted(GRAPH_ARGS))
    p.add_argument('assignments', nargs='*', metavar='name:=value')
    p.add_argument('--json', action='store_true', help='print the evaluator result as JSON')
    p.add_argument('--processes', action='store_true', help='one process per node instead of one process')
    p.add_argument('--timeout', type=float, default=0.0,
                   help='give up after this many wall seconds (default: from the graph\'s run length)')
    p.add_argument('--list', action='store_true', help='print the nodes and their --ros-args, then exit')
    p.add_argument('--quiet', action='store_true', help='only warnings and errors from the nodes (in-process)')
    p.set_defaults(func=run)


def _default_timeout(graph: str, a: dict) -> float:
    if graph != 'sim_judge':
        return 24 * 3600.0
    n_scen = len([s for s in a.get('scenarios', 'straight,circle,sine').split(',') if s.strip()])
    runs = a.get('k', 10) * n_scen
    sim_s = runs * (a.get('duration_s', 30.0) + 3.0)
    return sim_s / a.get('time_scale', 1.0) + 60.0


def run(args) -> int:
    raw = parse_assignments(args.assignments)
    values = typed_args(args.graph, {k: str(v) if not isinstance(v, str) else v for k, v in raw.items()})
    nodes = build_graph(args.graph, values)
    if args.list:
        for n in nodes:
            print(f'{n.package}/{n.executable}  ' + ' '.join(n.ros_args()))
        return 0
    timeout = args.timeout or _default_timeout(args.graph, {**{p.name: p.default for p in GRAPH_ARGS[args.graph]},
                                                             **values})
    if args.processes:
        result = _run_processes(nodes, timeout)
    else:
        result = _run_in_process(nodes, timeout, quiet=getattr(args, 'quiet', False))
    if result is None:
        print(f'vepd run {args.graph}: no result from the evaluator within {timeout:.0f} s', file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=1))
    elif 'models' not in result:
        for r in result.get('runs', []):
            print(f"{r['path']}: speed RMSE E {r['E']:.4f} m/s, spectral-flatness difference S {r['S']:.4f} "
                  f"({r['se_len']} estimate / {r['gt_len']} truth samples)")
        print(result.get('note', ''))
    else:
        from vepd_ros.commands.evaluate import format_tables
        print(format_tables(result))
    return 0


def _result_listener(node, box: dict):
    from std_msgs.msg import String

    from vepd_ros.nodes.base import EVENT_QOS
    from vepd_ros.nodes.evaluator_node import RESULT_TOPIC
    from vepd_ros.nodes.recorder_node import RUNS_TOPIC
    node.create_subscription(String, RESULT_TOPIC, lambda m: box.setdefault('result', json.loads(m.data)), EVENT_QOS)
    node.create_subscription(String, RUNS_TOPIC, lambda m: box.setdefault('runs', []).append(json.loads(m.data)),
                             EVENT_QOS)


def _run_in_process(nodes, timeout: float, quiet: bool = False):
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    rclpy.init(args=[])                 # not sys.argv: its name:=value words are graph arguments
    box: dict = {}
    built = []
    try:
        ex = SingleThreadedExecutor()
        for spec in nodes:
            module, cls = NODE_CLASSES[spec.executable]
            if quiet:   # before construction, so start-up messages are filtered too
                from rclpy.logging import LoggingSeverity, set_logger_level
                set_logger_level('.'.join(x for x in (spec.namespace.strip('/'), spec.name) if x), LoggingSeverity.WARN)
            node = getattr(importlib.import_module(module), cls)(cli_args=spec.ros_args(), use_global_arguments=False)
            built.append(node)
            ex.add_node(node)
        listener = rclpy.create_node('vepd_run')
        _result_listener(listener, box)
        ex.add_node(listener)
        built.append(listener)
        deadline = time.monotonic() + timeout
        players = [n for n in built if hasattr(n, 'played')]
        finished_at = None
        clock = next((n for n in built if getattr(n, 'drive_clock', False)), None)
        step = _Lockstep(ex, clock) if clock is not None else None
        try:
            while 'result' not in box and time.monotonic() < deadline and rclpy.ok():
                if step is None or not step():
                    ex.spin_once(timeout_sec=0.1 if step is None else 0.001)
                if players and finished_at is None and all(p.done for p in players):
                    finished_at = time.monotonic()        # the bag is over: let the last messages settle
                if finished_at is not None and time.monotonic() - finished_at > 2.0:
                    break
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
    finally:
        for n in built:
            n.destroy_node()      # a recorder in 'single' mode writes its run here (the bag ended it)
        rclpy.try_shutdown()
    if 'result' not in box and players:
        return _runs_summary(nodes)
    return box.get('result')


class _Lockstep:
    """Sim-time stepping of a graph composed in one process: truth_node publishes step T (the samples stamped T,
    then /clock at T − period/2), then the executor runs callbacks until none is ready — noise nodes, their
    subscribers, the timers now due — before the next step is taken. Steps are paced at ``time_scale`` at
    most, so a busy machine slows sim time instead of reordering messages.

    Why the ticks then see the offline study's inputs: a timer due at τ fires one executor wave after the /clock
    callback that passed τ, and its callback first takes what its subscriptions hold (``drain_subscriptions``);
    the data it needs are stamped ≤ τ < T, so they were published at least one step earlier. Reliable hops
    (truth → noise nodes) are delivered in process when publish() returns; a best-effort sensor hop (noise node
    → judge/navsat) is sometimes handed to a Fast DDS thread instead and lands a moment later — it then has the
    rest of its step and the next step's first wave to arrive. Not guaranteed: a best-effort delivery delayed
    longer than that (both cores saturated for a whole step). Measured: two graphs at time_scale 20 beside a
    CPU hog wrote the study's files byte for byte. (Waiting 0.3 ms for late deliveries after each drain
    changed nothing in that test and cost 50 % of the speed, so it is not done.)"""

    def __init__(self, executor, truth):
        self.ex, self.truth = executor, truth
        self.wall_period = truth.step_externally()
        self.next_wall = time.monotonic()

    def __call__(self) -> bool:
        """One step if due, then every callback it causes: True when a step was taken."""
        now = time.monotonic()
        if now < self.next_wall:
            return False
        self.next_wall = max(self.next_wall + self.wall_period, now - self.wall_period)
        if not self.truth.step():
            return False
        self._drain()
        return True

    def _drain(self) -> None:
        """Run callbacks until a wait finds none ready."""
        from rclpy.executors import TimeoutException
        while True:
            try:
                handler, _, _ = self.ex.wait_for_ready_callbacks(timeout_sec=0.0)
            except TimeoutException:
                return
            handler()
            exc = handler.exception()
            if exc is not None:
                raise exc


def _runs_summary(nodes) -> dict | None:
    """What a bag replay without a reference batch produced: the runs on disk (no VEPD without a second side)."""
    from pathlib import Path

    from vepd_ros.metrics.core import run_metrics
    from vepd_ros.runs.format import read_run
    out = next((n.parameters[0]['output_dir'] for n in nodes if n.role == 'recorder'), None)
    if out is None:
        return None
    runs = []
    for csv in sorted(Path(out).glob('Real/*.csv')):
        rec = read_run(csv)
        e, s = run_metrics(*rec.signal('speed'))
        runs.append({'path': str(csv), 'E': e, 'S': s, 'se_len': int(len(rec.se_t)), 'gt_len': int(len(rec.gt_t))})
    return {'runs': runs, 'note': 'no reference_dir: runs recorded, nothing to compare them with'} if runs else None


def _run_processes(nodes, timeout: float):
    import signal
    import subprocess
    from pathlib import Path

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    procs = []
    box: dict = {}
    rclpy.init(args=[])
    try:
        listener = rclpy.create_node('vepd_run')
        _result_listener(listener, box)
        for spec in nodes:
            exe = Path(sys.prefix) / 'bin' / spec.executable
            procs.append(subprocess.Popen([str(exe) if exe.exists() else spec.executable, *spec.ros_args()]))
        ex = SingleThreadedExecutor()
        ex.add_node(listener)
        deadline = time.monotonic() + timeout
        while 'result' not in box and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.1)
            if any(p.poll() not in (None, 0) for p in procs):
                bad = [n.executable for n, p in zip(nodes, procs) if p.poll() not in (None, 0)]
                print(f'vepd run: node(s) exited with an error: {", ".join(bad)}', file=sys.stderr)
                break
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        rclpy.try_shutdown()
    return box.get('result')
