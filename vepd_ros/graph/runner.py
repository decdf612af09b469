# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Running a graph's nodes over DDS until the evaluator's result: in one process, or one per node.

In one process (``run_in_process``) the nodes are composed on one executor and stepped in lockstep
(``_Lockstep``: ``vepd run``'s default); with ``run_processes`` each node is a process of its own,
started with the same ``--ros-args`` as under ros2 launch (robot_localization's nodes always are).
Both listen for the result on a domain of their own (``_init_on_domain``) and are watched by
``monitor._Monitor``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time

from vepd_ros.graph.domain import choose_domain, Domain
from vepd_ros.graph.monitor import _Monitor, _total_runs, _truth_progress, RunError
from vepd_ros.params_file import PACKAGE, package_executable
from vepd_ros.ros_graph import BAG_QUIET_S, process_parameters


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


def run_graph(graph: str, nodes, opts: dict, domain_id: int | None, processes: bool):
    """
    Run ``nodes`` (``ros_graph.build_graph``) until the evaluator's result; return it (or None).

    On ``choose_domain(domain_id)``'s domain, released at the end; in one process unless
    ``processes`` or another package's nodes ask for one process per node. ``RunError``: the graph
    could not produce a real result; None: it stopped before the evaluator published one.
    """
    domain = choose_domain(domain_id)
    try:
        say(
            f'vepd run {graph}: DDS domain {domain.domain_id} ({domain.how}); watch it with '
            f'`ROS_DOMAIN_ID={domain.domain_id} ros2 topic echo {_result_topic()}`'
        )
        foreign = sorted({n.package for n in nodes if n.package != PACKAGE})
        if foreign and not processes:
            # another package's nodes (robot_localization's ekf and navsat under
            # judge:=robot_localization) are programs of their own: the graph runs as --processes
            say(f'vepd run {graph}: {", ".join(foreign)} nodes run as processes of their '
                'own: one process per node (as --processes)')
        if processes or foreign:
            return run_processes(graph, nodes, opts, domain)
        return run_in_process(nodes, opts, domain)
    finally:
        domain.release()


def say(text: str) -> None:
    """Print ``text`` on standard error at once (what the run does; the result goes to stdout)."""
    print(text, file=sys.stderr, flush=True)


def _result_topic() -> str:
    from vepd_ros.streams import TOPIC_RESULT

    return TOPIC_RESULT


def _result_listener(node, box: dict):
    from std_msgs.msg import String
    from vepd_ros.nodes.qos import EVENT_QOS
    from vepd_ros.nodes.recorder_node import RUNS_TOPIC
    from vepd_ros.streams import TOPIC_RESULT

    node.create_subscription(
        String, TOPIC_RESULT, lambda m: box.setdefault('result', json.loads(m.data)), EVENT_QOS
    )
    node.create_subscription(
        String,
        RUNS_TOPIC,
        lambda m: box.setdefault('runs', []).append(json.loads(m.data)),
        EVENT_QOS,
    )


DISCOVERY_CHECK_S = 1.0
"""How long a leased domain is watched for other participants before the graph starts on it."""


def _init_on_domain(domain: Domain, box: dict):
    """
    Initialise rclpy on ``domain`` with the result listener.

    Rclpy on ``domain`` with the result listener; a leased domain where other participants show
    up within ``DISCOVERY_CHECK_S`` is exchanged for another (twice at most).
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from vepd_ros.nodes.guard import other_participants

    for attempt in range(3):
        from rclpy.signals import SignalHandlerOptions

        rclpy.init(  # not sys.argv: its name:=value words are graph arguments
            args=[], domain_id=domain.domain_id,
            # SIGINT/SIGTERM stay vepd's (cli.main): the run unwinds and says what it kept
            signal_handler_options=SignalHandlerOptions.NO,
        )
        listener = rclpy.create_node('vepd_run')
        if domain.lease is None or attempt == 2:
            break
        ex = SingleThreadedExecutor()
        ex.add_node(listener)
        end = time.monotonic() + DISCOVERY_CHECK_S
        while time.monotonic() < end:
            ex.spin_once(timeout_sec=0.05)
        others = other_participants(listener, {listener.get_fully_qualified_name()})
        ex.remove_node(listener)
        if not others:
            break
        listener.destroy_node()
        rclpy.try_shutdown()
        domain.move()
        say(
            f'vepd run: {", ".join(others[:3])} on the leased domain; moving to domain '
            f'{domain.domain_id}'
        )
    _result_listener(listener, box)
    return listener


def run_in_process(nodes, opts: dict, domain: Domain):
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from vepd_ros.nodes.guard import fix_hint, foreign_publishers, published_topics
    from vepd_ros.streams import NS, TOPIC_GROUND_TRUTH

    box: dict = {}
    built = []
    monitor = None
    try:
        listener = _init_on_domain(domain, box)
        ex = SingleThreadedExecutor()
        for spec in nodes:
            module, cls = NODE_CLASSES[spec.executable]
            if opts['quiet']:  # before construction, so start-up messages are filtered too
                from rclpy.logging import LoggingSeverity, set_logger_level

                set_logger_level(
                    '.'.join(x for x in (spec.namespace.strip('/'), spec.name) if x),
                    LoggingSeverity.WARN,
                )
            node = getattr(importlib.import_module(module), cls)(
                cli_args=spec.ros_args(), use_global_arguments=False
            )
            built.append(node)
            ex.add_node(node)
        ex.add_node(listener)
        built.append(listener)
        own = {n.get_fully_qualified_name() for n in built}
        topics = published_topics(built)

        def guard():
            found = foreign_publishers(listener, topics, own)
            return found and found + [fix_hint(domain.domain_id)]

        players = [n for n in built if hasattr(n, 'played')]
        finished_at = None
        truth = next((n for n in built if hasattr(n, 'drive_clock')), None)
        clock = truth if truth is not None and truth.drive_clock else None
        source = clock if clock is not None else (players[0] if players else None)
        step = _Lockstep(ex, source) if source is not None else None
        if clock is not None:
            # truth_node's lockstep counts every other node's traffic, as it does across processes
            # (ros2 launch): the first step waits until every publisher has matched every
            # subscriber, and each step until every message of the previous one has been taken
            from vepd_ros.nodes.lockstep import TrafficCounter

            clock.pacer.pace_local(
                [TrafficCounter(n) for n in built if n is not clock and n is not listener]
            )
        if clock is not None:
            sim = lambda: clock.sim_ns if clock.run >= 0 else 0  # noqa: E731
        elif (
            truth is not None
        ):  # on the wall clock: the truth published so far stands for sim time
            sim = lambda: truth.published * truth.period_ns  # noqa: E731
        else:
            sim = (  # noqa: E731
                (lambda: sum(p.played for p in players)) if players else (lambda: None)
            )
        monitor = _Monitor(
            box,
            opts,
            sim,
            _total_runs(nodes),
            guard,
            watch_stall=bool(truth or players),
            advance=(lambda: _truth_progress(truth)) if truth is not None else None,
        )
        if clock is not None:  # where sim time will be when the last run ends (gaps included)
            monitor.sim_end_ns = lambda: (
                (clock.run_t0_ns or clock.sim_ns)
                + (len(clock.plan) - max(clock.run, 0))
                * (clock.n_samples * clock.period_ns + int(clock.p['gap_s'] * NS) + NS)
            )
        if truth is not None:
            monitor.waiting_for = lambda: (
                f'truth_node is waiting for {truth.p["wait_for_subscribers"]} subscribers of '
                f'{TOPIC_GROUND_TRUTH} '
                f'(has {truth.pub_odom.get_subscription_count()})'
                if truth.run < 0
                else (
                    f'truth_node has published all {len(truth.plan)} runs; the evaluator has no '
                    "result (see the nodes' "
                    'warnings: a discarded run leaves a batch short)'
                    if truth.samples is None and truth.run + 1 >= len(truth.plan)
                    else 'the graph stopped advancing (an overloaded or stuck node?)'
                )
            )
        try:
            while 'result' not in box and rclpy.ok():
                if step is None or not step():
                    ex.spin_once(timeout_sec=0.1 if step is None else 0.001)
                monitor.check()
                if players and finished_at is None and all(p.done for p in players):
                    finished_at = time.monotonic()  # the bag is over: let the last messages settle
                if finished_at is not None and time.monotonic() - finished_at > 2.0:
                    break
        except ExternalShutdownException:
            pass
    finally:
        if monitor is not None:
            monitor.close()
        for n in built:
            n.destroy_node()  # a recorder in 'single' mode writes its run here (the bag ended it)
        rclpy.try_shutdown()
    if 'result' not in box and players:
        return _runs_summary(nodes)
    return box.get('result')


class _Lockstep:
    """
    Sim-time stepping of a graph composed in one process.

    Sim-time stepping of a graph composed in one process: the /clock source — truth_node, or
    bag_player_node in bag_replay — publishes step T (the samples stamped T, then /clock at T −
    period/2), then the executor runs callbacks until none is ready — noise nodes, their
    subscribers, the timers now due — before the next step is taken. Steps are paced at
    ``time_scale`` (the player: ``rate``) at most, so a busy machine slows sim time instead of
    reordering messages. The source has ``step_externally()`` (stop its own timer, return the wall
    period of a step) and ``step()`` (False when no step was taken).

    Why the ticks then see the offline study's inputs: a timer due at τ fires one executor wave
    after the /clock callback that passed τ, and its tick runs after what its subscriptions hold
    (``lockstep.AfterArrivals``); the data it needs are stamped ≤ τ < T, so they were published
    at least one step earlier. Reliable hops (truth → noise nodes) are delivered in process when
    publish() returns; a best-effort sensor hop (noise node → judge/navsat) is sometimes handed to
    a Fast DDS thread instead and lands a moment later. So truth_node's step is also held by its
    ``Pacer`` (``pace_local``: every node's ``TrafficCounter`` read directly, the lockstep ros2
    launch runs across processes): the first step waits until every publisher has matched every
    subscriber, each next one until every message published so far has been taken. Measured (issue
    23): the same files at time_scale 1, 3 and 50 under load ≈ 12-16, and equal to ros2 launch's;
    the counting costs ~2 % of the CPU of a run.
    """

    def __init__(self, executor, source):
        self.ex, self.source = executor, source
        self.wall_period = source.step_externally()
        self.next_wall = time.monotonic()

    def __call__(self) -> bool:
        """One step if due, then every callback it causes: True when a step was taken."""
        from vepd_ros.nodes.lockstep import run_until_idle

        now = time.monotonic()
        if now < self.next_wall:
            return False
        self.next_wall = max(self.next_wall + self.wall_period, now - self.wall_period)
        if not self.source.step():
            return False
        run_until_idle(self.ex)
        return True


def _runs_summary(nodes) -> dict | None:
    """
    Summarise what a bag replay without a reference batch produced.

    What a bag replay without a reference batch produced: the runs on disk (no VEPD without a
    second side).
    """
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
        runs.append(
            {
                'path': str(csv),
                'E': e,
                'S': s,
                'se_len': int(len(rec.se_t)),
                'gt_len': int(len(rec.gt_t)),
            }
        )
    return (
        {'runs': runs, 'note': 'no reference_dir: runs recorded, nothing to compare them with'}
        if runs
        else None
    )


def run_processes(graph: str, nodes, opts: dict, domain: Domain):
    from dataclasses import replace
    from pathlib import Path
    import signal
    import subprocess

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rosgraph_msgs.msg import Clock as ClockMsg
    from vepd_ros.nodes.guard import fix_hint, foreign_publishers, fqn
    from vepd_ros.nodes.stamps import stamp_to_ns

    procs = []
    box: dict = {}
    monitor = None
    try:
        listener = _init_on_domain(domain, box)
        clock = {'ns': 0}
        listener.create_subscription(
            ClockMsg, '/clock', lambda m: clock.update(ns=stamp_to_ns(m.clock)), 10
        )
        env = {**os.environ, 'ROS_DOMAIN_ID': str(domain.domain_id)}
        for spec in nodes:
            # what each node needs as a process of its own, as under ros2 launch: the lockstep
            # across processes, ending when done, the bag's run ending on quiet
            spec = replace(spec, parameters=process_parameters(graph, spec, nodes))
            if spec.package == PACKAGE:
                exe = Path(sys.prefix) / 'bin' / spec.executable
                program = str(exe) if exe.exists() else spec.executable
            else:
                try:
                    program = str(package_executable(spec.package, spec.executable))
                except LookupError as exc:
                    raise RunError(f'{spec.package}/{spec.executable}: {exc}') from None
            procs.append(
                subprocess.Popen([program, *spec.arguments, *spec.ros_args()], env=env)
            )
        own = {fqn('/' + n.namespace.strip('/') if n.namespace else '/', n.name) for n in nodes}
        own.add(listener.get_fully_qualified_name())

        def guard():
            topics = set()
            for name in own:
                ns, _, base = name.rpartition('/')
                try:
                    topics |= {
                        t
                        for t, _ in listener.get_publisher_names_and_types_by_node(base, ns or '/')
                    }
                except Exception:  # noqa: BLE001 - node not discovered yet
                    pass
            found = foreign_publishers(listener, topics, own)
            return found and found + [fix_hint(domain.domain_id)]

        has_clock = any(
            n.role == 'bag' or (n.role == 'truth' and n.parameters[0].get('publish_clock'))
            for n in nodes
        )  # without /clock (time_scale 1), only finished runs are watched
        monitor = _Monitor(
            box,
            opts,
            (lambda: clock['ns']) if has_clock else (lambda: None),
            _total_runs(nodes),
            guard,
            watch_stall=has_clock,
        )
        ex = SingleThreadedExecutor()
        ex.add_node(listener)
        players = [p for n, p in zip(nodes, procs) if n.role == 'bag']
        finished_at = None
        while 'result' not in box:
            ex.spin_once(timeout_sec=0.1)
            monitor.check()
            if any(p.poll() not in (None, 0) for p in procs):
                bad = [n.executable for n, p in zip(nodes, procs) if p.poll() not in (None, 0)]
                raise RunError(f'node(s) exited with an error: {", ".join(bad)}')
            if players and finished_at is None and all(p.poll() == 0 for p in players):
                finished_at = time.monotonic()  # the bag is over (the player ended when done)
            if finished_at is not None and time.monotonic() - finished_at > BAG_QUIET_S + 2.0:
                break  # the recorder ended its run after BAG_QUIET_S without input
    finally:
        if monitor is not None:
            monitor.close()
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        rclpy.try_shutdown()
    if 'result' not in box and any(n.role == 'bag' for n in nodes):
        return _runs_summary(nodes)
    return box.get('result')
