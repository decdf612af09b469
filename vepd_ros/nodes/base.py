"""What every vepd_ros node shares: parameter declaration from ``Param`` specs, a clean ``main``,
stamp conversion, and counted, throttled warnings for dropped input.
"""
from __future__ import annotations

import sys
from typing import Callable, Iterable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

from vepd_ros.params import Param, ParameterError

SENSOR_QOS = qos_profile_sensor_data
"""Sensor topics use the sensor-data profile (best effort, keep last 5), as ROS drivers do."""

EVENT_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
"""Event topics (JSON in std_msgs/String: run start/end, finished runs, results): reliable and latched, so a
node that joins late still receives what happened before it was discovered."""


def declare_params(node: Node, specs: Iterable[Param]) -> dict:
    """Declare every spec on ``node`` (overrides from --ros-args/params files apply) and validate."""
    values = {}
    for p in specs:
        node.declare_parameter(p.name, p.default, descriptor=_descriptor(p))
        values[p.name] = p.validate(node.get_parameter(p.name).value)
    return values


def _descriptor(p: Param):
    from rcl_interfaces.msg import ParameterDescriptor
    text = p.description
    if p.choices is not None:
        text += f" (one of: {', '.join(map(str, p.choices))})"
    return ParameterDescriptor(description=text, dynamic_typing=isinstance(p.default, float))


def stamp_to_ns(stamp) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def ns_to_stamp(t_ns: int):
    from builtin_interfaces.msg import Time
    return Time(sec=int(t_ns // 1_000_000_000), nanosec=int(t_ns % 1_000_000_000))


class DropCounter:
    """Counts dropped input per reason and warns at most once every ``throttle_s`` per reason."""

    def __init__(self, node: Node, throttle_s: float = 5.0):
        self._node, self._throttle_s = node, throttle_s
        self.counts: dict[str, int] = {}

    def drop(self, reason: str, detail: str = '') -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        self._node.get_logger().warning(
            f'dropped message ({reason}): {detail} [{self.counts[reason]} so far]',
            throttle_duration_sec=self._throttle_s)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def run_node(factory: Callable[..., Node], args=None) -> int:
    """Standard ``main``: init, build the node, spin on a SingleThreadedExecutor, exit 0 on
    SIGINT/SIGTERM. A ``ParameterError`` at start prints the parameter, value and what was expected,
    and exits 2 (the node never starts with invalid parameters)."""
    rclpy.init(args=args)
    node = None
    try:
        try:
            node = factory()
        except ParameterError as exc:
            print(f'[ERROR] {exc}', file=sys.stderr)
            return 2
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        except Exception:
            # SIGINT/SIGTERM shut the context down asynchronously; a callback that was mid-publish then
            # fails with "context is invalid". That is a clean shutdown, not a crash.
            if node.context.ok():
                raise
        return 0
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()


RUN_EVENTS_TOPIC = '/ground_truth/run'


class RunEvents:
    """Follows truth_node's run events (``/ground_truth/run``, JSON) so a node can restart per run.

    A start event is applied just before the first truth sample stamped at or after the run's start
    (``before(t_ns)``), whatever order the two topics arrive in within a callback round. ``on_start`` gets the
    event dict, extended with ``seed`` = ``seeding.derive_seed(study_seed, kind, label, scenario, run)``: the
    seeds the offline study uses for the same run.
    """

    def __init__(self, node: Node, kind: str, study_seed: int, label: str, on_start: Callable[[dict], None],
                 drops: 'DropCounter | None' = None):
        from std_msgs.msg import String
        self.kind, self.study_seed, self.label, self.on_start, self.drops = kind, study_seed, label, on_start, drops
        self.pending: list[dict] = []
        self.sub = node.create_subscription(String, RUN_EVENTS_TOPIC, self._on_event, EVENT_QOS)

    def _on_event(self, msg) -> None:
        import json

        from vepd_ros.seeding import derive_seed
        try:
            e = json.loads(msg.data)
            if e.get('event') != 'start':
                return
            e = {**e, 'seed': derive_seed(self.study_seed, self.kind, self.label, e['scenario'], int(e['run']))}
            stamp = int(e['stamp_ns'])
        except (ValueError, KeyError, TypeError) as exc:
            if self.drops is not None:
                self.drops.drop('bad_run_event', f'{RUN_EVENTS_TOPIC}: {exc}')
            return
        self.pending.append(e)
        self.pending.sort(key=lambda ev: int(ev['stamp_ns']))

    def before(self, t_ns: int) -> None:
        """Apply every start event due at truth stamp ``t_ns`` (call before processing that sample)."""
        while self.pending and int(self.pending[0]['stamp_ns']) <= t_ns:
            self.on_start(self.pending.pop(0))
