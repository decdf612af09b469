# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Sim time in lockstep: the next step of ``/clock`` waits until the last step's callbacks have run.

What makes a graph on sim time compute what the offline study computes, in one process or across
many: ``AfterArrivals`` runs a node's timer work after the messages it already holds;
``TrafficCounter`` counts what a node took and published and reports it on ``PROGRESS_TOPIC``;
``run_until_idle`` drains an executor to idle; ``Pacer`` lets the node that drives ``/clock``
(truth_node, bag_player_node) take its next step once every paced node, in its process or in
others, has taken everything. ``count_takes`` is the one counter of a subscription's messages
they share.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from vepd_ros.nodes.health import DIAGNOSTICS_TOPIC, DropCounter
from vepd_ros.streams import NS, TOPIC_PROGRESS


def count_takes(sub) -> list[int]:
    """
    Return ``[n]``, the messages ``sub``'s callback has taken, counted from the first call on.

    The first call wraps the callback with the counter; later calls return the same counter, so
    ``AfterArrivals`` and ``TrafficCounter`` count a subscription through one wrap (a judge or
    navsat message on sim time passes one counter, not two).
    """
    count = getattr(sub.callback, 'vepd_takes', None)
    if count is None:
        count, callback = [0], sub.callback

        def counted(*args):
            count[0] += 1
            return callback(*args)

        counted.vepd_takes = count
        sub.callback = counted
    return count


class AfterArrivals:
    """
    Run a timer's work only after the messages its node's subscriptions already hold.

    rclpy's executors run a node's ready timers before its ready subscriptions, which would let a
    tick overtake a message that arrived before it (the offline study's order is arrivals, then the
    timer). So the timer calls this object with what the work needs (the tick's time, read when the
    timer fired), which only queues it and triggers a guard condition; executors run a node's guard
    conditions after its subscriptions of the same wait, taking one message per ready subscription
    per wait. The guard runs the queued work, in order, once a wait has brought no message to the
    ``watch``-ed subscriptions since the previous one, and triggers itself again otherwise: every
    message delivered before the tick has then been taken, by the executor's own take (public
    rclpy only, Humble to Kilted).
    """

    def __init__(self, node: Node, subscriptions: Iterable, work: Callable[..., None]):
        self._work = work
        self._takes: list[list[int]] = []  # count_takes of the watched subscriptions
        self._pending: list[tuple] = []  # the arguments of the work still to run
        self._seen = 0  # arrivals when the guard was last triggered
        for sub in subscriptions:
            self.watch(sub)
        self._guard = node.create_guard_condition(self._on_guard)

    def watch(self, sub) -> None:
        """Count ``sub``'s messages as arrivals the work waits for (None: nothing)."""
        if sub is not None:
            self._takes.append(count_takes(sub))

    @property
    def arrivals(self) -> int:
        """Messages taken by the watched subscriptions."""
        return sum(count[0] for count in self._takes)

    def __call__(self, *args) -> None:
        """Queue ``work(*args)`` after what has arrived (from the timer's callback)."""
        self._pending.append(args)
        self._seen = self.arrivals
        self._guard.trigger()

    def flush(self) -> None:
        """Run the queued work now (a run restart: the ticks before it belong to the old run)."""
        pending, self._pending = self._pending, []
        for args in pending:
            self._work(*args)

    def _on_guard(self) -> None:
        if self.arrivals != self._seen:  # a message came with this wait: another may be queued
            self._seen = self.arrivals
            if self._pending:
                self._guard.trigger()
            return
        self.flush()


PROGRESS_TOPIC = TOPIC_PROGRESS
"""
Lockstep sim time across processes (std_msgs/String JSON, ``TrafficCounter.report``).

``{"node": <fqn>, "pid": n, "received": {topic: n}, "published": {topic: n}, "matched":
{topic: n}, "heard": {topic: n}, "hold": bool, "requires": [pid], "vouches": {topic: n}}``: how
many messages a node on sim time has taken per topic and published per topic, how many
subscriptions each of its publishers has matched and how many publishers each of its subscriptions
has matched, sent whenever its executor has nothing left to run; ``vouches``: subscriptions of
processes that do not report (robot_localization's, started by judge_supervisor_node), which the
publishers of those topics must match too. truth_node (``pace_nodes``) takes its next step
only once every subscriber has taken every message published on its topics (``/clock``
included): the ``vepd run`` lockstep, by counts (``Pacer``).
"""
PROGRESS_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
PROGRESS_HEARTBEAT_S = 1.0
"""An idle node repeats its report this often (s, wall clock): one gone quiet is dead or stuck."""


