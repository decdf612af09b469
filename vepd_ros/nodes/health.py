# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A node's input health: dropped input counted, missing input named, both on ``/diagnostics``.

``DropCounter`` counts a bad message per reason (and warns, throttled) instead of letting it stop
the node; ``TopicWatchdog`` names an input that has not shown up in time; ``DiagnosticsPublisher``
publishes both as one ``diagnostic_msgs`` status. Their timers run on a steady (wall) clock, so a
node on sim time whose ``/clock`` never comes still reports.
"""

from __future__ import annotations

from typing import Callable

from rclpy.node import Node
from rclpy.qos import QoSProfile
from vepd_ros.streams import NS


class DropCounter:
    """
    Count dropped input per reason, with throttled warnings.

    Counts dropped input per reason and warns at most once every ``throttle_s`` (wall clock) per
    reason.
    """

    def __init__(self, node: Node, throttle_s: float = 5.0):
        self._node, self._throttle_s = node, throttle_s
        self.counts: dict[str, int] = {}
        self._warned: dict[str, float] = {}  # reason -> time.monotonic() of its last warning

    def drop(self, reason: str, detail: str = '') -> None:
        import time

        self.counts[reason] = self.counts.get(reason, 0) + 1
        # Throttled here, per reason: rclpy's throttle_duration_sec throttles per call site, so one
        # reason's stream of drops would silence every other reason.
        now = time.monotonic()
        last = self._warned.get(reason)
        if last is None or now - last >= self._throttle_s:
            self._warned[reason] = now
            self._node.get_logger().warning(
                f'dropped message ({reason}): {detail} [{self.counts[reason]} so far]'
            )

    @property
    def total(self) -> int:
        return sum(self.counts.values())


DIAGNOSTICS_TOPIC = '/diagnostics'


def _steady_clock():
    from rclpy.clock import Clock, ClockType

    return Clock(clock_type=ClockType.STEADY_TIME)


class DiagnosticsPublisher:
    """
    Publish a node's input health on ``/diagnostics``.

    A node's input health on ``/diagnostics`` (diagnostic_msgs/DiagnosticArray), once every
    ``period_s``.

    One status named ``vepd_ros<node's fully qualified name>`` (``vepd_ros/chain/recorder``): ERROR
    naming the input while one the node's ``watchdog`` (``TopicWatchdog``) watches has not arrived
    after its timeout, WARN with "N input messages dropped" once the ``DropCounter`` has counted
    anything, OK otherwise. Values: ``values()`` (e.g. message counts) first, then
    ``dropped_<reason>`` for every drop reason. The period is wall-clock (a steady timer), so a
    node on sim time whose ``/clock`` never comes still reports; the header stamp is the node
    clock's time. ``timer=False``: no timer, the node calls ``publish()`` itself.
    """

    def __init__(
        self,
        node: Node,
        drops: DropCounter,
        values: Callable[[], dict] | None = None,
        period_s: float = 1.0,
        timer: bool = True,
    ):
        from diagnostic_msgs.msg import DiagnosticArray

        self._node, self.drops, self._values = node, drops, values
        self.pub = node.create_publisher(DiagnosticArray, DIAGNOSTICS_TOPIC, QoSProfile(depth=10))
        self.published = 0
        self.timer = (
            node.create_timer(period_s, self.publish, clock=_steady_clock()) if timer else None
        )

    def status(self):
        from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

        st = DiagnosticStatus(
            name=f'vepd_ros{self._node.get_fully_qualified_name()}', hardware_id='vepd_ros'
        )
        total = self.drops.total
        st.level = DiagnosticStatus.WARN if total else DiagnosticStatus.OK
        st.message = f'{total} input messages dropped' if total else 'ok'
        watchdog = getattr(self._node, 'watchdog', None)  # the node's TopicWatchdog, by convention
        missing = watchdog.missing() if watchdog is not None else []
        if missing:
            # an input that never came: the node produces nothing, which is an error, not a warning
            st.level = DiagnosticStatus.ERROR
            st.message = '; '.join(missing) + (f'; {st.message}' if total else '')
        values = {
            **(self._values() if self._values else {}),
            **{f'dropped_{k}': v for k, v in self.drops.counts.items()},
        }
        st.values = [KeyValue(key=str(k), value=str(v)) for k, v in values.items()]
        return st

    def publish(self) -> None:
        from diagnostic_msgs.msg import DiagnosticArray

        if not self._node.context.ok():
            return
        arr = DiagnosticArray(status=[self.status()])
        arr.header.stamp = self._node.get_clock().now().to_msg()
        self.pub.publish(arr)
        self.published += 1


class TopicWatchdog:
    """
    Report, by name, an input that has not shown up in time.

    Reports, by name, an input that has not shown up ``timeout_s`` seconds after the graph
    started: ``no message on <topic> after N s`` (or ``no publisher on ...`` for
    ``what='publisher'``), warned again every ``repeat_s`` (wall) while it stays missing; the timer
    stops once everything watched has shown up.

    When the graph starts: a node on wall time (``use_sim_time`` false) counts from its own start.
    A node on sim time counts ``timeout_s`` of *sim time* from its first ``/clock``: before that
    the graph is still coming up (truth_node holds /clock until every subscriber is there, and
    says so), which on a loaded machine takes longer than any fixed wait, and a node whose clock
    stands still cannot be missing data. The one thing such a node reports before its first
    /clock is that nothing publishes /clock at all, ``startup_s`` wall seconds after its start
    (``no publisher on /clock after N s``). The check itself runs on a wall-clock (steady)
    timer, so it runs whether or not /clock comes.
    """

    def __init__(
        self,
        node: Node,
        timeout_s: float,
        repeat_s: float = 30.0,
        period_s: float = 1.0,
        startup_s: float = 30.0,
    ):
        self._node, self.timeout_s, self.repeat_s = node, float(timeout_s), float(repeat_s)
        self.startup_s = max(float(startup_s), self.timeout_s)
        self._clock = _steady_clock()
        self._t0 = self._clock.now().nanoseconds
        self._sim = bool(
            node.has_parameter('use_sim_time') and node.get_parameter('use_sim_time').value
        )
        self._sim_t0 = None  # sim time (ns) of the first /clock this node saw
        self._watched: list[list] = []  # [topic, ok(), what, last warning (ns) or None]
        self._clock_warned = None  # last 'no publisher on /clock' warning (ns)
        self.reported: list[str] = []  # every warning given (tests, diagnostics)
        self.timer = node.create_timer(period_s, self.check, clock=self._clock)

    def watch(self, topic: str, ok: Callable[[], bool], what: str = 'message') -> None:
        """
        Watch ``topic``.

        ``ok()`` is true once it has delivered (or, for ``what='publisher'``, appeared).
        """
        self._watched.append([topic, ok, what, None])

    def _since_start_ns(self) -> int | None:
        """Return the inputs' time so far (ns: wall, or sim since the first /clock), or None."""
        if not self._sim:
            return self._clock.now().nanoseconds - self._t0
        now = self._node.get_clock().now().nanoseconds
        if now <= 0:
            return None  # no /clock yet: the graph has not started
        if self._sim_t0 is None:
            self._sim_t0 = now
        return now - self._sim_t0

    def _no_clock(self) -> str | None:
        """Return the warning for a node on sim time that nothing publishes /clock for, or None."""
        if self._sim_t0 is not None or not self._sim:
            return None
        if self._clock.now().nanoseconds - self._t0 < self.startup_s * NS:
            return None
        if self._node.count_publishers('/clock') > 0:
            return None  # the clock's owner is there, holding it (it says why)
        return f'no publisher on /clock after {self.startup_s:g} s'

    def _text(self, topic: str, what: str) -> str:
        return f'no {what} on {topic} after {self.timeout_s:g} s' + (
            ' of sim time' if self._sim else ''
        )

    def missing(self) -> list[str]:
        """
        List the watched inputs still missing after the timeout.

        ``no message on <topic> after N s`` for every watched input still missing after the
        timeout (``... s of sim time`` on sim time); ``no publisher on /clock ...`` while a node on
        sim time has no clock to count with.
        """
        since = self._since_start_ns()
        if since is None:
            return [t for t in [self._no_clock()] if t]
        if since < self.timeout_s * NS:
            return []
        return [self._text(topic, what) for topic, ok, what, _ in self._watched if not ok()]

    def check(self) -> None:
        if self._watched and all(w[1]() for w in self._watched):
            self.timer.cancel()  # everything has shown up: nothing left to watch
            return
        now = self._clock.now().nanoseconds
        since = self._since_start_ns()
        if since is None:
            text = self._no_clock()
            last = self._clock_warned
            if text and (last is None or now - last >= self.repeat_s * NS):
                self._clock_warned = now
                self.reported.append(text)
                self._node.get_logger().warning(text)
            return
        if since < self.timeout_s * NS:
            return
        for w in self._watched:
            topic, ok, what, last = w
            if ok() or (last is not None and now - last < self.repeat_s * NS):
                continue
            w[3] = now
            text = self._text(topic, what)
            self.reported.append(text)
            self._node.get_logger().warning(text)
