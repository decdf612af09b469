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