class TrafficCounter:
    """
    Count the messages a node takes and publishes, per topic, and report them when it is idle.

    Wraps the callbacks of the subscriptions and the ``publish`` of the publishers the node has
    when this is created (``/clock`` included, infrastructure topics not). A subscription created
    later is not counted; one destroyed stops being reported. Two subscriptions of one topic in a
    node report the smaller count (each must have taken every message).
    """

    def __init__(self, node: Node):
        from std_msgs.msg import String

        self._node, self._string = node, String
        self._subs: list[tuple] = []  # (subscription, topic, [count])
        self._pubs: list = []
        self.published: dict[str, int] = {}
        uncounted = (PROGRESS_TOPIC, DIAGNOSTICS_TOPIC, '/rosout', '/parameter_events')
        for sub in list(node.subscriptions):
            if sub.topic_name not in uncounted:
                self._subs.append((sub, sub.topic_name, count_takes(sub)))
        for pub in list(node.publishers):
            if pub.topic_name not in uncounted:
                self._count_publishes(pub)
        self._pub = None  # created on the first report (truth_node counts, never reports)
        self._last: str | None = None
        self._last_wall = 0.0

    def _count_publishes(self, pub) -> None:
        topic, publish = pub.topic_name, pub.publish
        self.published.setdefault(topic, 0)
        self._pubs.append(pub)

        def counted(msg):
            publish(msg)
            self.published[topic] += 1

        pub.publish = counted

    def _per_topic(self, value) -> dict[str, int]:
        """Return ``value(subscription, count)`` per topic: the least of its live subscriptions."""
        alive = {id(s) for s in self._node.subscriptions}
        out: dict[str, int] = {}
        for sub, topic, count in self._subs:
            if id(sub) in alive:
                n = value(sub, count)
                out[topic] = min(out.get(topic, n), n)
        return out

    def received(self) -> dict[str, int]:
        """Messages taken per topic by the subscriptions still alive."""
        return self._per_topic(lambda sub, count: count[0])

    def matched(self) -> dict[str, int]:
        """
        Return the subscriptions matched per published topic.

        DDS discovery: a best-effort message sent before its subscriber is matched is lost.
        """
        return {pub.topic_name: pub.get_subscription_count() for pub in self._pubs}

    def heard(self) -> dict[str, int]:
        """
        Return the publishers matched per subscribed topic (the smaller of two subscriptions').

        Discovery is matched on each side on its own: a best-effort sample a writer sends to a
        reader that has not matched the writer yet is dropped by the reader.
        """
        return self._per_topic(lambda sub, count: sub.get_publisher_count())

    def snapshot(self) -> dict:
        """Return the report of this node (the fields of ``PROGRESS_TOPIC``)."""
        return {
            'node': self._node.get_fully_qualified_name(),
            'pid': os.getpid(),
            'hold': bool(getattr(self._node, 'pace_hold', False)),
            'requires': list(getattr(self._node, 'pace_requires', ())),
            'vouches': dict(getattr(self._node, 'pace_vouches', {})),
            'received': self.received(),
            'published': dict(self.published),
            'matched': self.matched(),
            'heard': self.heard(),
        }

    def report(self) -> None:
        """Publish the counts if they changed, or every ``PROGRESS_HEARTBEAT_S`` (when idle)."""
        import json
        import time

        if not self._node.context.ok():
            return
        text = json.dumps(self.snapshot(), sort_keys=True)
        now = time.monotonic()
        if text == self._last and now - self._last_wall < PROGRESS_HEARTBEAT_S:
            return
        if self._pub is None:
            self._pub = self._node.create_publisher(self._string, PROGRESS_TOPIC, PROGRESS_QOS)
        if not self._pub.get_subscription_count():
            return  # nobody paces this graph (live input, vepd run --processes): say nothing
        self._last, self._last_wall = text, now
        self._pub.publish(self._string(data=text))


def run_until_idle(
    executor, keep_going: Callable[[], bool] = lambda: True, first=None
) -> None:
    """
    Run ``executor``'s ready callbacks until a wait with a zero timeout finds none ready.

    Idle means such a wait found nothing: rclpy also ends every zero-timeout wave that ran
    callbacks with a timeout, and that one is not idle (wait again). So every callback the
    messages taken so far caused, and the timers the last ``/clock`` made due, have run: the
    lockstep's test before its next step (``vepd run``'s ``_Lockstep``, ``spin_reporting``).
    ``first``: a callback already taken from another wait, run before the first wait; the waits
    stop early once ``keep_going()`` is False. A callback's exception is raised here.
    """
    from rclpy.executors import TimeoutException

    handler, ran = first, False  # ran: a callback ran since rclpy's last timeout
    while True:
        if handler is None:
            if not keep_going():
                return
            try:
                handler, _, _ = executor.wait_for_ready_callbacks(timeout_sec=0.0)
            except TimeoutException:
                if not ran:
                    return
                ran = False
                continue
        ran = True
        handler()
        exc = handler.exception()
        if exc is not None:
            raise exc
        handler = None


