# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Run events: a node follows truth_node's run starts on ``/ground_truth/run`` and restarts per run.

The noise nodes, the judge and navsat restart at every run truth_node announces, seeded as the
offline study seeds the same run (``RunEvents``); ``RUN_EVENTS_TOPIC`` names the topic for the
nodes that only read or write the events (recorder, judge supervisor).
"""

from __future__ import annotations

from typing import Callable

from rclpy.node import Node
from vepd_ros.nodes.health import DropCounter
from vepd_ros.nodes.qos import EVENT_QOS
from vepd_ros.streams import TOPIC_RUN_EVENTS


RUN_EVENTS_TOPIC = TOPIC_RUN_EVENTS


class RunEvents:
    """
    Follows truth_node's run events (``/ground_truth/run``, JSON) so a node can restart per run.

    A start event is applied just before the first truth sample stamped at or after the run's start
    (``before(t_ns)``), whatever order the two topics arrive in within a callback round.
    ``on_start`` gets the event dict, extended with ``seed`` = ``seeding.derive_seed(study_seed,
    kind, label, scenario, run)``: the seeds the offline study uses for the same run.
    """

    def __init__(
        self,
        node: Node,
        kind: str,
        study_seed: int,
        label: str,
        on_start: Callable[[dict], None],
        drops: 'DropCounter | None' = None,
    ):
        from std_msgs.msg import String

        self.kind, self.study_seed, self.label, self.on_start, self.drops = (
            kind,
            study_seed,
            label,
            on_start,
            drops,
        )
        self.pending: list[dict] = []
        self.sub = node.create_subscription(String, RUN_EVENTS_TOPIC, self._on_event, EVENT_QOS)

    def _on_event(self, msg) -> None:
        import json

        from vepd_ros.seeding import derive_seed

        try:
            e = json.loads(msg.data)
            if e.get('event') != 'start':
                return
            e = {
                **e,
                'seed': derive_seed(
                    self.study_seed, self.kind, self.label, e['scenario'], int(e['run'])
                ),
            }
            int(e['stamp_ns'])  # a start event must carry its stamp
        except (ValueError, KeyError, TypeError) as exc:
            if self.drops is not None:
                self.drops.drop('bad_run_event', f'{RUN_EVENTS_TOPIC}: {exc}')
            return
        self.pending.append(e)
        self.pending.sort(key=lambda ev: int(ev['stamp_ns']))

    def before(self, t_ns: int) -> None:
        """Apply every start event due at truth stamp ``t_ns`` (call before that sample)."""
        while self.pending and int(self.pending[0]['stamp_ns']) <= t_ns:
            self.on_start(self.pending.pop(0))