class Pacer:
    """
    Lockstep for the node that drives /clock: ``ready()`` once every paced node has taken it all.

    ``pace_nodes`` nodes report on ``PROGRESS_TOPIC`` (``TrafficCounter``, ``spin_reporting``);
    this node's own publishers are counted here. The next step may go out when every reported
    subscriber has taken every message published on its topics (this node's and the others'), so
    every callback the previous step caused, in every process, has run: the step order of ``vepd
    run``'s ``_Lockstep``; and not before every publisher has matched every reported subscriber of
    its topic and every subscriber every reported publisher (discovery matches each side on its
    own; a best-effort message sent before both have is lost for good). A node silent for
    ``timeout_s`` (dead or stuck) is no longer waited for; messages a live node has not taken after
    ``timeout_s`` are given up as lost (a best-effort hop dropped them). Both are warned by name;
    the runs they touch show it in their coverage. A node reporting ``hold`` (its ``pace_hold``:
    judge_supervisor_node while it replaces a judge chain) holds the next step, and so does a
    process a report ``requires`` (by pid: the chain it started) until it has reported itself; a
    node that starts, or restarts under the same name, owes nothing published before its first
    report. A report's ``vouches`` (subscriptions of processes that do not report) count as
    subscribers of their topics: their publishers must match them too.
    ``pace_nodes`` 0: always ready.
    """

    def __init__(self, node: Node, pace_nodes: int, timeout_s: float, drops: DropCounter):
        from std_msgs.msg import String

        self._node, self.pace_nodes, self.drops = node, pace_nodes, drops
        self._timeout_ns = int(timeout_s * NS)
        self._timeout_text = f'{timeout_s:g} s (wall)'
        self.held_steps = 0  # steps held back (logs, tests)
        self._reports: dict[str, dict] = {}  # node -> its last report (+ 'wall')
        self._gone: set[str] = set()  # silent for timeout_s: no longer waited for
        self._lost: dict[tuple, int] = {}  # (node, topic) -> messages given up as lost
        self._carry: dict[str, dict] = {}  # node -> what its earlier incarnations published
        self._held_since = None  # wall ns since which the next step waits
        self._unheard_since = None  # wall ns since which a required process has not reported
        self._given_up: set[int] = set()  # required pids that never reported in timeout_s
        self._local: list = []  # TrafficCounters of nodes in this process (pace_local)
        self.traffic = None
        if pace_nodes:
            self.traffic = TrafficCounter(node)  # after the node has created its publishers
            node.create_subscription(String, PROGRESS_TOPIC, self._on_report, PROGRESS_QOS)

    @staticmethod
    def _wall_ns() -> int:
        import time

        return time.monotonic_ns()

    def pace_local(self, counters: list) -> None:
        """
        Pace the nodes of this process by their ``TrafficCounter`` s, read directly.

        ``vepd run`` composes the graph in one process: the same lockstep as across processes (one
        ``ready``), its reports taken from the counters instead of ``PROGRESS_TOPIC``.
        """
        self._local = list(counters)
        self.pace_nodes = len(self._local)
        if self.traffic is None:
            self.traffic = TrafficCounter(self._node)

    def _on_report(self, msg) -> None:
        import json

        try:
            self._take(json.loads(msg.data))
        except ValueError as exc:
            self.drops.drop('bad_progress', f'{PROGRESS_TOPIC}: {exc}')

    def _take(self, e) -> None:
        """Take one node's report (a ``TrafficCounter.snapshot``)."""
        try:
            name = str(e['node'])
            report = {
                key: {str(t): int(n) for t, n in e[key].items()}
                for key in ('received', 'published', 'matched')
            }
            pid, hold = int(e.get('pid', 0)), bool(e.get('hold', False))
            requires = [int(p) for p in e.get('requires', [])]
            heard = {str(t): int(n) for t, n in e.get('heard', {}).items()}
            vouches = {str(t): int(n) for t, n in e.get('vouches', {}).items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return self.drops.drop('bad_progress', f'{PROGRESS_TOPIC}: {exc}')
        if name in self._gone:
            return
        previous = self._reports.get(name)
        if previous is None or previous['pid'] != pid:
            # a node that (re)starts mid-graph (a judge chain replaced per run) owes nothing
            # published before its first report; what its previous incarnation published stays
            # counted for the subscribers that took it
            if previous is not None:
                carry = self._carry.setdefault(name, {})
                for topic, n in previous['published'].items():
                    carry[topic] = carry.get(topic, 0) + n
            published = self._published_total(exclude=name)
            for topic, n in report['received'].items():
                self._lost[name, topic] = max(0, published.get(topic, 0) - n)
        self._reports[name] = {
            **report,
            'pid': pid,
            'hold': hold,
            'requires': requires,
            'heard': heard,
            'vouches': vouches,
            'wall': self._wall_ns(),
        }

    def _published_total(self, exclude: str | None = None) -> dict[str, int]:
        """Return the messages published per topic by this node and every reporting node."""
        published = dict(self.traffic.published)
        for counts in self._carry.values():
            for topic, n in counts.items():
                published[topic] = published.get(topic, 0) + n
        for name, r in self._reports.items():
            if name != exclude:
                for topic, n in r['published'].items():
                    published[topic] = published.get(topic, 0) + n
        return published

    def ready(self) -> bool:
        """Return whether the next step may go out (see the class)."""
        if not self.pace_nodes:
            return True
        for counter in self._local:
            self._take(counter.snapshot())
        log = self._node.get_logger()
        now = self._wall_ns()
        for name, r in list(self._reports.items()):
            if now - r['wall'] > self._timeout_ns:
                log.warning(
                    f'{name}: no report for {self._timeout_text}; sim time goes on without it '
                    '(its runs will show the gap in their coverage)'
                )
                del self._reports[name]
                self._gone.add(name)
        if len(self._reports) + len(self._gone) < self.pace_nodes:
            log.info(
                f'waiting for {self.pace_nodes} nodes to report on {PROGRESS_TOPIC} '
                f'({len(self._reports)} so far)',
                throttle_duration_sec=5.0,
            )
            return False
        holding = sorted(name for name, r in self._reports.items() if r['hold'])
        if holding:
            log.info(f'held by {", ".join(holding)}', throttle_duration_sec=5.0)
            return False
        reporting = {r['pid'] for r in self._reports.values()}
        unheard = sorted(
            pid
            for r in self._reports.values()
            for pid in r['requires']
            if pid not in reporting and pid not in self._given_up
        )
        if unheard:
            if self._unheard_since is None:
                self._unheard_since = now
            if now - self._unheard_since <= self._timeout_ns:
                log.info(
                    f'waiting for the first report of process(es) {unheard}',
                    throttle_duration_sec=5.0,
                )
                return False
            log.warning(
                f'process(es) {unheard} required by a paced node never reported in '
                f'{self._timeout_text}; sim time goes on without them'
            )
            self._given_up.update(unheard)
        self._unheard_since = None
        subscribers: dict[str, int] = {}  # topic -> reporting nodes that take it
        for r in self._reports.values():
            for topic in r['received']:
                subscribers[topic] = subscribers.get(topic, 0) + 1
            for topic, n in r['vouches'].items():  # a silent process's subscriptions
                subscribers[topic] = subscribers.get(topic, 0) + n
        # per publishing node (this one too): its topics -> subscriptions matched
        matched = [self.traffic.matched(), *(r['matched'] for r in self._reports.values())]
        unmatched = [
            topic
            for counts in matched
            for topic, n in counts.items()
            if n < subscribers.get(topic, 0)
        ]
        publishers: dict[str, int] = {}  # topic -> reporting nodes (this one too) that publish it
        for counts in matched:
            for topic in counts:
                publishers[topic] = publishers.get(topic, 0) + 1
        unmatched += [
            topic
            for r in self._reports.values()
            for topic, n in r['heard'].items()
            if n < publishers.get(topic, 0)
        ]
        if unmatched:
            log.info(
                f'waiting for discovery: publishers on {", ".join(sorted(set(unmatched)))} have '
                'not matched every subscriber yet',
                throttle_duration_sec=5.0,
            )
            return False
        published = self._published_total()
        behind = [
            (name, topic, missing)
            for name, r in self._reports.items()
            for topic, n in r['received'].items()
            if topic in published
            and (missing := published[topic] - n - self._lost.get((name, topic), 0)) > 0
        ]
        if not behind:
            self._held_since = None
            return True
        if self._held_since is None:
            self._held_since = now
        elif now - self._held_since > self._timeout_ns:
            for name, topic, missing in behind:
                self._lost[name, topic] = self._lost.get((name, topic), 0) + missing
                log.warning(
                    f'{name}: {missing} message(s) on {topic} not taken after '
                    f'{self._timeout_text}; given up as lost'
                )
            self._held_since = None
            return True
        self.held_steps += 1
        return False
